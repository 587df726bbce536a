#include "ui/search_panel.h"

#include "common/error.h"
#include "io/timeloop/timeloop.h"
#include "ui/event_wait.h"
#include "ui/search_job.h"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <thread>

namespace mw::ui {

QColor searcherColor(const std::string& searcher) {
    // A qualitative palette (colour-blind friendly), fixed per searcher name.
    static const std::map<std::string, QColor> known = {
        {"random", QColor(0x88, 0x88, 0x88)},        {"random-pruned", QColor(0x56, 0xb4, 0xe9)},
        {"exhaustive", QColor(0x00, 0x00, 0x00)},    {"annealing", QColor(0xe6, 0x9f, 0x00)},
        {"genetic", QColor(0x00, 0x9e, 0x73)},       {"gamma", QColor(0xd5, 0x5e, 0x00)},
        {"mind-mappings", QColor(0xcc, 0x79, 0xa7)}, {"cosa", QColor(0x00, 0x72, 0xb2)},
        {"reinforce", QColor(0x8a, 0x2b, 0xe2)},     {"optimal", QColor(0x11, 0x77, 0x33)}};
    const auto it = known.find(searcher);
    if (it != known.end())
        return it->second;
    // Searchers registered from Python: colours apart from the built-ins' (a
    // hashed hue could land beside annealing's orange).
    static const QColor extra[] = {QColor(0x00, 0x8b, 0x8b), QColor(0x80, 0x80, 0x00),
                                   QColor(0x88, 0x22, 0x55), QColor(0x55, 0xaa, 0x00)};
    return extra[std::hash<std::string>{}(searcher) % std::size(extra)];
}

QString runLabel(const mw::SessionRun& r, int index) {
    return QString("#%1 %2 · seed %3 · %4%5")
        .arg(index + 1)
        .arg(QString::fromStdString(r.searcher))
        .arg(r.settings.seed)
        .arg(QString::fromStdString(r.layer))
        .arg(r.stale.empty() ? QString() : QString(" (stale)"));
}

QString searcherFigures(const mw::SearchResult& r, const QString& sep, bool all) {
    static const char* const kHeadline[] = {
        "solve_seconds",   "mip_nodes",         "time_limited",       "proven_optimal",
        "surrogate_steps", "surrogate_step_us", "true_evaluation_us", "episodes",
        "policy_updates",  "policy_restarts"};
    QStringList parts;
    auto add = [&](const std::string& name, double value) {
        parts << QString::fromStdString(name) + " " + QString::number(value, 'g', 4);
    };
    for (const char* name : kHeadline)
        if (const auto it = r.stats.find(name); it != r.stats.end())
            add(it->first, it->second);
    // The model's own figures are every run's, not its searcher's (see
    // modelFigures): in the tooltip only, so that the column stays narrow
    // and the status keeps its width.
    auto modelFigure = [](const std::string& name) { return name.rfind("model_", 0) == 0; };
    if (all || parts.isEmpty())
        for (const auto& [name, value] : r.stats)
            if (std::find_if(std::begin(kHeadline), std::end(kHeadline),
                             [&name = name](const char* h) { return name == h; }) ==
                    std::end(kHeadline) &&
                (all || !modelFigure(name)))
                add(name, value);
    return parts.join(sep);
}

QString modelFigures(const mw::SearchResult& r, const QString& sep) {
    QStringList parts;
    for (const auto& [name, value] : r.stats)
        if (name.rfind("model_", 0) == 0)
            parts << QString::fromStdString(name) + " " + QString::number(value, 'g', 4);
    return parts.join(sep);
}

namespace {

// What each searcher is, for its tooltip.
QString searcherSummary(const std::string& name) {
    static const std::map<std::string, QString> kSummary = {
        {"random", "Uniformly random legal mappings: the baseline every method must beat."},
        {"random-pruned", "Timeloop's random-pruned mapper: random tilings, permutations pruned, "
                          "stopping after 500 mappings without improvement."},
        {"exhaustive", "Every mapping of the space once, in canonical order (small spaces)."},
        {"annealing", "Simulated annealing over the map space's moves."},
        {"genetic", "A plain genetic algorithm: crossover and mutation of whole mappings."},
        {"gamma", "GAMMA (Kao & Krishna, ICCAD 2020): a genetic algorithm with map-space-aware "
                  "crossover, mutation, growth and aging."},
        {"cosa", "CoSA (Huang et al., ISCA 2021): one mixed-integer program solved by CBC, "
                 "decoded into a schedule. One shot: the budget is not spent."},
        {"mind-mappings",
         "Mind Mappings (Hegde et al., ASPLOS 2021): gradient descent on a learned "
         "surrogate of the cost model; trains one first when none is cached."},
        {"reinforce", "REINFORCE (after ConfuciuX, Kao et al., MICRO 2020): a policy that builds a "
                      "mapping decision by decision."},
        {"optimal", "Branch and bound with lower bounds: proves the optimum of the space, or "
                    "reports the gap it proved when stopped."}};
    const auto it = kSummary.find(name);
    return it == kSummary.end() ? QString("A searcher registered from Python.") : it->second;
}

// The unit of an objective's values: EDP in joules x cycles, energy in joules.
QString objectiveUnit(const mw::SearchObjective& o) {
    if (o.energyExponent == 1.0 && o.cycleExponent == 1.0)
        return "J × cycles";
    if (o.cycleExponent == 0.0)
        return o.energyExponent == 1.0 ? "J" : QString("J^%1").arg(o.energyExponent);
    if (o.energyExponent == 0.0)
        return o.cycleExponent == 1.0 ? "cycles" : QString("cycles^%1").arg(o.cycleExponent);
    return QString("J^%1 × cycles^%2").arg(o.energyExponent).arg(o.cycleExponent);
}

} // namespace

QString formatCost(double v) {
    return v >= mw::SearchContext::kInfinity ? QString("—") : QString::number(v, 'g', 5);
}

bool SearchPanel::searchedAnotherDesign(const mw::SessionRun& r) const {
    if (r.design.empty()) {
        // A run of a session saved before runs kept their design: its figure
        // tells, where one evaluation can re-cost it.
        if (!r.result.found || !r.settings.objective.densities.empty())
            return false;
        const double now = r.settings.objective.value(r.result.bestEvaluation);
        const double then = r.result.bestCost;
        return std::abs(now - then) > 1e-9 * std::max(std::abs(now), std::abs(then));
    }
    const auto now = designNow_.find(r.layer);
    return now == designNow_.end() || now->second != r.design;
}

double SearchPanel::costNow(const mw::SessionRun& r) const {
    if (!r.result.found)
        return mw::SearchContext::kInfinity;
    if (!searchedAnotherDesign(r) || !r.settings.objective.densities.empty())
        return r.result.bestCost;
    return r.settings.objective.value(r.result.bestEvaluation);
}

void SearchPanel::addSearchers(const std::vector<mw::SearcherFactory>& searchers) {
    for (const auto& f : searchers) {
        extra_.push_back(f);
        auto* item = new QListWidgetItem(QString::fromStdString(f.name), searcherList_);
        item->setFlags(Qt::ItemIsUserCheckable | Qt::ItemIsEnabled | Qt::ItemIsSelectable);
        item->setCheckState(Qt::Checked);
        item->setToolTip("Registered from Python");
        QPixmap swatch(12, 12);
        swatch.fill(searcherColor(f.name));
        item->setIcon(QIcon(swatch));
    }
}

void SearchPanel::presetRuns(const std::vector<std::string>& searchers, std::int64_t evaluations) {
    for (int i = 0; i < searcherList_->count(); ++i) {
        QListWidgetItem* item = searcherList_->item(i);
        const bool chosen = std::find(searchers.begin(), searchers.end(),
                                      item->text().toStdString()) != searchers.end();
        item->setCheckState(chosen ? Qt::Checked : Qt::Unchecked);
    }
    budgetKind_->setCurrentIndex(0);
    evaluations_->setValue(int(
        std::clamp<std::int64_t>(evaluations, evaluations_->minimum(), evaluations_->maximum())));
}

SearchPanel::SearchPanel(QWidget* parent) : QWidget(parent) {
    // ---- settings column
    searcherList_ = new QListWidget;
    for (const auto& name : mw::searcherNames()) {
        auto* item = new QListWidgetItem(QString::fromStdString(name), searcherList_);
        item->setFlags(Qt::ItemIsUserCheckable | Qt::ItemIsEnabled | Qt::ItemIsSelectable);
        item->setCheckState(name == "gamma" || name == "annealing" || name == "random"
                                ? Qt::Checked
                                : Qt::Unchecked);
        item->setToolTip(searcherSummary(name));
        QPixmap swatch(12, 12);
        swatch.fill(searcherColor(name));
        item->setIcon(QIcon(swatch));
    }
    searcherList_->setMaximumHeight(170);
    budgetKind_ = new QComboBox;
    budgetKind_->addItems({"Evaluations", "Seconds"});
    evaluations_ = new QSpinBox;
    evaluations_->setRange(1, 1'000'000'000);
    evaluations_->setValue(5000);
    evaluations_->setGroupSeparatorShown(true);
    seconds_ = new QDoubleSpinBox;
    seconds_->setRange(0.1, 86400.0);
    // A first run lasts long enough to watch its curve grow (the CLI keeps an
    // evaluation budget, for reproducibility).
    seconds_->setValue(5.0);
    seconds_->setSuffix(" s");
    budgetKind_->setCurrentIndex(1);
    evaluations_->setEnabled(false);
    connect(budgetKind_, &QComboBox::currentIndexChanged, this, [this](int i) {
        evaluations_->setEnabled(i == 0);
        seconds_->setEnabled(i == 1);
    });
    objective_ = new QComboBox;
    objective_->setObjectName("objective");
    objective_->addItems({"edp", "energy", "cycles"});
    seeds_ = new QSpinBox;
    seeds_->setRange(1, 50);
    seeds_->setValue(1);
    firstSeed_ = new QSpinBox;
    firstSeed_->setRange(1, 1'000'000);
    firstSeed_->setValue(1);
    threads_ = new QSpinBox;
    threads_->setRange(
        1, std::clamp(int(std::thread::hardware_concurrency()), 1, mw::kMaxSearchThreads));
    threads_->setValue(1);
    xAxis_ = new QComboBox;
    xAxis_->addItems({"Evaluations", "Wall time"});
    connect(xAxis_, &QComboBox::currentIndexChanged, this, [this](int i) { setTimeAxis(i == 1); });
    logXBox_ = new QCheckBox("log");
    logXBox_->setToolTip("Logarithmic x axis: a long run (a proof's hundreds of thousands of "
                         "evaluations) beside short ones");
    connect(logXBox_, &QCheckBox::toggled, this, [this](bool on) { setLogX(on); });
    auto* xAxisRow = new QHBoxLayout;
    xAxisRow->addWidget(xAxis_, 1);
    xAxisRow->addWidget(logXBox_);

    auto* form = new QFormLayout;
    form->addRow("Budget", budgetKind_);
    form->addRow("Evaluations", evaluations_);
    form->addRow("Seconds", seconds_);
    form->addRow("Objective", objective_);
    connect(objective_, &QComboBox::currentTextChanged, this, [this] { refreshObjective(); });
    form->addRow("Seeds", seeds_);
    form->addRow("First seed", firstSeed_);
    form->addRow("Threads / run", threads_);
    form->addRow("X axis", xAxisRow);

    run_ = new QPushButton("Run");
    run_->setToolTip("Run every checked searcher with every seed, side by side");
    pause_ = new QPushButton("Pause");
    pause_->setCheckable(true);
    cancel_ = new QPushButton("Cancel");
    cancel_->setToolTip("Stop the running searches; each keeps its best mapping so far");
    connect(run_, &QPushButton::clicked, this, [this] { runSelected(); });
    connect(pause_, &QPushButton::toggled, this, [this](bool on) { setPausedAll(on); });
    connect(cancel_, &QPushButton::clicked, this, [this] { cancelAll(); });
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(run_);
    buttons->addWidget(pause_);
    buttons->addWidget(cancel_);
    status_ = new QLabel("Idle");
    status_->setWordWrap(true);
    constraintsLabel_ = new QLabel;
    constraintsLabel_->setWordWrap(true);
    auto* loadConstraintsButton = new QPushButton("Load…");
    loadConstraintsButton->setToolTip(
        "Narrow the map space of new runs: a mapwright.constraints JSON file, or Timeloop "
        "constraints (architecture_constraints, mapspace_constraints) in YAML");
    connect(loadConstraintsButton, &QPushButton::clicked, this, [this] {
        const QString path =
            QFileDialog::getOpenFileName(this, "Load map-space constraints", QString(),
                                         "Constraints (*.json *.yaml *.yml);;All files (*)");
        if (!path.isEmpty())
            loadConstraints(path);
    });
    clearConstraints_ = new QPushButton("Clear");
    clearConstraints_->setToolTip("Search the whole map space");
    connect(clearConstraints_, &QPushButton::clicked, this, [this] {
        setConstraints(mw::Json());
        emit constraintsChanged(constraints_);
    });
    auto* constraintButtons = new QHBoxLayout;
    constraintButtons->addWidget(loadConstraintsButton);
    constraintButtons->addWidget(clearConstraints_);
    constraintButtons->addStretch();

    auto* settingsBox = new QGroupBox("Searchers");
    auto* settings = new QVBoxLayout(settingsBox);
    settings->addWidget(searcherList_);
    settings->addLayout(form);
    settings->addWidget(new QLabel("<b>Constraints</b>"));
    settings->addWidget(constraintsLabel_);
    settings->addLayout(constraintButtons);
    settings->addLayout(buttons);
    settings->addWidget(status_);
    settings->addStretch(1);
    settingsBox->setFixedWidth(270);

    // ---- convergence plot
    plot_ = new QCustomPlot;
    plot_->setMinimumHeight(260);
    plot_->yAxis->setScaleType(QCPAxis::stLogarithmic);
    plot_->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    plot_->yAxis->setNumberFormat("g");
    plot_->yAxis->setNumberPrecision(3);
    plot_->xAxis->setLabel("evaluations");
    plot_->yAxis->setLabel("best EDP so far (J × cycles)");
    plot_->legend->setVisible(true);
    plot_->legend->setFont(QFont(font().family(), 8));
    plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
    plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    connect(plot_, &QCustomPlot::afterReplot, this, [this] { ++replots_; });
    connect(plot_, &QCustomPlot::mouseMove, this, &SearchPanel::showTooltip);

    // ---- results table
    table_ = new QTableWidget(0, ColumnCount);
    // Headers of two lines where a line would be wider than the column's
    // figures: the status and the searcher's figures need the width.
    table_->setHorizontalHeaderLabels({"Searcher", "Layer", "Seed", "Objective", "Final",
                                       "Energy\n(µJ)", "Cycles", "EDP /\nbound", "Over\nopt.",
                                       "Evals", "Time\n(s)", "Status", "Searcher\nfigures"});
    table_->horizontalHeaderItem(ColFinal)->setToolTip(
        "The run's best objective (EDP in J × cycles, energy in J, or cycles)");
    table_->horizontalHeaderItem(ColEdpOverBound)
        ->setToolTip("The best mapping's EDP over the layer's lower bound (no legal mapping "
                     "costs less in energy or cycles): 1.00 could not be beaten");
    table_->horizontalHeaderItem(ColOverOptimum)
        ->setToolTip("How far the final objective lies above the optimum a run of the optimal "
                     "searcher proved for the layer and objective (≤: that run's own proven "
                     "gap, when it stopped before its proof)");
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setStretchLastSection(true);
    // A status can be a long message (why CoSA's MIP is infeasible): the column
    // takes the width left, elided, and the cell's tooltip has all of it.
    table_->horizontalHeader()->setSectionResizeMode(ColStatus, QHeaderView::Stretch);
    // (Sized when the rows are filled: as wide as its figures, up to a bound.)
    table_->horizontalHeader()->setSectionResizeMode(ColFigures, QHeaderView::Interactive);
    connect(table_->horizontalHeader(), &QHeaderView::sectionResized, this,
            [this](int column, int oldSize, int newSize) {
                // A drag: the width is the user's from now on. (Hiding and
                // showing the column resize it from or to 0; those are not.)
                if (column == ColFigures && !sizingFigures_ && oldSize > 0 && newSize > 0)
                    figuresWidthByUser_ = true;
            });
    table_->setTextElideMode(Qt::ElideMiddle);
    // The searcher's figures (often none) before the status, which is shown
    // last and takes the width left: at 1,500 px nothing runs off the side.
    table_->horizontalHeader()->moveSection(table_->horizontalHeader()->visualIndex(ColFigures),
                                            table_->horizontalHeader()->visualIndex(ColStatus));
    table_->verticalHeader()->setVisible(false);
    table_->setWordWrap(false);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSortingEnabled(false);
    connect(table_, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
        const int index = table_->item(row, 0)->data(Qt::UserRole).toInt();
        if (index >= 0)
            emit runActivated(index);
    });
    table_->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(table_, &QWidget::customContextMenuRequested, this, &SearchPanel::showTableMenu);

    // Above the plot, what it leaves out: runs of this layer that searched
    // another objective (their figures are in other units).
    plotNote_ = new QLabel;
    plotNote_->setObjectName("plotNote");
    plotNote_->setWordWrap(true);
    plotNote_->setVisible(false);
    auto* plotBox = new QWidget;
    auto* plotLayout = new QVBoxLayout(plotBox);
    plotLayout->setContentsMargins(0, 0, 0, 0);
    plotLayout->setSpacing(2);
    plotLayout->addWidget(plotNote_);
    plotLayout->addWidget(plot_, 1);
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(plotBox);
    split->addWidget(table_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);

    auto* layout = new QHBoxLayout(this);
    layout->addWidget(settingsBox);
    layout->addWidget(split, 1);

    // Progress arrives at up to 20 Hz per run; the plot redraws on a timer
    // (20 Hz) only when something changed, so many runs cannot flood the GUI.
    refresh_ = new QTimer(this);
    refresh_->setInterval(50);
    connect(refresh_, &QTimer::timeout, this, [this] {
        if (dirty_)
            refreshPlotNow();
    });
    refresh_->start();
    refreshConstraints();
}

SearchPanel::~SearchPanel() {
    for (auto& [id, live] : live_)
        live.job->cancel();
    live_.clear(); // joins the threads
}

void SearchPanel::setTarget(const mw::Architecture& arch, const mw::Network& network, int layer) {
    arch_ = arch;
    network_ = network;
    layer_ = layer;
    designNow_.clear();
    const std::vector<std::string> designs = mw::designFingerprints(arch, network);
    for (std::size_t i = 0; i < designs.size(); ++i)
        designNow_.emplace(network.layers[i].name, designs[i]); // (as layerIndex: the first)
    refreshObjective();
}

mw::SearchObjective SearchPanel::formObjective() const {
    return mw::SearchObjective::parse(objective_->currentText().toStdString());
}

void SearchPanel::refreshObjective() {
    // The plot is in the units of the objective chosen: its axis, its lower
    // bound and the runs it draws.
    const mw::SearchObjective objective = formObjective();
    plot_->yAxis->setLabel(QString("best %1 so far (%2)")
                               .arg(QString::fromStdString(objective.name()).toUpper() == "EDP"
                                        ? QString("EDP")
                                        : QString::fromStdString(objective.name()))
                               .arg(objectiveUnit(objective)));
    lowerBound_ = 0.0;
    try {
        if (layer_ >= 0 && layer_ < int(network_.layers.size())) {
            const mw::Problem p = mw::buildProblem(network_.layers[std::size_t(layer_)]);
            lowerBound_ = mw::lowerBound(p, arch_, objective).objective;
        }
    } catch (const mw::InputError&) {
        lowerBound_ = 0.0; // the editors report the problem; nothing to bound
    }
    rebuildPlot();
}

bool SearchPanel::setConstraints(const mw::Json& constraints) {
    if (!constraints.is_null() && layer_ >= 0 && layer_ < int(network_.layers.size())) {
        try {
            mw::constraintsFromJson(constraints,
                                    mw::buildProblem(network_.layers[std::size_t(layer_)]), arch_);
        } catch (const mw::InputError& e) {
            lastError_ = QString("Constraints: %1").arg(e.what());
            emit message(lastError_);
            return false;
        }
    }
    constraints_ = constraints;
    refreshConstraints();
    return true;
}

bool SearchPanel::loadConstraints(const QString& path) {
    mw::Json c;
    std::vector<std::string> notes; // what a Timeloop file's import dropped or doubts
    try {
        // Read against the current layer (errors located in the file); the
        // session keeps the result as our JSON, which holds for every layer.
        const std::string file = path.toStdString();
        if (layer_ >= 0 && layer_ < int(network_.layers.size()))
            c = mw::readConstraintsFile(
                file, mw::buildProblem(network_.layers[std::size_t(layer_)]), arch_, notes);
        else if (mw::isTimeloopFileName(file)) // (Timeloop's name one problem's factors)
            throw mw::InputError(file, "no layer to read Timeloop constraints against");
        else
            c = mw::readJsonFile(file);
        if (!c.is_null() && !c.contains("description"))
            c["description"] = QFileInfo(path).fileName().toStdString();
    } catch (const mw::InputError& e) {
        lastError_ = QString::fromStdString(e.what());
        emit message(lastError_);
        return false;
    }
    if (!setConstraints(c))
        return false;
    emit constraintsChanged(constraints_);
    QString text = QString("Constraints loaded from %1").arg(QFileInfo(path).fileName());
    for (const auto& n : notes)
        text += "; " + QString::fromStdString(n);
    emit message(text);
    return true;
}

void SearchPanel::refreshConstraints() {
    clearConstraints_->setEnabled(!constraints_.is_null());
    if (constraints_.is_null()) {
        // Said plainly: a design's own dataflow (Eyeriss' row stationary) is a
        // constraint the user loads, or the searchers roam every dataflow.
        constraintsLabel_->setText("none: the whole map space, any dataflow (Load… "
                                   "samples/constraints/eyeriss_row_stationary.json for "
                                   "Eyeriss' row stationary)");
        constraintsLabel_->setToolTip(
            "Without constraints a searcher may keep any tensor in any buffer (the best "
            "mapping may leave weights_spad and psum_spad empty on Eyeriss-like). The "
            "samples/constraints folder holds each sample design's dataflow.");
        return;
    }
    QStringList levels;
    if (constraints_.contains("levels") && constraints_.at("levels").is_array())
        for (const auto& l : constraints_.at("levels"))
            if (l.contains("level") && l.at("level").is_string())
                levels << QString::fromStdString(l.at("level").get<std::string>());
    QString text =
        QString("%1 level%2 constrained").arg(levels.size()).arg(levels.size() == 1 ? "" : "s");
    if (constraints_.contains("min_spatial_utilization"))
        text +=
            QString(", utilization ≥ %1").arg(constraints_.value("min_spatial_utilization", 0.0));
    constraintsLabel_->setText(text);
    const std::string description = constraints_.value("description", std::string());
    constraintsLabel_->setToolTip(QString::fromStdString(description) + "\n" + levels.join(", "));
}

void SearchPanel::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    sizeFiguresColumn();
}

