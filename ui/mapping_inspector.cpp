#include "ui/mapping_inspector.h"

#include "common/error.h"
#include "mapping/mapping.h"
#include "model/cost_model.h"
#include "ui/search_panel.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

namespace mw::ui {

namespace {

const char* kKinds[] = {"temporal", "x", "y"};

} // namespace

MappingInspector::MappingInspector(QWidget* parent) : QWidget(parent) {
    pickA_ = new QComboBox;
    pickB_ = new QComboBox;
    pickA_->setMinimumContentsLength(28);
    pickB_->setMinimumContentsLength(28);
    auto* reset = new QPushButton("Reset edits");
    reset->setToolTip("Back to the run's best mapping");
    connect(reset, &QPushButton::clicked, this, &MappingInspector::resetEdits);
    connect(pickA_, &QComboBox::activated, this,
            [this](int i) { chooseRun(pickA_->itemData(i).toInt()); });
    connect(pickB_, &QComboBox::activated, this,
            [this](int i) { compareWith(pickB_->itemData(i).toInt()); });
    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel("Mapping"));
    top->addWidget(pickA_, 1);
    top->addWidget(new QLabel("compare with"));
    top->addWidget(pickB_, 1);
    top->addWidget(reset);

    const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    auto makeNest = [&mono] {
        auto* t = new QPlainTextEdit;
        t->setReadOnly(true);
        t->setFont(mono);
        t->setLineWrapMode(QPlainTextEdit::NoWrap);
        return t;
    };
    nestA_ = makeNest();
    nestB_ = makeNest();
    summaryA_ = new QLabel;
    summaryB_ = new QLabel;
    for (QLabel* l : {summaryA_, summaryB_}) {
        l->setWordWrap(true);
        l->setTextFormat(Qt::RichText);
    }
    auto column = [](QWidget* summary, QWidget* nest) {
        auto* w = new QWidget;
        auto* v = new QVBoxLayout(w);
        v->setContentsMargins(0, 0, 0, 0);
        v->addWidget(summary);
        v->addWidget(nest, 1);
        return w;
    };
    auto* nests = new QSplitter(Qt::Horizontal);
    nests->addWidget(column(summaryA_, nestA_));
    nests->addWidget(column(summaryB_, nestB_));

    buffers_ = new QTableWidget(0, 10);
    buffers_->setHorizontalHeaderLabels({"Level", "Tensor", "Tile (words)", "Capacity", "Occupancy",
                                         "Reads", "Fills", "Updates", "Shared by", "Energy (µJ)"});
    buffers_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    buffers_->verticalHeader()->setVisible(false);
    buffers_->setEditTriggers(QAbstractItemView::NoEditTriggers);

    factors_ = new QTableWidget;
    factors_->verticalHeader()->setVisible(true);
    factors_->setToolTip("Edit a factor or a level's loop order (outer to inner); the mapping "
                         "is re-evaluated at once");
    connect(factors_, &QTableWidget::cellChanged, this, &MappingInspector::onFactorEdited);

    auto* tabs = new QTabWidget;
    tabs->addTab(buffers_, "Buffers and accesses");
    tabs->addTab(factors_, "Edit factors and orders");

    error_ = new QLabel;
    error_->setStyleSheet("color: #b00020;");
    error_->setWordWrap(true);

    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(nests);
    split->addWidget(tabs);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(split, 1);
    layout->addWidget(error_);
    refresh();
}

void MappingInspector::setSession(const mw::Architecture& arch, const mw::Network& network,
                                  const std::vector<mw::SessionRun>& runs) {
    const bool edited = hasEdits();
    arch_ = arch;
    network_ = network;
    runs_ = runs;
    pickA_->clear();
    pickB_->clear();
    pickB_->addItem("— none —", -1);
    for (std::size_t i = 0; i < runs_.size(); ++i)
        if (runs_[i].finished && runs_[i].result.found) {
            pickA_->addItem(runLabel(runs_[i], int(i)), int(i));
            pickB_->addItem(runLabel(runs_[i], int(i)), int(i));
        }
    // Keep the shown runs when they still exist (an architecture edit re-evaluates them).
    const int a = runA_ >= 0 && runA_ < int(runs_.size()) ? runA_ : -1;
    const int b = runB_ >= 0 && runB_ < int(runs_.size()) ? runB_ : -1;
    int firstCurrent = -1; // a stale run (another design's) is shown only when chosen
    for (int i = 0; i < pickA_->count() && firstCurrent < 0; ++i)
        if (runs_[std::size_t(pickA_->itemData(i).toInt())].stale.empty())
            firstCurrent = pickA_->itemData(i).toInt();
    if (!(edited && a >= 0 && editsOnRunA(problemA_, mappingA_))) {
        // Loops that no longer fit their layer (reshaped or removed) are set
        // aside, said, and put back when an undo brings the shape back.
        if (edited && a >= 0)
            setAside_ = {a, problemA_, mappingA_};
        showRun(a >= 0 ? a : firstCurrent);
        if (edited) {
            lastError_ = a >= 0 ? "Hand edits set aside: their layer changed shape (undoing the "
                                  "change brings them back)"
                                : "Hand edits discarded: their run is gone";
            emit message(lastError_);
        } else if (setAside_.run >= 0 && setAside_.run == runA_ && restoreSetAside()) {
            lastError_ = "Hand edits restored: their layer has its shape again";
            error_->setText(lastError_);
            emit message(lastError_);
        }
    }
    compareWith(b);
}

