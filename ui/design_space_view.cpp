#include "ui/design_space_view.h"

#include "common/error.h"
#include "explore/sweep_db.h"
#include "search/search.h"
#include "ui/event_wait.h"
#include "ui/sweep_job.h"
#include "ui/sweep_plot.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardPaths>
#include <QTableWidget>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <thread>

namespace mw::ui {

namespace {

const char* const kIdleStatus =
    "Vary the architecture's parameters; each combination is searched over the whole network.";

// A points-table cell that sorts by a number (a point's index, a metric, an
// axis value such as 16384 or "12x14"), not by its text, when it has one.
class PointCell : public QTableWidgetItem {
  public:
    using QTableWidgetItem::QTableWidgetItem;
    static constexpr int kSortKey = Qt::UserRole + 1;
    bool operator<(const QTableWidgetItem& other) const override {
        const QVariant a = data(kSortKey), b = other.data(kSortKey);
        if (a.isValid() && b.isValid())
            return a.toDouble() < b.toDouble();
        if (a.isValid() != b.isValid())
            return a.isValid(); // numbers before "—"
        return QTableWidgetItem::operator<(other);
    }
};

const mw::SweepMetric kMetrics[] = {mw::SweepMetric::Energy, mw::SweepMetric::Cycles,
                                    mw::SweepMetric::Edp, mw::SweepMetric::Area};

QComboBox* metricCombo(mw::SweepMetric initial) {
    auto* c = new QComboBox;
    for (mw::SweepMetric m : kMetrics)
        c->addItem(metricTitle(m), int(m));
    c->setCurrentIndex(int(initial));
    return c;
}

// The axes a new sweep starts from: the largest on-chip buffer halved and
// doubled, the PE array as it is and at 16 x 16, and the DRAM's type against HBM2.
std::vector<mw::SweepAxis> defaultAxes(const mw::Architecture& a) {
    std::vector<mw::SweepAxis> axes;
    int buffer = -1;
    for (int l = 0; l < a.numLevels(); ++l) {
        const auto& s = a.levels[std::size_t(l)];
        if (s.cls == mw::LevelClass::DRAM || s.cls == mw::LevelClass::Dummy)
            continue;
        if (buffer < 0 ||
            s.capacityWords * s.instances() > a.levels[std::size_t(buffer)].capacityWords *
                                                  a.levels[std::size_t(buffer)].instances())
            buffer = l;
    }
    if (buffer >= 0) {
        const auto& s = a.levels[std::size_t(buffer)];
        axes.push_back({s.name + ".capacity_words",
                        {std::to_string(std::max<std::int64_t>(1, s.capacityWords / 2)),
                         std::to_string(s.capacityWords), std::to_string(s.capacityWords * 2)}});
    }
    const std::string mesh =
        std::to_string(a.compute.meshX) + "x" + std::to_string(a.compute.meshY);
    axes.push_back({"pe_mesh", mesh == "16x16" ? std::vector<std::string>{"16x16", "32x32"}
                                               : std::vector<std::string>{mesh, "16x16"}});
    for (const auto& s : a.levels)
        if (s.cls == mw::LevelClass::DRAM)
            axes.push_back({s.name + ".dram_type",
                            s.dramType == "HBM2" ? std::vector<std::string>{"HBM2", "LPDDR4"}
                                                 : std::vector<std::string>{s.dramType, "HBM2"}});
    return axes;
}

} // namespace

DesignSpaceView::DesignSpaceView(QWidget* parent) : QWidget(parent) {
    axesTable_ = new QTableWidget(0, 2);
    axesTable_->setHorizontalHeaderLabels({"Parameter", "Values (comma-separated)"});
    axesTable_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    axesTable_->horizontalHeader()->setStretchLastSection(true);
    axesTable_->verticalHeader()->setVisible(false);
    axesTable_->setToolTip(
        "LEVEL.field (capacity_words, word_bits, block_size, banks, mesh_x, mesh_y, "
        "read_bandwidth, write_bandwidth, multiple_buffering, component, class, dram_type), "
        "compute.field (word_bits, multiplier_bits, adder_bits, arithmetic), pe_mesh (XxY) or "
        "technology_nm; every combination is a design point");
    axesTable_->setMaximumHeight(130);
    auto* addAxis = new QPushButton("+ Axis");
    auto* removeAxis = new QPushButton("− Axis");
    connect(addAxis, &QPushButton::clicked, this, [this] { addAxisRow("", ""); });
    // The bar counts the points the axes make before a sweep runs.
    connect(axesTable_, &QTableWidget::itemChanged, this, [this] { refreshPlanned(); });
    connect(removeAxis, &QPushButton::clicked, this, [this] {
        const int row = axesTable_->currentRow();
        axesTable_->removeRow(row >= 0 ? row : axesTable_->rowCount() - 1);
        refreshPlanned();
    });
    auto* axisButtons = new QVBoxLayout;
    axisButtons->addWidget(addAxis);
    axisButtons->addWidget(removeAxis);
    axisButtons->addStretch(1);
    auto* axesRow = new QHBoxLayout;
    axesRow->addWidget(axesTable_, 1);
    axesRow->addLayout(axisButtons);

    searcher_ = new QComboBox;
    for (const auto& name : mw::searcherNames())
        searcher_->addItem(QString::fromStdString(name));
    searcher_->setCurrentText("gamma");
    budget_ = new QSpinBox;
    budget_->setRange(10, 10'000'000);
    budget_->setValue(1000);
    budget_->setSuffix(" evaluations / layer");
    threads_ = new QSpinBox;
    threads_->setRange(
        1, std::clamp(int(std::thread::hardware_concurrency()), 1, mw::kMaxSearchThreads));
    threads_->setValue(threads_->maximum());
    threads_->setPrefix("threads ");
    database_ = new QLineEdit;
    database_->setPlaceholderText("results database (a new one when empty)");
    database_->setToolTip("SQLite file the points are written to as they finish; running "
                          "again on the same file resumes its sweep");
    auto* choose = new QPushButton("…");
    choose->setFixedWidth(choose->fontMetrics().horizontalAdvance("…") + 24);
    choose->setToolTip("Choose the results database");
    connect(choose, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(
            this, "Results database", database_->text(), "SQLite (*.sqlite *.db)", nullptr,
            QFileDialog::DontConfirmOverwrite);
        if (!path.isEmpty())
            database_->setText(path);
    });
    run_ = new QPushButton("Run sweep");
    cancel_ = new QPushButton("Cancel");
    cancel_->setEnabled(false);
    open_ = new QPushButton("Open results…");
    progress_ = new QProgressBar;
    progress_->setFormat("%v / %m points");
    progress_->setRange(0, 1);
    progress_->setValue(0);
    connect(run_, &QPushButton::clicked, this, [this] { run(); });
    connect(cancel_, &QPushButton::clicked, this, [this] { cancel(); });
    connect(open_, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, "Open sweep results", QString(),
                                                          "SQLite (*.sqlite *.db);;All files (*)");
        if (!path.isEmpty())
            openResults(path);
    });
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel("Searcher"));
    controls->addWidget(searcher_);
    controls->addWidget(budget_);
    controls->addWidget(threads_);
    controls->addWidget(database_, 1);
    controls->addWidget(choose);
    controls->addWidget(run_);
    controls->addWidget(cancel_);
    controls->addWidget(open_);
    controls->addWidget(progress_);

    status_ = new QLabel(kIdleStatus);
    status_->setTextFormat(Qt::RichText);
    status_->setWordWrap(true);

    x_ = metricCombo(mw::SweepMetric::Energy);
    y_ = metricCombo(mw::SweepMetric::Cycles);
    colour_ = new QComboBox;
    colour_->addItem("(one colour)", -1); // (the axes join it when a sweep has them)
    for (auto* c : {x_, y_, colour_})
        connect(c, &QComboBox::currentIndexChanged, this, [this] { redraw(); });
    auto* choices = new QHBoxLayout;
    choices->addWidget(new QLabel("x"));
    choices->addWidget(x_);
    choices->addWidget(new QLabel("y"));
    choices->addWidget(y_);
    choices->addWidget(new QLabel("colour by"));
    choices->addWidget(colour_);
    choices->addStretch(1);

    plot_ = new QCustomPlot;
    plot_->setMinimumHeight(260); // an empty plot keeps its size beside the table
    prepareSweepPlot(plot_);
    plot_->setMouseTracking(true);
    connect(plot_, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) {
        const int i = pointAt(e->position());
        if (i >= 0)
            QToolTip::showText(e->globalPosition().toPoint(), pointSummary(i), plot_);
        else
            QToolTip::hideText();
    });
    connect(plot_, &QCustomPlot::mousePress, this, [this](QMouseEvent* e) {
        const int i = pointAt(e->position());
        if (i >= 0)
            activatePoint(i);
    });
    table_ = new QTableWidget(0, 0);
    table_->verticalHeader()->setVisible(false);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setSortIndicator(0, Qt::AscendingOrder); // by point at first
    table_->setSortingEnabled(true); // by EDP, say: click a header
    table_->setToolTip("Double-click a point to open its architecture and mappings; click a "
                       "header to sort");
    connect(table_, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
        const auto* item = table_->item(row, 0);
        if (item)
            activatePoint(item->data(Qt::UserRole).toInt());
    });
    auto* left = new QWidget;
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addLayout(choices);
    leftLayout->addWidget(plot_, 1);
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(left);
    split->addWidget(table_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setSizes({600, 400}); // (the stretch alone left the table a sliver)

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(axesRow);
    layout->addLayout(controls);
    layout->addWidget(status_);
    layout->addWidget(split, 1);
    redraw(); // the empty chart with its axes named
}