void SearchPanel::setRuns(const std::vector<mw::SessionRun>& runs) {
    // Each run keeps its place in the table: by when it started (runs of
    // another session, or fewer runs than before: in the session's order).
    if (finishing_.id != 0 && runs.size() == rowKeys_.size() + 1 &&
        finishing_.position <= rowKeys_.size()) // the run that finished, where it started
        rowKeys_.insert(rowKeys_.begin() + std::ptrdiff_t(finishing_.position),
                        kLiveKeys + finishing_.id);
    finishing_ = {};
    if (runs.size() < rowKeys_.size())
        rowKeys_.clear();
    for (std::size_t i = rowKeys_.size(); i < runs.size(); ++i) // loaded, or added after
        rowKeys_.push_back(runs_.empty() ? std::int64_t(i) : kLiveKeys + nextId_++);
    runs_ = runs;
    rebuildPlot();
    refreshTable();
}

void SearchPanel::setSearchers(const QStringList& names) {
    for (int i = 0; i < searcherList_->count(); ++i) {
        QListWidgetItem* item = searcherList_->item(i);
        item->setCheckState(names.contains(item->text()) ? Qt::Checked : Qt::Unchecked);
    }
}

QStringList SearchPanel::searchers() const {
    QStringList out;
    for (int i = 0; i < searcherList_->count(); ++i)
        if (searcherList_->item(i)->checkState() == Qt::Checked)
            out << searcherList_->item(i)->text();
    return out;
}

