#include "ui/main_window.h"

#include "common/error.h"
#include "io/onnx_import.h"
#include "io/timeloop/timeloop.h"
#include "model/cost_model.h"
#include "search/surrogate.h"
#include "ui/architecture_editor.h"
#include "ui/design_space_view.h"
#include "ui/energy_view.h"
#include "ui/mapping_inspector.h"
#include "ui/network_view.h"
#include "ui/search_panel.h"
#include "ui/workload_editor.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QInputDialog>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QLockFile>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPointer>
#include <QProgressDialog>
#include <QSettings>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QThread>
#include <QTimer>
#include <QToolBar>
#include <QTreeWidget>
#include <QUndoStack>

#include <functional>
#include <utility>

#include <atomic>
#include <optional>
#include <thread>

namespace mw::ui {

namespace {

const QStringList kViews = {"architecture", "workload", "search", "inspector",
                            "energy",       "network",  "design"};

// The session without any layer, architecture or run: what a new window shows
// until a session is opened.
mw::Session emptySession() {
    mw::Session s;
    s.name = "untitled";
    s.arch.name = "empty";
    mw::StorageLevel dram;
    dram.name = "DRAM";
    dram.cls = mw::LevelClass::DRAM;
    s.arch.levels.push_back(dram);
    s.network.name = "untitled";
    s.network.layers.push_back(mw::presetLayer("conv2d", "conv"));
    return s;
}

} // namespace

MainWindow::MainWindow(QWidget* parent) : MainWindow(Options{}, parent) {}

MainWindow::MainWindow(const Options& options, QWidget* parent)
    : QMainWindow(parent), options_(options) {
    setWindowTitle("Mapwright");
    resize(1400, 900);
    undo_ = new QUndoStack(this);

    archEditor_ = new ArchitectureEditor(undo_);
    workloadEditor_ = new WorkloadEditor;
    searchPanel_ = new SearchPanel;
    inspector_ = new MappingInspector;
    energyView_ = new EnergyView;
    networkView_ = new NetworkView;
    designView_ = new DesignSpaceView;
    tabs_ = new QTabWidget;
    tabs_->setDocumentMode(true);
    tabs_->addTab(archEditor_, "Architecture");
    tabs_->addTab(workloadEditor_, "Workload");
    tabs_->addTab(searchPanel_, "Search");
    tabs_->addTab(inspector_, "Inspector");
    tabs_->addTab(energyView_, "Energy");
    tabs_->addTab(networkView_, "Network");
    tabs_->addTab(designView_, "Design space");
    setCentralWidget(tabs_);

    explorer_ = new QTreeWidget;
    explorer_->setObjectName("projectTree");
    explorer_->setHeaderHidden(true);
    explorer_->setTextElideMode(Qt::ElideRight);
    explorer_->setMinimumWidth(220);
    auto* dock = new QDockWidget("Project", this);
    dock->setObjectName("project");
    dock->setWidget(explorer_);
    addDockWidget(Qt::LeftDockWidgetArea, dock);
    connect(explorer_, &QTreeWidget::itemClicked, this, [this](QTreeWidgetItem* item, int) {
        const QString kind = item->data(0, Qt::UserRole).toString();
        const int index = item->data(0, Qt::UserRole + 1).toInt();
        if (kind == "architecture" || kind == "level") {
            showView("architecture");
            if (kind == "level")
                archEditor_->selectLevel(index);
        } else if (kind == "workload") {
            showView("workload");
        } else if (kind == "layer") {
            selectLayer(index);
        } else if (kind == "run") {
            showRun(index);
        }
    });

    running_ = new QLabel("No search running");
    running_->setObjectName("runningSearches");
    statusBar()->addPermanentWidget(running_);

    connect(archEditor_, &ArchitectureEditor::architectureChanged, this,
            &MainWindow::onArchitectureChanged);
    connect(workloadEditor_, &WorkloadEditor::networkChanged, this, &MainWindow::onNetworkChanged);
    connect(workloadEditor_, &WorkloadEditor::importRequested, this,
            [this](const QString& path) { importNetwork(path, 0, true); });
    connect(workloadEditor_, &WorkloadEditor::currentLayerChanged, this, [this](int i) {
        if (!loading_ && i >= 0 && i != session_.currentLayer)
            selectLayer(i);
    });
    connect(searchPanel_, &SearchPanel::runFinished, this, &MainWindow::onRunFinished);
    connect(searchPanel_, &SearchPanel::runningChanged, this, [this](int n, int paused) {
        const auto searches = [](int k) {
            return QString("%1 search%2").arg(k).arg(k == 1 ? "" : "es");
        };
        running_->setText(
            n == 0        ? QString("No search running")
            : paused == 0 ? searches(n) + " running"
            : paused == n ? searches(n) + " paused"
                          : QString("%1 running, %2 paused").arg(searches(n - paused)).arg(paused));
    });
    connect(searchPanel_, &SearchPanel::runActivated, this, &MainWindow::showRun);
    connect(searchPanel_, &SearchPanel::constraintsChanged, this, [this](const mw::Json& c) {
        session_.constraints = c;
        networkView_->setConstraints(c);
        setDirty(true);
    });
    // The chart's axes are saved with the session, but changing them is no edit.
    connect(searchPanel_, &SearchPanel::viewChanged, this,
            [this](const mw::SessionView& v) { session_.view = v; });
    connect(searchPanel_, &SearchPanel::message, this, &MainWindow::info);
    connect(inspector_, &MappingInspector::message, this, &MainWindow::info);
    connect(networkView_, &NetworkView::message, this, &MainWindow::info);
    connect(designView_, &DesignSpaceView::message, this, &MainWindow::info);
    connect(designView_, &DesignSpaceView::pointActivated, this, &MainWindow::openDesignPoint);
    connect(networkView_, &NetworkView::keepRuns, this, &MainWindow::keepRuns);

    searchPanel_->addSearchers(options_.searchers);
    buildActions();
    qApp->installEventFilter(this); // ShortcutOverride reaches the focused field first

    autosave_ = new QTimer(this);
    autosave_->setInterval(options_.autosaveIntervalMs);
    connect(autosave_, &QTimer::timeout, this, [this] {
        if (dirty_)
            autosaveNow();
    });
    setSession(emptySession());
    setDirty(false);
    if (options_.autosave) {
        claimAutosaveSlot();
        autosave_->start();
        if (options_.offerRestore)
            QTimer::singleShot(0, this, &MainWindow::offerRestore);
    }
}

MainWindow::~MainWindow() = default;

QString MainWindow::defaultSessionPath() {
    const QString rel = "samples/sessions/default.json";
    QStringList roots = {QCoreApplication::applicationDirPath() + "/..",
                         QCoreApplication::applicationDirPath() + "/../share/mapwright",
                         QCoreApplication::applicationDirPath() + "/../.."};
#ifdef MAPWRIGHT_SOURCE_DIR
    roots << QString(MAPWRIGHT_SOURCE_DIR);
#endif
    for (const QString& root : roots)
        if (QFileInfo::exists(root + "/" + rel))
            return QFileInfo(root + "/" + rel).canonicalFilePath();
    return {};
}

bool MainWindow::isBundledSample(const QString& path) {
    const QString session = defaultSessionPath(); // <root>/samples/sessions/default.json
    if (session.isEmpty())
        return false;
    const QString samples = QFileInfo(session).dir().absolutePath() + "/..";
    const QString root = QFileInfo(samples).canonicalFilePath() + "/";
    const QString file = QFileInfo(path).canonicalFilePath();
    return !file.isEmpty() && file.startsWith(root);
}

QStringList MainWindow::viewNames() {
    return kViews;
}

void MainWindow::buildActions() {
    auto* file = menuBar()->addMenu("&File");
    auto* open = file->addAction(QIcon::fromTheme("document-open"),
                                 "&Open session or Timeloop files…", this, &MainWindow::openDialog);
    open->setShortcut(QKeySequence::Open);
    auto* openDefault = file->addAction("Open the &default session", this, [this] {
        const QString path = defaultSessionPath();
        if (path.isEmpty())
            fail("The bundled default session (samples/sessions/default.json) was not found.");
        else
            openSession(path);
    });
    (void)openDefault;
    recentMenu_ = file->addMenu("Open &recent");
    rebuildRecentMenu();
    auto* save = file->addAction(QIcon::fromTheme("document-save"), "&Save session", this, [this] {
        if (path_.isEmpty() || isBundledSample(path_)) // the samples stay as shipped
            saveDialog();
        else
            saveSession(path_);
    });
    save->setShortcut(QKeySequence::Save);
    file->addAction("Save session &as…", this, [this] { saveDialog(); })
        ->setShortcut(QKeySequence::SaveAs);
    file->addSeparator();
    file->addAction("Import &architecture…", this, &MainWindow::importArchitectureDialog);
    file->addAction("Import &network (ONNX, JSON or Timeloop problem)…", this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, "Import network", QString(),
            "Network (*.onnx *.json *.yaml *.yml);;ONNX model (*.onnx);;Workload JSON (*.json);;"
            "Timeloop problem (*.yaml *.yml)");
        if (!path.isEmpty())
            importNetwork(path, 0, true);
    });
    file->addSeparator();
    auto* exportMap = file->addAction(QIcon::fromTheme("document-export"),
                                      "&Export mapping (JSON / Timeloop YAML)…", this,
                                      &MainWindow::exportMappingDialog);
    file->addAction("Export for &Timeloop (folder: arch, problem, mapping, ERT, ART, "
                    "constraints, mapper)…",
                    this, &MainWindow::exportTimeloopDialog);
    file->addAction("Export &traces (CSV)…", this, &MainWindow::exportTracesDialog);
    file->addAction("Export &plot (PNG / PDF)…", this, &MainWindow::exportPlotDialog);
    file->addSeparator();
    file->addAction("&Quit", this, &QWidget::close)->setShortcut(QKeySequence::Quit);

    auto* edit = menuBar()->addMenu("&Edit");
    QAction* undo = undo_->createUndoAction(this, "&Undo");
    undo->setShortcut(QKeySequence::Undo);
    undo->setIcon(QIcon::fromTheme("edit-undo"));
    QAction* redo = undo_->createRedoAction(this, "&Redo");
    redo->setShortcut(QKeySequence::Redo);
    redo->setIcon(QIcon::fromTheme("edit-redo"));
    edit->addAction(undo);
    edit->addAction(redo);

    auto* view = menuBar()->addMenu("&View");
    for (int i = 0; i < kViews.size(); ++i) {
        QAction* a =
            view->addAction(tabs_->tabText(i), this, [this, i] { tabs_->setCurrentIndex(i); });
        a->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + i)));
    }
    view->addSeparator();
    for (QDockWidget* d : findChildren<QDockWidget*>())
        view->addAction(d->toggleViewAction());

    auto* search = menuBar()->addMenu("&Search");
    auto* run =
        search->addAction(QIcon::fromTheme("media-playback-start"), "&Run searchers", this, [this] {
            commitPendingEdits(); // on the design as typed
            showView("search");
            searchPanel_->runSelected();
        });
    run->setShortcut(Qt::Key_F5);
    auto* cancel = search->addAction(QIcon::fromTheme("process-stop"), "&Cancel all", this,
                                     [this] { searchPanel_->cancelAll(); });
    cancel->setShortcut(Qt::Key_Escape);
    search->addSeparator();
    search->addAction("&Train Mind Mappings surrogate…", this, [this] { trainSurrogate(); });

    auto* help = menuBar()->addMenu("&Help");
    help->addAction("&About Mapwright", this, [this] {
        QMessageBox::about(this, "About Mapwright",
                           "Mapwright — map-space exploration for DNN and tensor accelerators.\n"
                           "Timeloop-exact analytical model; Timeloop-style, annealing, genetic "
                           "and GAMMA searchers under one driver.");
    });

    auto* bar = addToolBar("Main");
    bar->setObjectName("main toolbar");
    bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    bar->addAction(open);
    bar->addAction(save);
    bar->addSeparator();
    // The toolbar's Undo and Redo keep their labels (the toolbar does not
    // shift as the edit's name changes); the tooltip names the edit.
    for (QAction* menuAction : {undo, redo}) {
        const bool isUndo = menuAction == undo;
        auto* steady = bar->addAction(menuAction->icon(), isUndo ? "Undo" : "Redo", undo_,
                                      isUndo ? &QUndoStack::undo : &QUndoStack::redo);
        steady->setEnabled(menuAction->isEnabled());
        connect(menuAction, &QAction::changed, steady, [steady, menuAction] {
            steady->setEnabled(menuAction->isEnabled());
            steady->setToolTip(menuAction->text().remove('&'));
        });
    }
    bar->addSeparator();
    bar->addAction(run);
    bar->addAction(cancel);
    bar->addSeparator();
    bar->addAction(exportMap);
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() == QEvent::ShortcutOverride) {
        auto* field = qobject_cast<QLineEdit*>(watched);
        const auto* key = static_cast<QKeyEvent*>(event);
        if (field && field->window() == this && !field->isModified() &&
            (key->matches(QKeySequence::Undo) || key->matches(QKeySequence::Redo))) {
            event->ignore(); // not the field's: the shortcut goes to the undo stack
            return true;
        }
    }
    return QMainWindow::eventFilter(watched, event);
}

