#include "ui/network_view.h"

#include "common/error.h"
#include "ui/event_wait.h"
#include "ui/search_job.h"
#include "ui/search_panel.h"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <thread>

namespace mw::ui {

namespace {

void setupBarPlot(QCustomPlot* p, const QString& title, const QString& yLabel) {
    p->plotLayout()->insertRow(0);
    p->plotLayout()->addElement(
        0, 0, new QCPTextElement(p, title, QFont(p->font().family(), 10, QFont::Bold)));
    p->yAxis->setLabel(yLabel);
    p->xAxis->setTickLabelRotation(60);
    p->xAxis->setTickLabelFont(QFont(p->font().family(), 7));
    p->xAxis->grid()->setVisible(false);
}

} // namespace

NetworkView::NetworkView(QWidget* parent) : QWidget(parent) {
    searcher_ = new QComboBox;
    for (const auto& name : mw::searcherNames())
        searcher_->addItem(QString::fromStdString(name));
    searcher_->setCurrentText("gamma");
    budget_ = new QSpinBox;
    budget_->setRange(10, 10'000'000);
    budget_->setValue(20'000); // a whole network in seconds, its progress visible
    budget_->setSuffix(" evaluations / layer");
    threads_ = new QSpinBox;
    threads_->setRange(
        1, std::clamp(int(std::thread::hardware_concurrency()), 1, mw::kMaxSearchThreads));
    threads_->setValue(threads_->maximum());
    threads_->setPrefix("threads ");
    warm_ = new QCheckBox("Warm start");
    warm_->setToolTip("Seed each layer with the finished layer most like it (map-space study)");
    run_ = new QPushButton("Run network");
    cancel_ = new QPushButton("Cancel");
    cancel_->setEnabled(false);
    keep_ = new QPushButton("Keep as runs");
    keep_->setToolTip("Add each searched layer's best mapping to the session as a run: saved "
                      "with it, and open in the Inspector and Energy views");
    keep_->setEnabled(false);
    progress_ = new QProgressBar;
    progress_->setFormat("%v / %m layers");
    connect(run_, &QPushButton::clicked, this, [this] { run(); });
    connect(cancel_, &QPushButton::clicked, this, [this] { cancel(); });
    connect(keep_, &QPushButton::clicked, this, &NetworkView::keepOutcome);
    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel("Searcher"));
    top->addWidget(searcher_);
    top->addWidget(budget_);
    top->addWidget(threads_);
    top->addWidget(warm_);
    top->addWidget(run_);
    top->addWidget(keep_);
    top->addWidget(cancel_);
    top->addWidget(progress_, 1);
    totals_ = new QLabel("Run a searcher over every layer of the workload.");
    totals_->setTextFormat(Qt::RichText);
    energy_ = new QCustomPlot;
    cycles_ = new QCustomPlot;
    setupBarPlot(energy_, "Energy per layer", "µJ");
    setupBarPlot(cycles_, "Cycles per layer", "cycles");
    layers_ = new QTableWidget(0, 9);
    layers_->setHorizontalHeaderLabels({"Layer", "Evaluations", "Time (s)", "Energy (µJ)", "Cycles",
                                        "EDP", "EDP / bound", "Searcher figures", "Note"});
    layers_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    layers_->horizontalHeader()->setStretchLastSection(true);
    layers_->verticalHeader()->setVisible(false);
    layers_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(energy_);
    split->addWidget(cycles_);
    split->addWidget(layers_);
    // The bars need height to stay readable; the table scrolls.
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 3);
    split->setStretchFactor(2, 2);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(totals_);
    layout->addWidget(split, 1);
}

NetworkView::~NetworkView() = default;

void NetworkView::setTarget(const mw::Architecture& arch, const mw::Network& network) {
    arch_ = arch;
    network_ = network;
    if (!running())
        progress_->setRange(0, int(network.layers.size()));
    if (hasOutcome_)
        refreshTotals(); // stale or current again (an undo)
}

void NetworkView::keepOutcome() {
    if (!outcomeUnkept())
        return;
    kept_ = true;
    keep_->setEnabled(false);
    emit keepRuns(outcomeRuns());
}

void NetworkView::clearOutcome() {
    outcome_ = {};
    hasOutcome_ = false;
    kept_ = false;
    keep_->setEnabled(false);
    draw();
    totals_->setText("Run a searcher over every layer of the workload.");
}