DesignSpaceView::~DesignSpaceView() = default;

void DesignSpaceView::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    // A plot first laid out while its tab was hidden keeps that (tiny) layout
    // until something replots it: empty, nothing would.
    plot_->replot();
}

void DesignSpaceView::addAxisRow(const QString& parameter, const QString& values) {
    const int row = axesTable_->rowCount();
    axesTable_->insertRow(row);
    axesTable_->setItem(row, 0, new QTableWidgetItem(parameter));
    axesTable_->setItem(row, 1, new QTableWidgetItem(values));
}

void DesignSpaceView::setBase(const mw::Architecture& arch, const mw::Network& network,
                              const mw::Json& constraints) {
    const bool first = base_.levels.empty();
    base_ = arch;
    network_ = network;
    constraints_ = constraints;
    if (first && axesTable_->rowCount() == 0)
        resetAxes();
}

void DesignSpaceView::resetAxes() {
    if (!running())
        setAxes(defaultAxes(base_));
}

void DesignSpaceView::refreshPlanned() {
    if (running())
        return;
    std::int64_t points = 1;
    for (const auto& axis : axes())
        points *= std::int64_t(axis.values.size());
    progress_->setRange(0, int(std::min<std::int64_t>(points, 1 << 30)));
    progress_->setValue(0);
}

