#include "ui/main_window.h"

#include "common/error.h"
#include "io/onnx_import.h"
#include "io/timeloop.h"
#include "model/cost_model.h"
#include "search/surrogate.h"
#include "ui/architecture_editor.h"
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
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
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

#include <atomic>
#include <optional>
#include <thread>

namespace mw::ui {

namespace {

const QStringList kViews = {"architecture", "workload", "search", "inspector", "energy", "network"};
constexpr int kMaxRecent = 8;

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
    tabs_ = new QTabWidget;
    tabs_->setDocumentMode(true);
    tabs_->addTab(archEditor_, "Architecture");
    tabs_->addTab(workloadEditor_, "Workload");
    tabs_->addTab(searchPanel_, "Search");
    tabs_->addTab(inspector_, "Inspector");
    tabs_->addTab(energyView_, "Energy");
    tabs_->addTab(networkView_, "Network");
    setCentralWidget(tabs_);

    explorer_ = new QTreeWidget;
    explorer_->setHeaderHidden(true);
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
    connect(searchPanel_, &SearchPanel::runningChanged, this, [this](int n) {
        running_->setText(n == 0 ? QString("No search running")
                                 : QString("%1 search%2 running").arg(n).arg(n == 1 ? "" : "es"));
    });
    connect(searchPanel_, &SearchPanel::runActivated, this, &MainWindow::showRun);
    connect(searchPanel_, &SearchPanel::constraintsChanged, this, [this](const mw::Json& c) {
        session_.constraints = c;
        networkView_->setConstraints(c);
        setDirty(true);
    });
    connect(searchPanel_, &SearchPanel::message, this, &MainWindow::info);
    connect(inspector_, &MappingInspector::message, this, &MainWindow::info);
    connect(networkView_, &NetworkView::message, this, &MainWindow::info);

    buildActions();

    autosave_ = new QTimer(this);
    autosave_->setInterval(options_.autosaveIntervalMs);
    connect(autosave_, &QTimer::timeout, this, [this] {
        if (dirty_)
            autosaveNow();
    });
    setSession(emptySession());
    setDirty(false);
    if (options_.autosave) {
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

QStringList MainWindow::viewNames() {
    return kViews;
}

QString MainWindow::autosavePath() const {
    const QString dir = options_.autosaveDir.isEmpty()
                            ? QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)
                            : options_.autosaveDir;
    return dir + "/autosave.session.json";
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
        if (path_.isEmpty())
            saveDialog();
        else
            saveSession(path_);
    });
    save->setShortcut(QKeySequence::Save);
    file->addAction("Save session &as…", this, [this] { saveDialog(); })
        ->setShortcut(QKeySequence::SaveAs);
    file->addSeparator();
    file->addAction("Import &architecture…", this, &MainWindow::importArchitectureDialog);
    file->addAction("Import &network (ONNX or JSON)…", this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, "Import network", QString(),
            "Network (*.onnx *.json);;ONNX model (*.onnx);;Workload JSON (*.json)");
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
    bar->addAction(undo);
    bar->addAction(redo);
    bar->addSeparator();
    bar->addAction(run);
    bar->addAction(cancel);
    bar->addSeparator();
    bar->addAction(exportMap);
}

void MainWindow::setSession(const mw::Session& session) {
    session_ = session;
    requested_.clear();
    std::vector<mw::SessionRun> finished;
    for (const mw::SessionRun& r : session_.runs)
        (r.finished ? finished : requested_).push_back(r);
    session_.runs = finished;
    undo_->clear();
    loading_ = true; // the editors announce their new contents; the session is the source
    archEditor_->setArchitecture(session_.arch);
    workloadEditor_->setNetwork(session_.network);
    workloadEditor_->setCurrentLayer(session_.currentLayer);
    loading_ = false;
    refreshViews();
    refreshTitle();
}

bool MainWindow::openTimeloop(const QStringList& files) {
    mw::TimeloopCase c;
    try {
        std::vector<std::string> paths;
        for (const QString& f : files)
            paths.push_back(f.toStdString());
        c = mw::importTimeloop(paths);
        setSession(mw::sessionFromTimeloop(c));
    } catch (const std::exception& e) {
        fail(QString::fromStdString(e.what()));
        return false;
    }
    path_.clear(); // saving asks for a name: the Timeloop files stay as they are
    setDirty(true);
    refreshTitle();
    QStringList names;
    for (const QString& f : files)
        names << QFileInfo(f).fileName();
    QString text = QString("Opened %1").arg(names.join(", "));
    for (const auto& n : c.notes)
        text += "; " + QString::fromStdString(n);
    info(text);
    return true;
}

