#include "ui/energy_view.h"

#include "ui/plot_export.h"

#include "common/error.h"
#include "ui/search_panel.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>

#include <map>

namespace mw::ui {

namespace {

const QColor kSeries[] = {QColor(0x00, 0x72, 0xb2), QColor(0xe6, 0x9f, 0x00),
                          QColor(0x00, 0x9e, 0x73), QColor(0xcc, 0x79, 0xa7),
                          QColor(0x56, 0xb4, 0xe9), QColor(0xd5, 0x5e, 0x00),
                          QColor(0x99, 0x99, 0x99), QColor(0x44, 0x44, 0x44)};

// The MACs: one colour in every chart.
const QColor kMac(0x33, 0x33, 0x33);

// The memory levels' colours: one hue family of their own, darker outwards,
// so no level shares a colour with a tensor (kSeries) in the other chart.
QColor levelColor(int level, int levels) {
    const double depth = levels > 1 ? double(level) / double(levels - 1) : 0.0;
    return QColor::fromHsv(285 - int(40 * depth), 110, 110 + int(120 * depth));
}

void styleAxes(QCustomPlot* p, const QString& yLabel) {
    p->yAxis->setLabel(yLabel);
    p->xAxis->setTickLabelRotation(30);
    p->xAxis->grid()->setVisible(false);
    p->legend->setVisible(true);
    p->legend->setFont(QFont(p->font().family(), 8));
    // The legend beside the bars, never over them: a column of its own, the
    // legend at its top.
    p->axisRect()->insetLayout()->take(p->legend);
    auto* side = new QCPLayoutGrid;
    p->plotLayout()->addElement(0, 1, side);
    p->plotLayout()->setColumnStretchFactor(1, 0.001);
    side->addElement(0, 0, p->legend);
    side->addElement(1, 0, new QCPLayoutElement(p));
    side->setRowStretchFactor(0, 0.001);
    side->setMargins(QMargins(0, 6, 6, 0)); // (none: the box's right edge was cut off)
}

// Stacked bars: series[s][x] values, named, over the x labels.
void stackedBars(QCustomPlot* p, const QStringList& labels, const QStringList& names,
                 const std::vector<QVector<double>>& series, const std::vector<QColor>& colors) {
    p->clearPlottables();
    QVector<double> ticks;
    for (int i = 0; i < labels.size(); ++i)
        ticks << i + 1;
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    ticker->addTicks(ticks, labels.toVector());
    p->xAxis->setTicker(ticker);
    p->xAxis->setRange(0.3, labels.size() + 0.7);
    QCPBars* below = nullptr;
    double top = 0.0;
    QVector<double> heights(labels.size(), 0.0);
    for (std::size_t s = 0; s < series.size(); ++s) {
        bool any = false;
        for (double v : series[s])
            any = any || v > 0;
        if (!any)
            continue; // a series with nothing in it only clutters the legend
        auto* bars = new QCPBars(p->xAxis, p->yAxis);
        bars->setName(names[int(s)]);
        bars->setWidth(0.6);
        bars->setPen(QPen(colors[s].darker(130)));
        bars->setBrush(colors[s]);
        bars->setData(ticks, series[s], true);
        if (below)
            bars->moveAbove(below);
        below = bars;
        for (int i = 0; i < heights.size(); ++i) {
            heights[i] += series[s][i];
            top = std::max(top, heights[i]);
        }
    }
    p->yAxis->setRange(0, top > 0 ? top * 1.12 : 1.0);
    p->replot();
}

} // namespace

EnergyView::EnergyView(QWidget* parent) : QWidget(parent) {
    pick_ = new QComboBox;
    pick_->setObjectName("energyRunPicker");
    pick_->setMinimumContentsLength(30);
    split_ = new QComboBox;
    split_->addItems({"by tensor", "by action"});
    connect(pick_, &QComboBox::activated, this,
            [this](int i) { showRun(pick_->itemData(i).toInt()); });
    connect(split_, &QComboBox::currentIndexChanged, this,
            [this](int i) { setSplitByAction(i == 1); });
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel("Mapping"));
    bar->addWidget(pick_, 1);
    bar->addWidget(new QLabel("Split"));
    bar->addWidget(split_);
    summary_ = new QLabel;
    summary_->setTextFormat(Qt::RichText);
    summary_->setWordWrap(true);
    levels_ = new QCustomPlot;
    compare_ = new QCustomPlot;
    styleAxes(levels_, "energy (µJ)");
    styleAxes(compare_, "energy of each searcher's best (µJ)");
    levels_->plotLayout()->insertRow(0);
    levels_->plotLayout()->addElement(
        0, 0,
        new QCPTextElement(levels_, "Energy per level", QFont(font().family(), 10, QFont::Bold)));
    compare_->plotLayout()->insertRow(0);
    compare_->plotLayout()->addElement(0, 0,
                                       new QCPTextElement(compare_,
                                                          "Best mapping of each searcher, by level",
                                                          QFont(font().family(), 10, QFont::Bold)));
    area_ = new QCustomPlot;
    styleAxes(area_, "area (mm²)");
    area_->plotLayout()->insertRow(0);
    area_->plotLayout()->addElement(
        0, 0,
        new QCPTextElement(area_, "Area (all instances)", QFont(font().family(), 10, QFont::Bold)));
    auto* top = new QSplitter(Qt::Horizontal);
    top->addWidget(levels_);
    top->addWidget(area_);
    top->setStretchFactor(0, 3);
    top->setStretchFactor(1, 2);
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(top);
    split->addWidget(compare_);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(summary_);
    layout->addWidget(split, 1);
    refresh();
}