void MappingInspector::chooseRun(int runIndex) {
    setAside_ = {}; // the user moved on
    showRun(runIndex);
}

void MappingInspector::dropEdits() {
    setAside_ = {};
    showRun(-1);
}

bool MappingInspector::restoreSetAside() {
    if (!editsOnRunA(setAside_.problem, setAside_.mapping))
        return false;
    setAside_ = {};
    return true;
}

void MappingInspector::runInserted(int index) {
    for (int* run : {&runA_, &runB_, &setAside_.run})
        if (*run >= index)
            ++*run;
}

bool MappingInspector::sameDimensions(const mw::Problem& a, const mw::Problem& b) {
    // The loops fit while the dimensions and bounds do (their products are
    // the bounds); a stride changed is still the same loops, re-costed, so
    // this is not mw::sameShape, which also compares the tensors.
    if (a.dims.size() != b.dims.size())
        return false;
    for (std::size_t d = 0; d < a.dims.size(); ++d)
        if (a.dims[d].name != b.dims[d].name || a.dims[d].bound != b.dims[d].bound)
            return false;
    return true;
}

bool MappingInspector::editsOnRunA(const mw::Problem& shape, const mw::Mapping& edits) {
    mw::Problem p;
    mw::Mapping best;
    if (!load(runA_, p, best) || !sameDimensions(p, shape))
        return false;
    // The same loops on the layer and architecture as they now are.
    problemA_ = p;
    originalA_ = best;
    mappingA_ = edits;
    mw::evaluate(problemA_, arch_, mappingA_, evalA_);
    if (const int at = pickA_->findData(runA_); at >= 0)
        pickA_->setCurrentIndex(at);
    refresh();
    return true;
}

bool MappingInspector::load(int runIndex, mw::Problem& p, mw::Mapping& m) const {
    if (runIndex < 0 || runIndex >= int(runs_.size()))
        return false;
    const mw::SessionRun& r = runs_[std::size_t(runIndex)];
    const int li = network_.layerIndex(r.layer);
    if (!r.finished || !r.result.found || li < 0)
        return false;
    try {
        p = mw::buildProblem(network_.layers[std::size_t(li)]);
    } catch (const mw::InputError&) {
        return false;
    }
    m = r.result.best;
    return true;
}

void MappingInspector::showRun(int runIndex) {
    runA_ = runIndex;
    hasA_ = load(runIndex, problemA_, mappingA_);
    originalA_ = mappingA_;
    if (hasA_)
        mw::evaluate(problemA_, arch_, mappingA_, evalA_);
    const int at = pickA_->findData(runIndex);
    if (at >= 0)
        pickA_->setCurrentIndex(at);
    lastError_.clear();
    refresh();
}

void MappingInspector::compareWith(int runIndex) {
    runB_ = runIndex;
    hasB_ = load(runIndex, problemB_, mappingB_);
    if (hasB_)
        mw::evaluate(problemB_, arch_, mappingB_, evalB_);
    const int at = pickB_->findData(hasB_ ? runIndex : -1);
    if (at >= 0)
        pickB_->setCurrentIndex(at);
    refresh();
}

void MappingInspector::resetEdits() {
    if (!hasA_)
        return;
    mappingA_ = originalA_;
    mw::evaluate(problemA_, arch_, mappingA_, evalA_);
    lastError_.clear();
    refresh();
}

QString MappingInspector::summary(const mw::Evaluation& e, const mw::Problem& p) const {
    if (!e.valid) {
        QString s = "<b style='color:#b00020'>Illegal mapping</b><br>";
        for (const auto& v : mw::describeViolations(e, p, arch_))
            s += QString::fromStdString(v).toHtmlEscaped() + "<br>";
        return s;
    }
    return QString("<b>%1</b> — energy <b>%2 µJ</b> · cycles <b>%3</b> · utilization %4 % · "
                   "EDP %5 J·cycle")
        .arg(QString::fromStdString(p.name).toHtmlEscaped())
        .arg(e.energy * 1e-6, 0, 'f', 2)
        .arg(e.cycles)
        .arg(e.utilization * 100.0, 0, 'f', 1)
        .arg(e.edp, 0, 'g', 5);
}

