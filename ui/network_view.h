#pragma once
// Whole-network search: one searcher over every layer (identical layers once,
// optional warm start), per-layer energy and cycles bars, a per-layer table
// (time, figures, EDP against the lower bound) and network totals.
#include "io/json_io.h"
#include "io/session_io.h"
#include "search/network_search.h"

#include <QWidget>

#include <memory>

class QCustomPlot;
class QComboBox;
class QSpinBox;
class QCheckBox;
class QPushButton;
class QLabel;
class QProgressBar;
class QTableWidget;

namespace mw::ui {

class SearchJob;

class NetworkView : public QWidget {
    Q_OBJECT
  public:
    explicit NetworkView(QWidget* parent = nullptr);
    ~NetworkView() override;
    void setTarget(const mw::Architecture& arch, const mw::Network& network);
    // The map-space constraints every layer is searched under (null: none).
    void setConstraints(const mw::Json& constraints) { constraints_ = constraints; }
    void setSearcher(const QString& name);
    void setBudget(int evaluationsPerLayer);
    void setWarmStart(bool on);
    void setThreads(int threads);
    bool run();
    void cancel();
    bool running() const;
    bool waitForFinished(int timeoutMs);
    int layerInProgress() const; // of the search running (its progress bar's value)
    bool hasOutcome() const { return hasOutcome_; }
    const mw::NetworkOutcome& outcome() const { return outcome_; }
    // The outcome's searched layers (a repeated layer's result is its
    // twin's) as finished runs, with the settings and constraints they ran
    // under; a session keeps them (Keep as runs), not the view.
    std::vector<mw::SessionRun> outcomeRuns() const;
    // An outcome not yet kept as runs: closing or another session drops it.
    bool outcomeUnkept() const { return hasOutcome_ && !kept_; }
    // Whether the outcome was searched on another design than the target's
    // (an edit since, or another session): said above it, not passed off.
    bool outcomeStale() const;
    void clearOutcome(); // another session: its outcome is not this one's
    void keepOutcome();  // as Keep as runs: emits keepRuns with outcomeRuns()
    QCustomPlot* energyPlot() const { return energy_; }
    QTableWidget* layerTable() const { return layers_; }
    QString lastError() const { return lastError_; }

  signals:
    void finished();
    void keepRuns(const std::vector<mw::SessionRun>& runs); // Keep as runs was pressed
    void message(const QString& text);

  private:
    void draw();
    void refreshTotals();

    mw::Architecture arch_;
    mw::Network network_;
    mw::Json constraints_;
    mw::NetworkOutcome outcome_;
    bool hasOutcome_ = false;
    bool kept_ = false;
    // What the outcome was searched on and with (for its runs and staleness).
    mw::Architecture searchedArch_;
    mw::Network searchedNetwork_;
    mw::Json searchedConstraints_;
    mw::NetworkSearchOptions searchedWith_;
    std::unique_ptr<SearchJob> job_;
    QString lastError_;
    QComboBox* searcher_;
    QSpinBox* budget_;
    QSpinBox* threads_;
    QCheckBox* warm_;
    QPushButton* run_;
    QPushButton* cancel_;
    QPushButton* keep_;
    QProgressBar* progress_;
    QLabel* totals_;
    QCustomPlot* energy_;
    QCustomPlot* cycles_;
    QTableWidget* layers_;
};

} // namespace mw::ui