void SearchPanel::setBudget(qint64 evaluations, double seconds) {
    if (evaluations > 0)
        evaluations_->setValue(int(std::min<qint64>(evaluations, evaluations_->maximum())));
    if (seconds > 0)
        seconds_->setValue(seconds);
    budgetKind_->setCurrentIndex(evaluations > 0 ? 0 : 1);
}

void SearchPanel::setSeeds(int count, int first) {
    seeds_->setValue(count);
    firstSeed_->setValue(first);
}

void SearchPanel::setThreads(int threads) {
    threads_->setValue(threads);
}

void SearchPanel::setObjective(const QString& name) {
    // (One the form does not offer, a weighted one, leaves it as it is.)
    if (objective_->findText(name) >= 0)
        objective_->setCurrentText(name); // (refreshObjective, when it changes)
}

mw::SearchSettings SearchPanel::formSettings(std::uint64_t seed) const {
    mw::SearchSettings s;
    if (budgetKind_->currentIndex() == 0)
        s.budget.evaluations = evaluations_->value();
    else
        s.budget.seconds = seconds_->value();
    s.seed = seed;
    s.objective = formObjective();
    s.threads = threads_->value();
    return s;
}

int SearchPanel::runSelected() {
    const QStringList names = searchers();
    if (names.isEmpty()) {
        lastError_ = "Check at least one searcher.";
        emit message(lastError_);
        return 0;
    }
    if (layer_ < 0 || layer_ >= int(network_.layers.size())) {
        lastError_ = "Choose a layer in the workload first.";
        emit message(lastError_);
        return 0;
    }
    // The x axis follows the budget: wall time for seconds, evaluations for a count.
    const bool seconds = budgetKind_->currentIndex() == 1;
    if (seconds != timeAxis_)
        setTimeAxis(seconds);
    int started = 0;
    for (const QString& name : names)
        for (int k = 0; k < seeds_->value(); ++k) {
            mw::SessionRun r;
            r.searcher = name.toStdString();
            r.layer = network_.layers[std::size_t(layer_)].name;
            r.settings = formSettings(std::uint64_t(firstSeed_->value() + k));
            r.constraints = constraints_;
            start(r);
            ++started;
        }
    return started;
}