void DesignSpaceView::setAxes(const std::vector<mw::SweepAxis>& axes) {
    axesTable_->setRowCount(0);
    for (const auto& a : axes) {
        QStringList values;
        for (const auto& v : a.values)
            values << QString::fromStdString(v);
        addAxisRow(QString::fromStdString(a.parameter), values.join(","));
    }
    refreshPlanned();
}

std::vector<mw::SweepAxis> DesignSpaceView::axes() const {
    std::vector<mw::SweepAxis> out;
    for (int r = 0; r < axesTable_->rowCount(); ++r) {
        const QString p = axesTable_->item(r, 0) ? axesTable_->item(r, 0)->text().trimmed() : "";
        const QString v = axesTable_->item(r, 1) ? axesTable_->item(r, 1)->text().trimmed() : "";
        if (p.isEmpty() && v.isEmpty())
            continue;
        mw::SweepAxis axis;
        axis.parameter = p.toStdString();
        for (const QString& value : v.split(',', Qt::SkipEmptyParts))
            axis.values.push_back(value.trimmed().toStdString());
        out.push_back(axis);
    }
    return out;
}

void DesignSpaceView::setSearcher(const QString& name) {
    searcher_->setCurrentText(name);
}
void DesignSpaceView::setBudget(int evaluationsPerLayer) {
    budget_->setValue(evaluationsPerLayer);
}
void DesignSpaceView::setThreads(int threads) {
    threads_->setValue(threads);
}
void DesignSpaceView::setDatabasePath(const QString& path) {
    database_->setText(path);
}
QString DesignSpaceView::databasePath() const {
    return database_->text();
}

bool DesignSpaceView::running() const {
    return job_ && job_->running();
}

void DesignSpaceView::setRunning(bool on) {
    run_->setEnabled(!on);
    open_->setEnabled(!on);
    cancel_->setEnabled(on);
}