void MainWindow::setSession(const mw::Session& session) {
    session_ = session;
    requested_.clear();
    std::vector<mw::SessionRun> finished;
    for (const mw::SessionRun& r : session_.runs)
        (r.finished ? finished : requested_).push_back(r);
    session_.runs = finished;
    undo_->clear();
    networkView_->clearOutcome();
    designView_->clearResults();
    inspector_->dropEdits(); // hand edits were of the last session's run (settleSession said)
    loading_ = true;         // the editors announce their new contents; the session is the source
    archEditor_->setArchitecture(session_.arch);
    workloadEditor_->setNetwork(session_.network);
    workloadEditor_->setCurrentLayer(session_.currentLayer);
    searchPanel_->setView(session_.view);
    // The form's objective, the plot's units: the one the session last
    // searched (a Timeloop case's mapper may have asked for cycles), so that
    // its curves are drawn.
    const std::vector<mw::SessionRun>& last = requested_.empty() ? session_.runs : requested_;
    if (!last.empty())
        searchPanel_->setObjective(QString::fromStdString(last.back().settings.objective.name()));
    loading_ = false;
    refreshRunStates();
    refreshViews();
    designView_->resetAxes(); // from this session's design, not the last one's
    refreshTitle();
}

bool MainWindow::trainSurrogate(int samples, int epochs, bool interactive) {
    const auto& layers = session_.network.layers;
    if (session_.currentLayer < 0 || session_.currentLayer >= int(layers.size()))
        return false;
    mw::Problem problem;
    try {
        problem = mw::buildProblem(layers[std::size_t(session_.currentLayer)]);
        mw::validateArchitecture(session_.arch);
    } catch (const mw::InputError& e) {
        fail(QString::fromStdString(e.what()));
        return false;
    }
    const mw::Architecture arch = session_.arch;
    mw::SurrogateOptions o;
    o.samples = samples;
    o.epochs = epochs;
    o.threads = std::max(1, QThread::idealThreadCount());
    std::atomic<bool> cancelled{false};
    std::atomic<int> percent{0};
    QString error;
    mw::SurrogateReport report;
    const std::string path = mw::Surrogate::cachePath("", problem, arch);
    // Training runs off the GUI thread; the dialog polls its progress. A
    // std::thread, not a QThread: ThreadSanitizer sees its join.
    std::atomic<bool> done{false};
    std::thread worker([&] {
        try {
            const mw::Surrogate s =
                mw::Surrogate::train(problem, arch, o, report, [&](const std::string&, double f) {
                    percent = int(f * 100);
                    return !cancelled.load();
                });
            s.save(path);
        } catch (const std::exception& e) {
            error = cancelled ? QString("cancelled") : QString::fromStdString(e.what());
        }
        done.store(true, std::memory_order_release);
    });
    QProgressDialog dialog("Training the Mind Mappings surrogate…", "Cancel", 0, 100, this);
    dialog.setWindowModality(Qt::WindowModal);
    dialog.setMinimumDuration(0);
    connect(&dialog, &QProgressDialog::canceled, this, [&] { cancelled = true; });
    while (!done.load(std::memory_order_acquire)) {
        if (interactive)
            dialog.setValue(percent.load());
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
        QThread::msleep(10);
    }
    worker.join();
    dialog.reset();
    if (!error.isEmpty()) {
        if (error != "cancelled")
            fail(error);
        else
            info("Surrogate training cancelled");
        return false;
    }
    surrogateReport_ =
        QString(
            "Surrogate trained on %1 mappings in %2 s; held-out rank correlation %3; saved to %4")
            .arg(report.samples)
            .arg(report.generateSeconds + report.trainSeconds, 0, 'f', 1)
            .arg(report.rankCorrelation, 0, 'f', 3)
            .arg(QString::fromStdString(path));
    info(surrogateReport_);
    return true;
}

