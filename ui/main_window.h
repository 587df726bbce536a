#pragma once
// The explorer's main window: a project explorer (architecture, workload,
// runs), the views as tabs (architecture, workload, search, inspector,
// energy, network, design space), a toolbar, recent files, autosave with crash recovery,
// and a status bar with the running searches. It owns the session; the
// views edit or show copies of it and report changes back.
#include "explore/sweep_run.h"
#include "io/session_io.h"

#include <QMainWindow>

#include <memory>

class QTabWidget;
class QTreeWidget;
class QLabel;
class QUndoStack;
class QTimer;
class QMenu;
class QLockFile;

namespace mw::ui {

class ArchitectureEditor;
class WorkloadEditor;
class SearchPanel;
class MappingInspector;
class EnergyView;
class NetworkView;
class DesignSpaceView;

class MainWindow : public QMainWindow {
    Q_OBJECT
  public:
    struct Options {
        bool offerRestore = true; // ask to restore an autosave left by a crash
        bool autosave = true;
        QString autosaveDir; // default: the application's data location
        int autosaveIntervalMs = 30'000;
        // Searchers beside the built-in ones (the Python module's registered ones).
        std::vector<mw::SearcherFactory> searchers;
    };
    explicit MainWindow(QWidget* parent = nullptr);
    explicit MainWindow(const Options& options, QWidget* parent = nullptr);
    ~MainWindow() override;

    // The bundled default session (Eyeriss-like, ResNet-50), found next to the
    // executable or in the source tree; empty when missing.
    static QString defaultSessionPath();
    // A file among the bundled samples: Save asks where to save it instead of
    // overwriting it.
    static bool isBundledSample(const QString& path);

    // Opening never loses the current session: on error it stays as it was and
    // the message (file, field, what was expected) is shown and kept in lastError().
    // Opened, it replaces the session as closing would (settleSession).
    bool openSession(const QString& path);
    // Timeloop files as users write them (or a processed input.yaml with its
    // ERT), merged as Timeloop merges them: a new session with their
    // architecture, problem, constraints, mapping (a run) and mapper (a
    // requested run). On error the current session stays. A Jinja2 top file
    // among them is rendered with `templateData` (NAME, VALUE); given none,
    // an interactive window asks for the variables the template reads.
    bool openTimeloop(const QStringList& files,
                      const std::vector<std::pair<std::string, std::string>>& templateData = {},
                      bool interactive = false);
    bool saveSession(const QString& path);
    // What closing or replacing the session would end or drop, one phrase
    // each: unsaved changes, searches running, the Inspector's hand edits.
    QStringList unsavedWork() const;
    // Commits a value typed into a field that still has the focus (see .cpp).
    void commitPendingEdits();
    // Before the session is closed or replaced (`action`: "closing", "opening
    // x.json"): when interactive and unsavedWork() is not empty, asks whether
    // to save (false: the user cancelled, nothing changed). Then searches in
    // flight stop and their bests join this session (so a save has them, and
    // the next session does not receive them), and the session is saved if
    // asked. Also false (said) when a search did not stop within 10 s.
    bool settleSession(const QString& action);
    void setSession(const mw::Session& session);
    const mw::Session& session() const { return session_; }
    QString sessionPath() const { return path_; }

    // architecture | workload | search | inspector | energy | network | design
    bool showView(const QString& name);
    QString currentView() const;
    static QStringList viewNames();

    // Starts the runs the session requests (unfinished runs); returns how many.
    int runRequestedSearches();
    bool waitForSearches(int timeoutMs);
    void selectLayer(int index);