bool MainWindow::openSession(const QString& path) {
    if (path.endsWith(".yaml", Qt::CaseInsensitive) || path.endsWith(".yml", Qt::CaseInsensitive))
        return openTimeloop({path});
    QString error;
    try {
        const mw::Session s = mw::loadSession(path.toStdString());
        mw::validateArchitecture(s.arch);
        setSession(s);
    } catch (const mw::InputError& e) {
        error = QString::fromStdString(e.what());
    } catch (const std::exception& e) {
        error = QString("%1: %2").arg(path, e.what());
    }
    if (!error.isEmpty()) {
        // The file is left as it is; the autosave, if there is one, is offered.
        const QString autosave = autosavePath();
        const bool offer = path != autosave && QFileInfo::exists(autosave);
        if (offer)
            error += QString(" (the autosaved session %1 can be opened instead)").arg(autosave);
        fail(error);
        if (offer && isVisible() && options_.offerRestore &&
            QMessageBox::question(this, "Open the autosave?",
                                  QString("%1 could not be opened. Open the autosaved session "
                                          "instead?")
                                      .arg(QFileInfo(path).fileName()),
                                  QMessageBox::Yes | QMessageBox::No,
                                  QMessageBox::Yes) == QMessageBox::Yes &&
            openSession(autosave))
            path_.clear(); // save asks for a name: the autosave is not the user's file
        return false;
    }
    path_ = path;
    addRecent(path);
    setDirty(false);
    refreshTitle();
    info(QString("Opened %1").arg(QFileInfo(path).fileName()));
    return true;
}