void MainWindow::commitPendingEdits() {
    // An editor's field commits when it loses focus or on Enter; a save, a
    // close or a run from a shortcut moves no focus, and would go on without
    // the value the user typed. Taking the focus away and giving it back
    // commits it (a table's cell editor closes).
    const QPointer<QWidget> focused = QApplication::focusWidget();
    if (!focused || !isAncestorOf(focused))
        return;
    focused->clearFocus();
    if (focused && focused->isVisible())
        focused->setFocus();
}

QStringList MainWindow::unsavedWork() const {
    QStringList work;
    if (dirty_)
        work << "the session has unsaved changes";
    if (const int running = searchPanel_->runningCount() + (networkView_->running() ? 1 : 0))
        work << (running == 1 ? QString("a search is running (it stops and keeps its best)")
                              : QString("%1 searches are running (they stop and keep their best)")
                                    .arg(running));
    if (designView_->running())
        work << QString("a design-space sweep is running (it stops; its finished points stay in "
                        "%1)")
                    .arg(designView_->databasePath());
    if (networkView_->outcomeUnkept())
        work << "the Network view's results are not in the session (Keep as runs adds them)";
    if (inspector_->hasEdits() || inspector_->hasSetAsideEdits())
        work << "the Inspector holds a hand-edited mapping, which a session does not keep "
                "(Export mapping saves it)";
    return work;
}