QString MappingInspector::nestText(const mw::Problem& p, const mw::Mapping& m,
                                   const mw::Evaluation& e) const {
    std::vector<std::vector<std::int64_t>> tiles;
    if (e.valid)
        for (int l = 0; l < arch_.numLevels(); ++l) {
            tiles.emplace_back();
            for (int t = 0; t < p.numTensors(); ++t)
                tiles.back().push_back(e.levels[std::size_t(l)].tensors[std::size_t(t)].tile);
        }
    return QString::fromStdString(mw::renderLoopNest(p, arch_, m, tiles));
}

QString MappingInspector::loopNestText() const {
    return nestA_->toPlainText();
}

void MappingInspector::refresh() {
    nestA_->setPlainText(hasA_ ? nestText(problemA_, mappingA_, evalA_)
                               : QString("No mapping yet: run a search, then pick its best "
                                         "mapping here."));
    summaryA_->setText(hasA_ ? summary(evalA_, problemA_) : QString());
    nestB_->parentWidget()->setVisible(hasB_);
    if (hasB_) {
        nestB_->setPlainText(nestText(problemB_, mappingB_, evalB_));
        summaryB_->setText(summary(evalB_, problemB_));
    }
    error_->setText(lastError_);
    fillBuffers();
    fillFactors();
}

void MappingInspector::fillBuffers() {
    buffers_->setRowCount(0);
    if (!hasA_ || !evalA_.valid)
        return;
    int row = 0;
    for (int l = 0; l < arch_.numLevels(); ++l) {
        const mw::StorageLevel& s = arch_.levels[std::size_t(l)];
        const mw::LevelStats& ls = evalA_.levels[std::size_t(l)];
        for (int t = 0; t < problemA_.numTensors(); ++t) {
            const mw::TensorLevelStats& ts = ls.tensors[std::size_t(t)];
            if (!ts.kept)
                continue;
            buffers_->insertRow(row);
            const bool bounded = !s.unbounded() && s.capacityWords > 0;
            const double share = bounded ? double(ts.tile) / double(s.capacityWords) : 0.0;
            const QStringList cells = {
                QString::fromStdString(s.name),
                QString::fromStdString(problemA_.tensors[std::size_t(t)].name),
                QString::number(ts.tile),
                bounded ? QString::number(s.capacityWords) : QString("∞"),
                bounded ? QString("%1 %").arg(share * 100.0, 0, 'f', 1) : QString("—"),
                QString::number(ts.reads),
                QString::number(ts.fills),
                QString::number(ts.updates),
                QString::number(ts.sharedBy),
                QString::number(ts.energy * 1e-6, 'f', 3)};
            for (int c = 0; c < cells.size(); ++c) {
                auto* item = new QTableWidgetItem(cells[c]);
                if (c >= 2)
                    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
                if (c == 4 && bounded) { // deeper blue the fuller: full is good use, not an error
                    item->setBackground(
                        QColor::fromHsv(210, int(25 + 110 * std::min(1.0, share)), 245));
                    item->setToolTip("The share of the buffer this tile fills; a mapping "
                                     "never overfills one (it would be illegal)");
                }
                buffers_->setItem(row, c, item);
            }
            ++row;
        }
    }
}

void MappingInspector::fillFactors() {
    filling_ = true;
    factors_->clear();
    factors_->setRowCount(0);
    factors_->setColumnCount(0);
    if (!hasA_) {
        filling_ = false;
        return;
    }
    const int D = problemA_.numDims();
    QStringList columns;
    for (const auto& d : problemA_.dims)
        columns << QString::fromStdString(d.name);
    columns << "Loop order (outer → inner)";
    factors_->setColumnCount(D + 1);
    factors_->setHorizontalHeaderLabels(columns);
    QStringList rows;
    for (int l = 0; l < arch_.numLevels(); ++l)
        for (int k = 0; k < 3; ++k) {
            const bool fans = k == 0 || (k == 1 ? arch_.fanoutX(l) > 1 : arch_.fanoutY(l) > 1);
            if (!fans)
                continue;
            const int row = factors_->rowCount();
            factors_->insertRow(row);
            rows << QString("%1 %2").arg(QString::fromStdString(arch_.levels[std::size_t(l)].name),
                                         k == 0   ? "temporal"
                                         : k == 1 ? "spatial X"
                                                  : "spatial Y");
            const mw::LevelMapping& lm = mappingA_.levels[std::size_t(l)];
            for (int d = 0; d < D; ++d) {
                const std::uint32_t f = k == 0   ? lm.temporal[std::size_t(d)]
                                        : k == 1 ? lm.spatialX[std::size_t(d)]
                                                 : lm.spatialY[std::size_t(d)];
                auto* item = new QTableWidgetItem(QString::number(f));
                item->setData(Qt::UserRole, l);
                item->setData(Qt::UserRole + 1, k);
                item->setTextAlignment(Qt::AlignCenter);
                if (f > 1)
                    item->setBackground(QColor(k == 0 ? 0xe3f2fd : 0xfff3e0));
                factors_->setItem(row, d, item);
            }
            auto* order = new QTableWidgetItem;
            if (k == 0) {
                QStringList names;
                for (int i = 0; i < D; ++i)
                    names << QString::fromStdString(
                        problemA_.dims[std::size_t(lm.order[std::size_t(i)])].name);
                order->setText(names.join(' '));
            } else {
                order->setFlags(Qt::NoItemFlags);
            }
            order->setData(Qt::UserRole, l);
            order->setData(Qt::UserRole + 1, k);
            factors_->setItem(row, D, order);
        }
    factors_->setVerticalHeaderLabels(rows);
    factors_->resizeColumnsToContents();
    filling_ = false;
}

