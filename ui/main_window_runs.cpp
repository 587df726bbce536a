// MainWindow: how the session's runs follow what the user does. Edits to
// the architecture or the workload re-cost each finished run (one kept
// under an edit that no longer fits it is marked stale, never dropped);
// workload edits are undoable; finished searches and opened design points
// become runs.
#include "ui/main_window.h"

#include "common/error.h"
#include "model/cost_model.h"
#include "ui/architecture_editor.h"
#include "ui/energy_view.h"
#include "ui/mapping_inspector.h"
#include "ui/search_panel.h"
#include "ui/workload_editor.h"

#include <QStatusBar>
#include <QUndoCommand>
#include <QUndoStack>

#include <algorithm>
#include <functional>
#include <utility>

namespace mw::ui {

void MainWindow::onArchitectureChanged(const mw::Architecture& a) {
    session_.arch = a;
    refreshRunStates("the architecture as it is now");
    refreshViews();
    setDirty(true);
}

int MainWindow::refreshRunStates(const QString& edited) {
    int newlyStale = 0;
    for (mw::SessionRun& r : session_.runs) {
        const bool wasStale = !r.stale.empty();
        r.stale.clear();
        const int li = session_.network.layerIndex(r.layer);
        if (li < 0) {
            r.stale = "its layer is no longer in the workload";
        } else if (r.result.found) {
            // Costs follow the hardware while the mapping fits it; otherwise the
            // figures stay as they were last computed.
            try {
                const mw::Problem p = mw::buildProblem(session_.network.layers[std::size_t(li)]);
                mw::Evaluation e;
                mw::evaluate(p, session_.arch, r.result.best, e);
                if (e.valid)
                    r.result.bestEvaluation = e;
                else
                    r.stale = "no longer legal: " +
                              (e.numViolations > 0 ? mw::describe(e.violations[0], p, session_.arch)
                                                   : std::string("the model refuses it"));
            } catch (const mw::InputError& e) {
                r.stale = std::string("no longer fits: ") + e.what();
            }
        }
        newlyStale += !wasStale && !r.stale.empty();
    }
    if (newlyStale > 0 && !edited.isEmpty())
        info(QString("%1 run(s) no longer fit %2: kept, marked stale (Undo restores them; "
                     "right-click one to run it again)")
                 .arg(newlyStale)
                 .arg(edited));
    return newlyStale;
}

namespace {

// A workload edit, undoable as the architecture's are: undo and redo put the
// network back, and the runs' states follow it.
class NetworkEditCommand : public QUndoCommand {
  public:
    NetworkEditCommand(std::function<void(const mw::Network&)> apply, mw::Network before,
                       mw::Network after)
        : QUndoCommand("workload edit"), apply_(std::move(apply)), before_(std::move(before)),
          after_(std::move(after)) {}
    void undo() override { apply_(before_); }
    void redo() override {
        if (!std::exchange(pushed_, true))
            return; // pushed after the edit was applied
        apply_(after_);
    }