bool MainWindow::settleSession(const QString& action) {
    commitPendingEdits();
    const QStringList work = unsavedWork();
    auto answer = QMessageBox::Discard;
    if (!work.isEmpty() && options_.offerRestore && isVisible()) {
        answer = QMessageBox::question(
            this, "Save session?",
            QString("Before %1:\n• %2\n\nSave the session?").arg(action, work.join("\n• ")),
            QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
        if (answer == QMessageBox::Cancel)
            return false;
    }
    // Where to save, before anything stops: cancelling the file dialog
    // leaves everything as it was.
    const QString savePath = answer == QMessageBox::Save ? askSavePath() : QString();
    if (answer == QMessageBox::Save && savePath.isEmpty())
        return false;
    // Runs in flight stop at their next batch and keep their best, in this
    // session: in the file saved now, and the autosave when closing; a
    // network search's layers become runs. No input meanwhile: a Run or an
    // Open while waiting would start or replace what is being settled.
    const bool networkRan = networkView_->running();
    setEnabled(false);
    searchPanel_->cancelAll();
    networkView_->cancel();
    designView_->cancel();
    const bool stopped = waitForSearches(10000) && networkView_->waitForFinished(10000) &&
                         designView_->waitForFinished(10000);
    setEnabled(true);
    if (networkRan && networkView_->outcomeUnkept())
        networkView_->keepOutcome();
    if (!stopped) { // (a search that does not stop would report into the next session)
        fail(QString("Searches were asked to stop before %1 but are still running; try again "
                     "when the status bar says none is")
                 .arg(action));
        return false;
    }
    return answer != QMessageBox::Save || saveSession(savePath);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (!settleSession("closing")) {
        event->ignore();
        return;
    }
    if (options_.autosave) {
        autosaveNow();
        cleanExit();
    }
    event->accept();
}

void MainWindow::setDirty(bool dirty) {
    dirty_ = dirty;
    refreshTitle();
}

void MainWindow::refreshTitle() {
    const QString name =
        path_.isEmpty() ? QString::fromStdString(session_.name) : QFileInfo(path_).fileName();
    const QString sample = isBundledSample(path_) ? " (bundled sample, read-only)" : "";
    setWindowTitle(QString("Mapwright — %1%2%3").arg(name, sample, dirty_ ? " *" : ""));
}

void MainWindow::refreshViews() {
    searchPanel_->setTarget(session_.arch, session_.network, session_.currentLayer);
    if (!searchPanel_->setConstraints(session_.constraints))
        searchPanel_->setConstraints(mw::Json()); // they no longer fit: the message says why
    networkView_->setConstraints(searchPanel_->constraints());
    searchPanel_->setRuns(session_.runs);
    inspector_->setSession(session_.arch, session_.network, session_.runs);
    energyView_->setSession(session_.arch, session_.network, session_.runs);
    networkView_->setTarget(session_.arch, session_.network);
    designView_->setBase(session_.arch, session_.network, searchPanel_->constraints());
    refreshExplorer();
    refreshArchitectureTotals();
}

void MainWindow::refreshArchitectureTotals() {
    // The best legal mapping of the current layer, its costs on the
    // architecture as it now is (onArchitectureChanged re-evaluates them).
    const auto& layers = session_.network.layers;
    const std::string layer =
        session_.currentLayer >= 0 && session_.currentLayer < int(layers.size())
            ? layers[std::size_t(session_.currentLayer)].name
            : std::string();
    int best = -1;
    for (std::size_t i = 0; i < session_.runs.size(); ++i) {
        const mw::SessionRun& r = session_.runs[i];
        if (r.layer != layer || !r.result.found || !r.stale.empty())
            continue;
        if (best < 0 || r.result.bestEvaluation.edp <
                            session_.runs[std::size_t(best)].result.bestEvaluation.edp)
            best = int(i);
    }
    if (best < 0) {
        bool searched = false;
        for (const mw::SessionRun& r : session_.runs)
            searched = searched || (r.layer == layer && r.result.found);
        archEditor_->setMappingSummary(
            layer.empty() ? QString()
            : searched
                ? QString("the mappings found for %1 no longer fit this architecture")
                      .arg(QString::fromStdString(layer))
                : QString("no mapping of %1 searched yet").arg(QString::fromStdString(layer)));
        return;
    }
    const mw::SessionRun& r = session_.runs[std::size_t(best)];
    const mw::Evaluation& e = r.result.bestEvaluation;
    archEditor_->setMappingSummary(
        QString("best mapping of %1 (%2): %3 pJ/MAC, %4 cycles")
            .arg(QString::fromStdString(layer), QString::fromStdString(r.searcher))
            .arg(e.computes > 0 ? e.energy / double(e.computes) : 0.0, 0, 'f', 3)
            .arg(e.cycles));
}

void MainWindow::refreshExplorer() {
    explorer_->clear();
    auto* arch = new QTreeWidgetItem(
        explorer_, {QString("Architecture: %1").arg(QString::fromStdString(session_.arch.name))});
    arch->setData(0, Qt::UserRole, "architecture");
    for (int l = 0; l < session_.arch.numLevels(); ++l) {
        const auto& level = session_.arch.levels[std::size_t(l)];
        auto* item = new QTreeWidgetItem(
            arch,
            {QString("%1  (%2)").arg(QString::fromStdString(level.name), mw::toString(level.cls))});
        item->setData(0, Qt::UserRole, "level");
        item->setData(0, Qt::UserRole + 1, l);
    }
    auto* mac =
        new QTreeWidgetItem(arch, {QString("%1  (%2 × %3 MACs)")
                                       .arg(QString::fromStdString(session_.arch.compute.name))
                                       .arg(session_.arch.compute.meshX)
                                       .arg(session_.arch.compute.meshY)});
    mac->setData(0, Qt::UserRole, "level");
    mac->setData(0, Qt::UserRole + 1, session_.arch.numLevels());
    auto* work =
        new QTreeWidgetItem(explorer_, {QString("Workload: %1 (%2 layers)")
                                            .arg(QString::fromStdString(session_.network.name))
                                            .arg(session_.network.layers.size())});
    work->setData(0, Qt::UserRole, "workload");
    for (std::size_t i = 0; i < session_.network.layers.size(); ++i) {
        auto* item =
            new QTreeWidgetItem(work, {QString::fromStdString(session_.network.layers[i].name)});
        item->setData(0, Qt::UserRole, "layer");
        item->setData(0, Qt::UserRole + 1, int(i));
        if (int(i) == session_.currentLayer) {
            QFont f = item->font(0);
            f.setBold(true);
            item->setFont(0, f);
        }
    }
    auto* runs = new QTreeWidgetItem(
        explorer_, {QString("Runs (%1)").arg(session_.runs.size() + requested_.size())});
    runs->setData(0, Qt::UserRole, "runs");
    for (std::size_t i = 0; i < session_.runs.size(); ++i) {
        const mw::SessionRun& r = session_.runs[i];
        // Numbered (repeats differ), what tells runs apart first: a narrow tree
        // cuts the layer's name at the end, not the seed or the result.
        auto* item = new QTreeWidgetItem(
            runs,
            {QString("#%1 %2 · seed %3 — %4 · %5%6")
                 .arg(i + 1)
                 .arg(QString::fromStdString(r.searcher))
                 .arg(r.settings.seed)
                 .arg(r.result.found ? QString::number(r.stale.empty() ? searchPanel_->costNow(r)
                                                                       : r.result.bestCost,
                                                       'g', 4)
                                     : QString("none"))
                 .arg(QString::fromStdString(r.layer))
                 .arg(r.stale.empty() ? QString() : QString(" (stale)"))});
        item->setToolTip(0, item->text(0));
        item->setForeground(0, r.stale.empty()
                                   ? QBrush(searcherColor(r.searcher))
                                   : palette().brush(QPalette::Disabled, QPalette::Text));
        if (!r.stale.empty())
            item->setToolTip(0, QString("Stale: %1").arg(QString::fromStdString(r.stale)));
        item->setData(0, Qt::UserRole, "run");
        item->setData(0, Qt::UserRole + 1, int(i));
    }
    for (const mw::SessionRun& r : requested_)
        new QTreeWidgetItem(runs, {QString("%1 · seed %2 · %3 — requested")
                                       .arg(QString::fromStdString(r.searcher))
                                       .arg(r.settings.seed)
                                       .arg(QString::fromStdString(r.layer))});
    arch->setExpanded(true);
    runs->setExpanded(true);
    work->setExpanded(session_.network.layers.size() <= 16); // long networks: runs stay in view
}

bool MainWindow::showView(const QString& name) {
    const int i = int(kViews.indexOf(name.toLower()));
    if (i < 0) {
        lastError_ = QString("unknown view '%1'; expected one of %2").arg(name, kViews.join(", "));
        return false;
    }
    tabs_->setCurrentIndex(i);
    return true;
}

QString MainWindow::currentView() const {
    return kViews.value(tabs_->currentIndex());
}

void MainWindow::selectLayer(int index) {
    if (index < 0 || index >= int(session_.network.layers.size()))
        return;
    session_.currentLayer = index;
    workloadEditor_->setCurrentLayer(index);
    searchPanel_->setTarget(session_.arch, session_.network, index);
    refreshExplorer();
    statusBar()->showMessage(
        QString("Layer %1 selected for search")
            .arg(QString::fromStdString(session_.network.layers[std::size_t(index)].name)),
        4000);
}

int MainWindow::runRequestedSearches() {
    const std::vector<mw::SessionRun> requests = std::move(requested_);
    requested_.clear();
    for (const mw::SessionRun& r : requests)
        searchPanel_->startRun(r);
    refreshExplorer();
    return int(requests.size());
}

bool MainWindow::waitForSearches(int timeoutMs) {
    return searchPanel_->waitForAll(timeoutMs);
}

void MainWindow::fail(const QString& message) {
    lastError_ = message;
    statusBar()->showMessage(message, 10000);
    if (isVisible() && options_.offerRestore) // interactive: make sure it is seen
        QMessageBox::warning(this, "Mapwright", message);
}

void MainWindow::info(const QString& message) {
    statusBar()->showMessage(message, 6000);
}

} // namespace mw::ui
