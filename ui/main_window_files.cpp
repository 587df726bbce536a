// The main window's files: sessions, Timeloop cases and networks in; mappings,
// Timeloop cases, traces and charts out; recent files.
#include "ui/main_window.h"

#include "common/error.h"
#include "io/onnx_import.h"
#include "io/timeloop/template.h"
#include "io/timeloop/timeloop.h"
#include "model/cost_model.h"
#include "search/surrogate.h"
#include "ui/architecture_editor.h"
#include "ui/design_space_view.h"
#include "ui/energy_view.h"
#include "ui/mapping_inspector.h"
#include "ui/network_view.h"
#include "ui/plot_export.h"
#include "ui/search_panel.h"
#include "ui/template_data_dialog.h"
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

constexpr int kMaxRecent = 8;

} // namespace

bool MainWindow::openTimeloop(const QStringList& files,
                              const std::vector<std::pair<std::string, std::string>>& templateData,
                              bool interactive) {
    mw::TimeloopCase c;
    try {
        std::vector<std::string> paths;
        for (const QString& f : files)
            paths.push_back(f.toStdString());
        std::vector<std::pair<std::string, std::string>> data = templateData;
        if (data.empty() && interactive) {
            // A top file's parse data, asked for by name.
            for (const QString& f : files) {
                if (!f.endsWith(".jinja2") && !f.endsWith(".jinja") && !f.endsWith(".j2"))
                    continue;
                QStringList names;
                for (const auto& v : mw::templateVariables(f.toStdString()))
                    names << QString::fromStdString(v);
                if (names.isEmpty())
                    continue;
                const auto asked = askTemplateData(this, f, names);
                if (!asked)
                    return false; // cancelled: the session stays as it was
                data.insert(data.end(), asked->begin(), asked->end());
            }
        }
        c = mw::importTimeloop(paths, data);
        const mw::Session opened = mw::sessionFromTimeloop(c);
        if (!settleSession(QString("opening %1").arg(QFileInfo(files.front()).fileName())))
            return false; // cancelled: the session stays as it was
        setSession(opened);
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
    if (mw::isTimeloopFileName(path.toStdString()))
        return openTimeloop({path}, {}, isVisible());
    QString error;
    try {
        const mw::Session s = mw::loadSession(path.toStdString());
        mw::validateArchitecture(s.arch);
        if (!settleSession(QString("opening %1").arg(QFileInfo(path).fileName())))
            return false; // cancelled: the session stays as it was
        setSession(s);
    } catch (const mw::InputError& e) {
        error = QString::fromStdString(e.what());
    } catch (const std::exception& e) {
        error = QString("%1: %2").arg(path, e.what());
    }
    if (!error.isEmpty()) {
        // The file is left as it is; the autosave, if there is one, is offered.
        // (Not in a window that does not autosave, a script's: the file there
        // is another window's, of some other session.)
        const QString autosave = autosavePath();
        const bool offer = options_.autosave && path != autosave && QFileInfo::exists(autosave);
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
    commitPendingEdits(); // what is typed is saved
    try {
        mw::saveSession(path.toStdString(), sessionToSave());
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

void MainWindow::addRecent(const QString& path) {
    if (isAutosave(path))
        return;
    QSettings settings;
    QStringList recent = settings.value("recentSessions").toStringList();
    const QString absolute = QFileInfo(path).absoluteFilePath();
    recent.removeAll(absolute);
    recent.prepend(absolute);
    recent.removeDuplicates(); // lists written before paths were made absolute
    while (recent.size() > kMaxRecent)
        recent.removeLast();
    settings.setValue("recentSessions", recent);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
    if (!recentMenu_)
        return;
    recentMenu_->clear();
    QStringList recent;
    for (const QString& path : QSettings().value("recentSessions").toStringList())
        recent << QFileInfo(path).absoluteFilePath();
    recent.removeDuplicates(); // one entry per file, however it was named
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
        "constraints, mapper, ERT, ART; or a Jinja2 top file)",
        QString(),
        "Session or Timeloop files (*.json *.yaml *.yml *.jinja2 *.jinja *.j2);;"
        "Mapwright session (*.json);;Timeloop YAML (*.yaml *.yml);;"
        "Timeloop front-end template (*.jinja2 *.jinja *.j2)");
    if (paths.isEmpty())
        return;
    bool yaml = false;
    for (const QString& p : paths)
        yaml = yaml || !p.endsWith(".json", Qt::CaseInsensitive);
    if (yaml)
        openTimeloop(paths, {}, true);
    else if (paths.size() == 1)
        openSession(paths.front());
    else
        fail("Open one session (.json) at a time, or Timeloop .yaml files together.");
}

QString MainWindow::askSavePath() {
    // A bundled sample is offered under its name in the user's documents.
    const QString suggested =
        isBundledSample(path_)
            ? QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation) + "/" +
                  QFileInfo(path_).fileName()
            : path_;
    QString path =
        QFileDialog::getSaveFileName(this, "Save session", suggested, "Mapwright session (*.json)");
    if (!path.isEmpty() && !path.endsWith(".json"))
        path += ".json";
    return path;
}

bool MainWindow::saveDialog() {
    const QString path = askSavePath();
    return !path.isEmpty() && saveSession(path);
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
        QStringList notes;
        if (!workloadEditor_->importNetwork(path, &notes)) {
            fail(workloadEditor_->lastError());
            return false;
        }
        notes.prepend(QString("Imported %1: %2 layers")
                          .arg(QFileInfo(path).fileName())
                          .arg(session_.network.layers.size()));
        info(notes.join("; "));
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
            QString text =
                QString("Imported %1: %2 layers (%3 distinct shapes): %4%5")
                    .arg(QFileInfo(path).fileName())
                    .arg(result->network.layers.size())
                    .arg(result->distinctShapes)
                    .arg(counts.join(", "))
                    .arg(skipped.isEmpty() ? QString()
                                           : QString("; skipped %1").arg(skipped.join(", ")));
            for (const auto& n : result->notes)
                text += "; " + QString::fromStdString(n);
            info(text);
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
        // The constraints searches run under: the session's may no longer
        // fit the design, and the search panel then holds none.
        const mw::Json& constraints = searchPanel_->constraints();
        const std::vector<std::string> notes = mw::exportTimeloop(
            p, session_.arch, withMapping ? &inspector_->mapping() : nullptr, dir.toStdString(),
            constraints.is_null() ? nullptr : &constraints, mapper);
        QStringList asides;
        for (const std::string& n : notes)
            asides << QString::fromStdString(n);
        info(QString("Exported %1 on %2 for Timeloop to %3 (%4ERT, ART, %5mapper.yaml)%6")
                 .arg(QString::fromStdString(p.name), QString::fromStdString(session_.arch.name),
                      dir, withMapping ? "mapping.yaml, " : "",
                      constraints.is_null() ? "" : "constraints.yaml, ",
                      asides.isEmpty() ? QString() : "; " + asides.join("; ")));
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
    const QString view = currentView();
    if (view != "search" && view != "energy" && view != "design" && view != "network") {
        fail(QString("The %1 view has no chart to export; the search, energy, network and "
                     "design views have (File → Export mapping saves the inspected mapping)")
                 .arg(view));
        return false;
    }
    const bool ok = view == "energy"    ? energyView_->exportPlot(path)
                    : view == "design"  ? savePlot(designView_->plot(), path)
                    : view == "network" ? savePlot(networkView_->energyPlot(), path)
                                        : searchPanel_->exportPlot(path);
    if (!ok)
        fail(QString("Could not write the plot to %1").arg(path));
    return ok;
}

void MainWindow::exportMappingDialog() {
    commitPendingEdits(); // exported as typed
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
    commitPendingEdits(); // exported as typed
    const QString dir = QFileDialog::getExistingDirectory(this, "Export for Timeloop into");
    if (dir.isEmpty())
        return;
    // A case's files replace those of the folder (an imported case's own,
    // say), and a mapping or constraints file this case has none of goes:
    // asked first when there are any.
    QStringList present;
    for (const char* name : mw::kTimeloopCaseFiles)
        if (QFileInfo::exists(dir + "/" + name))
            present << name;
    if (!present.isEmpty() &&
        QMessageBox::question(this, "Replace files?",
                              QString("%1 already holds %2. Replace them with this case's (a "
                                      "mapping.yaml or constraints.yaml it has none of is kept "
                                      "as NAME.yaml.earlier)?")
                                  .arg(dir, present.join(", ")),
                              QMessageBox::Yes | QMessageBox::Cancel,
                              QMessageBox::Cancel) != QMessageBox::Yes)
        return;
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