void MappingInspector::onFactorEdited(int row, int column) {
    if (filling_)
        return;
    QTableWidgetItem* item = factors_->item(row, column);
    const int level = item->data(Qt::UserRole).toInt();
    const int kind = item->data(Qt::UserRole + 1).toInt();
    if (column == problemA_.numDims())
        setOrder(level, item->text());
    else
        setFactor(level, QString::fromStdString(problemA_.dims[std::size_t(column)].name),
                  kKinds[kind], item->text());
}

bool MappingInspector::setFactor(int level, const QString& dim, const QString& kind,
                                 const QString& text) {
    auto fail = [this](const QString& why) {
        lastError_ = why;
        emit message(why);
        refresh(); // shows the old value again
        return false;
    };
    if (!hasA_)
        return fail("No mapping to edit.");
    if (level < 0 || level >= arch_.numLevels())
        return fail(QString("level %1 does not exist").arg(level));
    const int d = problemA_.dimIndex(dim.toStdString());
    if (d < 0)
        return fail(QString("'%1' is not a dimension of %2")
                        .arg(dim, QString::fromStdString(problemA_.name)));
    const QString where =
        QString("%1 %2 factor of %3")
            .arg(QString::fromStdString(arch_.levels[std::size_t(level)].name), kind, dim);
    bool ok = false;
    const qlonglong value = text.trimmed().toLongLong(&ok);
    if (!ok || value < 1 || value > 0x7fffffff)
        return fail(QString("%1: '%2' is not a positive whole number").arg(where, text));
    mw::LevelMapping& lm = mappingA_.levels[std::size_t(level)];
    auto& slot = kind == "x"   ? lm.spatialX[std::size_t(d)]
                 : kind == "y" ? lm.spatialY[std::size_t(d)]
                               : lm.temporal[std::size_t(d)];
    slot = std::uint32_t(value);
    mw::evaluate(problemA_, arch_, mappingA_, evalA_);
    lastError_ =
        evalA_.valid
            ? QString()
            : QString("%1 set to %2: the mapping is now illegal (see above)").arg(where).arg(value);
    refresh();
    return true;
}

bool MappingInspector::setOrder(int level, const QString& text) {
    if (!hasA_ || level < 0 || level >= arch_.numLevels())
        return false;
    const QStringList names = text.split(' ', Qt::SkipEmptyParts);
    const int D = problemA_.numDims();
    std::array<std::uint8_t, mw::kMaxDims> order{};
    std::uint32_t seen = 0;
    bool ok = names.size() == D;
    for (int i = 0; ok && i < D; ++i) {
        const int d = problemA_.dimIndex(names[i].toStdString());
        ok = d >= 0 && !((seen >> d) & 1u);
        if (ok) {
            seen |= 1u << d;
            order[std::size_t(i)] = std::uint8_t(d);
        }
    }
    if (!ok) {
        lastError_ = QString("%1 loop order: '%2' must name every dimension once, outer to inner")
                         .arg(QString::fromStdString(arch_.levels[std::size_t(level)].name), text);
        emit message(lastError_);
        refresh();
        return false;
    }
    for (int i = D; i < mw::kMaxDims; ++i)
        order[std::size_t(i)] = mappingA_.levels[std::size_t(level)].order[std::size_t(i)];
    mappingA_.levels[std::size_t(level)].order = order;
    mw::evaluate(problemA_, arch_, mappingA_, evalA_);
    lastError_.clear();
    refresh();
    return true;
}

} // namespace mw::ui
