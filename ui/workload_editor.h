#pragma once
// Editor of the workload: the network's layers in a table, one row per layer,
// one column per preset parameter. Every edit is validated with buildProblem
// before it reaches the network, so the rest of the UI only ever sees layers
// the engine accepts. It edits shapes only; it never computes costs.
#include "workload/presets.h"

#include <QString>
#include <QStringList>
#include <QWidget>

#include <string>
#include <vector>

class QEvent;
class QLabel;
class QPushButton;
class QTableWidget;
class QTableWidgetItem;
class QToolButton;

namespace mw::ui {

class WorkloadEditor : public QWidget {
    Q_OBJECT
  public:
    explicit WorkloadEditor(QWidget* parent = nullptr);

    // Replaces the contents (opening a session). Selects the first layer and
    // emits currentLayerChanged, but not networkChanged: the caller already
    // holds this network.
    void setNetwork(const mw::Network& n);
    const mw::Network& network() const;

    int currentLayer() const; // selected row, -1 when none
    void setCurrentLayer(int index);

    // Scriptable cell edit, exactly what typing in the table does: `column` is
    // "name" or a parameter name of that layer's kind. Text that is not a
    // positive integer, or a layer buildProblem rejects, gives false, a clear
    // message (naming layer and field) in lastError() shown in the error label,
    // and leaves the network unchanged (the cell shows the old value again).
    bool setCell(int row, const QString& column, const QString& text);
    bool addPresetLayer(const QString& kind); // appended with the preset's defaults, unique name
    bool removeLayer(int row);
    // Replaces the network with our JSON's or a Timeloop problem's (one
    // layer; what its import noted in `notes`); errors -> lastError(), unchanged.
    bool importNetwork(const QString& path, QStringList* notes = nullptr);
    // Replaces the network with one read elsewhere (an ONNX model), as an edit.
    void setImportedNetwork(mw::Network n);
    QString lastError() const;

  signals:
    void networkChanged(const mw::Network& n); // after every accepted edit
    void currentLayerChanged(int index);       // row selection changed
    void importRequested(const QString& path); // the Import button chose a file

  protected:
    void changeEvent(QEvent* event) override;

  private:
    int layerCount() const;
    int paramColumn(const std::string& param) const; // -1 when no such column
    int macsColumn() const;
    int sourceColumn() const;
    QString columnKey(int column) const; // "name", a parameter name, or empty

    bool applyEdit(int row, const QString& column, const QString& text);
    void replaceNetwork(mw::Network n, bool notify);
    void rebuildTable();
    void fillRow(int row);
    QTableWidgetItem* cell(int row, int column);
    void updateHeader();
    void updateColumnVisibility();
    void updateButtons();
    void syncCurrentLayer(bool force);
    int selectedRow() const;
    void selectRow(int row); // without signals; syncCurrentLayer reports it
    bool fail(const QString& message);
    void clearError();
    void onItemChanged(QTableWidgetItem* item);
    void onImportClicked();
    std::string uniqueName(const std::string& kind) const;

    mw::Network network_;
    // Union of the presets' parameter names: shapes first, then coefficients
    // (strides, dilations), each in catalog order, so conv2d reads N G C M P Q R S.
    std::vector<std::string> params_;

    QLabel* header_ = nullptr;
    QToolButton* addButton_ = nullptr;
    QPushButton* removeButton_ = nullptr;
    QPushButton* importButton_ = nullptr;
    QTableWidget* table_ = nullptr;
    QLabel* error_ = nullptr;

    QString lastError_;
    QString lastDir_;
    int currentRow_ = -1; // last index reported by currentLayerChanged
};

} // namespace mw::ui
