// The search panel's convergence plot: a curve per run (a hue per searcher,
// a shade and dash per further run of it), the lower bound and a proven
// optimum as reference lines, the axes (evaluations or seconds, linear or
// logarithmic), the tooltips and the export.
#include "ui/search_panel.h"

#include "ui/plot_export.h"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QMouseEvent>
#include <QSignalBlocker>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace mw::ui {

void SearchPanel::setTimeAxis(bool seconds) {
    setView({seconds, logX_});
    emit viewChanged(view());
}

void SearchPanel::setLogX(bool on) {
    setView({timeAxis_, on});
    emit viewChanged(view());
}

void SearchPanel::setView(const mw::SessionView& v) {
    // The widgets show the view without announcing it again; the plot is
    // rebuilt once.
    timeAxis_ = v.searchSeconds;
    logX_ = v.searchLogX;
    {
        const QSignalBlocker quietAxis(xAxis_), quietLog(logXBox_);
        xAxis_->setCurrentIndex(timeAxis_ ? 1 : 0);
        logXBox_->setChecked(logX_);
    }
    plot_->xAxis->setLabel(timeAxis_ ? "wall time (s)" : "evaluations");
    plot_->xAxis->setScaleType(logX_ ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    plot_->xAxis->setTicker(logX_ ? QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog)
                                  : QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    rebuildPlot();
}

QVector<double> SearchPanel::plotKeys(const QVector<double>& xs) const {
    if (!logX_)
        return xs;
    QVector<double> keys = xs;
    for (double& k : keys)
        k = std::max(k, logFloor());
    return keys;
}

int SearchPanel::nextVariant(const std::string& searcher, std::uint64_t seed) const {
    // By seed, so a run keeps its look when another finishes; a repeated seed
    // takes the next look.
    int repeats = 0;
    for (const Curve& c : finishedCurves_)
        repeats += c.graph && c.searcher == searcher && c.seed == seed;
    for (const auto& [id, live] : live_)
        repeats += live.curve.graph && live.curve.searcher == searcher && live.curve.seed == seed;
    return int((seed + 24) % 25) + repeats;
}

void SearchPanel::refreshCurve(Curve& c) {
    QCPGraph* g = c.graph;
    if (!g)
        return;
    // Runs of one searcher share its hue; each further run is a shade darker
    // or lighter and dashed differently, with its own legend entry.
    static const Qt::PenStyle kDashes[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine,
                                           Qt::DashDotLine, Qt::DashDotDotLine};
    static const int kShades[] = {100, 145, 70, 190, 55};
    const QColor base = searcherColor(c.searcher);
    const int shade = kShades[c.variant % 5];
    const QColor color = shade >= 100 ? base.darker(shade) : base.lighter(100 * 100 / shade);
    g->setPen(QPen(color, 1.8, kDashes[(c.variant / 5 + c.variant) % 5]));
    g->setLineStyle(QCPGraph::lsStepLeft);
    g->setName(QString("%1 · seed %2%3")
                   .arg(QString::fromStdString(c.searcher))
                   .arg(c.seed)
                   .arg(c.earlierDesign ? " (earlier design)" : ""));
    g->setData(plotKeys(timeAxis_ ? c.seconds : c.evaluations), c.best, true);
}

void SearchPanel::rebuildPlot() {
    plot_->clearGraphs();
    finishedCurves_.clear();
    for (auto& [id, live] : live_)
        live.curve.graph = nullptr; // (cleared above: drawn again below where it belongs)
    // Only runs of the objective the axis shows: another objective's figures
    // are in other units (joules against joules x cycles).
    const std::string objective = formObjective().name();
    std::map<std::string, int> otherObjectives; // runs of this layer left out, by objective
    for (const mw::SessionRun& r : runs_) {
        if (!r.finished || !r.stale.empty() || network_.layerIndex(r.layer) != layer_)
            continue; // (a stale run's curve was of another design)
        if (r.settings.objective.name() != objective) {
            ++otherObjectives[r.settings.objective.name()];
            continue;
        }
        Curve c;
        c.searcher = r.searcher;
        c.seed = r.settings.seed;
        c.earlierDesign = searchedAnotherDesign(r); // (its history; the table has its cost now)
        for (const mw::TracePoint& t : r.result.trace) {
            if (t.best >= mw::SearchContext::kInfinity)
                continue;
            // Steps only where the best improves (the trace also thins the rest).
            if (!c.best.isEmpty() && t.best >= c.best.back() && &t != &r.result.trace.back())
                continue;
            c.evaluations << double(t.evaluation);
            c.seconds << t.seconds;
            c.best << t.best;
        }
        if (!c.best.isEmpty()) { // carry the final best to the end of the run
            c.evaluations << double(r.result.evaluations);
            c.seconds << r.result.seconds;
            c.best << c.best.back();
        }
        finishedCurves_.push_back(std::move(c));
    }
    for (Curve& c : finishedCurves_) {
        c.variant = nextVariant(c.searcher, c.seed);
        c.graph = plot_->addGraph();
        refreshCurve(c);
    }
    for (auto& [id, live] : live_) {
        if (network_.layerIndex(live.request.layer) != layer_)
            continue;
        if (live.request.settings.objective.name() != objective) {
            ++otherObjectives[live.request.settings.objective.name()];
            continue;
        }
        live.curve.variant = nextVariant(live.curve.searcher, live.curve.seed);
        live.curve.graph = plot_->addGraph();
        refreshCurve(live.curve);
    }
    QStringList left;
    int leftRuns = 0;
    for (const auto& [name, count] : otherObjectives) {
        left << QString("%1: %2").arg(QString::fromStdString(name)).arg(count);
        leftRuns += count;
    }
    plotNote_->setText(left.isEmpty()
                           ? QString()
                           : QString("Not drawn: %1 %2 of this layer that searched another "
                                     "objective (%3). Choose that objective to see %4.")
                                 .arg(leftRuns)
                                 .arg(leftRuns == 1 ? "run" : "runs")
                                 .arg(left.join(", "))
                                 .arg(leftRuns == 1 ? "its curve" : "their curves"));
    plotNote_->setVisible(!left.isEmpty());
    refreshPlotNow();
}

QString SearchPanel::plotNote() const {
    return plotNote_->text();
}

void SearchPanel::refreshPlotNow() {
    dirty_ = false;
    refreshLiveRows();
    for (auto& [id, live] : live_)
        if (live.curve.graph)
            live.curve.graph->setData(
                plotKeys(timeAxis_ ? live.curve.seconds : live.curve.evaluations), live.curve.best,
                true);
    double xMax = 1.0, yMin = 1e300, yMax = 0.0;
    auto account = [&](const Curve& c) {
        if (!c.graph)
            return;
        const auto& xs = timeAxis_ ? c.seconds : c.evaluations;
        for (int i = 0; i < c.best.size(); ++i) {
            xMax = std::max(xMax, xs[i]);
            yMin = std::min(yMin, c.best[i]);
            yMax = std::max(yMax, c.best[i]);
        }
    };
    for (const Curve& c : finishedCurves_)
        account(c);
    for (const auto& [id, live] : live_)
        account(live.curve);
    // Horizontal reference lines: the lower bound (mw::lowerBound), which no
    // legal mapping beats, and the optimum, once a run of the optimal searcher
    // has proved it.
    auto line = [&](const QString& name, double y, const QPen& pen) {
        QCPGraph* g = nullptr;
        for (int i = 0; i < plot_->graphCount(); ++i)
            if (plot_->graph(i)->name() == name)
                g = plot_->graph(i);
        if (y <= 0) {
            if (g)
                plot_->removeGraph(g);
            return;
        }
        if (!g) {
            g = plot_->addGraph();
            g->setName(name);
            g->setPen(pen);
        }
        const double right = timeAxis_ ? std::max(xMax, 1e-3) : xMax;
        g->setData({logX_ ? logFloor() : 0.0, logX_ ? right * 1.5 : right * 1.02}, {y, y});
        yMin = std::min(yMin, y);
        yMax = std::max(yMax, y);
    };
    line("lower bound", lowerBound_, QPen(Qt::black, 1.2, Qt::DashLine));
    double opt = 0.0;
    if (layer_ >= 0 && layer_ < int(network_.layers.size()))
        opt = optimum(network_.layers[std::size_t(layer_)].name, formObjective().name());
    line("optimum", opt, QPen(searcherColor("optimal"), 1.4, Qt::DashDotLine));
    if (yMax > 0 && yMin < 1e300) {
        if (logX_)
            plot_->xAxis->setRange(logFloor(), std::max(xMax, logFloor() * 10) * 1.5);
        else
            plot_->xAxis->setRange(0, xMax * 1.02);
        plot_->yAxis->setRange(yMin / 1.3, yMax * 1.3);
    }
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void SearchPanel::showTooltip(QMouseEvent* event) {
    // The nearest point of any curve, within 12 pixels.
    double bestDist = 12.0;
    QString text;
    for (int i = 0; i < plot_->graphCount(); ++i) {
        QCPGraph* g = plot_->graph(i);
        for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it) {
            const double px = plot_->xAxis->coordToPixel(it->key);
            const double py = plot_->yAxis->coordToPixel(it->value);
            const double d = std::hypot(px - event->pos().x(), py - event->pos().y());
            if (d < bestDist) {
                bestDist = d;
                text = QString("%1\n%2 %3\nbest %4")
                           .arg(g->name())
                           .arg(timeAxis_ ? "time" : "evaluation")
                           .arg(timeAxis_ ? QString::number(it->key, 'f', 3) + " s"
                                          : QString::number(it->key, 'f', 0))
                           .arg(QString::number(it->value, 'g', 5));
            }
        }
    }
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(event->globalPosition().toPoint(), text, plot_);
}

bool SearchPanel::exportPlot(const QString& path) {
    return savePlot(plot_, path);
}

} // namespace mw::ui
