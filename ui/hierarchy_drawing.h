#pragma once
// The architecture editor's drawing: the storage hierarchy as nested blocks
// (DRAM outermost, the MAC mesh innermost), each with a header of its figures
// (capacity, mesh and fan-out, bandwidths, energy per access and area), in a
// view that fits the drawing and reports the block a click lands on.
#include "arch/architecture.h"

#include <QGraphicsView>
#include <QPen>
#include <QString>

#include <functional>
#include <vector>

class QGraphicsRectItem;
class QGraphicsScene;

namespace mw::ui {

// Clears `scene` and draws `a` in it; returns the blocks by level index, the
// compute level's last. Each block's data(0) holds its level index.
std::vector<QGraphicsRectItem*> drawHierarchy(QGraphicsScene* scene, const Architecture& a);
// A block's frame, in the selection colour when selected.
QPen blockPen(const Architecture& a, int index, bool selected);

QString formatBytes(double bytes);
QString formatArea(double um2); // µm² below 10,000, mm² above

class HierarchyView : public QGraphicsView {
  public:
    // onClick(level index, or -1 for none) on every left click.
    HierarchyView(QGraphicsScene* scene, std::function<void(int)> onClick, QWidget* parent);
    void fit();

  protected:
    void resizeEvent(QResizeEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;

  private:
    std::function<void(int)> onClick_;
};

} // namespace mw::ui