bool NetworkView::outcomeStale() const {
    return hasOutcome_ && mw::designFingerprints(searchedArch_, searchedNetwork_) !=
                              mw::designFingerprints(arch_, network_);
}

std::vector<mw::SessionRun> NetworkView::outcomeRuns() const {
    std::vector<mw::SessionRun> runs;
    if (!hasOutcome_)
        return runs;
    for (std::size_t i = 0; i < outcome_.layers.size(); ++i) {
        const mw::LayerOutcome& l = outcome_.layers[i];
        if (l.sameAs >= 0 || !l.result.found)
            continue;
        mw::SessionRun run;
        run.searcher = searchedWith_.searcher;
        run.layer = l.name;
        run.settings = searchedWith_.settings;
        run.finished = true;
        run.result = l.result;
        run.constraints = searchedConstraints_;
        if (i < searchedNetwork_.layers.size())
            run.design = mw::designFingerprint(searchedArch_, searchedNetwork_.layers[i]);
        runs.push_back(std::move(run));
    }
    return runs;
}

void NetworkView::setSearcher(const QString& name) {
    searcher_->setCurrentText(name);
}
void NetworkView::setBudget(int evaluationsPerLayer) {
    budget_->setValue(evaluationsPerLayer);
}
void NetworkView::setWarmStart(bool on) {
    warm_->setChecked(on);
}
void NetworkView::setThreads(int threads) {
    threads_->setValue(threads);
}

bool NetworkView::running() const {
    return job_ && job_->running();
}

bool NetworkView::run() {
    if (running())
        return false;
    try {
        mw::validateArchitecture(arch_);
        for (const auto& layer : network_.layers)
            mw::buildProblem(layer);
    } catch (const mw::InputError& e) {
        lastError_ = QString::fromStdString(e.what());
        emit message(lastError_);
        return false;
    }
    mw::NetworkSearchOptions options;
    options.searcher = searcher_->currentText().toStdString();
    options.settings.budget.evaluations = budget_->value();
    options.settings.threads = threads_->value();
    options.warmStart = warm_->isChecked();
    if (!constraints_.is_null())
        options.constraints = [c = constraints_, a = arch_](const mw::Problem& p) {
            return mw::constraintsFromJson(c, p, a);
        };
    searchedArch_ = arch_;
    searchedNetwork_ = network_;
    searchedConstraints_ = constraints_;
    searchedWith_ = options;
    job_ = std::make_unique<SearchJob>(0, arch_, network_, options);
    connect(job_.get(), &SearchJob::mailArrived, this, [this] {
        if (!job_)
            return;
        const SearchJob::Mail mail = job_->take();
        if (!mail.layerProgress.empty())
            progress_->setValue(mail.layerProgress.back().layer);
        if (mail.outcome) {
            outcome_ = *mail.outcome;
            hasOutcome_ = true;
            kept_ = false;
            keep_->setEnabled(true);
            job_->wait();
            run_->setEnabled(true);
            cancel_->setEnabled(false);
            progress_->setValue(progress_->maximum());
            draw();
            emit finished();
        } else if (mail.failure) {
            lastError_ = *mail.failure;
            job_->wait();
            run_->setEnabled(true);
            cancel_->setEnabled(false);
            totals_->setText(mail.failure->toHtmlEscaped());
            emit this->message(*mail.failure);
            emit finished();
        }
    });
    run_->setEnabled(false);
    cancel_->setEnabled(true);
    progress_->setValue(0);
    totals_->setText(QString("Searching %1 layers with %2…")
                         .arg(network_.layers.size())
                         .arg(searcher_->currentText()));
    job_->start();
    return true;
}

void NetworkView::cancel() {
    if (job_)
        job_->cancel();
}

int NetworkView::layerInProgress() const {
    return progress_->value();
}

bool NetworkView::waitForFinished(int timeoutMs) {
    return processEventsWhile([this] { return running(); }, timeoutMs);
}