bool MainWindow::saveSession(const QString& path) {
    try {
        mw::Session s = session_;
        for (const mw::SessionRun& r : requested_)
            s.runs.push_back(r);
        mw::saveSession(path.toStdString(), s);
    } catch (const std::exception& e) {
        fail(QString::fromStdString(e.what()));
        return false;
    }
    path_ = path;
    addRecent(path);
    setDirty(false);
    refreshTitle();
    info(QString("Saved %1").arg(QFileInfo(path).fileName()));
    return true;
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
            const mw::Surrogate s = mw::Surrogate::train(problem, arch, o, report, [&](double f) {
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

bool MainWindow::autosaveNow() {
    try {
        QDir().mkpath(QFileInfo(autosavePath()).absolutePath());
        mw::saveSession(autosavePath().toStdString(), session_);
        return true;
    } catch (const std::exception& e) {
        statusBar()->showMessage(QString("Autosave failed: %1").arg(e.what()), 5000);
        return false;
    }
}

void MainWindow::offerRestore() {
    // A clean exit clears the flag; finding it set means the last window crashed.
    QSettings settings;
    const bool crashed = settings.value("session/running", false).toBool();
    settings.setValue("session/running", true);
    if (!crashed || !QFileInfo::exists(autosavePath()))
        return;
    const auto answer = QMessageBox::question(
        this, "Restore session?",
        "Mapwright did not close cleanly last time. Restore the autosaved session?",
        QMessageBox::Yes | QMessageBox::No, QMessageBox::Yes);
    if (answer == QMessageBox::Yes && openSession(autosavePath()))
        path_.clear(); // save asks for a name: the autosave is not the user's file
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (dirty_ && options_.offerRestore) {
        const auto answer = QMessageBox::question(
            this, "Save session?", "The session has unsaved changes. Save them?",
            QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
        if (answer == QMessageBox::Cancel || (answer == QMessageBox::Save && !saveDialog())) {
            event->ignore();
            return;
        }
    }
    // Runs in flight stop at their next batch and keep their best; the
    // session with them goes to the autosave, so closing loses no work.
    searchPanel_->cancelAll();
    networkView_->cancel();
    waitForSearches(10000);
    networkView_->waitForFinished(10000);
    if (options_.autosave) {
        autosaveNow();
        QSettings().setValue("session/running", false);
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
    setWindowTitle(QString("Mapwright — %1%2").arg(name, dirty_ ? " *" : ""));
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
        if (r.layer != layer || !r.result.found || !r.result.bestEvaluation.valid)
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
        auto* item = new QTreeWidgetItem(
            runs, {QString("%1 · seed %2 · %3 — %4")
                       .arg(QString::fromStdString(r.searcher))
                       .arg(r.settings.seed)
                       .arg(QString::fromStdString(r.layer))
                       .arg(r.result.found ? QString::number(r.result.bestCost, 'g', 4)
                                           : QString("none"))});
        item->setForeground(0, searcherColor(r.searcher));
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

void MainWindow::onArchitectureChanged(const mw::Architecture& a) {
    session_.arch = a;
    // Finished runs keep their mappings; their costs follow the new hardware.
    for (mw::SessionRun& r : session_.runs) {
        const int li = session_.network.layerIndex(r.layer);
        if (!r.result.found || li < 0)
            continue;
        try {
            mw::evaluate(mw::buildProblem(session_.network.layers[std::size_t(li)]), a,
                         r.result.best, r.result.bestEvaluation);
        } catch (const mw::InputError&) {
            r.result.bestEvaluation.valid = false;
        }
    }
    refreshViews();
    setDirty(true);
}

void MainWindow::onNetworkChanged(const mw::Network& n) {
    session_.network = n;
    if (session_.currentLayer >= int(n.layers.size()))
        session_.currentLayer = std::max(0, int(n.layers.size()) - 1);
    // Runs of layers that no longer exist (or changed shape) cannot be shown.
    std::vector<mw::SessionRun> kept;
    for (const mw::SessionRun& r : session_.runs) {
        const int li = n.layerIndex(r.layer);
        if (li < 0)
            continue;
        try {
            const mw::Problem p = mw::buildProblem(n.layers[std::size_t(li)]);
            if (!r.result.found || mw::evaluate(p, session_.arch, r.result.best).valid)
                kept.push_back(r);
        } catch (const mw::InputError&) {
        }
    }
    if (kept.size() != session_.runs.size())
        info(QString("%1 run(s) no longer match the edited workload and were set aside")
                 .arg(session_.runs.size() - kept.size()));
    session_.runs = kept;
    refreshViews();
    setDirty(true);
}

void MainWindow::onRunFinished(const mw::SessionRun& run) {
    session_.runs.push_back(run);
    const int index = int(session_.runs.size()) - 1;
    searchPanel_->setRuns(session_.runs);
    inspector_->setSession(session_.arch, session_.network, session_.runs);
    energyView_->setSession(session_.arch, session_.network, session_.runs);
    // Show the best run of the current layer in the inspector.
    int best = index;
    for (std::size_t i = 0; i < session_.runs.size(); ++i) {
        const auto& r = session_.runs[i];
        if (r.layer == run.layer && r.result.found &&
            (!session_.runs[std::size_t(best)].result.found ||
             r.result.bestCost < session_.runs[std::size_t(best)].result.bestCost))
            best = int(i);
    }
    inspector_->showRun(best);
    energyView_->showRun(best);
    refreshExplorer();
    refreshArchitectureTotals();
    setDirty(true);
    statusBar()->showMessage(
        QString("%1 (seed %2) finished: %3 after %4 evaluations%5")
            .arg(QString::fromStdString(run.searcher))
            .arg(run.settings.seed)
            .arg(run.result.found ? QString::number(run.result.bestCost, 'g', 5) : "no mapping")
            .arg(run.result.evaluations)
            .arg(run.result.cancelled ? " (cancelled, best kept)" : ""),
        6000);
}

void MainWindow::showRun(int runIndex) {
    inspector_->showRun(runIndex);
    energyView_->showRun(runIndex);
    showView("inspector");
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

void MainWindow::addRecent(const QString& path) {
    if (path == autosavePath())
        return;
    QSettings settings;
    QStringList recent = settings.value("recentSessions").toStringList();
    recent.removeAll(path);
    recent.prepend(QFileInfo(path).absoluteFilePath());
    while (recent.size() > kMaxRecent)
        recent.removeLast();
    settings.setValue("recentSessions", recent);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
    if (!recentMenu_)
        return;
    recentMenu_->clear();
    const QStringList recent = QSettings().value("recentSessions").toStringList();
    for (const QString& path : recent)
        recentMenu_
            ->addAction(QFileInfo(path).fileName(), this, [this, path] { openSession(path); })
            ->setToolTip(path);
    recentMenu_->setEnabled(!recent.isEmpty());
}

void MainWindow::openDialog() {
    const QStringList paths = QFileDialog::getOpenFileNames(
        this,
        "Open a session, or Timeloop files (select them all: arch, problem, mapping, "
        "constraints, mapper, ERT, ART)",
        QString(),
        "Session or Timeloop files (*.json *.yaml *.yml);;Mapwright session (*.json);;"
        "Timeloop YAML (*.yaml *.yml)");
    if (paths.isEmpty())
        return;
    bool yaml = false;
    for (const QString& p : paths)
        yaml = yaml || !p.endsWith(".json", Qt::CaseInsensitive);
    if (yaml)
        openTimeloop(paths);
    else if (paths.size() == 1)
        openSession(paths.front());
    else
        fail("Open one session (.json) at a time, or Timeloop .yaml files together.");
}

bool MainWindow::saveDialog() {
    QString path =
        QFileDialog::getSaveFileName(this, "Save session", path_, "Mapwright session (*.json)");
    if (path.isEmpty())
        return false;
    if (!path.endsWith(".json"))
        path += ".json";
    return saveSession(path);
}

bool MainWindow::exportMapping(const QString& path) {
    if (!inspector_->hasMapping()) {
        fail("No mapping to export: run a search first and pick its mapping in the inspector.");
        return false;
    }
    try {
        const mw::Problem& p = inspector_->problem();
        const std::string text =
            path.endsWith(".yaml", Qt::CaseInsensitive) ||
                    path.endsWith(".yml", Qt::CaseInsensitive)
                ? mw::timeloopMappingYaml(p, session_.arch, inspector_->mapping())
                : mw::toJson(inspector_->mapping(), p, session_.arch).dump(1) + "\n";
        mw::writeTextFile(path.toStdString(), text);
    } catch (const std::exception& e) {
        fail(QString::fromStdString(e.what()));
        return false;
    }
    info(QString("Exported the mapping to %1").arg(path));
    return true;
}

bool MainWindow::importNetwork(const QString& path, qint64 batch, bool interactive) {
    if (!path.endsWith(".onnx", Qt::CaseInsensitive)) {
        if (!workloadEditor_->importNetwork(path)) {
            fail(workloadEditor_->lastError());
            return false;
        }
        return true;
    }
    // An ONNX model is read off the GUI thread (a large one takes a while).
    mw::OnnxImportOptions options;
    options.batch = batch;
    for (;;) {
        std::optional<mw::OnnxImport> result;
        QString error;
        std::atomic<bool> done{false};
        std::thread worker([&] {
            try {
                result = mw::importOnnx(QFile::encodeName(path).toStdString(), options);
            } catch (const std::exception& e) {
                error = QString::fromStdString(e.what());
            }
            done.store(true, std::memory_order_release);
        });
        QProgressDialog dialog(QString("Reading %1…").arg(QFileInfo(path).fileName()), QString(), 0,
                               0, this);
        dialog.setWindowModality(Qt::WindowModal);
        dialog.setMinimumDuration(300);
        while (!done.load(std::memory_order_acquire)) {
            QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
            QThread::msleep(5);
        }
        worker.join();
        dialog.reset();
        if (result) {
            workloadEditor_->setImportedNetwork(result->network);
            QStringList counts;
            for (const auto& [role, count] : result->roleCounts)
                counts << QString("%1 %2").arg(count).arg(QString::fromStdString(role));
            QStringList skipped;
            for (const auto& [op, count] : result->skipped)
                skipped << QString("%1 ×%2").arg(QString::fromStdString(op)).arg(count);
            info(QString("Imported %1: %2 layers (%3 distinct shapes): %4%5")
                     .arg(QFileInfo(path).fileName())
                     .arg(result->network.layers.size())
                     .arg(result->distinctShapes)
                     .arg(counts.join(", "))
                     .arg(skipped.isEmpty() ? QString()
                                            : QString("; skipped %1").arg(skipped.join(", "))));
            return true;
        }
        // A dynamic batch: ask for one and read again.
        if (interactive && options.batch == 0 && error.contains("dynamic batch")) {
            bool ok = false;
            const int b = QInputDialog::getInt(this, "Batch size",
                                               error + "\n\nBatch size for the import:", 1, 1,
                                               1'000'000, 1, &ok);
            if (ok) {
                options.batch = b;
                continue;
            }
        }
        fail(error);
        return false;
    }
}

bool MainWindow::exportTimeloop(const QString& dir) {
    const auto& layers = session_.network.layers;
    if (session_.currentLayer < 0 || session_.currentLayer >= int(layers.size())) {
        fail("No layer to export: add one in the workload view.");
        return false;
    }
    try {
        const mw::Problem p = mw::buildProblem(layers[std::size_t(session_.currentLayer)]);
        // The inspected mapping goes along when it is of this layer.
        const bool withMapping = inspector_->hasMapping() && inspector_->problem().name == p.name &&
                                 inspector_->problem().numDims() == p.numDims();
        mw::TimeloopMapper mapper;
        mapper.objective = "edp";
        mw::exportTimeloop(
            p, session_.arch, withMapping ? &inspector_->mapping() : nullptr, dir.toStdString(),
            session_.constraints.is_null() ? nullptr : &session_.constraints, mapper);
        info(QString("Exported %1 on %2 for Timeloop to %3 (%4ERT, ART, %5mapper.yaml)")
                 .arg(QString::fromStdString(p.name), QString::fromStdString(session_.arch.name),
                      dir, withMapping ? "mapping.yaml, " : "",
                      session_.constraints.is_null() ? "" : "constraints.yaml, "));
    } catch (const std::exception& e) {
        fail(QString::fromStdString(e.what()));
        return false;
    }
    return true;
}

bool MainWindow::exportTraces(const QString& path) {
    std::string csv = "run,searcher,seed,layer," + mw::traceCsv(mw::SearchResult{});
    csv.pop_back(); // the header of traceCsv ends the line; rows follow
    csv += "\n";
    for (std::size_t i = 0; i < session_.runs.size(); ++i) {
        const mw::SessionRun& r = session_.runs[i];
        const std::string rows = mw::traceCsv(r.result);
        std::size_t pos = rows.find('\n') + 1; // skip the header
        const std::string prefix = std::to_string(i + 1) + "," + r.searcher + "," +
                                   std::to_string(r.settings.seed) + "," + r.layer + ",";
        while (pos < rows.size()) {
            const std::size_t end = rows.find('\n', pos);
            csv += prefix + rows.substr(pos, end - pos + 1);
            pos = end + 1;
        }
    }
    try {
        mw::writeTextFile(path.toStdString(), csv);
    } catch (const std::exception& e) {
        fail(QString::fromStdString(e.what()));
        return false;
    }
    info(QString("Exported %1 traces to %2").arg(session_.runs.size()).arg(path));
    return true;
}

bool MainWindow::exportPlot(const QString& path) {
    const bool ok =
        currentView() == "energy" ? energyView_->exportPlot(path) : searchPanel_->exportPlot(path);
    if (!ok)
        fail(QString("Could not write the plot to %1").arg(path));
    return ok;
}

void MainWindow::exportMappingDialog() {
    const QString path =
        QFileDialog::getSaveFileName(this, "Export mapping", "mapping.json",
                                     "Mapwright mapping (*.json);;Timeloop mapping (*.yaml)");
    if (!path.isEmpty())
        exportMapping(path);
}

void MainWindow::exportTracesDialog() {
    const QString path =
        QFileDialog::getSaveFileName(this, "Export traces", "traces.csv", "CSV (*.csv)");
    if (!path.isEmpty())
        exportTraces(path);
}

void MainWindow::exportPlotDialog() {
    const QString path = QFileDialog::getSaveFileName(this, "Export plot", "plot.png",
                                                      "PNG image (*.png);;PDF document (*.pdf)");
    if (!path.isEmpty())
        exportPlot(path);
}

void MainWindow::exportTimeloopDialog() {
    const QString dir = QFileDialog::getExistingDirectory(this, "Export for Timeloop into");
    if (!dir.isEmpty())
        exportTimeloop(dir);
}

void MainWindow::importArchitectureDialog() {
    const QString path = QFileDialog::getOpenFileName(this, "Import architecture", QString(),
                                                      "Architecture JSON (*.json)");
    if (path.isEmpty())
        return;
    try {
        const mw::Architecture a = mw::loadArchitecture(path.toStdString());
        if (!archEditor_->applyEdit(a, QString("Import %1").arg(QFileInfo(path).fileName())))
            fail(archEditor_->lastError());
    } catch (const mw::InputError& e) {
        fail(QString::fromStdString(e.what()));
    }
}

} // namespace mw::ui
