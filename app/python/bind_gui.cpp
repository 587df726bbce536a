// mapwright.gui(): the explorer launched from Python, with the searchers
// registered from Python beside the built-in ones (they run on the GUI's
// worker threads, taking the GIL while they propose). Where the module is
// built without the GUI, gui() says so.
#include "common/error.h"
#include "py_types.h"

#include <pybind11/stl.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#ifdef MAPWRIGHT_PYTHON_GUI
#include "ui/main_window.h"
#include "ui/search_panel.h"

#include <QApplication>
#include <QStringList>
#include <QTimer>
#endif

namespace py = pybind11;

namespace mwpy {

void bindGui(py::module_& m) {
    m.def(
        "gui",
        [m](const py::object& session, const std::vector<std::string>& run, std::int64_t budget,
            const py::object& screenshot, const std::string& view) {
#ifndef MAPWRIGHT_PYTHON_GUI
            (void)session, (void)run, (void)budget, (void)screenshot, (void)view;
            throw mw::InputError("gui", "this module was built without the GUI "
                                        "(MAPWRIGHT_BUILD_GUI=OFF)");
#else
            // Checked before a window opens: a run of an unknown searcher or a
            // budget of none was dropped, and Qt without a display aborts the
            // interpreter.
            const py::dict registered = m.attr("_searchers");
            const auto builtIn = mw::searcherNames();
            for (const auto& name : run)
                if (!registered.contains(name) &&
                    std::find(builtIn.begin(), builtIn.end(), name) == builtIn.end())
                    throw mw::InputError("run", "'" + name +
                                                    "' is not a searcher; expected one of "
                                                    "searchers()");
            if (budget < 1 || budget > (std::int64_t(1) << 53)) // the command line's limit
                throw mw::InputError("budget", "is " + std::to_string(budget) +
                                                   "; expected evaluations from 1 to 2^53");
            if (!mw::ui::MainWindow::viewNames().contains(QString::fromStdString(view)))
                throw mw::InputError("view",
                                     "is '" + view + "'; expected one of " +
                                         mw::ui::MainWindow::viewNames().join(", ").toStdString());
            if (!QApplication::instance() && !std::getenv("QT_QPA_PLATFORM") &&
                !std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY"))
                throw mw::InputError("gui", "there is no display (DISPLAY is not set); expected "
                                            "one, or QT_QPA_PLATFORM=offscreen with screenshot=");
            // Each registered searcher, made on a worker thread when a run starts.
            std::vector<mw::SearcherFactory> searchers;
            for (const auto& [name, factory] : m.attr("_searchers").cast<py::dict>()) {
                py::object make = py::reinterpret_borrow<py::object>(factory);
                auto shared = std::make_shared<py::object>(std::move(make));
                searchers.push_back(
                    {name.cast<std::string>(), [shared]() -> std::unique_ptr<mw::Searcher> {
                         py::gil_scoped_acquire gil;
                         return std::make_unique<PythonSearcher>((*shared)(), nullptr);
                     }});
            }
            std::unique_ptr<QApplication> app;
            if (!QApplication::instance()) {
                static int argc = 1;
                static char name[] = "mapwright";
                static char* argv[] = {name, nullptr};
                app = std::make_unique<QApplication>(argc, argv);
            }
            const bool scripted = !screenshot.is_none();
            mw::ui::MainWindow::Options o;
            o.offerRestore = !scripted;
            o.autosave = !scripted;
            o.searchers = searchers;
            mw::ui::MainWindow w(o);
            const QString path =
                session.is_none() ? mw::ui::MainWindow::defaultSessionPath()
                                  : QString::fromStdString(
                                        py::str(py::module_::import("os").attr("fspath")(session)));
            if (!path.isEmpty() && !w.openSession(path))
                throw mw::InputError(path.toStdString(), w.lastError().toStdString());
            w.resize(1500, 950);
            w.show();
            {
                py::gil_scoped_release release; // the searchers take it as they need it
                const auto& s = w.session();
                if (!run.empty())
                    w.searchPanel()->presetRuns(run, budget);
                for (const auto& name : run) {
                    mw::SessionRun r;
                    r.searcher = name;
                    r.layer = s.network.layers[std::size_t(s.currentLayer)].name;
                    r.settings.budget.evaluations = budget;
                    r.constraints = s.constraints;
                    w.searchPanel()->startRun(r);
                }
                if (!scripted) {
                    QApplication::exec();
                } else {
                    if (!w.waitForSearches(30 * 60 * 1000))
                        throw std::runtime_error("gui: the searches did not finish in 30 minutes");
                    // A run that ended in an error (a searcher that raised) is
                    // the script's error, as the GUI program's --screenshot says
                    // (it was missing from the result).
                    if (w.searchPanel()->failedRuns() > 0)
                        throw std::runtime_error("gui: " +
                                                 w.searchPanel()->lastError().toStdString());
                    w.showView(QString::fromStdString(view));
                    QTimer::singleShot(300, qApp, &QApplication::quit); // layouts and plots settle
                    QApplication::exec();
                }
            }
            if (scripted) {
                const QString out = QString::fromStdString(
                    py::str(py::module_::import("os").attr("fspath")(screenshot)));
                if (!w.grab().save(out))
                    throw mw::InputError(out.toStdString(), "cannot be written");
            }
            py::dict finished;
            for (const auto& r : w.session().runs)
                finished[py::str(r.searcher)] =
                    r.result.found ? py::cast(r.result.bestCost) : py::none();
            return finished;
#endif
        },
        py::arg("session") = py::none(), py::arg("run") = std::vector<std::string>{},
        py::arg("budget") = 5000, py::arg("screenshot") = py::none(), py::arg("view") = "search",
        "Opens the explorer on a session (the bundled default when None) with the registered "
        "searchers beside the built-in ones; `run` starts those searchers (budget evaluations "
        "each) on the current layer. With screenshot, waits for them, saves the view as PNG and "
        "returns; otherwise returns when the window closes. Returns each run's best cost.");
}

} // namespace mwpy
