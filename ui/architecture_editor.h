#pragma once
// The architecture editor: the storage hierarchy drawn as nested blocks (DRAM
// outermost, the MAC mesh innermost) beside a property panel for the selected
// level. Every change is checked with mw::validateArchitecture and goes through
// the undo stack, so the value it holds is always one the engine accepts.
#include "arch/architecture.h"

#include <QHash>
#include <QString>
#include <QWidget>

#include <vector>

class QComboBox;
class QGraphicsRectItem;
class QGraphicsScene;
class QGraphicsView;
class QLabel;
class QLineEdit;
class QPushButton;
class QStackedWidget;
class QUndoStack;

namespace mw::ui {

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

    // Validates `next` with mw::validateArchitecture; if valid pushes an undo
    // command (text = description) that switches between old and new and returns
    // true; otherwise shows the engine's message in the error label, leaves the
    // architecture unchanged and returns false.
    bool applyEdit(const mw::Architecture& next, const QString& description);

    // Selected block: 0..numLevels-1 storage levels, numLevels = the compute level, -1 none.
    void selectLevel(int index);
    int selectedLevel() const { return selected_; }

    // The property panel's behaviour, scriptable for tests: sets `field` of the
    // selected level from text as if typed in the panel. Fields: name, class,
    // capacity, word_bits, block_size, mesh_x, mesh_y, read_bandwidth,
    // write_bandwidth, multiple_buffering, read_energy, write_energy,
    // update_energy, leak_energy (compute level: name, mesh_x, mesh_y, word_bits, mac_energy).
    // Text that is not a number, or a value the engine rejects, gives false,
    // a clear message in lastError() (naming the level and field) and no change.
    // Text equal to the current value gives true and no undo entry.
    bool setLevelField(const QString& field, const QString& text);

    bool addLevel(int before); // inserts a new SRAM level (copy of sensible defaults) before index
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

    // Makes `a` current and redraws; the undo command's only way in.
    void apply(const mw::Architecture& a, int selection);
    // Validates and pushes; on refusal reports "context: engine message".
    bool commit(const mw::Architecture& next, const QString& description, int selectAfter,
                const QString& context);
    void commitFromPanel(const QString& field, bool computePage);
    void setError(const QString& message);
    void clearError();
    QString levelName(int index) const;

    QWidget* buildPanel();
    QWidget* buildFieldPage(bool compute);
    void refreshAll();
    void rebuildScene();
    void updateHighlight();
    void refreshPanel();
    void refreshStatus();
    void refreshButtons();

    mw::Architecture arch_;
    int selected_ = -1;
    QString lastError_;
    QUndoStack* undo_;

    QGraphicsScene* scene_ = nullptr;
    QGraphicsView* view_ = nullptr;
    std::vector<QGraphicsRectItem*> blocks_; // by level index, the compute block last

    QLabel* panelTitle_ = nullptr;
    QStackedWidget* pages_ = nullptr; // none selected, storage level, compute level
    QHash<QString, QLineEdit*> storageEdits_;
    QHash<QString, QLineEdit*> computeEdits_;
    QComboBox* classBox_ = nullptr;

    QPushButton* removeButton_ = nullptr;
    QPushButton* upButton_ = nullptr;
    QPushButton* downButton_ = nullptr;
    QLabel* errorLabel_ = nullptr;
    QLabel* statusLabel_ = nullptr;
};

} // namespace mw::ui
