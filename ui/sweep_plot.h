#pragma once
// A sweep's points as a scatter of two of its figures, coloured by one of its
// parameters, with the Pareto front drawn: the design-space view's chart and
// `mapwright-cli sweep report --plot`, one drawing for both.
#include "explore/pareto.h"

#include <QColor>
#include <QString>

#include <vector>

class QCustomPlot;

namespace mw::ui {

struct SweepPlotChoice {
    SweepMetric x = SweepMetric::Energy;
    SweepMetric y = SweepMetric::Cycles;
    int colourAxis = 0; // the parameter that colours the points; -1: one colour
    // The figures the front is over (x and y when empty; a third makes the
    // points on the 3-D front show as such).
    std::vector<SweepMetric> front;
};

// Lays the chart out once: a title (when given) above, the legend below.
void prepareSweepPlot(QCustomPlot* plot, const QString& title = {});

// Clears `plot` and draws the valid points of `points` (invalid ones are
// listed, not drawn); returns the indices of those on the front.
std::vector<std::size_t> drawSweep(QCustomPlot* plot, const SweepSpec& spec,
                                   const std::vector<PointRecord>& points,
                                   const SweepPlotChoice& choice);

// Axis titles as the charts show them: "energy (mJ)".
QString metricTitle(SweepMetric m);
// The colour of value k of n along a parameter's values.
QColor valueColor(int k, int n);

} // namespace mw::ui