bool DesignSpaceView::run() {
    if (running())
        return false;
    mw::SweepSpec spec;
    spec.base = base_;
    spec.network = network_;
    spec.axes = axes();
    spec.searcher = searcher_->currentText().toStdString();
    spec.budget = budget_->value();
    spec.constraints = constraints_;
    try {
        mw::checkSweep(spec);
    } catch (const mw::InputError& e) {
        lastError_ = QString::fromStdString(e.what());
        status_->setText(lastError_.toHtmlEscaped());
        emit message(lastError_);
        return false;
    }
    // A database of another sweep (the last one's, the axes since edited)
    // is kept as it is: this sweep writes a new file, and says so. Checked
    // before the view lets go of the points it shows.
    movedFrom_.clear();
    if (const QString given = database_->text().trimmed();
        !given.isEmpty() && QFileInfo(given).size() > 0) {
        try {
            if (mw::SweepDatabase::open(given.toStdString()).spec() != mw::toJson(spec)) {
                movedFrom_ = QString(" (%1 holds another sweep: kept as it is)").arg(given);
                database_->clear();
            }
        } catch (const mw::InputError& e) {
            lastError_ = QString::fromStdString(e.what());
            status_->setText(lastError_.toHtmlEscaped());
            emit message(lastError_);
            return false;
        }
    }
    if (database_->text().trimmed().isEmpty()) {
        const QString dir =
            QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + "/sweeps";
        QDir().mkpath(dir);
        database_->setText(dir + "/" + QString::fromStdString(network_.name + "-on-" + base_.name) +
                           "-" + QDateTime::currentDateTime().toString("yyyyMMdd-HHmmss-zzz") +
                           ".sqlite");
    }
    spec_ = spec;
    points_.clear();
    front_.clear();
    total_ = int(mw::planSweep(spec_).size());
    refreshChoices();
    progress_->setRange(0, total_);
    progress_->setValue(0);
    redraw();
    job_ = std::make_unique<SweepJob>(spec_, database_->text().toStdString(), threads_->value());
    connect(job_.get(), &SweepJob::mailArrived, this, [this] { onMail(); });
    setRunning(true);
    status_->setText(QString("Sweeping %1 points (%2 layers each, %3 at %4 evaluations per layer) "
                             "into %5…%6")
                         .arg(total_)
                         .arg(network_.layers.size())
                         .arg(searcher_->currentText())
                         .arg(budget_->value())
                         .arg(database_->text().toHtmlEscaped(), movedFrom_.toHtmlEscaped()));
    job_->start();
    return true;
}

void DesignSpaceView::onMail() {
    if (!job_)
        return;
    SweepJob::Mail mail = job_->take();
    for (auto* list : {&mail.before, &mail.points})
        for (auto& r : *list)
            points_.push_back(std::move(r));
    std::sort(points_.begin(), points_.end(),
              [](const auto& a, const auto& b) { return a.index < b.index; });
    progress_->setValue(int(points_.size()));
    redraw();
    if (!mail.finished)
        return;
    job_->wait();
    setRunning(false);
    int invalid = 0;
    for (const auto& r : points_)
        invalid += r.valid ? 0 : 1;
    if (mail.failure) {
        lastError_ = *mail.failure;
        status_->setText(lastError_.toHtmlEscaped());
        emit message(lastError_);
    } else {
        status_->setText(QString("%1 of %2 points in %3 (%4 invalid); %5 on the front. "
                                 "Click a point to open it.%6")
                             .arg(points_.size())
                             .arg(total_)
                             .arg(database_->text().toHtmlEscaped())
                             .arg(invalid)
                             .arg(front_.size())
                             .arg(QString(mail.complete ? "" : " Cancelled: run again to resume.") +
                                  movedFrom_.toHtmlEscaped()));
    }
    emit finished();
}

QString DesignSpaceView::statusText() const {
    return status_->text();
}

void DesignSpaceView::clearResults() {
    if (running())
        return;
    spec_ = {};
    points_.clear();
    front_.clear();
    database_->clear(); // the next sweep of the new session writes a file of its own
    movedFrom_.clear();
    refreshChoices();
    redraw();
    fillTable();
    status_->setText(kIdleStatus);
    refreshPlanned();
}

void DesignSpaceView::cancel() {
    if (job_)
        job_->cancel();
}

bool DesignSpaceView::waitForFinished(int timeoutMs) {
    return processEventsWhile([this] { return running(); }, timeoutMs);
}

