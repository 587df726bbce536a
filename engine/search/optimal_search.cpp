// The optimal searcher: the best mapping of the map space for the objective,
// and the proof that it is.
//
// It walks the space as a tree: first the keep/bypass choices (the
// dataplacement: which tensor's tiles each level holds), then the spatial
// factors of each level that fans out, outermost first, then where the
// sliding dimensions loop (a convolution's R and S: each level's temporal
// factors of them, innermost level first, `--param sliding_first=0` leaves
// them to the next steps), then each level's temporal factors of the other
// dimensions from the innermost level outwards, the outermost taking what
// is left; a complete tiling is a leaf, whose loop orders are then tried.
// Deciding the fan-outs first gives the bound, from the top of the tiling
// down, the utilized instances (so the compute cycles and what each fan-out
// replicates), and each fan-out's description (so where link transfers can
// act) as soon as the extents inside it are fixed, which for a fan-out with
// no temporal loops between it and the decided levels is well before its
// own level is reached (`--param spatial_first=0` decides each level whole
// instead, innermost first). Four kinds of pruning, each safe:
//  * Capacity and fan-out: a level's tiles are fixed once it is decided, so a
//    level that overflows, or a fan-out beyond its mesh, ends the branch.
//  * Branch and bound: PartialBound gives, for a node, a value no mapping
//    below it can beat; a node at or above the best mapping found is dropped
//    (children are visited best bound first).
//  * Orders: OrderCandidates tries, per level, one order per signature that no
//    other dominates, and all of them only where Timeloop's stride-repeat and
//    link rules can see more (model/order_effects.h); a tiling's orderings
//    are then walked as a tree, outer levels first and each level's loops
//    innermost first, a subtree dropped where its bound reaches the
//    incumbent (optimal_leaf_orders.cpp; `--param order_bound=0` evaluates
//    them all).
//  * Merges: a level that keeps nothing, below one without spatial loops, is
//    that level's innermost loops in all but name (loopsJoinLevelAbove), so
//    a tiling giving it loops over dimensions the level above does not loop
//    over (or over the one dimension the level above alone loops over) is
//    one the walk meets with those loops moved up, with every order of this
//    one and more: it is skipped (`--param merge_rule=0` keeps it; see
//    generate()).
// Each rule is tested against plain exhaustive enumeration (test_optimal).
// Its first incumbent comes from a short GAMMA run (20,000 evaluations,
// `--param primal=N`, ended sooner by 5,000 without improvement,
// `--param primal_patience=N`, 0 for none), charged here like every
// evaluation. (Its improvements come early: under Eyeriss' row stationary,
// fc's optimum at the 575th evaluation; the other 19,425 took 1.5 s of the
// proof's 1.53 s.)
// The walk deepens its bound iteratively (as IDA* does): each pass visits only
// nodes whose bound lies below a threshold, which grows from the least bound
// until a mapping at or below it is found. So no tiling with a bound above the
// optimum's threshold is ever evaluated, however late a good mapping turns up
// in the walk (tilings evaluated in a pass are not evaluated again).
// Stopped by a budget, it reports its best so far with the proven gap: the
// best over the smallest bound of the nodes it had not yet closed. A bound
// costs about what an evaluation does, so an evaluation budget counts both,
// and the order walks' own evaluations (a walk that prunes everything still
// ends).
// A node's children are bounded on all the run's threads; the walk itself
// stays on one, so a run is the same on any number of threads.
#include "search/optimal_walk.h"
#include "search/searchers.h"

#include "arch/architecture.h"
#include "workload/problem.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace mw {