    // Replaces the network: a workload JSON file, or an ONNX model's layers
    // (read on a worker thread; `batch` fixes a dynamic batch, and 0 asks for
    // one when interactive). Errors leave the network as it was.
    bool importNetwork(const QString& path, qint64 batch = 0, bool interactive = false);
    bool exportMapping(const QString& path); // the inspected mapping: .json or .yaml
    // A Timeloop case in `dir`: architecture, current layer, ERT and ART (the
    // values in use), the inspected mapping when there is one, the session's
    // constraints and a mapper.yaml: what timeloop-model and timeloop-mapper need.
    bool exportTimeloop(const QString& dir);
    bool exportTraces(const QString& path); // every finished run, one CSV
    bool exportPlot(const QString& path);   // the current view's chart: .png or .pdf
    bool autosaveNow();
    // Trains Mind Mappings' surrogate for the current layer's family on the
    // current architecture on a worker thread, with a progress dialog that can
    // cancel (interactive) or silently (tests). Returns false on cancel/error.
    bool trainSurrogate(int samples = 100'000, int epochs = 20, bool interactive = true);
    QString lastSurrogateReport() const { return surrogateReport_; }
    QString autosavePath() const; // this window's (see main_window_autosave.cpp)
    // Autosaves left by windows that did not close cleanly, the newest first.
    QStringList crashedAutosaves() const;
    // The answer to the offer of crashed autosave `offered`: restored, or
    // (declined, or unreadable) moved aside to a file of its own, named in
    // the status bar, which no autosave writes over; returns that file's path
    // ("" when restored). Either way it is not offered again. (Public for
    // tests: the offer's dialog is modal.)
    QString settleCrashedAutosave(const QString& offered, bool restore);

    QString lastError() const { return lastError_; }
    ArchitectureEditor* architectureEditor() const { return archEditor_; }
    WorkloadEditor* workloadEditor() const { return workloadEditor_; }
    SearchPanel* searchPanel() const { return searchPanel_; }
    MappingInspector* inspector() const { return inspector_; }
    EnergyView* energyView() const { return energyView_; }
    NetworkView* networkView() const { return networkView_; }
    DesignSpaceView* designView() const { return designView_; }
    // A sweep's point in the other views: its architecture (an undoable edit),
    // the sweep's network, and each layer's best mapping as a finished run.
    void openDesignPoint(const mw::SweepSpec& spec, const mw::PointRecord& point);
    QUndoStack* undoStack() const { return undo_; }

  protected:
    void closeEvent(QCloseEvent* event) override;
    // Ctrl+Z in a field that holds nothing of its own to undo (its edit was
    // just committed) undoes the session's last edit.
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    void buildActions();
    void refreshViews(); // pushes the session into every view
    void refreshExplorer();
    void refreshTitle();
    void onArchitectureChanged(const mw::Architecture& a);
    void refreshArchitectureTotals();            // the best mapping's energy per MAC, in the editor
    void onNetworkChanged(const mw::Network& n); // an edit: undoable
    void applyNetwork(const mw::Network& n);
    // Marks the runs that no longer fit the design stale (and clears the mark
    // where they fit again, re-costing them); returns how many became stale,
    // and says so when `edited` names what changed.
    int refreshRunStates(const QString& edited = {});
    void onRunFinished(const mw::SessionRun& run, int position);
    void keepRuns(const std::vector<mw::SessionRun>& runs); // finished runs made elsewhere
    void showRun(int runIndex);
    void fail(const QString& message);
    void info(const QString& message);
    void addRecent(const QString& path);
    void rebuildRecentMenu();
    void offerRestore();
    QString autosaveDir() const;
    QString autosaveSlotPath(int slot, const QString& suffix) const;
    bool isAutosave(const QString& path) const; // any window's
    void claimAutosaveSlot();
    void markRunning(); // this window's slot: in use, until cleanExit
    void cleanExit();
    void setDirty(bool dirty);
    // Actions.
    void openDialog();
    bool saveDialog();
    QString askSavePath();             // empty: cancelled
    mw::Session sessionToSave() const; // the session and the runs it requests
    void exportMappingDialog();
    void exportTimeloopDialog();
    void exportTracesDialog();
    void exportPlotDialog();
    void importArchitectureDialog();

    Options options_;
    mw::Session session_;
    std::vector<mw::SessionRun> requested_; // runs the session asks for, not started yet
    QString path_;
    QString lastError_;
    QString surrogateReport_;
    bool dirty_ = false;
    bool loading_ = false;

    QUndoStack* undo_;
    QTabWidget* tabs_;
    QTreeWidget* explorer_;
    QLabel* running_;
    QTimer* autosave_;
    std::unique_ptr<QLockFile> autosaveLock_; // held while this window runs
    int autosaveSlot_ = -1;
    QMenu* recentMenu_ = nullptr;
    ArchitectureEditor* archEditor_;
    WorkloadEditor* workloadEditor_;
    SearchPanel* searchPanel_;
    MappingInspector* inspector_;
    EnergyView* energyView_;
    NetworkView* networkView_;
    DesignSpaceView* designView_;
};

} // namespace mw::ui
