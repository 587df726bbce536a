#pragma once
// The search panel: choose searchers, budget, objective, seeds and threads;
// run them side by side on worker threads; watch best-so-far curves live
// (QCustomPlot, log scale, lower bound dashed) and compare finished runs.
#include "io/session_io.h"
#include "search/search.h"
#include "ui/search_job.h"

#include <QColor>
#include <QWidget>

#include <map>
#include <memory>
#include <vector>

class QCustomPlot;
class QCPGraph;
class QListWidget;
class QSpinBox;
class QDoubleSpinBox;
class QComboBox;
class QCheckBox;
class QPushButton;
class QTableWidget;
class QLabel;
class QTimer;

namespace mw::ui {

// One colour per searcher, the same in every chart.
QColor searcherColor(const std::string& searcher);
// How every view names a finished run: "#3 gamma · seed 1 · conv3".
QString runLabel(const mw::SessionRun& run, int index);
// A searcher's own figures as "name value" joined by sep: the headline ones
// (MIP solve time and nodes, surrogate steps, episodes) only, or all of them
// (for a tooltip), headline ones first.
QString searcherFigures(const mw::SearchResult& r, const QString& sep, bool all);
// The model's own figures of a run (model_levels_reused: the share of the
// model's work neighbouring candidates shared) as "name value" joined by sep:
// every run's, so its status's tooltip shows them, not the figures column.
QString modelFigures(const mw::SearchResult& r, const QString& sep);
// A cost as the panel shows it: 5 significant digits, a dash for none.
QString formatCost(double v);

class SearchPanel : public QWidget {
    Q_OBJECT
  public:
    // The results table's columns.
    enum Column {
        ColSearcher,
        ColLayer,
        ColSeed,
        ColObjective,
        ColFinal,
        ColEnergy,
        ColCycles,
        ColEdpOverBound,
        ColOverOptimum, // distance above the optimum a run of the optimal searcher proved
        ColEvaluations,
        ColSeconds,
        ColStatus,
        ColFigures,
        ColumnCount
    };

    explicit SearchPanel(QWidget* parent = nullptr);
    ~SearchPanel() override;

    // What Run searches: the architecture and one layer of the network.
    void setTarget(const mw::Architecture& arch, const mw::Network& network, int layer);
    // The finished runs of the session (plotted when they searched the target
    // layer; all of them in the results table).
    void setRuns(const std::vector<mw::SessionRun>& runs);

    // Whether the design (architecture, layer) changed since the run searched
    // it: its curve and any optimum it proved are another design's. (Not
    // known, for runs of sessions saved before runs kept it: no.)
    bool searchedAnotherDesign(const mw::SessionRun& r) const;
    // A run's best on the design as it now is: what its search found, or
    // once the design changed, its objective over the re-costed evaluation
    // (a density objective's sum over densities is kept: one evaluation at
    // the layer's own density cannot re-cost it).
    double costNow(const mw::SessionRun& r) const;

    // Settings, as the form shows them.
    void setSearchers(const QStringList& names);
    QStringList searchers() const;
    void setBudget(qint64 evaluations, double seconds); // 0 = unused
    void setSeeds(int count, int first = 1);
    void setThreads(int threads);
    void setObjective(const QString& name); // one of those the form offers
    void setTimeAxis(bool seconds);         // x axis: wall time instead of evaluations
    void setLogX(bool on);                  // x axis logarithmic
    // The chart's axes as a session saves them; setView shows a saved one
    // (the setters above also announce it: viewChanged).
    mw::SessionView view() const { return {timeAxis_, logX_}; }
    void setView(const mw::SessionView& view);
    // The map-space constraints new runs search under (a mapwright.constraints
    // file as JSON; null: none). Checked against the target layer: a file that
    // names a level the architecture lacks is refused with its message.
    bool setConstraints(const mw::Json& constraints);
    const mw::Json& constraints() const { return constraints_; }
    // Reads a mapwright.constraints JSON file, or Timeloop constraints YAML
    // (architecture_constraints / mapspace_constraints) against the target.
    bool loadConstraints(const QString& path);

    // Starts one run per selected searcher and seed; returns how many started.
    int runSelected();
    // Starts a requested run (from a session file).
    void startRun(const mw::SessionRun& request);
    // Runs a finished run again on the current design (a stale one, say): its
    // searcher, settings and constraints; on the current layer if its own is gone.
    bool rerun(int sessionRunIndex);
    // Searchers from outside the engine's list (written in Python), offered
    // beside the built-in ones.
    void addSearchers(const std::vector<mw::SearcherFactory>& searchers);
    // Shows these searchers checked (the others not) and this evaluation
    // budget, as runs started by a script have them.
    void presetRuns(const std::vector<std::string>& searchers, std::int64_t evaluations);
    void cancelAll();
    void setPausedAll(bool paused);
    // Running searches, by id (the results table lists them below the
    // finished runs; its context menu pauses, resumes or cancels each).
    std::vector<int> liveRuns() const;
    void cancelRun(int id);
    void setRunPaused(int id, bool paused);
    int runningCount() const; // live runs, paused ones included
    int pausedCount() const;
    // Processes events until no run is left (tests and scripted screenshots).
    bool waitForAll(int timeoutMs);

