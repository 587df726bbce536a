#include "ui/sweep_plot.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace mw::ui {

QString metricTitle(SweepMetric m) {
    switch (m) {
    case SweepMetric::Energy:
        return "energy (mJ)";
    case SweepMetric::Cycles:
        return "cycles";
    case SweepMetric::Edp:
        return "EDP (J·cycle)";
    case SweepMetric::Area:
        return "on-chip area (mm²)";
    }
    return {};
}

QColor valueColor(int k, int n) {
    // Viridis-like: dark blue through green to yellow, readable on white.
    static const QColor stops[] = {QColor(68, 1, 84), QColor(59, 82, 139), QColor(33, 145, 140),
                                   QColor(94, 201, 98), QColor(222, 200, 30)};
    const double t = n <= 1 ? 0.0 : double(k) / double(n - 1);
    const double pos = t * 4.0;
    const int i = std::min(3, int(pos));
    const double f = pos - i;
    const QColor a = stops[i], b = stops[i + 1];
    return QColor(int(a.red() + f * (b.red() - a.red())),
                  int(a.green() + f * (b.green() - a.green())),
                  int(a.blue() + f * (b.blue() - a.blue())));
}

namespace {

const char* const kColourKey = "sweepColourKey";

// Log scale where the values span more than two decades.
void fitAxis(QCPAxis* axis, const std::vector<double>& values) {
    double lo = INFINITY, hi = 0;
    for (double v : values)
        if (v > 0) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    if (!(hi > 0)) {
        axis->setScaleType(QCPAxis::stLinear);
        axis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        axis->setRange(0, 1);
        return;
    }
    if (hi / lo > 100) {
        axis->setScaleType(QCPAxis::stLogarithmic);
        axis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
        axis->setRange(lo / 1.3, hi * 1.3);
    } else {
        axis->setScaleType(QCPAxis::stLinear);
        axis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        const double pad = std::max((hi - lo) * 0.08, hi * 0.02);
        axis->setRange(std::max(0.0, lo - pad), hi + pad);
    }
}

} // namespace

void prepareSweepPlot(QCustomPlot* plot, const QString& title) {
    if (!title.isEmpty()) {
        plot->plotLayout()->insertRow(0);
        plot->plotLayout()->addElement(
            0, 0, new QCPTextElement(plot, title, QFont(plot->font().family(), 10, QFont::Bold)));
    }
    // The legend below the chart, in columns, so it never hides a point.
    auto* below = new QCPLayoutGrid;
    plot->plotLayout()->addElement(plot->plotLayout()->rowCount(), 0, below);
    plot->plotLayout()->setRowStretchFactor(plot->plotLayout()->rowCount() - 1, 0.001);
    below->setMargins(QMargins(0, 0, 0, 4));
    // What the colours stand for, once, above a legend of short values: a
    // "shared_glb.capacity_words = 32768" per entry was clipped to "3276"
    // where the view left the chart less than three of them.
    auto* key = new QCPTextElement(plot, QString(), QFont(plot->font().family(), 8));
    key->setObjectName(kColourKey);
    below->addElement(0, 0, key);
    below->addElement(1, 0, plot->legend);
    plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
    plot->legend->setWrap(3);
    plot->legend->setBorderPen(Qt::NoPen);
    plot->legend->setFont(QFont(plot->font().family(), 8));
}

std::vector<std::size_t> drawSweep(QCustomPlot* plot, const SweepSpec& spec,
                                   const std::vector<PointRecord>& points,
                                   const SweepPlotChoice& choice) {
    plot->clearPlottables();
    plot->clearItems();
    plot->legend->clearItems();
    const std::vector<SweepMetric> frontMetrics =
        choice.front.empty() ? std::vector<SweepMetric>{choice.x, choice.y} : choice.front;
    const std::vector<std::size_t> front = paretoFront(points, frontMetrics);

    std::vector<double> xs, ys;
    for (const auto& r : points)
        if (r.valid) {
            xs.push_back(metricValue(r, choice.x));
            ys.push_back(metricValue(r, choice.y));
        }
    fitAxis(plot->xAxis, xs);
    fitAxis(plot->yAxis, ys);
    plot->xAxis->setLabel(metricTitle(choice.x));
    plot->yAxis->setLabel(metricTitle(choice.y));

    // One scatter per value of the colouring parameter, so the legend names them.
    const bool coloured = choice.colourAxis >= 0 && choice.colourAxis < int(spec.axes.size());
    const std::vector<std::string> values =
        coloured ? spec.axes[std::size_t(choice.colourAxis)].values : std::vector<std::string>{""};
    for (std::size_t k = 0; k < values.size(); ++k) {
        QVector<double> x, y;
        for (const auto& r : points)
            if (r.valid && (!coloured || r.values[std::size_t(choice.colourAxis)] == values[k])) {
                x << metricValue(r, choice.x);
                y << metricValue(r, choice.y);
            }
        auto* g = plot->addGraph();
        g->setLineStyle(QCPGraph::lsNone);
        const QColor c = coloured ? valueColor(int(k), int(values.size())) : QColor(40, 90, 160);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, c, c, 8));
        g->setData(x, y);
        g->setName(coloured ? QString::fromStdString(values[k]) : QString("design points"));
    }
    if (auto* key = plot->findChild<QCPTextElement*>(kColourKey))
        key->setText(coloured ? QString("colour: %1")
                                    .arg(QString::fromStdString(
                                        spec.axes[std::size_t(choice.colourAxis)].parameter))
                              : QString());
    // The front: its points ringed and, over two figures, joined as steps.
    QVector<double> fx, fy;
    for (std::size_t i : front) {
        fx << metricValue(points[i], choice.x);
        fy << metricValue(points[i], choice.y);
    }
    auto* f = plot->addGraph();
    f->setName(QString("Pareto front (%1)").arg([&] {
        QStringList names;
        for (SweepMetric m : frontMetrics)
            names << toString(m);
        return names.join(", ");
    }()));
    f->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(Qt::black, 1.5), Qt::NoBrush, 13));
    if (frontMetrics.size() == 2 && frontMetrics[0] == choice.x && frontMetrics[1] == choice.y) {
        f->setLineStyle(QCPGraph::lsStepLeft);
        f->setPen(QPen(QColor(200, 40, 40), 1.5, Qt::DashLine));
    } else {
        f->setLineStyle(QCPGraph::lsNone);
    }
    f->setData(fx, fy, true);
    plot->legend->setVisible(true);
    plot->replot();
    return front;
}

} // namespace mw::ui