bool DesignSpaceView::openResults(const QString& path) {
    if (running())
        return false;
    try {
        const mw::SweepDatabase db = mw::SweepDatabase::open(path.toStdString());
        mw::SweepSpec spec = mw::sweepSpecFromJson(db.spec(), path.toStdString(), "", false);
        std::vector<mw::PointRecord> points;
        for (auto& [index, r] : db.points())
            points.push_back(r);
        spec_ = std::move(spec);
        points_ = std::move(points);
        total_ = int(mw::planSweep(spec_).size());
    } catch (const mw::InputError& e) {
        lastError_ = QString::fromStdString(e.what());
        status_->setText(lastError_.toHtmlEscaped());
        emit message(lastError_);
        return false;
    }
    database_->setText(path);
    setAxes(spec_.axes);
    searcher_->setCurrentText(QString::fromStdString(spec_.searcher));
    budget_->setValue(int(std::min<std::int64_t>(spec_.budget, budget_->maximum())));
    refreshChoices();
    progress_->setRange(0, total_);
    progress_->setValue(int(points_.size()));
    redraw();
    status_->setText(QString("%1: %2 of %3 points of %4 on %5; %6 on the front. Click a point to "
                             "open it.")
                         .arg(path.toHtmlEscaped())
                         .arg(points_.size())
                         .arg(total_)
                         .arg(QString::fromStdString(spec_.network.name).toHtmlEscaped())
                         .arg(QString::fromStdString(spec_.base.name).toHtmlEscaped())
                         .arg(front_.size()));
    return true;
}

void DesignSpaceView::setMetrics(mw::SweepMetric x, mw::SweepMetric y) {
    x_->setCurrentIndex(int(x));
    y_->setCurrentIndex(int(y));
}

void DesignSpaceView::setColourAxis(int axis) {
    colour_->setCurrentIndex(axis + 1);
}

void DesignSpaceView::refreshChoices() {
    const QSignalBlocker block(colour_);
    // (Only the placeholder so far: no choice was made yet.)
    const int was = colour_->count() > 1 ? colour_->currentIndex() : -1;
    colour_->clear();
    colour_->addItem("(one colour)", -1);
    for (std::size_t a = 0; a < spec_.axes.size(); ++a)
        colour_->addItem(QString::fromStdString(spec_.axes[a].parameter), int(a));
    colour_->setCurrentIndex(was >= 0 && was < colour_->count() ? was
                                                                : (spec_.axes.empty() ? 0 : 1));
}

void DesignSpaceView::redraw() {
    SweepPlotChoice choice;
    choice.x = mw::SweepMetric(x_->currentData().toInt());
    choice.y = mw::SweepMetric(y_->currentData().toInt());
    choice.colourAxis = colour_->currentData().isValid() ? colour_->currentData().toInt() : -1;
    front_ = drawSweep(plot_, spec_, points_, choice);
    fillTable();
}

void DesignSpaceView::fillTable() {
    QStringList headers{"Point"};
    for (const auto& a : spec_.axes) // "shared_glb.\ncapacity_words": narrow columns
        headers << QString::fromStdString(a.parameter).replace('.', ".\n");
    headers << "Energy (mJ)"
            << "Cycles"
            << "EDP"
            << "Area (mm²)"
            << "Front"
            << "Note";
    table_->setSortingEnabled(false); // (rows would move while filled)
    table_->setColumnCount(int(headers.size()));
    table_->setHorizontalHeaderLabels(headers);
    table_->setRowCount(int(points_.size()));
    for (std::size_t i = 0; i < points_.size(); ++i) {
        const auto& r = points_[i];
        const bool onFront = std::find(front_.begin(), front_.end(), i) != front_.end();
        QStringList cells{QString::number(r.index)};
        for (const auto& v : r.values)
            cells << QString::fromStdString(v);
        cells << (r.valid ? QString::number(r.energy * 1e-9, 'f', 4) : "—")
              << (r.valid ? QString::number(r.cycles, 'f', 0) : "—")
              << (r.valid ? QString::number(r.edp, 'g', 5) : "—")
              << QString::number(r.area * 1e-6, 'f', 3) << (onFront ? "★" : "")
              << (r.valid ? (r.warmFrom >= 0 ? QString("warm from %1").arg(r.warmFrom) : "")
                          : QString::fromStdString(r.reason));
        // What each cell sorts by: the figures themselves, not their rounded
        // text; an axis value by its number (a mesh "12x14" by its PEs).
        const int metrics = 1 + int(r.values.size());
        const std::vector<double> figures = {r.energy, r.cycles, r.edp};
        for (int c = 0; c < cells.size(); ++c) {
            auto* item = new PointCell(cells[c]);
            if (c == 0)
                item->setData(Qt::UserRole, int(i));
            const QStringList mesh = cells[c].split('x');
            bool ok = false;
            double key = cells[c].toDouble(&ok);
            if (!ok && mesh.size() == 2) {
                bool okY = false;
                key = mesh[0].toDouble(&ok) * mesh[1].toDouble(&okY);
                ok = ok && okY;
            }
            if (r.valid && c >= metrics && c < metrics + int(figures.size()))
                key = figures[std::size_t(c - metrics)];
            if (c == metrics + 3) // the area, valid or not
                key = r.area;
            if (ok)
                item->setData(PointCell::kSortKey, key);
            if (!r.valid)
                item->setForeground(QColor(0xc6, 0x28, 0x28));
            table_->setItem(int(i), c, item);
        }
    }
    table_->setSortingEnabled(true);
}

