#include "ui/architecture_editor.h"

#include "common/error.h"

#include <QComboBox>
#include <QFontMetricsF>
#include <QFormLayout>
#include <QGraphicsRectItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsView>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMouseEvent>
#include <QPointer>
#include <QPushButton>
#include <QSplitter>
#include <QStackedWidget>
#include <QUndoCommand>
#include <QUndoStack>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <optional>
#include <utility>
#include <variant>

namespace mw::ui {

// Switches the editor between two validated architectures (and the selection
// that goes with each). QUndoStack::push calls redo() once, which applies the edit.
class ArchitectureEditor::EditCommand : public QUndoCommand {
  public:
    EditCommand(ArchitectureEditor* editor, Architecture before, Architecture after,
                int selectionBefore, int selectionAfter, const QString& text)
        : QUndoCommand(text), editor_(editor), before_(std::move(before)), after_(std::move(after)),
          selectionBefore_(selectionBefore), selectionAfter_(selectionAfter) {}

    void redo() override {
        if (editor_)
            editor_->apply(after_, selectionAfter_);
    }
    void undo() override {
        if (editor_)
            editor_->apply(before_, selectionBefore_);
    }

  private:
    QPointer<ArchitectureEditor> editor_; // the stack may outlive the editor
    Architecture before_;
    Architecture after_;
    int selectionBefore_;
    int selectionAfter_;
};

namespace {

// ---- Fields: one table per level kind drives both the panel and setLevelField.

using FieldRef = std::variant<std::string*, LevelClass*, int*, std::int64_t*, double*>;

template <class Level> struct Field {
    const char* key;
    const char* label;
    const char* tip;
    FieldRef (*ref)(Level&);
};

constexpr Field<StorageLevel> kStorageFields[] = {
    {"name", "Name", "Unique level name; mappings refer to it",
     [](StorageLevel& s) -> FieldRef { return &s.name; }},
    {"class", "Class", "DRAM (outermost, unbounded), SRAM, regfile, or dummy (fan-out only)",
     [](StorageLevel& s) -> FieldRef { return &s.cls; }},
    {"capacity", "Capacity (words)", "Words per instance",
     [](StorageLevel& s) -> FieldRef { return &s.capacityWords; }},
    {"word_bits", "Word width (bits)", "Bits per word",
     [](StorageLevel& s) -> FieldRef { return &s.wordBits; }},
    {"block_size", "Block size (words)", "Words per vector access",
     [](StorageLevel& s) -> FieldRef { return &s.blockSize; }},
    {"mesh_x", "Mesh X", "Instances along X; must divide the child's mesh X",
     [](StorageLevel& s) -> FieldRef { return &s.meshX; }},
    {"mesh_y", "Mesh Y", "Instances along Y; must divide the child's mesh Y",
     [](StorageLevel& s) -> FieldRef { return &s.meshY; }},
    {"read_bandwidth", "Read bandwidth (words/cycle)",
     "Words per cycle per instance; 0 = unlimited",
     [](StorageLevel& s) -> FieldRef { return &s.readBandwidth; }},
    {"write_bandwidth", "Write bandwidth (words/cycle)",
     "Words per cycle per instance; 0 = unlimited",
     [](StorageLevel& s) -> FieldRef { return &s.writeBandwidth; }},
    {"multiple_buffering", "Multiple buffering", "At least 1; 2 = double buffering",
     [](StorageLevel& s) -> FieldRef { return &s.multipleBuffering; }},
    {"read_energy", "Read energy (pJ)", "Per vector access of block-size words",
     [](StorageLevel& s) -> FieldRef { return &s.energy.read; }},
    {"write_energy", "Write energy (pJ)", "Per vector fill from the parent level",
     [](StorageLevel& s) -> FieldRef { return &s.energy.write; }},
    {"update_energy", "Update energy (pJ)", "Per vector of partial results written back",
     [](StorageLevel& s) -> FieldRef { return &s.energy.update; }},
    {"leak_energy", "Leak energy (pJ/cycle)", "Per instance per cycle",
     [](StorageLevel& s) -> FieldRef { return &s.energy.leak; }},
};

constexpr Field<ComputeLevel> kComputeFields[] = {
    {"name", "Name", "Name of the compute level",
     [](ComputeLevel& c) -> FieldRef { return &c.name; }},
    {"mesh_x", "Mesh X", "MAC units along X", [](ComputeLevel& c) -> FieldRef { return &c.meshX; }},
    {"mesh_y", "Mesh Y", "MAC units along Y", [](ComputeLevel& c) -> FieldRef { return &c.meshY; }},
    {"word_bits", "Word width (bits)", "Datapath width",
     [](ComputeLevel& c) -> FieldRef { return &c.wordBits; }},
    {"mac_energy", "MAC energy (pJ)", "Per multiply-accumulate",
     [](ComputeLevel& c) -> FieldRef { return &c.macEnergy; }},
};

const QLatin1String kClassKey("class");

template <class Level, std::size_t N>
std::optional<FieldRef> findField(const Field<Level> (&table)[N], Level& level,
                                  const QString& key) {
    for (const Field<Level>& f : table)
        if (key == QLatin1String(f.key))
            return f.ref(level);
    return std::nullopt;
}

// Shortest text that reads back as the same double, so an untouched field
// never turns into an edit.
QString number(double v) {
    return QString::number(v, 'g', QLocale::FloatingPointShortest);
}

QString shown(const std::string& v) {
    return QString::fromStdString(v);
}
QString shown(LevelClass v) {
    return QString::fromLatin1(toString(v));
}
QString shown(int v) {
    return QString::number(v);
}
QString shown(std::int64_t v) {
    return QString::number(v);
}
QString shown(double v) {
    return number(v);
}

QString shownField(const FieldRef& ref) {
    return std::visit([](auto* value) { return shown(*value); }, ref);
}

// Each parseInto reads `text` into `value` and returns whether the value changed;
// on bad text it sets `problem` and leaves `value` alone.
bool parseInto(std::string& value, const QString& text, QString& problem) {
    const std::string s = text.trimmed().toStdString();
    if (s.empty()) {
        problem = QStringLiteral("is empty; expected a name");
        return false;
    }
    if (s == value)
        return false;
    value = s;
    return true;
}

bool parseInto(LevelClass& value, const QString& text, QString& problem) {
    LevelClass c;
    if (!parseLevelClass(text.trimmed().toStdString(), c)) {
        problem = QStringLiteral("'%1' is not a level class; expected DRAM, SRAM, regfile or dummy")
                      .arg(text.trimmed());
        return false;
    }
    if (c == value)
        return false;
    value = c;
    return true;
}

template <class Int> bool parseInteger(Int& value, const QString& text, QString& problem) {
    const QString t = text.trimmed();
    bool ok = false;
    const qlonglong n = t.toLongLong(&ok);
    if (!ok) {
        bool real = false;
        t.toDouble(&real);
        problem = QStringLiteral("'%1' is not %2").arg(t, real ? "a whole number" : "a number");
        return false;
    }
    if (!std::in_range<Int>(n)) {
        problem = QStringLiteral("'%1' is out of range").arg(t);
        return false;
    }
    if (static_cast<Int>(n) == value)
        return false;
    value = static_cast<Int>(n);
    return true;
}

bool parseInto(int& value, const QString& text, QString& problem) {
    return parseInteger(value, text, problem);
}
bool parseInto(std::int64_t& value, const QString& text, QString& problem) {
    return parseInteger(value, text, problem);
}

bool parseInto(double& value, const QString& text, QString& problem) {
    const QString t = text.trimmed();
    bool ok = false;
    const double v = t.toDouble(&ok);
    if (!ok || !std::isfinite(v)) { // NaN would slip through the engine's range checks
        problem = QStringLiteral("'%1' is not %2").arg(t, ok ? "a finite number" : "a number");
        return false;
    }
    if (v == value)
        return false;
    value = v;
    return true;
}

// ---- Drawing: nested frames, each with a header; children inset inside parents.

constexpr int kLevelKey = 0;   // QGraphicsItem::data key: the level index of a block
constexpr double kWidth = 640; // scene units; the view scales the drawing to fit
constexpr double kInset = 12;  // margin of a child frame inside its parent
constexpr double kGap = 4;     // between a header and the child frame below it
constexpr double kPad = 8;     // inside a header
constexpr double kCell = 7;    // one instance of a mesh
constexpr double kCellGap = 2;
constexpr int kMaxCells = 8; // larger meshes are drawn 8 wide/high; the label gives the size

constexpr QRgb kInk = qRgb(0x1e, 0x2a, 0x36);
constexpr QRgb kMuted = qRgb(0x55, 0x61, 0x70);
constexpr QRgb kSelection = qRgb(0x0a, 0x58, 0xca);
constexpr QRgb kBackground = qRgb(0xf5, 0xf7, 0xfa);

struct BlockStyle {
    QRgb fill;
    QRgb border;
    QRgb cell; // fill of the mesh boxes
    QRgb title;
    bool dashed;
};

// Calm blues and greys for storage, lighter and dashed for dummy levels (they
// hold nothing), a warm accent for the MACs.
BlockStyle styleFor(LevelClass c) {
    switch (c) {
    case LevelClass::DRAM:
        return {qRgb(0xdc, 0xe1, 0xe8), qRgb(0x5a, 0x67, 0x78), qRgb(0xff, 0xff, 0xff), kInk,
                false};
    case LevelClass::SRAM:
        return {qRgb(0xd8, 0xe7, 0xf6), qRgb(0x2f, 0x6a, 0xa8), qRgb(0xff, 0xff, 0xff), kInk,
                false};
    case LevelClass::RegFile:
        return {qRgb(0xe3, 0xf1, 0xf4), qRgb(0x35, 0x80, 0x96), qRgb(0xff, 0xff, 0xff), kInk,
                false};
    case LevelClass::Dummy:
        return {qRgb(0xf8, 0xf9, 0xfb), qRgb(0x9c, 0xa6, 0xb2), qRgb(0xff, 0xff, 0xff), kMuted,
                true};
    }
    return styleFor(LevelClass::SRAM);
}

constexpr BlockStyle kComputeStyle{qRgb(0xfb, 0xe6, 0xcc), qRgb(0xc4, 0x6c, 0x1c),
                                   qRgb(0xf4, 0xb8, 0x73), kInk, false};

BlockStyle styleOf(const Architecture& a, int index) {
    return index < a.numLevels() ? styleFor(a.levels[index].cls) : kComputeStyle;
}

QPen framePen(const BlockStyle& s, bool selected) {
    QPen pen(QColor(selected ? kSelection : s.border), selected ? 3.0 : 1.5);
    pen.setCosmetic(true); // same stroke at any zoom
    if (s.dashed)
        pen.setStyle(Qt::DashLine);
    return pen;
}

QFont pixelFont(int size, bool bold = false) {
    QFont f;
    f.setPixelSize(size);
    f.setBold(bold);
    return f;
}

QString formatBytes(double bytes) {
    static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    std::size_t u = 0;
    while (bytes >= 1024 && u + 1 < std::size(units)) {
        bytes /= 1024;
        ++u;
    }
    return QStringLiteral("%1 %2").arg(QString::number(bytes, 'g', 4), QLatin1String(units[u]));
}

QString instancesText(std::int64_t n) {
    return n == 1 ? QStringLiteral("1 instance") : QStringLiteral("%1 instances").arg(n);
}

// What a block shows: a title, detail lines, a tooltip with every parameter and,
// for more than one instance, its mesh.
struct BlockContent {
    QString title;
    QStringList lines;
    QString tooltip;
    int meshX = 1;
    int meshY = 1;
    BlockStyle style;
};

BlockContent storageContent(const Architecture& a, int l) {
    const StorageLevel& s = a.levels[l];
    const bool innermost = l + 1 == a.numLevels();
    const int childX = innermost ? a.compute.meshX : a.levels[l + 1].meshX;
    const int childY = innermost ? a.compute.meshY : a.levels[l + 1].meshY;
    const QString child = QString::fromStdString(innermost ? a.compute.name : a.levels[l + 1].name);
    // Guarded so that an invalid architecture handed to setArchitecture still draws.
    const QString fanX = QString::number(s.meshX > 0 ? childX / s.meshX : 0);
    const QString fanY = QString::number(s.meshY > 0 ? childY / s.meshY : 0);
    const QString name = QString::fromStdString(s.name);
    const QString cls = shown(s.cls);
    const double bytes = double(s.capacityWords) * s.wordBits / 8;

    BlockContent b;
    b.style = styleFor(s.cls);
    b.meshX = s.meshX;
    b.meshY = s.meshY;
    b.title = QStringLiteral("%1  ·  %2").arg(name, cls);
    QString capacity;
    switch (s.cls) {
    case LevelClass::DRAM:
        capacity = QStringLiteral("unbounded");
        b.lines << QStringLiteral("unbounded · %1-bit words").arg(s.wordBits);
        break;
    case LevelClass::Dummy:
        capacity = QStringLiteral("none (dummy level)");
        b.lines << QStringLiteral("no storage; carries the fan-out");
        break;
    case LevelClass::SRAM:
    case LevelClass::RegFile: {
        capacity = QStringLiteral("%1 words × %2 bits per instance (%3)")
                       .arg(QString::number(s.capacityWords), QString::number(s.wordBits),
                            formatBytes(bytes));
        const QString each = QStringLiteral("%1 words × %2 b = %3")
                                 .arg(QString::number(s.capacityWords), QString::number(s.wordBits),
                                      formatBytes(bytes));
        b.lines << (s.instances() > 1 ? QStringLiteral("%1 each · %2 total")
                                            .arg(each, formatBytes(bytes * double(s.instances())))
                                      : each);
        break;
    }
    }
    const auto bandwidth = [](double w) { return w > 0 ? number(w) : QStringLiteral("∞"); };
    if (s.cls != LevelClass::Dummy)
        b.lines << QStringLiteral("block %1 · read %2 · write %3 words/cycle")
                       .arg(QString::number(s.blockSize), bandwidth(s.readBandwidth),
                            bandwidth(s.writeBandwidth));
    b.lines << QStringLiteral("%1 · fan-out %2 × %3").arg(instancesText(s.instances()), fanX, fanY);

    b.tooltip =
        QStringList{
            QStringLiteral("%1 (%2)").arg(name, cls),
            QStringLiteral("Capacity: %1").arg(capacity),
            QStringLiteral("Mesh: %1 × %2 (%3); fan-out %4 × %5 to %6")
                .arg(QString::number(s.meshX), QString::number(s.meshY),
                     instancesText(s.instances()), fanX, fanY, child),
            QStringLiteral("Block: %1 words; bandwidth read %2, write %3 words/cycle per instance "
                           "(0 = unlimited)")
                .arg(QString::number(s.blockSize), number(s.readBandwidth),
                     number(s.writeBandwidth)),
            QStringLiteral("Multiple buffering: %1").arg(number(s.multipleBuffering)),
            QStringLiteral("Energy: read %1, write %2, update %3 pJ per access; leak %4 pJ/cycle")
                .arg(number(s.energy.read), number(s.energy.write), number(s.energy.update),
                     number(s.energy.leak)),
        }
            .join(QLatin1Char('\n'));
    return b;
}

BlockContent computeContent(const Architecture& a) {
    const ComputeLevel& c = a.compute;
    const QString name = QString::fromStdString(c.name);
    const QString line =
        QStringLiteral("%1 MACs · %2-bit · %3 pJ/MAC")
            .arg(QString::number(c.instances()), QString::number(c.wordBits), number(c.macEnergy));
    BlockContent b;
    b.style = kComputeStyle;
    b.meshX = c.meshX;
    b.meshY = c.meshY;
    b.title = QStringLiteral("%1  ·  compute").arg(name);
    b.lines << line;
    b.tooltip = QStringLiteral("%1 (compute)\nMesh: %2 × %3\n%4")
                    .arg(name, QString::number(c.meshX), QString::number(c.meshY), line);
    return b;
}

// Adds one line of text at `at` in `parent`, elided to `width`; returns its height.
double addLine(QGraphicsItem* parent, const QString& text, const QFont& font, QRgb color,
               QPointF at, double width) {
    const QFontMetricsF metrics(font);
    auto* item = new QGraphicsSimpleTextItem(
        metrics.elidedText(text, Qt::ElideRight, std::max(width, 0.0)), parent);
    item->setFont(font);
    item->setBrush(QColor(color));
    item->setPos(at);
    return metrics.height();
}

// Adds the mesh as a grid of boxes with a "meshX × meshY" label under it at the
// top right of a block `blockWidth` wide; returns the size it takes.
QSizeF addMesh(QGraphicsItem* block, const BlockContent& c, double blockWidth) {
    auto* mesh = new QGraphicsRectItem(block); // an empty container for the boxes
    mesh->setPen(Qt::NoPen);
    QPen pen(QColor(c.style.border));
    pen.setCosmetic(true);
    const int cols = std::min(c.meshX, kMaxCells);
    const int rows = std::min(c.meshY, kMaxCells);
    for (int y = 0; y < rows; ++y)
        for (int x = 0; x < cols; ++x) {
            auto* cell = new QGraphicsRectItem(x * (kCell + kCellGap), y * (kCell + kCellGap),
                                               kCell, kCell, mesh);
            cell->setPen(pen);
            cell->setBrush(QColor(c.style.cell));
        }
    const double gridWidth = cols * kCell + (cols - 1) * kCellGap;
    const double gridHeight = rows * kCell + (rows - 1) * kCellGap;
    auto* label = new QGraphicsSimpleTextItem(
        QStringLiteral("%1 × %2").arg(QString::number(c.meshX), QString::number(c.meshY)), mesh);
    label->setFont(pixelFont(10, true));
    label->setBrush(QColor(kMuted));
    label->setPos((gridWidth - label->boundingRect().width()) / 2, gridHeight + 2);
    const QRectF r = mesh->childrenBoundingRect();
    mesh->setPos(blockWidth - kPad - r.right(), kPad - r.top());
    return r.size();
}

// Fills a block's header (text left, mesh right); returns the header's height.
double addHeader(QGraphicsRectItem* block, const BlockContent& c, double width) {
    QSizeF mesh(0, 0);
    if (c.meshX > 0 && c.meshY > 0 && std::int64_t(c.meshX) * c.meshY > 1)
        mesh = addMesh(block, c, width);
    const double textWidth = width - 2 * kPad - (mesh.isEmpty() ? 0 : mesh.width() + kPad);
    double y = kPad;
    y += addLine(block, c.title, pixelFont(13, true), c.style.title, {kPad, y}, textWidth) + 2;
    for (const QString& line : c.lines)
        y += addLine(block, line, pixelFont(11), kMuted, {kPad, y}, textWidth);
    return std::max(y, kPad + mesh.height()) + kPad;
}

void fitScene(QGraphicsView* view) {
    view->fitInView(view->sceneRect(), Qt::KeepAspectRatio);
}

// The hierarchy drawing: always fitted to the widget; a click selects the block
// under the pointer (or nothing).
class HierarchyView : public QGraphicsView {
  public:
    HierarchyView(QGraphicsScene* scene, std::function<void(int)> onClick, QWidget* parent)
        : QGraphicsView(scene, parent), onClick_(std::move(onClick)) {
        setRenderHint(QPainter::Antialiasing);
        setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
        setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
        setBackgroundBrush(QColor(kBackground));
        // Taking focus on a click makes a panel field being edited commit first,
        // to the level it shows.
        setFocusPolicy(Qt::StrongFocus);
        setMinimumSize(320, 240);
    }