void SearchPanel::startRun(const mw::SessionRun& request) {
    start(request);
}

bool SearchPanel::rerun(int sessionRunIndex) {
    if (sessionRunIndex < 0 || sessionRunIndex >= int(runs_.size()))
        return false;
    mw::SessionRun request = runs_[std::size_t(sessionRunIndex)];
    request.finished = false;
    request.result = {};
    request.stale.clear();
    if (network_.layerIndex(request.layer) < 0 && layer_ >= 0 &&
        layer_ < int(network_.layers.size()))
        request.layer = network_.layers[std::size_t(layer_)].name; // its layer is gone
    const std::size_t before = live_.size();
    start(request);
    return live_.size() > before;
}

void SearchPanel::start(mw::SessionRun request) {
    const int li = network_.layerIndex(request.layer);
    mw::Problem problem;
    mw::MapSpaceConstraints constraints;
    try {
        if (li < 0)
            throw mw::InputError("run", "layer '" + request.layer + "' is not in the workload");
        problem = mw::buildProblem(network_.layers[std::size_t(li)]);
        mw::validateArchitecture(arch_);
        if (!request.constraints.is_null())
            constraints = mw::constraintsFromJson(request.constraints, problem, arch_);
    } catch (const mw::InputError& e) {
        lastError_ = QString::fromStdString(e.what());
        emit message(lastError_);
        return;
    }
    const int id = nextId_++;
    Live& live = live_[id];
    live.request = request;
    live.request.design = mw::designFingerprint(arch_, network_.layers[std::size_t(li)]);
    live.curve.searcher = request.searcher;
    live.curve.seed = request.settings.seed;
    live.job = std::make_unique<SearchJob>(id, arch_, problem, request.searcher, request.settings,
                                           constraints);
    for (const auto& f : extra_)
        if (f.name == request.searcher)
            live.job->setSearcherFactory(f.make);
    connect(live.job.get(), &SearchJob::mailArrived, this, [this, id] { onMail(id); });
    // (A requested run of a session may search another objective than the
    // plot shows: then rebuildPlot counts it among those left out.)
    if (li == layer_ && request.settings.objective.name() == formObjective().name()) {
        live.curve.variant = nextVariant(request.searcher, request.settings.seed);
        live.curve.graph = plot_->addGraph();
        refreshCurve(live.curve);
    } else if (li == layer_) {
        rebuildPlot();
    }
    live.job->start();
    if (pause_->isChecked())
        live.job->setPaused(true);
    status_->setText(QString("%1 running").arg(live_.size()));
    refreshTable();
    for (int row = 0; row < table_->rowCount(); ++row) // the new row, in view
        if (table_->item(row, ColSearcher)->data(Qt::UserRole).toInt() == -id)
            table_->scrollToItem(table_->item(row, ColSearcher));
    emit runningChanged(runningCount(), pausedCount());
}

