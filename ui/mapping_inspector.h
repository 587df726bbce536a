#pragma once
// The mapping inspector: the loop nest of a run's best mapping per level, the
// buffer occupancy of every tensor against capacity, access counts, a side-by-
// side comparison with a second mapping, and hand edits (factors, loop
// orders) re-evaluated at once.
#include "io/session_io.h"
#include "model/evaluation.h"

#include <QWidget>

class QComboBox;
class QPlainTextEdit;
class QTableWidget;
class QLabel;

namespace mw::ui {

class MappingInspector : public QWidget {
    Q_OBJECT
  public:
    explicit MappingInspector(QWidget* parent = nullptr);

    void setSession(const mw::Architecture& arch, const mw::Network& network,
                    const std::vector<mw::SessionRun>& runs);
    void showRun(int runIndex);     // mapping A: that run's best (-1: none)
    void compareWith(int runIndex); // mapping B, -1: no comparison
    int currentRun() const { return runA_; }
    // A run was inserted into the session at index (the runs from there on
    // moved down one): the runs shown stay shown. Call before setSession.
    void runInserted(int index);

    // Hand edits of mapping A. kind: "temporal", "x" or "y". A factor that is
    // not a positive integer is refused (message, no change); a legal-looking
    // edit that breaks the mapping is kept and its violations are listed.
    bool setFactor(int level, const QString& dim, const QString& kind, const QString& text);
    // Loop order of a level, outer to inner, dimension names separated by spaces.
    bool setOrder(int level, const QString& text);
    void resetEdits();
    // Forgets hand edits, also those set aside (another session opened).
    void dropEdits();
    // Whether mapping A has hand edits (they stay through setSession while
    // its run and the run's layer do; a new search finishing keeps them).
    bool hasEdits() const { return hasA_ && !mw::sameMapping(mappingA_, originalA_); }
    // Hand edits set aside while their layer has another shape (an undo
    // brings them back while the inspector stays on their run).
    bool hasSetAsideEdits() const { return setAside_.run >= 0; }
    // A run chosen by the user (picker, tree, table): set-aside edits are let go.
    void chooseRun(int runIndex);

    bool hasMapping() const { return hasA_; }
    const mw::Mapping& mapping() const { return mappingA_; }
    const mw::Evaluation& evaluation() const { return evalA_; }
    const mw::Problem& problem() const { return problemA_; }
    QString loopNestText() const;
    QString lastError() const { return lastError_; }

  signals:
    void message(const QString& text);

  private:
    void refresh();
    void fillBuffers();
    void fillFactors();
    void onFactorEdited(int row, int column);
    bool load(int runIndex, mw::Problem& p, mw::Mapping& m) const;
    // `edits` as mapping A on run A as the session now has it, when run A's
    // layer still has the dimensions of `shape` (the loops fit); false: not.
    bool editsOnRunA(const mw::Problem& shape, const mw::Mapping& edits);
    bool restoreSetAside(); // the set-aside edits on run A, when its layer fits them again
    static bool sameDimensions(const mw::Problem& a, const mw::Problem& b);
    // Hand edits of a run whose layer changed shape under them (run -1: none).
    struct SetAside {
        int run = -1;
        mw::Problem problem;
        mw::Mapping mapping{};
    } setAside_;
    QString nestText(const mw::Problem& p, const mw::Mapping& m, const mw::Evaluation& e) const;
    QString summary(const mw::Evaluation& e, const mw::Problem& p) const;

    mw::Architecture arch_;
    mw::Network network_;
    std::vector<mw::SessionRun> runs_;
    int runA_ = -1, runB_ = -1;
    bool hasA_ = false, hasB_ = false;
    mw::Problem problemA_, problemB_;
    mw::Mapping mappingA_{}, mappingB_{}, originalA_{};
    mw::Evaluation evalA_{}, evalB_{};
    bool filling_ = false;
    QString lastError_;

    QComboBox* pickA_;
    QComboBox* pickB_;
    QPlainTextEdit* nestA_;
    QPlainTextEdit* nestB_;
    QLabel* summaryA_;
    QLabel* summaryB_;
    QLabel* error_;
    QTableWidget* buffers_;
    QTableWidget* factors_;
};

} // namespace mw::ui