    QCustomPlot* plot() const { return plot_; }
    QString plotNote() const; // what the plot leaves out; empty when nothing
    QTableWidget* resultsTable() const { return table_; }
    int replots() const { return replots_; }
    QString lastError() const { return lastError_; }
    int failedRuns() const { return failedRuns_; } // runs that ended in an error (lastError)
    bool exportPlot(const QString& path);          // .png or .pdf

  protected:
    void showEvent(QShowEvent* event) override; // sizes what was filled while hidden

  signals:
    // The owner inserts the run at `position` of the session's runs (among
    // them where it started, as the table lists it) and calls setRuns.
    void runFinished(const mw::SessionRun& run, int position);
    void runningChanged(int running, int paused); // live runs, and how many of them are paused
    void runActivated(int sessionRunIndex);       // a results-table row was chosen
    void message(const QString& text);
    void constraintsChanged(const mw::Json& constraints); // loaded or cleared by the user
    void viewChanged(const mw::SessionView& view);        // the chart's axes

  private:
    struct Curve {
        std::string searcher;
        std::uint64_t seed = 0;
        int variant = 0;            // its shade and dash among its searcher's curves
        bool earlierDesign = false; // searched before an edit that re-costed its best
        QVector<double> evaluations, seconds, best;
        QCPGraph* graph = nullptr;
    };
    struct Live {
        std::unique_ptr<SearchJob> job;
        mw::SessionRun request;
        Curve curve;
        SearchJob::Mail::Progress latest; // its phase shows on the run's row
    };
    void start(mw::SessionRun request);
    int nextVariant(const std::string& searcher, std::uint64_t seed) const; // a curve's look
    void addLiveRow(int row, int id);
    void onMail(int id); // takes the job's mailbox and passes each item on
    void onProgress(int id, const SearchJob::Mail::Progress& p);
    void onFinished(int id, const mw::SearchResult& result);
    void onFailed(int id, const QString& message);
    // The plot's axis, lower bound and curves for the objective the form
    // shows (runs of other objectives are left out, and said so).
    void refreshObjective();
    mw::SearchObjective formObjective() const; // the objective the form shows
    void rebuildPlot();
    // A curve's x values as the axis draws them: on a log axis, none below
    // its floor (the first evaluation, a tenth of a millisecond).
    QVector<double> plotKeys(const QVector<double>& xs) const;
    double logFloor() const { return timeAxis_ ? 1e-4 : 1.0; }
    void refreshCurve(Curve& c);
    void refreshTable();
    void sizeFiguresColumn();
    void refreshLiveRows();
    void showTableMenu(const QPoint& pos);
    void refreshPlotNow();
    void refreshConstraints();
    void showTooltip(QMouseEvent* event);
    mw::SearchSettings formSettings(std::uint64_t seed) const;

    mw::Architecture arch_;
    mw::Network network_;
    mw::Json constraints_;
    int layer_ = 0;
    double lowerBound_ = 0.0;
    // The optimum a finished run of the optimal searcher proved for this layer
    // and objective; 0 when none did.
    double optimum(const std::string& layer, const std::string& objective) const;
    std::vector<mw::SessionRun> runs_;
    std::vector<Curve> finishedCurves_;
    std::map<int, Live> live_;
    int nextId_ = 1;
    bool dirty_ = false;
    bool timeAxis_ = false;
    bool logX_ = false;
    int replots_ = 0;
    // The table's order: a key per session run, when it started (a loaded
    // run: its index; one started here: kLiveKeys + its id, as its live row).
    static constexpr std::int64_t kLiveKeys = std::int64_t(1) << 40;
    std::vector<std::int64_t> rowKeys_;
    std::map<std::string, std::string> designNow_; // per layer: designFingerprint of the target
    bool sizingFigures_ = false;                   // the figures column's width being set here
    bool figuresWidthByUser_ = false;              // ... or dragged by the user, and then kept
    // A run that finished here, not yet in setRuns' runs: its id and where
    // runFinished placed it (id 0: none).
    struct Finishing {
        int id = 0;
        std::size_t position = 0;
    } finishing_;
    QString lastError_;
    int failedRuns_ = 0;

    QListWidget* searcherList_;
    std::vector<mw::SearcherFactory> extra_;
    QComboBox* budgetKind_;
    QSpinBox* evaluations_;
    QDoubleSpinBox* seconds_;
    QComboBox* objective_;
    QSpinBox* seeds_;
    QSpinBox* firstSeed_;
    QSpinBox* threads_;
    QComboBox* xAxis_;
    QCheckBox* logXBox_;
    QPushButton* run_;
    QPushButton* pause_;
    QPushButton* cancel_;
    QLabel* status_;
    QLabel* constraintsLabel_;
    QPushButton* clearConstraints_;
    QCustomPlot* plot_;
    QLabel* plotNote_; // the runs the plot leaves out
    QTableWidget* table_;
    QTimer* refresh_;
};

} // namespace mw::ui