void EnergyView::setSession(const mw::Architecture& arch, const mw::Network& network,
                            const std::vector<mw::SessionRun>& runs) {
    arch_ = arch;
    network_ = network;
    runs_ = runs;
    pick_->clear();
    int last = -1; // current: a stale run (another design's) is shown only when chosen
    for (std::size_t i = 0; i < runs_.size(); ++i)
        if (runs_[i].finished && runs_[i].result.found) {
            pick_->addItem(runLabel(runs_[i], int(i)), int(i));
            if (runs_[i].stale.empty())
                last = int(i);
        }
    const bool keep = run_ >= 0 && pick_->findData(run_) >= 0;
    showRun(keep ? run_ : last);
}

QString EnergyView::summaryText() const {
    return summary_->text();
}

void EnergyView::showRun(int runIndex) {
    run_ = runIndex;
    const int at = pick_->findData(runIndex);
    if (at >= 0)
        pick_->setCurrentIndex(at);
    refresh();
}

void EnergyView::setSplitByAction(bool byAction) {
    byAction_ = byAction;
    if (split_->currentIndex() != (byAction ? 1 : 0))
        split_->setCurrentIndex(byAction ? 1 : 0);
    refresh();
}

void EnergyView::refresh() {
    drawLevels();
    drawArea();
    drawComparison();
}

void EnergyView::drawArea() {
    // The values in use (estimated, imported or typed), over all instances;
    // DRAM is off chip.
    QStringList labels;
    std::vector<QVector<double>> series(2);
    for (const auto& level : arch_.levels) {
        if (level.cls == mw::LevelClass::DRAM || level.cls == mw::LevelClass::Dummy)
            continue;
        labels << QString::fromStdString(level.name);
        series[0] << level.area * double(level.instances()) * 1e-6;
        series[1] << 0.0;
    }
    labels << QString::fromStdString(arch_.compute.name);
    series[0] << 0.0;
    series[1] << arch_.compute.area * double(arch_.compute.instances()) * 1e-6;
    stackedBars(area_, labels, {"storage", "MACs"}, series, {levelColor(0, 2), kMac});
}

