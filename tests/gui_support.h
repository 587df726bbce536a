#pragma once
// What the GUI tests share (test_gui: editing, files and sessions;
// test_gui_runs: searches, design points and networks; test_gui_plot: the
// convergence plot): the explorer's
// headers, its options for a test, and a session as text to compare.
#include "common/error.h"
#include "explore/sweep_db.h"
#include "io/json_io.h"
#include "io/session_io.h"
#include "io/timeloop/timeloop.h"
#include "mapspace/mapspace.h"
#include "model/cost_model.h"
#include "test_support.h"
#include "ui/architecture_editor.h"
#include "ui/design_space_view.h"
#include "ui/energy_view.h"
#include "ui/gui_bench.h"
#include "ui/main_window.h"
#include "ui/mapping_inspector.h"
#include "ui/network_view.h"
#include "ui/search_panel.h"
#include "ui/workload_editor.h"

#include <qcustomplot.h>

#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QImage>
#include <QLineEdit>
#include <QProcess>
#include <QProgressBar>
#include <QScopeGuard>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>

#include <memory>

namespace mw::gui_test {

using ui::MainWindow;

inline const QString kSource = MAPWRIGHT_SOURCE_DIR;

inline MainWindow::Options testOptions(const QString& dir) {
    MainWindow::Options o;
    o.offerRestore = false; // no modal dialogs offscreen
    o.autosaveDir = dir;
    return o;
}

inline std::string sessionText(const mw::Session& s) {
    return mw::toJson(s).dump();
}

// What each GUI test class holds: a scratch directory, with Qt's standard
// paths in test mode (no user settings read or written).
class GuiTest : public QObject {
  protected:
    QTemporaryDir dir_;
    QString path(const QString& name) const { return dir_.filePath(name); }
    void prepareScratch() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(dir_.isValid());
    }
};

} // namespace mw::gui_test