void SearchPanel::onProgress(int id, const SearchJob::Mail::Progress& p) {
    const auto it = live_.find(id);
    if (it == live_.end())
        return;
    it->second.latest = p;
    dirty_ = true; // the row's phase, at least
    if (p.best >= mw::SearchContext::kInfinity)
        return;
    Curve& c = it->second.curve;
    c.evaluations << double(p.evaluations);
    c.seconds << p.seconds;
    c.best << p.best;
}

void SearchPanel::onMail(int id) {
    const auto it = live_.find(id);
    if (it == live_.end())
        return;
    const SearchJob::Mail mail = it->second.job->take();
    for (const auto& p : mail.progress)
        onProgress(id, p);
    // Either ends the run and drops its job.
    if (mail.result)
        onFinished(id, *mail.result);
    else if (mail.failure)
        onFailed(id, *mail.failure);
}

void SearchPanel::onFinished(int id, const mw::SearchResult& result) {
    const auto it = live_.find(id);
    if (it == live_.end())
        return;
    mw::SessionRun run = it->second.request;
    run.finished = true;
    run.result = result;
    if (it->second.curve.graph)
        plot_->removeGraph(it->second.curve.graph);
    it->second.job->wait();
    live_.erase(it);
    status_->setText(live_.empty() ? QString("Idle") : QString("%1 running").arg(live_.size()));
    // Its row stays where it was, and its place among the session's runs is
    // the same: by when it started (the keys are in the runs' order).
    const std::int64_t key = kLiveKeys + id;
    const std::size_t position =
        rowKeys_.size() == runs_.size()
            ? std::size_t(std::lower_bound(rowKeys_.begin(), rowKeys_.end(), key) -
                          rowKeys_.begin())
            : runs_.size();
    finishing_ = {id, position};
    emit runFinished(run, int(position));
    emit runningChanged(runningCount(), pausedCount());
}