void EnergyView::drawLevels() {
    const bool has = run_ >= 0 && run_ < int(runs_.size()) && runs_[std::size_t(run_)].result.found;
    if (!has) {
        summary_->setText("No mapping yet: run a search to see where its energy goes.");
        stackedBars(levels_, {}, {}, {}, {});
        return;
    }
    const mw::SessionRun& r = runs_[std::size_t(run_)];
    const mw::Evaluation& e = r.result.bestEvaluation;
    if (!r.stale.empty()) {
        // Its figures are the earlier design's: its levels may not be this
        // one's (one removed shifts the rest), nor its area.
        stackedBars(levels_, {}, {}, {}, {});
        summary_->setText(
            QString("<b style='color:#b00020'>Stale: %1.</b> As last computed on the design it "
                    "was searched on: energy %2 µJ · cycles %3 · EDP %4 J·cycle. Its levels are "
                    "not drawn against this design's; run it again (right-click it in the "
                    "search table) to see them.")
                .arg(QString::fromStdString(r.stale).toHtmlEscaped())
                .arg(e.energy * 1e-6, 0, 'f', 2)
                .arg(e.cycles)
                .arg(e.edp, 0, 'g', 5));
        return;
    }
    const int li = network_.layerIndex(r.layer);
    mw::Problem p;
    try {
        p = mw::buildProblem(network_.layers[std::size_t(std::max(li, 0))]);
    } catch (const mw::InputError&) {
        return;
    }
    QStringList labels;
    for (const auto& level : arch_.levels)
        labels << QString::fromStdString(level.name);
    labels << QString::fromStdString(arch_.compute.name);
    const int L = arch_.numLevels();
    QStringList names;
    std::vector<QVector<double>> series;
    std::vector<QColor> colors;
    auto add = [&](const QString& name, const QColor& c) {
        names << name;
        colors.push_back(c);
        series.emplace_back(L + 1, 0.0);
        return series.size() - 1;
    };
    if (byAction_) {
        const auto read = add("read", kSeries[0]), fill = add("fill", kSeries[1]),
                   update = add("update", kSeries[2]), leak = add("leak", kSeries[6]),
                   mac = add("MAC", kMac);
        for (int l = 0; l < L; ++l) {
            for (int t = 0; t < p.numTensors(); ++t) {
                const auto& ts = e.levels[std::size_t(l)].tensors[std::size_t(t)];
                series[read][l] += ts.readEnergy * 1e-6;
                series[fill][l] += ts.fillEnergy * 1e-6;
                series[update][l] += ts.updateEnergy * 1e-6;
            }
            series[leak][l] = e.levels[std::size_t(l)].leakEnergy * 1e-6;
        }
        series[mac][L] = e.computeEnergy * 1e-6;
    } else {
        std::vector<std::size_t> index;
        for (int t = 0; t < p.numTensors(); ++t)
            index.push_back(
                add(QString::fromStdString(p.tensors[std::size_t(t)].name), kSeries[t % 6]));
        const auto leak = add("leak", kSeries[6]), mac = add("MAC", kMac);
        for (int l = 0; l < L; ++l) {
            for (int t = 0; t < p.numTensors(); ++t)
                series[index[std::size_t(t)]][l] =
                    e.levels[std::size_t(l)].tensors[std::size_t(t)].energy * 1e-6;
            series[leak][l] = e.levels[std::size_t(l)].leakEnergy * 1e-6;
        }
        series[mac][L] = e.computeEnergy * 1e-6;
    }
    stackedBars(levels_, labels, names, series, colors);
    double bound = 0.0;
    try {
        bound = mw::lowerBound(p, arch_, r.settings.objective).edp;
    } catch (const mw::InputError&) {
        bound = 0.0;
    }
    QString perLevel;
    for (int l = 0; l < L; ++l)
        perLevel += QString("%1 %2 · ")
                        .arg(QString::fromStdString(arch_.levels[std::size_t(l)].name))
                        .arg(e.levels[std::size_t(l)].cycles);
    summary_->setText(
        QString("<b>%1</b> on <b>%2</b> (%3, seed %4): energy <b>%5 µJ</b> (MACs %6 µJ) · "
                "cycles <b>%7</b> · utilization <b>%8 %</b> · EDP <b>%9</b> J·cycle%10<br>"
                "<span style='color:#555'>cycles per level: %11compute %12</span>")
            .arg(QString::fromStdString(r.layer).toHtmlEscaped(),
                 QString::fromStdString(arch_.name).toHtmlEscaped(),
                 QString::fromStdString(r.searcher))
            .arg(r.settings.seed)
            .arg(e.energy * 1e-6, 0, 'f', 2)
            .arg(e.computeEnergy * 1e-6, 0, 'f', 2)
            .arg(e.cycles)
            .arg(e.utilization * 100.0, 0, 'f', 1)
            .arg(e.edp, 0, 'g', 5)
            .arg(bound > 0 ? QString(" (%1 × the lower bound)").arg(e.edp / bound, 0, 'f', 2)
                           : QString())
            .arg(perLevel)
            .arg(e.computeCycles));
    double area = arch_.compute.area * double(arch_.compute.instances());
    for (const auto& level : arch_.levels)
        if (level.cls != mw::LevelClass::DRAM)
            area += level.area * double(level.instances());
    summary_->setText(summary_->text() +
                      QString("<br>%1 pJ per MAC · on-chip area %2 mm² at %3 nm · EDP × area "
                              "%4 J·cycle·mm²")
                          .arg(e.computes > 0 ? e.energy / double(e.computes) : 0.0, 0, 'f', 3)
                          .arg(area * 1e-6, 0, 'f', 3)
                          .arg(arch_.technologyNm)
                          .arg(e.edp * area * 1e-6, 0, 'g', 4));
}

void EnergyView::drawComparison() {
    // The best run of each searcher on the shown run's layer.
    std::map<std::string, int> best;
    const std::string layer =
        run_ >= 0 && run_ < int(runs_.size()) ? runs_[std::size_t(run_)].layer : std::string();
    for (std::size_t i = 0; i < runs_.size(); ++i) {
        const mw::SessionRun& r = runs_[i];
        if (!r.finished || !r.result.found || !r.stale.empty() || r.layer != layer)
            continue; // (a stale run's best was of another design)
        const auto it = best.find(r.searcher);
        if (it == best.end() ||
            r.result.bestEvaluation.edp < runs_[std::size_t(it->second)].result.bestEvaluation.edp)
            best[r.searcher] = int(i);
    }
    QStringList labels;
    for (const auto& [name, index] : best)
        labels << QString::fromStdString(name);
    const int L = arch_.numLevels();
    QStringList names;
    std::vector<QVector<double>> series(std::size_t(L + 1), QVector<double>(labels.size(), 0.0));
    std::vector<QColor> colors;
    for (int l = 0; l < L; ++l) {
        names << QString::fromStdString(arch_.levels[std::size_t(l)].name);
        colors.push_back(levelColor(l, L));
    }
    names << "MAC";
    colors.push_back(kMac);
    int x = 0;
    for (const auto& [name, index] : best) {
        const mw::Evaluation& e = runs_[std::size_t(index)].result.bestEvaluation;
        for (int l = 0; l < L; ++l)
            series[std::size_t(l)][x] = e.levels[std::size_t(l)].energy * 1e-6;
        series[std::size_t(L)][x] = e.computeEnergy * 1e-6;
        ++x;
    }
    stackedBars(compare_, labels, names, series, colors);
}

bool EnergyView::exportPlot(const QString& path) {
    return savePlot(levels_, path);
}

} // namespace mw::ui