int DesignSpaceView::pointAt(const QPointF& pixel) const {
    const auto x = mw::SweepMetric(x_->currentData().toInt());
    const auto y = mw::SweepMetric(y_->currentData().toInt());
    std::vector<double> distance(points_.size(), 1e300);
    double nearest = 12.0;
    for (std::size_t i = 0; i < points_.size(); ++i) {
        if (!points_[i].valid)
            continue;
        const double px = plot_->xAxis->coordToPixel(metricValue(points_[i], x));
        const double py = plot_->yAxis->coordToPixel(metricValue(points_[i], y));
        distance[i] = std::hypot(px - pixel.x(), py - pixel.y());
        nearest = std::min(nearest, distance[i]);
    }
    // Of the points under the cursor (markers overlap within a few pixels),
    // the one drawn on top: a Pareto point before the points behind it.
    constexpr double kOverlap = 4.0;
    int best = -1;
    for (std::size_t i = 0; i < points_.size(); ++i) {
        if (distance[i] > nearest + kOverlap || distance[i] >= 12.0)
            continue;
        const bool onFront = std::find(front_.begin(), front_.end(), i) != front_.end();
        const bool bestOnFront =
            best >= 0 && std::find(front_.begin(), front_.end(), std::size_t(best)) != front_.end();
        if (best < 0 || (onFront && !bestOnFront) ||
            (onFront == bestOnFront && distance[i] < distance[std::size_t(best)]))
            best = int(i);
    }
    return best;
}

QString DesignSpaceView::pointSummary(int pointIndex) const {
    if (pointIndex < 0 || pointIndex >= int(points_.size()))
        return {};
    const auto& r = points_[std::size_t(pointIndex)];
    QString text = QString("<b>point %1</b>").arg(r.index);
    for (std::size_t a = 0; a < r.values.size() && a < spec_.axes.size(); ++a)
        text += QString("<br>%1 = %2")
                    .arg(QString::fromStdString(spec_.axes[a].parameter).toHtmlEscaped(),
                         QString::fromStdString(r.values[a]).toHtmlEscaped());
    if (!r.valid)
        return text + "<br>invalid: " + QString::fromStdString(r.reason).toHtmlEscaped();
    return text +
           QString("<br>energy %1 mJ<br>cycles %2<br>EDP %3 J·cycle<br>area %4 mm²%5")
               .arg(r.energy * 1e-9, 0, 'f', 4)
               .arg(r.cycles, 0, 'f', 0)
               .arg(r.edp, 0, 'g', 5)
               .arg(r.area * 1e-6, 0, 'f', 3)
               .arg(std::find(front_.begin(), front_.end(), std::size_t(pointIndex)) != front_.end()
                        ? "<br><i>on the Pareto front</i>"
                        : "");
}

void DesignSpaceView::activatePoint(int pointIndex) {
    if (pointIndex < 0 || pointIndex >= int(points_.size()))
        return;
    const auto& r = points_[std::size_t(pointIndex)];
    if (!r.valid || r.architecture.is_null()) {
        emit message(QString("Point %1 is not a design: %2")
                         .arg(r.index)
                         .arg(QString::fromStdString(r.reason)));
        return;
    }
    emit pointActivated(spec_, r);
}

} // namespace mw::ui
