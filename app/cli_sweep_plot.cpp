// sweep report --plot: the design-space view's chart (ui/sweep_plot.h),
// rendered offscreen, so the CLI needs no display.
#include "cli_sweep.h"

#ifdef MAPWRIGHT_CLI_PLOT
#include "ui/plot_export.h"
#include "ui/sweep_plot.h"

#include <QApplication>
#include <qcustomplot.h>

#include <cstdio>
#include <memory>
#endif

namespace cli {

#ifndef MAPWRIGHT_CLI_PLOT

bool sweepPlotAvailable() {
    return false;
}

void writeSweepPlot(const std::string&, const mw::SweepSpec&, const std::vector<mw::PointRecord>&,
                    const std::vector<mw::SweepMetric>&) {}

#else

bool sweepPlotAvailable() {
    return true;
}

void writeSweepPlot(const std::string& path, const mw::SweepSpec& spec,
                    const std::vector<mw::PointRecord>& points,
                    const std::vector<mw::SweepMetric>& metrics) {
    // Qt's notes about the offscreen platform are not the user's business.
    qInstallMessageHandler([](QtMsgType type, const QMessageLogContext&, const QString& text) {
        if (type == QtCriticalMsg || type == QtFatalMsg)
            std::fprintf(stderr, "%s\n", qPrintable(text));
    });
    std::unique_ptr<QApplication> app;
    if (!QApplication::instance()) {
        // No display needed for a file.
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
        static int argc = 1;
        static char name[] = "mapwright-cli";
        static char* argv[] = {name, nullptr};
        app = std::make_unique<QApplication>(argc, argv);
    }
    QCustomPlot plot;
    plot.resize(900, 620);
    mw::ui::prepareSweepPlot(&plot,
                             QString::fromStdString(spec.network.name + " on " + spec.base.name +
                                                    ": " + std::to_string(points.size()) +
                                                    " design points, " + spec.searcher));
    mw::ui::SweepPlotChoice choice;
    choice.x = metrics[0];
    choice.y = metrics[1];
    choice.front = metrics;
    mw::ui::drawSweep(&plot, spec, points, choice);
    if (!mw::ui::savePlot(&plot, QString::fromStdString(path)))
        throw InputError(path, "cannot be written (expected a writable .png or .pdf path)");
}

#endif

} // namespace cli
