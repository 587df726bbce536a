#pragma once
// The design-space view: a sweep of the session's architecture (axes of
// parameters and their values) run on a worker thread into a results
// database, or a database opened; its points drawn live as a scatter of two
// figures coloured by a parameter, the Pareto front drawn, each point's
// figures on hover; a click opens the point's architecture and mappings in
// the other views.
#include "explore/pareto.h"

#include <QWidget>

#include <memory>

class QCustomPlot;
class QComboBox;
class QSpinBox;
class QPushButton;
class QLabel;
class QLineEdit;
class QProgressBar;
class QTableWidget;

namespace mw::ui {

class SweepJob;

class DesignSpaceView : public QWidget {
    Q_OBJECT
  public:
    explicit DesignSpaceView(QWidget* parent = nullptr);
    ~DesignSpaceView() override;

    // What a new sweep varies and searches: the session's design and network.
    void setBase(const mw::Architecture& arch, const mw::Network& network,
                 const mw::Json& constraints);
    void setAxes(const std::vector<mw::SweepAxis>& axes);
    // The axes a new sweep starts from, worked out from the base architecture:
    // its largest buffer, its PE array, its DRAM (a session was opened).
    void resetAxes();
    std::vector<mw::SweepAxis> axes() const; // as the table holds them
    void setSearcher(const QString& name);
    void setBudget(int evaluationsPerLayer);
    void setThreads(int threads);
    void setDatabasePath(const QString& path);
    QString databasePath() const;

    bool run(); // false (lastError) when the sweep is not valid or a sweep runs
    void cancel();
    bool running() const;
    bool waitForFinished(int timeoutMs);
    bool openResults(const QString& path); // a database a sweep wrote
    // Forgets the sweep shown (another session: its points are not this
    // one's; they stay in their database). Not while a sweep runs.
    void clearResults();

    void setMetrics(mw::SweepMetric x, mw::SweepMetric y);
    void setColourAxis(int axis); // -1: one colour
    const mw::SweepSpec& spec() const { return spec_; }
    const std::vector<mw::PointRecord>& points() const { return points_; }
    const std::vector<std::size_t>& front() const { return front_; }
    // The point drawn nearest to a pixel of the plot (within 12 px), or -1.
    int pointAt(const QPointF& pixel) const;
    QString pointSummary(int pointIndex) const; // what hovering shows
    void activatePoint(int pointIndex);         // as a click does
    QCustomPlot* plot() const { return plot_; }
    QTableWidget* pointsTable() const { return table_; } // a row per point, sortable
    QString lastError() const { return lastError_; }
    QString statusText() const; // the line above the chart

  protected:
    void showEvent(QShowEvent* event) override; // lays the plot out at its shown size

  signals:
    void pointActivated(const mw::SweepSpec& spec, const mw::PointRecord& point);
    void message(const QString& text);
    void finished();

  private:
    void addAxisRow(const QString& parameter, const QString& values);
    void setRunning(bool on);
    void redraw();
    void fillTable();
    void refreshChoices(); // the colour combo follows the sweep's axes
    void refreshPlanned(); // the progress bar counts the points the axes make
    void onMail();

    mw::Architecture base_;
    mw::Network network_;
    mw::Json constraints_;
    mw::SweepSpec spec_;
    std::vector<mw::PointRecord> points_;
    std::vector<std::size_t> front_;
    int total_ = 0;
    std::unique_ptr<SweepJob> job_;
    QString lastError_;
    QString movedFrom_; // the database named that held another sweep, said with this one's

    QTableWidget* axesTable_;
    QComboBox* searcher_;
    QSpinBox* budget_;
    QSpinBox* threads_;
    QLineEdit* database_;
    QPushButton* run_;
    QPushButton* cancel_;
    QPushButton* open_;
    QProgressBar* progress_;
    QLabel* status_;
    QComboBox* x_;
    QComboBox* y_;
    QComboBox* colour_;
    QCustomPlot* plot_;
    QTableWidget* table_;
};

} // namespace mw::ui
