#pragma once
// The architecture editor: the storage hierarchy drawn as nested blocks (DRAM
// outermost, the MAC mesh innermost) beside a property panel for the selected
// level. Every change is re-estimated (estimate/estimator.h: energies and
// areas whose source is "estimated" follow the edit; typed and imported ones
// stay pinned until unpinned), checked with mw::validateArchitecture and goes
// through the undo stack, so the value it holds is always one the engine accepts.
#include "arch/architecture.h"
#include "estimate/estimator.h"

#include <QHash>
#include <QString>
#include <QWidget>

#include <optional>
#include <vector>

class QComboBox;
class QGraphicsRectItem;
class QGraphicsScene;
class QLabel;
class QLineEdit;
class QPushButton;
class QStackedWidget;
class QToolButton;
class QUndoStack;

namespace mw::ui {

class HierarchyView;

class ArchitectureEditor : public QWidget {
    Q_OBJECT
  public:
    // `undo` must be non-null and outlive the editor's use of it; its commands
    // do nothing once the editor is gone.
    explicit ArchitectureEditor(QUndoStack* undo, QWidget* parent = nullptr);
    ~ArchitectureEditor() override;

    // Replaces the architecture without an undo entry (opening a session).
    void setArchitecture(const mw::Architecture& a);
    const mw::Architecture& architecture() const { return arch_; }

    // Re-estimates `next`, validates it with mw::validateArchitecture; if valid
    // pushes an undo command (text = description) that switches between old
    // and new and returns true; otherwise shows the engine's message in the
    // error label, leaves the architecture unchanged and returns false.
    bool applyEdit(const mw::Architecture& next, const QString& description);

    // Selected block: 0..numLevels-1 storage levels, numLevels = the compute level, -1 none.
    void selectLevel(int index);
    int selectedLevel() const { return selected_; }

    // The property panel's behaviour, scriptable for tests: sets `field` of the
    // selected level from text as if typed in the panel. Storage fields: name,
    // class, component, dram_type, capacity, word_bits, block_size, banks,
    // mesh_x, mesh_y, read_bandwidth, write_bandwidth, multiple_buffering,
    // read_energy, write_energy, update_energy, leak_energy, area; compute:
    // name, mesh_x, mesh_y, word_bits, arithmetic, multiplier_bits,
    // adder_bits, mac_energy, mac_leak, mac_area (ui/level_fields.cpp). An
    // energy or area typed in is pinned ("typed"). Text that is not a value
    // of the field, or a value the engine rejects, gives false, a clear message
    // in lastError() (naming the level and field) and no change. Text equal to
    // the current value gives true and no undo entry.
    bool setLevelField(const QString& field, const QString& text);
    // Unpins an energy or area of the selected level: it follows the estimate
    // again. Unpinning an estimated value changes nothing.
    bool unpin(const QString& field);
    bool unpinAll(); // every energy and area of the selected level
    // The process node every estimate is priced at (7 to 130 nm).
    bool setTechnology(const QString& nm);
    // What the estimator says of the current architecture, beside the values
    // in use; empty (with the reason in estimateError()) when it cannot price it.
    const std::optional<mw::ArchitectureEstimate>& estimate() const { return estimate_; }
    QString estimateError() const { return estimateError_; }
    // A line about the best mapping found on this architecture (energy per
    // MAC), shown with the totals; set by the window as runs come and go.
    void setMappingSummary(const QString& text);
    QString statusText() const;

    bool addLevel(int before);   // inserts a new SRAM level (estimated energies) before index
    bool removeLevel(int index); // removing the compute level (index == numLevels) is refused
    bool moveLevel(int index, int delta); // reorder storage levels (validation decides legality)
    // Resizes the PE array in one edit: every level (and the compute level)
    // whose mesh X or Y equals the compute mesh's takes the new value, so the
    // array's buffers and spatial levels change together and keep dividing.
    bool setPeArray(int meshX, int meshY);

    // The message of the last refused operation; cleared when an edit, undo, redo
    // or setArchitecture applies.
    QString lastError() const { return lastError_; }
    QGraphicsScene* scene() const { return scene_; } // for tests

  Q_SIGNALS:
    void architectureChanged(const mw::Architecture& a); // after every applied edit, undo and redo

  private:
    class EditCommand;
    // One panel row: the input (a line edit or a combo box) and, for the
    // estimated quantities, where the value came from and an unpin button.
    struct Row {
        QLineEdit* edit = nullptr;
        QComboBox* combo = nullptr;
        QLabel* source = nullptr;
        QToolButton* unpin = nullptr;
        QWidget* widget = nullptr; // what the form shows (for enabling)
    };

    // Makes `a` current and redraws; the undo command's only way in.
    void apply(const mw::Architecture& a, int selection);
    // Re-estimates, validates and pushes; on refusal reports "context: engine message".
    bool commit(mw::Architecture next, const QString& description, int selectAfter,
                const QString& context);
    void commitFromPanel(const QString& field, bool computePage);
    void setError(const QString& message);
    void clearError();
    QString levelName(int index) const;
    void reestimate();

    QWidget* buildPanel();
    QWidget* buildFieldPage(bool compute);
    void refreshAll();
    void rebuildScene();
    void updateHighlight();
    void refreshPanel();
    void refreshSource(Row& row, mw::ValueSource source, double inUse, double estimate,
                       const QString& basis, bool area);
    void refreshStatus();
    void refreshButtons();

    mw::Architecture arch_;
    std::optional<mw::ArchitectureEstimate> estimate_;
    QString estimateError_;
    QString mappingSummary_;
    int selected_ = -1;
    QString lastError_;
    QUndoStack* undo_;

    QGraphicsScene* scene_ = nullptr;
    HierarchyView* view_ = nullptr;
    std::vector<QGraphicsRectItem*> blocks_; // by level index, the compute block last

    QLabel* panelTitle_ = nullptr;
    QLineEdit* technology_ = nullptr;
    QStackedWidget* pages_ = nullptr; // none selected, storage level, compute level
    QHash<QString, Row> storageRows_;
    QHash<QString, Row> computeRows_;

    QPushButton* removeButton_ = nullptr;
    QPushButton* upButton_ = nullptr;
    QPushButton* downButton_ = nullptr;
    QLabel* errorLabel_ = nullptr;
    QLabel* statusLabel_ = nullptr;
};

} // namespace mw::ui
