// The optimal searcher's leaves: a complete tiling's loop orders.
//
// OrderCandidates gives a tiling's candidate orderings as plans: per level
// with a choice, a list of orders, the candidates every combination. A plan
// is walked as a tree, outer levels first, and within a level its real
// loops innermost first: a node fixes the orders of the levels above some
// level q and the innermost j loops of q, and PartialBound::withOrdersAbove
// bounds every ordering below it. A tensor's deliveries into a level depend
// only on the loops above that level, so those into the levels down to q
// are the same in every ordering that shares the node's levels above q,
// and any one of them evaluated gives them exactly (q's own order changes
// none of them); the rest are bounded as the tiling's bound bounds them,
// knowing, where a walk of tiles ends at q, whether a loop moving the
// tensor or a run of others comes first there (the bound of a tiling grants
// every tensor its own best order, and the tensors' best orders mostly
// conflict). Only orderings are evaluated, never a probe: a node is bounded
// from the last ordering evaluated above it, and its first ordering (each
// level below at its first order) is evaluated only once the walk goes on
// below it; a node whose bound reaches the cutoff drops its orderings
// unevaluated. A node of fewer than three orderings
// (`--param order_bound_min`) is not bounded: a bound costs about an
// evaluation. Nor are a level's deeper nodes once the bound says that
// knowing more of its order cannot change it. Outer levels first, because
// their orders decide the deliveries from the costliest memories (and a
// level's order decides nothing above it).
//
// The walks run on the run's threads, each tiling against the incumbent as
// the batch found it and what its own walk improves on that; the orderings
// that beat it go to the record, where the driver evaluates them again (a
// handful: the walk's evaluations are charged to the budget as the bounds
// are, and counted in the stats).
#include "search/optimal_walk.h"

#include "arch/architecture.h"
#include "workload/problem.h"

#include <cmath>
#include <string>