void SearchPanel::onFailed(int id, const QString& message) {
    const auto it = live_.find(id);
    if (it == live_.end())
        return;
    if (it->second.curve.graph)
        plot_->removeGraph(it->second.curve.graph);
    it->second.job->wait();
    live_.erase(it);
    lastError_ = message;
    ++failedRuns_;
    status_->setText(message);
    refreshTable();
    emit this->message(message);
    emit runningChanged(runningCount(), pausedCount());
    dirty_ = true;
}

void SearchPanel::cancelAll() {
    for (auto& [id, live] : live_)
        live.job->cancel();
    pause_->setChecked(false);
}

void SearchPanel::setPausedAll(bool paused) {
    for (auto& [id, live] : live_)
        live.job->setPaused(paused);
    if (pause_->isChecked() != paused)
        pause_->setChecked(paused);
    status_->setText(paused ? QString("Paused (%1 runs)").arg(live_.size())
                            : QString("%1 running").arg(live_.size()));
    emit runningChanged(runningCount(), pausedCount());
}

int SearchPanel::runningCount() const {
    return int(live_.size());
}

int SearchPanel::pausedCount() const {
    int paused = 0;
    for (const auto& [id, live] : live_)
        paused += live.job->paused();
    return paused;
}

bool SearchPanel::waitForAll(int timeoutMs) {
    return processEventsWhile([this] { return !live_.empty(); }, timeoutMs);
}

std::vector<int> SearchPanel::liveRuns() const {
    std::vector<int> ids;
    for (const auto& [id, live] : live_)
        ids.push_back(id);
    return ids;
}

void SearchPanel::cancelRun(int id) {
    const auto it = live_.find(id);
    if (it != live_.end())
        it->second.job->cancel();
}

void SearchPanel::setRunPaused(int id, bool paused) {
    const auto it = live_.find(id);
    if (it != live_.end()) {
        it->second.job->setPaused(paused);
        refreshLiveRows();
        emit runningChanged(runningCount(), pausedCount());
    }
}

} // namespace mw::ui