  protected:
    void resizeEvent(QResizeEvent* event) override {
        QGraphicsView::resizeEvent(event);
        fitScene(this);
    }
    void mousePressEvent(QMouseEvent* event) override {
        if (event->button() != Qt::LeftButton) {
            QGraphicsView::mousePressEvent(event);
            return;
        }
        int level = -1;
        for (QGraphicsItem* item = itemAt(event->position().toPoint()); item;
             item = item->parentItem())
            if (const QVariant v = item->data(kLevelKey); v.isValid()) {
                level = v.toInt();
                break;
            }
        onClick_(level);
        event->accept();
    }

  private:
    std::function<void(int)> onClick_;
};

// A new level: a 1024-word SRAM with placeholder per-access energies of that
// size, for the architect to replace with real ERT figures.
constexpr std::int64_t kNewLevelWords = 1024;
constexpr double kNewLevelAccessEnergy = 2.0; // pJ

std::string unusedName(const Architecture& a, const std::string& base) {
    std::string name = base;
    for (int i = 2; a.levelIndex(name) >= 0 || name == a.compute.name; ++i)
        name = base + "_" + std::to_string(i);
    return name;
}

} // namespace

ArchitectureEditor::ArchitectureEditor(QUndoStack* undo, QWidget* parent)
    : QWidget(parent), undo_(undo), scene_(new QGraphicsScene(this)) {
    Q_ASSERT(undo_);
    view_ = new HierarchyView(
        scene_, [this](int index) { selectLevel(index); }, this);

    auto* addButton = new QPushButton(tr("Add level"));
    addButton->setToolTip(tr("Insert a new SRAM level inside the selected level"));
    connect(addButton, &QPushButton::clicked, this, [this] {
        const int n = arch_.numLevels();
        addLevel(selected_ >= 0 && selected_ < n ? selected_ + 1 : n);
    });
    removeButton_ = new QPushButton(tr("Remove level"));
    connect(removeButton_, &QPushButton::clicked, this, [this] { removeLevel(selected_); });
    upButton_ = new QPushButton(tr("Move up"));
    upButton_->setToolTip(tr("Move the selected level outwards (towards DRAM)"));
    connect(upButton_, &QPushButton::clicked, this, [this] { moveLevel(selected_, -1); });
    downButton_ = new QPushButton(tr("Move down"));
    downButton_->setToolTip(tr("Move the selected level inwards (towards the MACs)"));
    connect(downButton_, &QPushButton::clicked, this, [this] { moveLevel(selected_, 1); });

    auto* undoButton = new QPushButton(tr("Undo"));
    undoButton->setEnabled(undo_->canUndo());
    connect(undoButton, &QPushButton::clicked, undo_, &QUndoStack::undo);
    connect(undo_, &QUndoStack::canUndoChanged, undoButton, &QWidget::setEnabled);
    connect(undo_, &QUndoStack::undoTextChanged, undoButton, [undoButton](const QString& text) {
        undoButton->setToolTip(text.isEmpty() ? QString() : tr("Undo %1").arg(text));
    });
    auto* redoButton = new QPushButton(tr("Redo"));
    redoButton->setEnabled(undo_->canRedo());
    connect(redoButton, &QPushButton::clicked, undo_, &QUndoStack::redo);
    connect(undo_, &QUndoStack::canRedoChanged, redoButton, &QWidget::setEnabled);
    connect(undo_, &QUndoStack::redoTextChanged, redoButton, [redoButton](const QString& text) {
        redoButton->setToolTip(text.isEmpty() ? QString() : tr("Redo %1").arg(text));
    });

    auto* peArray = new QPushButton(tr("PE array…"));
    peArray->setToolTip(tr("Resize the PE array: every level sized like it follows"));
    connect(peArray, &QPushButton::clicked, this, [this] {
        bool ok = false;
        const QString text = QInputDialog::getText(
            this, tr("PE array"), tr("Mesh (X × Y), e.g. 16x16:"), QLineEdit::Normal,
            QString("%1x%2").arg(arch_.compute.meshX).arg(arch_.compute.meshY), &ok);
        if (!ok)
            return;
        const QStringList parts = text.toLower().replace(u'×', u'x').split('x');
        bool okX = false, okY = false;
        const int x = parts.size() == 2 ? parts[0].trimmed().toInt(&okX) : 0;
        const int y = parts.size() == 2 ? parts[1].trimmed().toInt(&okY) : 0;
        if (!okX || !okY)
            setError(tr("PE array: '%1' is not a mesh; expected X x Y, e.g. 16x16").arg(text));
        else
            setPeArray(x, y);
    });
    auto* buttons = new QHBoxLayout;
    for (QPushButton* b : {addButton, removeButton_, upButton_, downButton_, peArray})
        buttons->addWidget(b);
    buttons->addStretch();
    buttons->addWidget(undoButton);
    buttons->addWidget(redoButton);

    auto* splitter = new QSplitter(Qt::Horizontal);
    splitter->addWidget(view_);
    splitter->addWidget(buildPanel());
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    splitter->setSizes({600, 400}); // the drawing's size hint alone would lose to the form's
    splitter->setChildrenCollapsible(false);

    errorLabel_ = new QLabel;
    errorLabel_->setWordWrap(true);
    errorLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    errorLabel_->setStyleSheet(QStringLiteral("color: #b3261e;"));
    errorLabel_->hide();
    statusLabel_ = new QLabel;
    statusLabel_->setStyleSheet(QStringLiteral("color: #4a5563;"));

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(buttons);
    layout->addWidget(splitter, 1);
    layout->addWidget(errorLabel_);
    layout->addWidget(statusLabel_);

    refreshAll();
}

ArchitectureEditor::~ArchitectureEditor() {
    // ~QWidget takes the focus from a panel field; its editingFinished must not
    // reach this half-destroyed editor.
    for (QLineEdit* edit : std::as_const(storageEdits_))
        edit->disconnect(this);
    for (QLineEdit* edit : std::as_const(computeEdits_))
        edit->disconnect(this);
}

void ArchitectureEditor::setArchitecture(const Architecture& a) {
    arch_ = a;
    selected_ = -1;
    clearError();
    // A session's file was validated when read; say so anyway if it is not valid.
    try {
        validateArchitecture(arch_);
    } catch (const InputError& e) {
        setError(QString::fromUtf8(e.what()));
    }
    refreshAll();
}

bool ArchitectureEditor::applyEdit(const Architecture& next, const QString& description) {
    return commit(next, description, selected_, QString());
}

void ArchitectureEditor::selectLevel(int index) {
    selected_ = (index >= 0 && index <= arch_.numLevels()) ? index : -1;
    updateHighlight();
    refreshPanel();
    refreshButtons();
}

bool ArchitectureEditor::setLevelField(const QString& field, const QString& text) {
    if (selected_ < 0) {
        setError(tr("%1: no level is selected").arg(field));
        return false;
    }
    Architecture next = arch_;
    const bool compute = selected_ == next.numLevels();
    const QString level = levelName(selected_);
    const std::optional<FieldRef> ref =
        compute ? findField(kComputeFields, next.compute, field)
                : findField(kStorageFields, next.levels[selected_], field);
    if (!ref) {
        setError(tr("%1: a %2 level has no field '%3'")
                     .arg(level, compute ? tr("compute") : tr("storage"), field));
        return false;
    }
    const QString context = QStringLiteral("%1: %2").arg(level, field);
    QString problem;
    const bool changed =
        std::visit([&](auto* value) { return parseInto(*value, text, problem); }, *ref);
    if (!problem.isEmpty()) {
        setError(QStringLiteral("%1: %2").arg(context, problem));
        return false;
    }
    if (!changed)
        return true;
    return commit(next, tr("Set %1 %2 to %3").arg(level, field, text.trimmed()), selected_,
                  context);
}

bool ArchitectureEditor::addLevel(int before) {
    const int n = arch_.numLevels();
    if (before < 0 || before > n) {
        setError(tr("Add level: position %1 is outside 0..%2")
                     .arg(QString::number(before), QString::number(n)));
        return false;
    }
    StorageLevel level;
    level.name = unusedName(arch_, "buffer");
    level.cls = LevelClass::SRAM;
    level.capacityWords = kNewLevelWords;
    level.wordBits = arch_.compute.wordBits;
    // The parent's mesh divides its old child's, so taking it keeps every mesh dividing.
    if (before > 0) {
        level.meshX = arch_.levels[before - 1].meshX;
        level.meshY = arch_.levels[before - 1].meshY;
    }
    level.energy.read = kNewLevelAccessEnergy;
    level.energy.write = kNewLevelAccessEnergy;
    level.energy.update = kNewLevelAccessEnergy;

    Architecture next = arch_;
    next.levels.insert(next.levels.begin() + before, level);
    const QString name = QString::fromStdString(level.name);
    return commit(next, tr("Add level %1").arg(name), before, tr("Add level %1").arg(name));
}

bool ArchitectureEditor::removeLevel(int index) {
    const int n = arch_.numLevels();
    if (index == n) {
        setError(tr("Remove level: the compute level '%1' cannot be removed; every architecture "
                    "needs one")
                     .arg(levelName(index)));
        return false;
    }
    if (index < 0 || index > n) {
        setError(tr("Remove level: there is no level %1").arg(index));
        return false;
    }
    const QString name = levelName(index);
    Architecture next = arch_;
    next.levels.erase(next.levels.begin() + index);
    // The level that moves into its place (or the compute level) stays selected.
    return commit(next, tr("Remove level %1").arg(name), index, tr("Remove %1").arg(name));
}

bool ArchitectureEditor::moveLevel(int index, int delta) {
    const int n = arch_.numLevels();
    if (index < 0 || index >= n) {
        setError(index == n ? tr("Move level: the compute level is always innermost")
                            : tr("Move level: there is no storage level %1").arg(index));
        return false;
    }
    const QString name = levelName(index);
    const int target = index + delta;
    if (target < 0 || target >= n) {
        setError(tr("Move %1: it is already the %2 storage level")
                     .arg(name, delta < 0 ? tr("outermost") : tr("innermost")));
        return false;
    }
    if (delta == 0)
        return true;
    Architecture next = arch_;
    StorageLevel moved = std::move(next.levels[index]);
    next.levels.erase(next.levels.begin() + index);
    next.levels.insert(next.levels.begin() + target, std::move(moved));
    const QString description =
        delta < 0 ? tr("Move %1 up").arg(name) : tr("Move %1 down").arg(name);
    return commit(next, description, target, description);
}

bool ArchitectureEditor::setPeArray(int meshX, int meshY) {
    if (meshX < 1 || meshY < 1) {
        setError(tr("PE array: %1 × %2 is not a mesh; both sides must be at least 1")
                     .arg(meshX)
                     .arg(meshY));
        return false;
    }
    const int oldX = arch_.compute.meshX, oldY = arch_.compute.meshY;
    Architecture next = arch_;
    for (StorageLevel& level : next.levels) {
        if (level.meshX == oldX && oldX > 1)
            level.meshX = meshX;
        if (level.meshY == oldY && oldY > 1)
            level.meshY = meshY;
    }
    next.compute.meshX = meshX;
    next.compute.meshY = meshY;
    const QString description = tr("PE array %1 × %2").arg(meshX).arg(meshY);
    return commit(next, description, selected_, description);
}

void ArchitectureEditor::apply(const Architecture& a, int selection) {
    arch_ = a;
    selected_ = (selection >= 0 && selection <= arch_.numLevels()) ? selection : -1;
    clearError();
    refreshAll();
    Q_EMIT architectureChanged(arch_);
}

bool ArchitectureEditor::commit(const Architecture& next, const QString& description,
                                int selectAfter, const QString& context) {
    try {
        validateArchitecture(next);
    } catch (const InputError& e) {
        const QString message = QString::fromUtf8(e.what());
        setError(context.isEmpty() ? message : QStringLiteral("%1: %2").arg(context, message));
        return false;
    }
    undo_->push(new EditCommand(this, arch_, next, selected_, selectAfter, description));
    return true;
}

void ArchitectureEditor::commitFromPanel(const QString& field, bool computePage) {
    // A page being hidden reports its field's focus loss after the selection has
    // moved on; it no longer shows the selected level.
    if (selected_ < 0 || computePage != (selected_ == arch_.numLevels()))
        return;
    const QString text = field == kClassKey
                             ? classBox_->currentText()
                             : (computePage ? computeEdits_ : storageEdits_).value(field)->text();
    setLevelField(field, text); // a refusal restores the panel's text (setError)
}

void ArchitectureEditor::setError(const QString& message) {
    lastError_ = message;
    errorLabel_->setText(message);
    errorLabel_->show();
    refreshPanel();
}

void ArchitectureEditor::clearError() {
    lastError_.clear();
    errorLabel_->clear();
    errorLabel_->hide();
}

QString ArchitectureEditor::levelName(int index) const {
    if (index >= 0 && index < arch_.numLevels())
        return QString::fromStdString(arch_.levels[index].name);
    if (index == arch_.numLevels())
        return QString::fromStdString(arch_.compute.name);
    return tr("level %1").arg(index);
}

QWidget* ArchitectureEditor::buildPanel() {
    auto* panel = new QWidget;
    auto* layout = new QVBoxLayout(panel);
    panelTitle_ = new QLabel;
    QFont titleFont = panelTitle_->font();
    titleFont.setBold(true);
    panelTitle_->setFont(titleFont);
    panelTitle_->setWordWrap(true);
    layout->addWidget(panelTitle_);

    pages_ = new QStackedWidget;
    auto* hint = new QLabel(tr("Click a block in the hierarchy to edit its level."));
    hint->setWordWrap(true);
    hint->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    pages_->addWidget(hint);
    pages_->addWidget(buildFieldPage(false));
    pages_->addWidget(buildFieldPage(true));
    layout->addWidget(pages_);
    layout->addStretch();
    panel->setMinimumWidth(280);
    return panel;
}

QWidget* ArchitectureEditor::buildFieldPage(bool compute) {
    auto* page = new QWidget;
    auto* form = new QFormLayout(page);
    form->setContentsMargins(0, 0, 0, 0);
    QHash<QString, QLineEdit*>& edits = compute ? computeEdits_ : storageEdits_;
    const auto addRow = [&](const auto& f) {
        const QString key = QString::fromLatin1(f.key);
        QWidget* input = nullptr;
        if (key == kClassKey) {
            classBox_ = new QComboBox;
            for (LevelClass c :
                 {LevelClass::DRAM, LevelClass::SRAM, LevelClass::RegFile, LevelClass::Dummy})
                classBox_->addItem(shown(c));
            // activated, not currentIndexChanged: only the user's choice commits.
            connect(classBox_, &QComboBox::activated, this,
                    [this, key] { commitFromPanel(key, false); });
            input = classBox_;
        } else {
            auto* edit = new QLineEdit;
            connect(edit, &QLineEdit::editingFinished, this,
                    [this, key, compute] { commitFromPanel(key, compute); });
            edits.insert(key, edit);
            input = edit;
        }
        input->setToolTip(tr(f.tip));
        form->addRow(tr(f.label), input);
    };
    if (compute)
        for (const auto& f : kComputeFields)
            addRow(f);
    else
        for (const auto& f : kStorageFields)
            addRow(f);
    return page;
}

void ArchitectureEditor::refreshAll() {
    rebuildScene();
    refreshPanel();
    refreshStatus();
    refreshButtons();
}

void ArchitectureEditor::rebuildScene() {
    scene_->clear();
    blocks_.clear();
    const int n = arch_.numLevels();
    std::vector<double> tops;
    double y = 0;
    for (int i = 0; i <= n; ++i) {
        const BlockContent content = i < n ? storageContent(arch_, i) : computeContent(arch_);
        const double inset = i * kInset;
        auto* block = scene_->addRect(QRectF(), QPen(), QBrush(QColor(content.style.fill)));
        block->setPos(inset, y);
        block->setData(kLevelKey, i);
        block->setToolTip(content.tooltip);
        block->setCursor(Qt::PointingHandCursor);
        blocks_.push_back(block);
        tops.push_back(y);
        y += addHeader(block, content, kWidth - 2 * inset) + kGap;
    }
    // Each frame encloses its children, so heights are known from the inside out.
    double bottom = y - kGap;
    for (int i = n; i >= 0; --i) {
        blocks_[i]->setRect(0, 0, kWidth - 2 * i * kInset, bottom - tops[i]);
        bottom += kInset;
    }
    updateHighlight();
    scene_->setSceneRect(scene_->itemsBoundingRect().marginsAdded(QMarginsF(10, 10, 10, 10)));
    fitScene(view_);
}

void ArchitectureEditor::updateHighlight() {
    for (int i = 0; i < static_cast<int>(blocks_.size()); ++i)
        blocks_[i]->setPen(framePen(styleOf(arch_, i), i == selected_));
}

void ArchitectureEditor::refreshPanel() {
    const int n = arch_.numLevels();
    // Texts are set before the page switches so that a field losing focus on the
    // switch finds its own value and commits nothing.
    if (selected_ == n) {
        ComputeLevel shownLevel = arch_.compute; // the field table reads through pointers
        for (const auto& f : kComputeFields)
            computeEdits_.value(QString::fromLatin1(f.key))->setText(shownField(f.ref(shownLevel)));
        panelTitle_->setText(tr("%1 — compute level").arg(levelName(n)));
        pages_->setCurrentIndex(2);
    } else if (selected_ >= 0) {
        StorageLevel shownLevel = arch_.levels[selected_];
        for (const auto& f : kStorageFields) {
            const QString key = QString::fromLatin1(f.key);
            const QString text = shownField(f.ref(shownLevel));
            if (key == kClassKey)
                classBox_->setCurrentIndex(classBox_->findText(text));
            else
                storageEdits_.value(key)->setText(text);
        }
        // DRAM ignores its capacity.
        QLineEdit* capacity = storageEdits_.value(QStringLiteral("capacity"));
        capacity->setEnabled(!shownLevel.unbounded());
        capacity->setPlaceholderText(shownLevel.unbounded() ? tr("unbounded") : QString());
        if (shownLevel.unbounded())
            capacity->clear();
        panelTitle_->setText(
            tr("%1 — storage level %2 of %3")
                .arg(levelName(selected_), QString::number(selected_ + 1), QString::number(n)));
        pages_->setCurrentIndex(1);
    } else {
        panelTitle_->setText(tr("No level selected"));
        pages_->setCurrentIndex(0);
    }
}

void ArchitectureEditor::refreshStatus() {
    double onChipBits = 0;
    for (const StorageLevel& s : arch_.levels)
        if (s.cls == LevelClass::SRAM || s.cls == LevelClass::RegFile)
            onChipBits += double(s.capacityWords) * s.wordBits * double(s.instances());
    statusLabel_->setText(
        tr("Total MACs: %1   ·   Levels: %2 storage + compute   ·   On-chip capacity: %3")
            .arg(QString::number(arch_.compute.instances()), QString::number(arch_.numLevels()),
                 formatBytes(onChipBits / 8)));
}

void ArchitectureEditor::refreshButtons() {
    const int n = arch_.numLevels();
    const bool storage = selected_ >= 0 && selected_ < n;
    removeButton_->setEnabled(storage);
    upButton_->setEnabled(storage && selected_ > 0);
    downButton_->setEnabled(storage && selected_ + 1 < n);
}

} // namespace mw::ui
