#include "ui/hierarchy_drawing.h"

#include "ui/level_fields.h"

#include <QFontMetricsF>
#include <QGraphicsRectItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QMouseEvent>

#include <algorithm>
#include <iterator>

namespace mw::ui {

namespace {

// Nested frames, each with a header; children inset inside parents.
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
    const QString cls = QString::fromLatin1(toString(s.cls));
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
    if (s.cls != LevelClass::Dummy)
        b.lines << QStringLiteral("read %1 · write %2 pJ%3")
                       .arg(QString::number(s.energy.read, 'g', 3),
                            QString::number(s.energy.write, 'g', 3),
                            s.cls == LevelClass::DRAM
                                ? QString()
                                : QStringLiteral(" · %1 each").arg(formatArea(s.area)));

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
            QStringLiteral("Energy: read %1, write %2, update %3 pJ per access; leak %4 pJ/cycle "
                           "(%5)")
                .arg(number(s.energy.read), number(s.energy.write), number(s.energy.update),
                     number(s.energy.leak), QString::fromLatin1(toString(s.sources.read))),
            QStringLiteral("Area: %1 per instance (%2)")
                .arg(formatArea(s.area), QString::fromLatin1(toString(s.sources.area))),
        }
            .join(QLatin1Char('\n'));
    return b;
}

BlockContent computeContent(const Architecture& a) {
    const ComputeLevel& c = a.compute;
    const QString name = QString::fromStdString(c.name);
    const QString line =
        QStringLiteral("%1 MACs · %2%3 · %4 pJ/MAC · %5 each")
            .arg(QString::number(c.instances()), QString::fromLatin1(toString(c.arithmetic)),
                 QString::number(c.multiplierWidth()), QString::number(c.macEnergy, 'g', 3),
                 formatArea(c.area));
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

} // namespace

QString formatBytes(double bytes) {
    static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    std::size_t u = 0;
    while (bytes >= 1024 && u + 1 < std::size(units)) {
        bytes /= 1024;
        ++u;
    }
    return QStringLiteral("%1 %2").arg(QString::number(bytes, 'g', 4), QLatin1String(units[u]));
}

QString formatArea(double um2) {
    if (um2 < 10'000)
        return QStringLiteral("%1 µm²").arg(QString::number(um2, 'g', 4));
    return QStringLiteral("%1 mm²").arg(QString::number(um2 / 1e6, 'g', 4));
}

std::vector<QGraphicsRectItem*> drawHierarchy(QGraphicsScene* scene, const Architecture& a) {
    scene->clear();
    std::vector<QGraphicsRectItem*> blocks;
    const int n = a.numLevels();
    std::vector<double> tops;
    double y = 0;
    for (int i = 0; i <= n; ++i) {
        const BlockContent content = i < n ? storageContent(a, i) : computeContent(a);
        const double inset = i * kInset;
        auto* block = scene->addRect(QRectF(), QPen(), QBrush(QColor(content.style.fill)));
        block->setPos(inset, y);
        block->setData(kLevelKey, i);
        block->setToolTip(content.tooltip);
        block->setCursor(Qt::PointingHandCursor);
        blocks.push_back(block);
        tops.push_back(y);
        y += addHeader(block, content, kWidth - 2 * inset) + kGap;
    }
    // Each frame encloses its children, so heights are known from the inside out.
    double bottom = y - kGap;
    for (int i = n; i >= 0; --i) {
        blocks[i]->setRect(0, 0, kWidth - 2 * i * kInset, bottom - tops[i]);
        bottom += kInset;
    }
    scene->setSceneRect(scene->itemsBoundingRect().marginsAdded(QMarginsF(10, 10, 10, 10)));
    return blocks;
}

QPen blockPen(const Architecture& a, int index, bool selected) {
    return framePen(styleOf(a, index), selected);
}

HierarchyView::HierarchyView(QGraphicsScene* scene, std::function<void(int)> onClick,
                             QWidget* parent)
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

void HierarchyView::fit() {
    fitInView(sceneRect(), Qt::KeepAspectRatio);
}

void HierarchyView::resizeEvent(QResizeEvent* event) {
    QGraphicsView::resizeEvent(event);
    fit();
}

void HierarchyView::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) {
        QGraphicsView::mousePressEvent(event);
        return;
    }
    int level = -1;
    for (QGraphicsItem* item = itemAt(event->position().toPoint()); item; item = item->parentItem())
        if (const QVariant v = item->data(kLevelKey); v.isValid()) {
            level = v.toInt();
            break;
        }
    onClick_(level);
    event->accept();
}

} // namespace mw::ui
