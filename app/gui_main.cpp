// mapwright: the explorer GUI. The window lives in ui/; this parses the
// command line, including the scripted screenshot mode used for the docs and
// the responsiveness benchmark:
//   mapwright [--session FILE | TIMELOOP.yaml...] [--screenshot OUT.png [--view NAME]
//             [--select LEVEL]] [--bench-gui]
#include "common/error.h"
#include "io/timeloop/template.h"
#include "ui/architecture_editor.h"
#include "ui/design_space_view.h"
#include "ui/gui_bench.h"
#include "ui/main_window.h"
#include "ui/network_view.h"
#include "ui/search_panel.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

int main(int argc, char** argv) {
    // QGuiApplication takes "-session"/"--session" for X11 session management
    // and would swallow ours: take it out of argv first.
    QString sessionArg;
    std::vector<char*> args;
    for (int i = 0; i < argc; ++i) {
        const QString a = QString::fromLocal8Bit(argv[i]);
        if ((a == "--session" || a == "-session") && i + 1 < argc)
            sessionArg = QString::fromLocal8Bit(argv[++i]);
        else if (a.startsWith("--session="))
            sessionArg = a.mid(10);
        else
            args.push_back(argv[i]);
    }
    int count = int(args.size());
    args.push_back(nullptr);
    // --help needs no display: without one, a QApplication aborts before the
    // parser could print the options.
    const bool helpOnly = std::any_of(args.begin() + 1, args.begin() + count, [](const char* a) {
        return std::strcmp(a, "--help") == 0 || std::strcmp(a, "-h") == 0 ||
               std::strcmp(a, "--help-all") == 0;
    });
    std::unique_ptr<QCoreApplication> app =
        helpOnly ? std::make_unique<QCoreApplication>(count, args.data())
                 : std::make_unique<QApplication>(count, args.data());
    QApplication::setApplicationName("Mapwright");
    QApplication::setOrganizationName("Mapwright");
    QCommandLineParser parser;
    parser.setApplicationDescription("Map-space exploration for DNN and tensor accelerators");
    parser.addHelpOption();
    parser.addOption({"session", "Open this session (default: the bundled sample).", "FILE"});
    const QStringList arguments = QApplication::arguments();
    parser.addOption({"screenshot",
                      "Render a view to this PNG after running the searches the session "
                      "requests, then exit.",
                      "OUT.png"});
    parser.addOption({"view", "View to show: " + mw::ui::MainWindow::viewNames().join(", ") + ".",
                      "NAME", "search"});
    parser.addOption({"select",
                      "Select this level (a name, or the compute level's) in the architecture "
                      "view.",
                      "LEVEL"});
    parser.addOption({"import",
                      "Import this network (ONNX or our JSON) as the workload, after opening "
                      "the session.",
                      "MODEL"});
    parser.addOption({"batch", "The batch of an ONNX model whose batch is dynamic.", "N"});
    parser.addOption({"set",
                      "Parse data for a Jinja2 top file among the Timeloop files (repeatable; "
                      "without it the window asks).",
                      "NAME=VALUE"});
    parser.addOption(
        {"sweep", "Open a sweep's results database in the design-space view.", "RESULTS.sqlite"});
    parser.addPositionalArgument("files",
                                 "Timeloop YAML files to open together (arch, problem, mapping, "
                                 "constraints, mapper, ERT, ART), instead of a session.",
                                 "[FILES...]");
    parser.addOption({"bench-gui",
                      "Measure how responsive the window stays while two 2-thread searches "
                      "run (longest stall of the GUI thread, plot refreshes), print it, exit."});
    parser.process(arguments);

    const bool bench = parser.isSet("bench-gui");
    const bool scripted = parser.isSet("screenshot") || bench;
    mw::ui::MainWindow::Options options;
    options.offerRestore = !scripted;
    options.autosave = !scripted;
    mw::ui::MainWindow window(options);
    const QStringList files = parser.positionalArguments();
    const QString session = !files.isEmpty()       ? files.join(", ")
                            : sessionArg.isEmpty() ? mw::ui::MainWindow::defaultSessionPath()
                                                   : sessionArg;
    std::vector<std::pair<std::string, std::string>> templateData;
    try {
        for (const QString& s : parser.values("set"))
            templateData.push_back(mw::parseTemplateSetting(s.toStdString(), "--set"));
    } catch (const mw::InputError& e) {
        std::fprintf(stderr, "mapwright: %s\n", e.what());
        return 2;
    }
    const bool opened = !files.isEmpty()    ? window.openTimeloop(files, templateData, !scripted)
                        : session.isEmpty() ? true
                                            : window.openSession(session);
    if (!opened && scripted) {
        std::fprintf(stderr, "mapwright: %s\n", qPrintable(window.lastError()));
        return 1;
    }
    if (parser.isSet("import") &&
        !window.importNetwork(parser.value("import"), parser.value("batch").toLongLong(),
                              !scripted) &&
        scripted) {
        std::fprintf(stderr, "mapwright: %s\n", qPrintable(window.lastError()));
        return 1;
    }
    if (parser.isSet("sweep") && !window.designView()->openResults(parser.value("sweep")) &&
        scripted) {
        std::fprintf(stderr, "mapwright: %s\n", qPrintable(window.designView()->lastError()));
        return 1;
    }
    if (parser.isSet("select")) {
        const mw::Architecture& a = window.session().arch;
        const std::string name = parser.value("select").toStdString();
        const int level = name == a.compute.name ? a.numLevels() : a.levelIndex(name);
        if (level < 0) {
            std::fprintf(stderr, "mapwright: --select: '%s' is not a level\n", name.c_str());
            return 2;
        }
        window.architectureEditor()->selectLevel(level);
    }
    if (!window.showView(parser.value("view"))) {
        std::fprintf(stderr, "mapwright: --view: %s\n", qPrintable(window.lastError()));
        return 2;
    }
    if (!scripted) {
        window.show();
        return QApplication::exec();
    }
    if (bench) {
        window.resize(1500, 950);
        const mw::ui::GuiResponsiveness r = mw::ui::measureResponsiveness(window);
        std::printf("gui responsiveness: longest GUI-thread gap %lld ms, plot refreshed %.1f "
                    "times/s (%d refreshes in %.2f s, two searches on 2 threads each)\n",
                    static_cast<long long>(r.longestGapMs), r.replotsPerSecond, r.replots,
                    r.seconds);
        return r.finished ? 0 : 1;
    }
    window.resize(1500, 950);
    window.show();
    window.runRequestedSearches();
    if (!window.waitForSearches(30 * 60 * 1000)) {
        std::fprintf(stderr, "mapwright: the session's searches did not finish\n");
        return 1;
    }
    // A requested search that failed (a parameter out of range, say) is the
    // script's error too, not only a line in the picture's status bar.
    if (window.searchPanel()->failedRuns() > 0) {
        std::fprintf(stderr, "mapwright: %s\n", qPrintable(window.searchPanel()->lastError()));
        return 1;
    }
    if (parser.value("view") == "network") { // the network view shows a network search
        window.networkView()->run();
        window.networkView()->waitForFinished(30 * 60 * 1000);
    }
    window.showView(parser.value("view"));
    QApplication::processEvents();
    QTimer::singleShot(300, app.get(), &QApplication::quit); // let layouts and plots settle
    QApplication::exec();
    const QString out = parser.value("screenshot");
    if (!window.grab().save(out)) {
        std::fprintf(stderr, "mapwright: cannot write %s\n", qPrintable(out));
        return 1;
    }
    std::printf("wrote %s (%s view; session %s with %zu finished runs)\n", qPrintable(out),
                qPrintable(parser.value("view")), qPrintable(QFileInfo(session).fileName()),
                window.session().runs.size());
    return 0;
}