namespace mw::optimal_detail {

void OptimalSearch::leaf(double bound) {
    leaves_ += 1;
    if (!space_->isLegalQuick(m_)) // (the walk builds legal tilings; this checks it)
        return;
    std::string key;
    for (int l = 0; l < m_.numLevels; ++l) {
        const LevelMapping& lm = m_.levels[std::size_t(l)];
        key.append(reinterpret_cast<const char*>(lm.temporal.data()), sizeof lm.temporal);
        key.append(reinterpret_cast<const char*>(lm.spatialX.data()), sizeof lm.spatialX);
        key.append(reinterpret_cast<const char*>(lm.spatialY.data()), sizeof lm.spatialY);
        key.push_back(char(lm.keepMask));
    }
    if (!evaluated_.insert(std::move(key)).second)
        return; // in an earlier pass
    leavesEvaluated_ += 1;
    std::array<const PartialBound::Fanout*, kMaxLevels> fanouts{};
    std::copy(fanouts_.begin(), fanouts_.end(), fanouts.begin());
    orders_->forEachPlan(m_, [&](const Mapping& m, const OrderCandidates::Lists& lists) {
        double orderings = 1.0;
        for (const auto* list : lists)
            if (list)
                orderings *= double(list->size());
        waitingOrders_ += orderings;
        tasks_.push_back({m, lists, fanouts, bound});
        return true;
    });
    if (waitingOrders_ >= double(batchSize_))
        flush();
}

void OptimalSearch::walkOrders(const OrderTask& task, OrderScratch& s, double& cutoff,
                               std::vector<Mapping>& found) const {
    const int L = a_->numLevels();
    std::array<int, kMaxLevels> open{}; // the levels with a choice, outermost first
    int n = 0;
    for (int l = 0; l < L; ++l)
        if (task.lists[std::size_t(l)])
            open[std::size_t(n++)] = l;
    // Orderings below a node fixing the levels above open[i].
    std::array<double, kMaxLevels + 1> below{};
    below[std::size_t(n)] = 1.0;
    for (int i = n - 1; i >= 0; --i)
        below[std::size_t(i)] = below[std::size_t(i + 1)] *
                                double(task.lists[std::size_t(open[std::size_t(i)])]->size());
    if (orderBound_ && task.bound >= cutoff) { // the incumbent improved since the tiling was met
        s.pruned += below[0];
        return;
    }
    const SearchObjective& objective = ctx_->settings().objective;
    s.m = task.m;
    auto firstFrom = [&](int i) {
        for (int j = i; j < n; ++j) {
            const int l = open[std::size_t(j)];
            s.m.levels[std::size_t(l)].order = task.lists[std::size_t(l)]->front();
        }
    };
    bool fresh = false; // s.e is s.m's evaluation
    auto evaluate = [&] {
        model_->evaluate(s.m, s.e, s.cache);
        fresh = true;
        ++s.evaluations;
        if (!s.e.valid)
            return;
        const double cost = objective.value(s.e);
        if (cost < cutoff) {
            cutoff = cost;
            found.push_back(s.m);
        }
    };
    firstFrom(0);
    evaluate();
    // The j-th innermost real loop of order o at level l.
    const int D = p_->numDims();
    auto innermostLoop = [&](int l, const OrderCandidates::Order& o, int j) {
        return innermostFirst(o, temporalLoops(task.m.levels[std::size_t(l)], D),
                              D)[std::size_t(j)];
    };
    // Whether a node's orderings are dropped: those whose levels above
    // fixedAbove are s.m's, and the innermost `suffix` real loops there;
    // s.m is the node's first, and s.e the evaluation of it or of another
    // ordering with the same levels above fixedAbove (the deliveries the
    // bound takes from it are those into levels down to fixedAbove, which
    // depend on nothing else). With `bounding` false, the node is not
    // bounded; its bound then tells whether its children's may differ from
    // it.
    auto dropped = [&](int fixedAbove, int suffix, double orderings, bool& bounding) {
        if (!orderBound_ || !s.e.valid || !bounding || orderings < minOrderingsBounded_)
            return false;
        const PartialBound::Value v = bound_->withOrdersAbove(s.m, task.fanouts.data(), fixedAbove,
                                                              suffix, s.e, cutoff, &bounding);
        ++s.bounds;
        if (v.objective < cutoff)
            return false;
        s.pruned += fresh ? orderings - 1.0 : orderings; // (its first may be evaluated)
        return true;
    };
    // Below the node whose levels above open[i] are s.m's and whose level
    // open[i] has the innermost j real loops of its list's [b, e): s.m holds
    // list[b] there and each level below its first order; s.e as dropped()
    // takes it. A group of orders at a level is bounded before its first
    // ordering is evaluated, which it is only once the walk goes below the
    // level (or reaches it as a leaf).
    // A level's candidates are taken innermost loop first, so that the
    // bound knows each tensor's first class there as soon as it can.
    // Its children are bounded only while knowing more of the level's order
    // may raise their bound (`bounding`).
    auto descend = [&](auto& self, int i, int j, std::size_t b, std::size_t e,
                       bool bounding) -> void {
        const int l = open[std::size_t(i)];
        const std::vector<OrderCandidates::Order>& list = *task.lists[std::size_t(l)];
        if (e - b == 1) { // the level's order is decided
            if (!fresh)
                evaluate();
            bool next = true;
            if (i + 1 == n || dropped(open[std::size_t(i + 1)], 0, below[std::size_t(i + 1)], next))
                return;
            self(self, i + 1, 0, 0, task.lists[std::size_t(open[std::size_t(i + 1)])]->size(),
                 next);
            return;
        }
        for (std::size_t gb = b; gb < e;) {
            const int loop = innermostLoop(l, list[gb], j);
            std::size_t ge = gb + 1;
            while (ge < e && innermostLoop(l, list[ge], j) == loop)
                ++ge;
            if (gb > b) {
                s.m.levels[std::size_t(l)].order = list[gb];
                firstFrom(i + 1);
                fresh = false;
            }
            bool more = bounding;
            if (ge - gb == 1 ||
                !dropped(l, j + 1, double(ge - gb) * below[std::size_t(i + 1)], more))
                self(self, i, j + 1, gb, ge, more);
            gb = ge;
        }
    };
    if (n > 0)
        descend(descend, 0, 0, 0, task.lists[std::size_t(open[0])]->size(), true);
}

void OptimalSearch::flush() {
    if (tasks_.empty() || stopped())
        return;
    const double incumbent = best();
    found_.resize(tasks_.size());
    for (auto& f : found_)
        f.clear();
    ctx_->parallelFor(tasks_.size(), [&](std::size_t begin, std::size_t end, int worker) {
        OrderScratch& s = *orderScratch_[std::size_t(worker)];
        for (std::size_t i = begin; i < end; ++i) {
            double cutoff = incumbent;
            walkOrders(tasks_[i], s, cutoff, found_[i]);
        }
    });
    for (const auto& s : orderScratch_) {
        orderEvaluations_ += s->evaluations;
        bounds_ += s->bounds;
        ordersPruned_ += s->pruned;
        s->evaluations = s->bounds = 0;
        s->pruned = 0;
    }
    // The orderings that beat the incumbent, to the record.
    batch_.clear();
    batchTask_.clear();
    batchNotes_.clear();
    for (std::size_t i = 0; i < tasks_.size(); ++i)
        for (const Mapping& m : found_[i]) {
            CandidateNote note;
            if (ctx_->isKnown(m, &note))
                continue;
            // Else new: each tiling is walked once (evaluated_), and its
            // orderings differ in the order of their real loops, which the
            // canonical form keeps.
            note.vouchedNew = true;
            batch_.push_back(m);
            batchTask_.push_back(i);
            batchNotes_.push_back(note);
        }
    costs_.resize(batch_.size());
    generated_.resize(batch_.size());
    if (!batch_.empty())
        ctx_->evaluateGenerated(
            batch_.size(),
            [this](std::size_t i, Rng&, Mapping& m, CandidateNote& note) {
                m = batch_[i];
                note = batchNotes_[i];
                return true;
            },
            generated_.data(), costs_.data());
    // A task whose orderings the budget left out of the record stays open.
    std::size_t keep = 0;
    for (std::size_t i = 0, b = 0; i < tasks_.size(); ++i) {
        bool recorded = true;
        for (; b < batch_.size() && batchTask_[b] == i; ++b)
            recorded = recorded && !std::isnan(costs_[b]);
        if (!recorded)
            tasks_[keep++] = tasks_[i];
    }
    tasks_.resize(keep);
    waitingOrders_ = 0;
}

} // namespace mw::optimal_detail