  private:
    std::function<void(const mw::Network&)> apply_;
    mw::Network before_, after_;
    bool pushed_ = false;
};

} // namespace

void MainWindow::onNetworkChanged(const mw::Network& n) {
    if (loading_)
        return;
    undo_->push(new NetworkEditCommand(
        [this](const mw::Network& net) {
            const int layer = session_.currentLayer;
            loading_ = true;
            workloadEditor_->setNetwork(net);
            loading_ = false;
            applyNetwork(net);
            selectLayer(std::min(layer, int(net.layers.size()) - 1));
        },
        session_.network, n));
    applyNetwork(n);
}

void MainWindow::applyNetwork(const mw::Network& n) {
    session_.network = n;
    if (session_.currentLayer >= int(n.layers.size()))
        session_.currentLayer = std::max(0, int(n.layers.size()) - 1);
    // Runs of layers that are gone or reshaped are kept, marked stale.
    refreshRunStates("the edited workload");
    refreshViews();
    setDirty(true);
}

void MainWindow::onRunFinished(const mw::SessionRun& run, int position) {
    // Where it started among the session's runs, so that every view numbers
    // and lists them alike, whichever finished first.
    const int index = std::clamp(position, 0, int(session_.runs.size()));
    session_.runs.insert(session_.runs.begin() + index, run);
    // It searched the design as it was when it started: an edit since then
    // re-costs it, or marks it stale, as the edit did every other run.
    refreshRunStates(); // (said with the finish below)
    const std::string stale = session_.runs[std::size_t(index)].stale;
    inspector_->runInserted(index);
    energyView_->runInserted(index);
    searchPanel_->setRuns(session_.runs);
    inspector_->setSession(session_.arch, session_.network, session_.runs);
    energyView_->setSession(session_.arch, session_.network, session_.runs);
    // Show the best current run of its layer and objective (this one when
    // none is: costs of other objectives are in other units), in the
    // inspector unless the user's hand edits are there.
    int best = -1;
    for (std::size_t i = 0; i < session_.runs.size(); ++i) {
        const auto& r = session_.runs[i];
        if (r.layer == run.layer && r.result.found && r.stale.empty() &&
            r.settings.objective.name() == run.settings.objective.name() &&
            (best < 0 ||
             searchPanel_->costNow(r) < searchPanel_->costNow(session_.runs[std::size_t(best)])))
            best = int(i);
    }
    if (best < 0)
        best = index;
    if (!inspector_->hasEdits() && !inspector_->hasSetAsideEdits())
        inspector_->showRun(best);
    energyView_->showRun(best);
    refreshExplorer();
    refreshArchitectureTotals();
    setDirty(true);
    statusBar()->showMessage(
        QString("%1 (seed %2) finished: %3 after %4 evaluations%5%6")
            .arg(QString::fromStdString(run.searcher))
            .arg(run.settings.seed)
            .arg(run.result.found ? QString::number(run.result.bestCost, 'g', 5) : "no mapping")
            .arg(run.result.evaluations)
            .arg(run.result.cancelled ? " (cancelled, best kept)" : "")
            .arg(stale.empty() ? QString()
                               : QString("; the design was edited while it ran: kept, marked "
                                         "stale (%1)")
                                     .arg(QString::fromStdString(stale))),
        stale.empty() ? 6000 : 12000);
}

void MainWindow::openDesignPoint(const mw::SweepSpec& spec, const mw::PointRecord& point) {
    mw::Architecture arch;
    try {
        arch = mw::architectureFromJson(point.architecture);
    } catch (const mw::InputError& e) {
        fail(QString("Design point %1: %2").arg(point.index).arg(QString::fromStdString(e.what())));
        return;
    }
    // The sweep's network, when it is not the session's (a database opened).
    if (mw::toJson(spec.network) != mw::toJson(session_.network)) {
        loading_ = true;
        workloadEditor_->setNetwork(spec.network);
        loading_ = false;
        onNetworkChanged(spec.network);
    }
    QStringList values;
    for (std::size_t a = 0; a < spec.axes.size() && a < point.values.size(); ++a)
        values << QString::fromStdString(spec.axes[a].parameter + "=" + point.values[a]);
    archEditor_->applyEdit(arch,
                           QString("Design point %1 (%2)").arg(point.index).arg(values.join(", ")));
    // Each searched layer's best mapping becomes a finished run of the sweep's searcher.
    mw::SearchSettings settings;
    settings.budget.evaluations = spec.budget;
    settings.seed = spec.seed;
    settings.objective = mw::SearchObjective::parse(spec.objective);
    settings.params = spec.params;
    int added = 0;
    for (std::size_t i = 0; i < point.layers.size() && i < session_.network.layers.size(); ++i) {
        const mw::LayerRecord& l = point.layers[i];
        if (l.mapping.is_null())
            continue;
        mw::SessionRun run;
        run.searcher = spec.searcher;
        run.layer = session_.network.layers[i].name;
        run.settings = settings;
        run.finished = true;
        run.constraints = spec.constraints;
        try {
            const mw::Problem p = mw::buildProblem(session_.network.layers[i]);
            run.result.searcher = spec.searcher;
            run.result.best = mw::mappingFromJson(l.mapping, p, session_.arch);
            run.result.found = true;
            run.result.evaluations = l.evaluations;
            run.result.stopReason = "design point " + std::to_string(point.index);
            mw::evaluate(p, session_.arch, run.result.best, run.result.bestEvaluation);
            run.result.bestCost = settings.objective.value(run.result.bestEvaluation);
            run.design = mw::designFingerprint(session_.arch, session_.network.layers[i]);
        } catch (const mw::InputError&) {
            continue;
        }
        session_.runs.push_back(run);
        ++added;
    }
    refreshViews();
    setDirty(true);
    info(QString("Opened design point %1 (%2): its architecture and %3 layer mappings")
             .arg(point.index)
             .arg(values.join(", "))
             .arg(added));
    showView("architecture");
}

void MainWindow::keepRuns(const std::vector<mw::SessionRun>& runs) {
    session_.runs.insert(session_.runs.end(), runs.begin(), runs.end());
    refreshRunStates(); // (searched on an earlier design: kept, marked stale)
    refreshViews();
    setDirty(true);
    info(QString("Kept %1 layer(s) of the network search as runs").arg(runs.size()));
}

void MainWindow::showRun(int runIndex) {
    inspector_->chooseRun(runIndex);
    energyView_->showRun(runIndex);
    showView("inspector");
}

} // namespace mw::ui
