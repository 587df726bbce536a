#pragma once
// Energy breakdown of a mapping: stacked bars per level split by tensor or by
// action (read, fill, update, leak), the compute energy, and a cycles and
// utilization summary; beside it, the area of each level (all its instances)
// and of the MACs; below, the best mapping of each searcher compared, stacked
// by level.
#include "io/session_io.h"

#include <QWidget>

class QCustomPlot;
class QComboBox;
class QLabel;

namespace mw::ui {

class EnergyView : public QWidget {
    Q_OBJECT
  public:
    explicit EnergyView(QWidget* parent = nullptr);
    void setSession(const mw::Architecture& arch, const mw::Network& network,
                    const std::vector<mw::SessionRun>& runs);
    void showRun(int runIndex);
    // A run was inserted into the session at index: the run shown stays
    // shown. Call before setSession.
    void runInserted(int index) { run_ += run_ >= index; }
    void setSplitByAction(bool byAction);
    int currentRun() const { return run_; }
    QString summaryText() const; // the figures above the charts
    QCustomPlot* levelsPlot() const { return levels_; }
    QCustomPlot* comparisonPlot() const { return compare_; }
    QCustomPlot* areaPlot() const { return area_; }
    bool exportPlot(const QString& path); // the level breakdown, .png or .pdf

  private:
    void refresh();
    void drawLevels();
    void drawComparison();
    void drawArea();

    mw::Architecture arch_;
    mw::Network network_;
    std::vector<mw::SessionRun> runs_;
    int run_ = -1;
    bool byAction_ = false;
    QComboBox* pick_;
    QComboBox* split_;
    QLabel* summary_;
    QCustomPlot* levels_;
    QCustomPlot* compare_;
    QCustomPlot* area_;
};

} // namespace mw::ui