void NetworkView::draw() {
    QVector<double> ticks, energy, cycles;
    QVector<QString> labels;
    for (std::size_t i = 0; i < outcome_.layers.size(); ++i) {
        const mw::LayerOutcome& l = outcome_.layers[i];
        ticks << double(i + 1);
        labels << QString::fromStdString(l.name);
        energy << (l.result.found ? l.result.bestEvaluation.energy * 1e-6 : 0.0);
        cycles << (l.result.found ? double(l.result.bestEvaluation.cycles) : 0.0);
    }
    const QColor color = searcherColor(searchedWith_.searcher);
    for (auto [plot, values] : {std::pair{energy_, &energy}, std::pair{cycles_, &cycles}}) {
        plot->clearPlottables();
        auto* bars = new QCPBars(plot->xAxis, plot->yAxis);
        bars->setWidth(0.75);
        bars->setBrush(color);
        bars->setPen(QPen(color.darker(130)));
        bars->setData(ticks, *values, true);
        QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
        // Every label when they fit, else every k-th.
        const int step = std::max(1, int(labels.size()) / 40);
        for (int i = 0; i < labels.size(); i += step)
            ticker->addTick(ticks[i], labels[i]);
        plot->xAxis->setTicker(ticker);
        plot->xAxis->setRange(0.3, labels.size() + 0.7);
        double top = 0;
        for (double v : *values)
            top = std::max(top, v);
        plot->yAxis->setRange(0, top > 0 ? top * 1.1 : 1.0);
        plot->replot();
    }
    // The table: a repeated layer shows the searched one's mapping, not its time.
    layers_->setRowCount(int(outcome_.layers.size()));
    for (std::size_t i = 0; i < outcome_.layers.size(); ++i) {
        const mw::LayerOutcome& l = outcome_.layers[i];
        const mw::Evaluation& e = l.result.bestEvaluation;
        const bool searched = l.sameAs < 0;
        QString note = QString::fromStdString(mw::layerNote(outcome_, i));
        if (!l.result.found)
            note = (note + " " + QString::fromStdString(l.result.stopReason)).trimmed();
        const QStringList cells = {
            QString::fromStdString(l.name),
            searched ? QString::number(l.result.evaluations) : QString("—"),
            searched ? QString::number(l.result.seconds, 'f', 2) : QString("—"),
            l.result.found ? QString::number(e.energy * 1e-6, 'f', 3) : QString("—"),
            l.result.found ? QString::number(e.cycles) : QString("—"),
            l.result.found ? QString::number(e.edp, 'g', 5) : QString("—"),
            l.result.found && l.bound.edp > 0 ? QString::number(e.edp / l.bound.edp, 'f', 2)
                                              : QString("—"),
            searched ? searcherFigures(l.result, ", ", false) : QString(),
            note};
        for (int c = 0; c < cells.size(); ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            if (c >= 1 && c <= 6)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            const auto& specs = searchedNetwork_.layers;
            if (c == 0 && i < specs.size() && !specs[i].source.empty())
                item->setToolTip("from " + QString::fromStdString(specs[i].source));
            if (c == 7 && searched)
                item->setToolTip(searcherFigures(l.result, "\n", true));
            layers_->setItem(int(i), c, item);
        }
    }
    // The figures column only when a searcher reports figures (CoSA's solve,
    // a surrogate's steps): empty, it took the note's width.
    bool anyFigures = false;
    for (int row = 0; row < layers_->rowCount(); ++row)
        anyFigures = anyFigures || !layers_->item(row, 7)->text().isEmpty();
    layers_->setColumnHidden(7, !anyFigures);
    refreshTotals();
}

void NetworkView::refreshTotals() {
    // The design and searcher it was searched on and with, not the form's.
    const QString stale =
        outcomeStale() ? QString("<b style='color:#b00020'>Stale: searched on the design as it "
                                 "was before the last edit or session change; run again for "
                                 "this one.</b><br>")
                       : QString();
    totals_->setText(
        stale +
        QString("<b>%1</b> on <b>%2</b> with <b>%3</b>%4: %5 layers (%6 unique) · energy "
                "<b>%7 mJ</b> · cycles <b>%8</b> · EDP <b>%9</b> J·cycle · %10 evaluations in "
                "%11 s%12")
            .arg(QString::fromStdString(searchedNetwork_.name).toHtmlEscaped(),
                 QString::fromStdString(searchedArch_.name).toHtmlEscaped(),
                 QString::fromStdString(searchedWith_.searcher),
                 searchedWith_.warmStart ? QString(" (warm start)") : QString())
            .arg(outcome_.layers.size())
            .arg(outcome_.uniqueLayers)
            .arg(outcome_.energy * 1e-9, 0, 'f', 3)
            .arg(outcome_.cycles, 0, 'g', 6)
            .arg(outcome_.edp, 0, 'g', 5)
            .arg(outcome_.evaluations)
            .arg(outcome_.seconds, 0, 'f', 2)
            .arg(outcome_.cancelled ? QString(" — cancelled") : QString()));
}

} // namespace mw::ui