namespace optimal_detail {

bool OptimalSearch::walk(const std::vector<Placement>& placements, double& open, double maxLeaves) {
    skipped_ = kNoLimit;
    const double leavesBefore = leavesEvaluated_;
    auto stopped = [&] { return this->stopped() || leavesEvaluated_ - leavesBefore >= maxLeaves; };
    std::vector<Frame> stack;
    // A frame's children, in a vector a popped frame left (no allocation
    // per node once the walk is under way).
    auto push = [&](int step) {
        stack.push_back(frameAt(step));
        if (!spareChildren_.empty()) {
            stack.back().children = std::move(spareChildren_.back());
            stack.back().children.clear();
            spareChildren_.pop_back();
        }
        generate(stack.back());
    };
    for (std::size_t pi = 0; pi < placements.size(); ++pi) {
        if (stopped()) {
            for (std::size_t i = pi; i < placements.size(); ++i)
                open = std::min(open, placements[i].bound);
            open = std::min(open, skipped_);
            return false;
        }
        if (drop(placements[pi].bound)) {
            if (placements[pi].bound >= best())
                placementsPruned_ += 1;
            continue;
        }
        m_ = base_;
        for (std::size_t b = 0; b < keeps_.size(); ++b)
            m_.levels[std::size_t(keeps_[b].first)].setKeep(keeps_[b].second,
                                                            (placements[pi].bits >> b) & 1u);
        remaining_ = freeBound_;
        stack.clear();
        push(0);
        std::uint64_t steps = 0;
        while (!stack.empty()) {
            if ((++steps & 63) == 0 && stopped()) {
                // What was left open bounds the optimum from below.
                for (const Frame& f : stack)
                    for (std::size_t i = f.next; i < f.children.size(); ++i)
                        open = std::min(open, f.children[i].bound);
                for (std::size_t i = pi + 1; i < placements.size(); ++i)
                    open = std::min(open, placements[i].bound);
                for (const OrderTask& t : tasks_)
                    open = std::min(open, t.bound);
                open = std::min(open, skipped_);
                return false;
            }
            Frame& f = stack.back();
            if (f.next < f.children.size() && drop(f.children[f.next].bound))
                f.next = f.children.size(); // sorted: so are the rest (counted as one)
            if (f.next == f.children.size()) {
                m_.levels[std::size_t(f.level)] = f.before;
                remaining_ = f.remainingBefore;
                spareChildren_.push_back(std::move(f.children));
                stack.pop_back();
                continue;
            }
            const LevelChoice& c = f.children[f.next++];
            apply(f, c);
            describeFanouts(f);
            if (std::size_t(f.step) + 1 == steps_.size()) {
                leaf(c.bound);
                continue;
            }
            push(f.step + 1);
        }
    }
    flush(); // the pass's last tilings, before its incumbent is judged
    if (tasks_.empty())
        return true;
    for (const OrderTask& t : tasks_) // the budget ran out before them
        open = std::min(open, t.bound);
    open = std::min(open, skipped_);
    return false;
}

void OptimalSearch::run(SearchContext& ctx) {
    ctx_ = &ctx;
    space_ = &ctx.space();
    p_ = &space_->problem();
    a_ = &space_->arch();
    const SearchObjective& objective = ctx.settings().objective;
    if (!objective.densityTensor.empty() || p_->sparse()) {
        ctx.stop("optimal: proves optimality for dense problems and objectives; this one "
                 "imposes densities");
        return;
    }
    if (objective.energyExponent < 0 || objective.cycleExponent < 0) {
        ctx.stop("optimal: needs an objective that grows with energy and cycles");
        return;
    }
    useBound_ = ctx.param("bound", 1) != 0;
    orderBound_ = useBound_ && ctx.param("order_bound", 1) != 0;
    minOrderingsBounded_ = ctx.param("order_bound_min", 3);
    const bool mergeRule = ctx.param("merge_rule", 1) != 0;
    batchSize_ = std::size_t(ctx.countParam("batch", 1024, 1, kMaxBatch));
    bound_ = std::make_unique<PartialBound>(*space_, objective);
    model_ = std::make_unique<CostModel>(*p_, *a_);
    orderScratch_.clear();
    for (int w = 0; w < ctx.workers(); ++w)
        orderScratch_.push_back(std::make_unique<OrderScratch>());
    orders_ = std::make_unique<OrderCandidates>(*space_, ctx.param("order_rule", 1) != 0,
                                                ctx.param("spatial_rule", 1) != 0);
    const int L = a_->numLevels(), D = p_->numDims();
    slots_.assign(std::size_t(L), {});
    for (int d = 0; d < D; ++d) {
        lastLevel_[d] = lastTemporal_[d] = -1;
        for (const MapSpace::Slot& s : space_->factorSlots(d)) {
            slots_[std::size_t(s.level)][std::size_t(d)] |= std::uint8_t(1u << s.kind);
            lastLevel_[d] = lastLevel_[d] < 0 ? s.level : std::min<int>(lastLevel_[d], s.level);
            if (s.kind == 0)
                lastTemporal_[d] =
                    lastTemporal_[d] < 0 ? s.level : std::min<int>(lastTemporal_[d], s.level);
        }
    }
    Mapping base = makeTrivialMapping(*p_, *a_);
    space_->applyFixed(base);
    mergeable_.assign(std::size_t(L), mergeRule);
    for (int l = 0; l < L && l < int(space_->constraints().levels.size()); ++l)
        if (space_->constraints().levels[std::size_t(l)].order.constrains())
            mergeable_[std::size_t(l)] = false;
    room_.assign(std::size_t(L), {1, 1});
    for (int l = 0; l < L; ++l) {
        i64 fixedX = 1, fixedY = 1;
        for (int d = 0; d < D; ++d) {
            fixedX *= base.levels[std::size_t(l)].spatialX[d];
            fixedY *= base.levels[std::size_t(l)].spatialY[d];
        }
        room_[std::size_t(l)] = {a_->fanoutX(l) / fixedX, a_->fanoutY(l) / fixedY};
    }
    // The walk's steps. With the fan-outs first (the default), every level
    // with free spatial slots and room for them has its spatial factors
    // decided, outermost first, before any tiling: the utilized instances,
    // and so the compute cycles and what each fan-out replicates, are then
    // known to the bound at every node of the tiling.
    steps_.clear();
    sliding_ = 0;
    if (ctx.param("spatial_first", 1) != 0) {
        std::uint32_t decided = 0;
        for (int l = 0; l < L; ++l) {
            bool free = false;
            for (int d = 0; d < D; ++d)
                free = free || (hasRoom(d, l, 1) && room_[std::size_t(l)][0] > 1) ||
                       (hasRoom(d, l, 2) && room_[std::size_t(l)][1] > 1);
            if (!free)
                continue;
            decided |= 1u << l;
            steps_.push_back({l, Decides::Spatial, decided});
        }
        // The sliding dimensions' temporal factors next, on every level:
        // where they loop decides where Timeloop's stride-repeat rule can act
        // (two dimensions of one coordinate both looping above a level),
        // which the bound must otherwise grant on every level above the
        // decided ones. For each coordinate indexed by several dimensions,
        // all but the largest (a convolution's R and S, not P and Q): few
        // choices, as their factors are small.
        sliding_ = ctx.param("sliding_first", 1) != 0 ? slidingDimensions(*p_) : 0;
        for (int l = L - 1; l >= 0 && sliding_; --l) {
            bool slot = false;
            for (int d = 0; d < D; ++d)
                slot = slot || (((sliding_ >> d) & 1u) && hasRoom(d, l, 0));
            if (slot)
                steps_.push_back({l, Decides::Sliding, decided});
        }
        for (int l = L - 1; l >= 0; --l)
            steps_.push_back({l, Decides::Temporal, (1u << L) - 1});
    } else {
        for (int l = L - 1; l >= 0; --l)
            steps_.push_back({l, Decides::Whole, 0});
    }
    fanouts_.assign(std::size_t(L), &none_);
    std::array<i64, kMaxDims> freeBound{};
    for (int d = 0; d < D; ++d) {
        freeBound[d] = 1;
        for (auto prime : space_->freePrimes(d))
            freeBound[d] *= prime;
    }

    // Starting points (a network's warm start) give the first incumbent.
    if (!ctx.settings().warmStart.empty()) {
        std::vector<Mapping> starts;
        Evaluation scratch;
        for (const Mapping& w : ctx.settings().warmStart)
            if (space_->isLegal(w, scratch))
                starts.push_back(w);
        costs_.resize(starts.size());
        ctx.evaluateBatch(starts.data(), starts.size(), costs_.data());
    }

    // Dataplacements, best bound first.
    base_ = base;
    keeps_ = space_->freeKeepChoices();
    freeBound_ = freeBound;
    std::vector<Placement> placements;
    for (std::uint64_t bits = 0; bits < (std::uint64_t(1) << keeps_.size()); ++bits) {
        m_ = base;
        for (std::size_t b = 0; b < keeps_.size(); ++b)
            m_.levels[std::size_t(keeps_[b].first)].setKeep(keeps_[b].second, (bits >> b) & 1u);
        remaining_ = freeBound;
        placements.push_back(
            {bits, bound_->at(m_, L, remaining_.data(), fanouts_.data()).objective});
    }
    std::stable_sort(placements.begin(), placements.end(),
                     [](const Placement& a, const Placement& b) { return a.bound < b.bound; });

    // A first incumbent: a short GAMMA run, then the best-bound branches'
    // first tilings whatever their bound (a dive). Incumbents only prune (and
    // give a stopped run something to show); the proof is the bounds'.
    double open = kNoLimit; // least bound left unvisited
    if (useBound_) {
        const auto primal = std::int64_t(std::max(0.0, ctx.param("primal", 20000)));
        const auto patience = std::int64_t(std::max(0.0, ctx.param("primal_patience", 5000)));
        if (primal > 0) {
            const std::unique_ptr<Searcher> gamma = makeGammaSearch();
            ctx.runNested(*gamma, primal, "first incumbent (GAMMA)", patience);
        }
        threshold_ = kNoLimit;
        walk(placements, open, std::max(0.0, ctx.param("dive", 32)));
        flush();
        open = kNoLimit;
    }
    // Passes under a growing threshold (one pass, with none, without the
    // bound), from the least bound or just below the incumbent if that is
    // higher (a good incumbent makes it one pass, as plain branch and bound).
    const double growth = std::max(1.0001, ctx.param("threshold_growth", 1.05));
    threshold_ = kNoLimit;
    if (useBound_ && !placements.empty())
        threshold_ =
            std::max(placements.front().bound * growth, ctx.hasBest() ? best() / growth : 0.0);
    bool completed = false;
    for (;;) {
        passes_ += 1;
        completed = walk(placements, open);
        if (!completed || !useBound_ || best() <= threshold_ || std::isinf(skipped_))
            break;
        threshold_ = std::max(skipped_, threshold_ * growth);
    }
    if (completed && best() > threshold_) // the pass left open what its threshold dropped
        open = skipped_;

    const OrderCandidates::Stats& os = orders_->stats();
    ctx.setStat("nodes", nodes_);
    ctx.setStat("tilings", leaves_);
    ctx.setStat("tilings_evaluated", leavesEvaluated_);
    ctx.setStat("pruned_by_bound", prunedByBound_);
    ctx.setStat("pruned_by_fit", prunedByFit_);
    ctx.setStat("pruned_by_merge", prunedByMerge_);
    ctx.setStat("dataplacements", double(placements.size()));
    ctx.setStat("dataplacements_pruned", placementsPruned_);
    ctx.setStat("passes", passes_);
    ctx.setStat("bounds", double(bounds_));
    ctx.setStat("orders_tried", double(orderEvaluations_));
    ctx.setStat("orders_pruned_by_bound", ordersPruned_);
    ctx.setStat("orders_of_those_tilings", os.orders);
    ctx.setStat("levels_ordered_by_signature", double(os.levelsBySignature));
    ctx.setStat("levels_ordered_in_full", double(os.levelsInFull));
    ctx.setStat("spatial_orders_in_full", double(os.spatialInFull));
    ctx.setStat("log10_space", space_->size().total());
    const bool proven = open >= best() || (!ctx.hasBest() && std::isinf(open));
    ctx.setStat("proven", proven ? 1.0 : 0.0);
    if (proven) {
        ctx.setStat("gap", 0.0);
        ctx.stop(ctx.hasBest() ? "proven optimal" : "proven: no legal mapping");
        return;
    }
    const double gap =
        ctx.hasBest() ? best() / open - 1.0 : std::numeric_limits<double>::infinity();
    ctx.setStat("bound", open);
    ctx.setStat("gap", gap);
    const std::int64_t budget = ctx.settings().budget.evaluations;
    const char* cause = ctx.cancelRequested() ? "cancelled"
                        : budget > 0 && ctx.evaluations() + bounds_ + orderEvaluations_ >= budget
                            ? "evaluation budget spent"
                            : "time budget spent";
    char text[200];
    if (ctx.hasBest())
        std::snprintf(text, sizeof text,
                      "%s before the proof: the best so far is at most %.3g%% above the optimum",
                      cause, 100.0 * gap);
    else
        std::snprintf(text, sizeof text, "%s before any legal mapping was found", cause);
    ctx.stop(text);
}

} // namespace optimal_detail

std::unique_ptr<Searcher> makeOptimalSearch() {
    return std::make_unique<optimal_detail::OptimalSearch>();
}

} // namespace mw
