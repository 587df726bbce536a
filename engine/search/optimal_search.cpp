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
// instead, innermost first). Three kinds of pruning, each safe:
//  * Capacity and fan-out: a level's tiles are fixed once it is decided, so a
//    level that overflows, or a fan-out beyond its mesh, ends the branch.
//  * Branch and bound: PartialBound gives, for a node, a value no mapping
//    below it can beat; a node at or above the best mapping found is dropped
//    (children are visited best bound first).
//  * Orders: OrderCandidates tries, per level, one order per signature that no
//    other dominates, and all of them only where Timeloop's stride-repeat and
//    link rules can see more (model/order_effects.h).
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
// costs about what an evaluation does, so an evaluation budget counts both
// (a walk that prunes everything still ends).
// A node's children are bounded on all the run's threads; the walk itself
// stays on one, so a run is the same on any number of threads.
#include "search/optimal_bound.h"
#include "search/optimal_orders.h"
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

namespace {

using i64 = std::int64_t;

// What one step of the walk decides of its level: everything (temporal and
// spatial factors together), or, where the fan-outs come first, the spatial
// factors (each fanning level, outermost first), then the temporal factors of
// the sliding dimensions (each level, innermost first), then the temporal
// factors of the others.
enum class Decides : std::uint8_t { Whole, Spatial, Sliding, Temporal };

struct Step {
    int level;
    Decides what;
    std::uint32_t spatialDecided; // levels whose spatial factors are decided once it is taken
};

// A level's factors for one child: per dimension, temporal, X and Y.
struct LevelChoice {
    std::array<std::uint32_t, kMaxDims> t, x, y;
    double bound;
};

class OptimalSearch : public Searcher {
  public:
    void run(SearchContext& ctx) override;

  private:
    struct Frame {
        int step; // in steps_
        int level;
        Decides what;
        std::vector<LevelChoice> children;
        std::size_t next = 0;
        LevelMapping before;
        std::array<i64, kMaxDims> remainingBefore;
    };
    // A fan-out's description depends on its level, its spatial factors and
    // their strides (the extents of the level inside), nothing else: each is
    // described once in the whole walk, where many nodes share it. (Hashed:
    // a child is looked up per bound, so no string, no allocation, no
    // ordering.)
    using FanoutKey = std::array<std::uint32_t, 1 + 3 * kMaxDims>;
    struct FanoutKeyHash {
        std::size_t operator()(const FanoutKey& k) const {
            std::uint64_t h = 0x243f6a8885a308d3ull;
            for (std::uint32_t v : k)
                h = (h ^ v) * 0x9e3779b97f4a7c15ull;
            return std::size_t(h ^ (h >> 32));
        }
    };
    // d's extent inside level (the product of m_'s factors of the levels below).
    i64 extentInside(int level, int d) const {
        i64 inside = 1;
        for (int l = level + 1; l < m_.numLevels; ++l)
            inside *= i64(m_.levels[std::size_t(l)].temporal[d]) *
                      m_.levels[std::size_t(l)].spatialX[d] * m_.levels[std::size_t(l)].spatialY[d];
        return inside;
    }
    // The cache's entry for level's fan-out as m_ now has it, and whether it
    // is new (not yet described).
    std::pair<PartialBound::Fanout*, bool> fanoutEntry(int level);
    // The fan-outs the bound reads below the node m_ now is, once frame's
    // choice is applied, that frame's choice fixes: calls take(level) for
    // each (the level decided whole, and those above it that are described).
    template <class Take> void fanoutsFixedBy(const Frame& frame, Take&& take);
    // Sets fanouts_ for the levels frame's choice (applied to m_) fixes.
    void describeFanouts(const Frame& frame);

    struct Placement {
        std::uint64_t bits;
        double bound;
    };
    void generate(Frame& frame);
    // Gives frame.level the factors of choice c in m (from frame.before) and
    // what they leave of each dimension in remaining.
    void applyTo(const Frame& frame, const LevelChoice& c, Mapping& m,
                 std::array<i64, kMaxDims>& remaining) const;
    void apply(const Frame& frame, const LevelChoice& c) { applyTo(frame, c, m_, remaining_); }
    Frame frameAt(int step) const {
        const Step& s = steps_[std::size_t(step)];
        return Frame{step, s.level, s.what, {}, 0, {}, {}};
    }
    // The deepest level decided whole, and the levels above it whose spatial
    // factors are, once frame's choice is applied (PartialBound::at's k and
    // spatialDecided).
    int decidedFrom(const Frame& frame) const {
        return frame.what == Decides::Spatial || frame.what == Decides::Sliding ? a_->numLevels()
                                                                                : frame.level;
    }
    // Whether frame's step gives d its temporal factor at frame's level.
    bool decidesTemporal(const Frame& frame, int d) const {
        switch (frame.what) {
        case Decides::Whole:
            return true;
        case Decides::Spatial:
            return false;
        case Decides::Sliding:
            return (sliding_ >> d) & 1u;
        case Decides::Temporal:
            return !((sliding_ >> d) & 1u);
        }
        return false;
    }
    std::uint32_t spatialDecidedAfter(const Frame& frame) const {
        return steps_[std::size_t(frame.step)].spatialDecided;
    }
    // Describes the fan-outs new to the frame among its candidate children,
    // then bounds the children, each step on the run's threads.
    void boundChildren(const Frame& frame);
    void leaf(double bound);
    void flush();
    // One pass over the nodes below the threshold; false when stopped (by the
    // budget, or after maxLeaves tilings), with open the least bound left
    // unvisited.
    bool walk(const std::vector<Placement>& placements, double& open, double maxLeaves = kNoLimit);
    double best() const { return ctx_->bestCost(); }
    // A node is visited while its bound is below this.
    double limit() const { return useBound_ ? std::min(threshold_, best()) : kNoLimit; }
    // The budget, with each bound computed counted as an evaluation.
    bool stopped() const {
        const std::int64_t budget = ctx_->settings().budget.evaluations;
        return ctx_->stopped() || (budget > 0 && ctx_->evaluations() + bounds_ >= budget);
    }
    // Drops a node of this bound (counted); false when it is to be visited.
    bool drop(double bound) {
        if (bound < limit())
            return false;
        if (bound == kNoLimit) // (the bound found no completion that fits)
            prunedByFit_ += 1;
        else if (bound >= best())
            prunedByBound_ += 1;
        else
            skipped_ = std::min(skipped_, bound);
        return true;
    }
    static constexpr double kNoLimit = std::numeric_limits<double>::infinity();
    bool hasRoom(int d, int level, std::uint8_t kind) const {
        return (slots_[std::size_t(level)][std::size_t(d)] >> kind) & 1u;
    }

    SearchContext* ctx_ = nullptr;
    const MapSpace* space_ = nullptr;
    const Problem* p_ = nullptr;
    const Architecture* a_ = nullptr;
    std::unique_ptr<PartialBound> bound_;
    std::unique_ptr<OrderCandidates> orders_;
    bool useBound_ = true;
    std::vector<Step> steps_;   // the walk's
    std::uint32_t sliding_ = 0; // dimensions whose temporal factors are placed first

    std::size_t batchSize_ = 1024;
    double threshold_ = kNoLimit;
    double skipped_ = kNoLimit; // least bound dropped by the threshold in this pass
    Mapping base_{};
    std::vector<std::pair<int, int>> keeps_;
    std::array<i64, kMaxDims> freeBound_{};
    // Tilings whose orders were evaluated in an earlier pass.
    std::unordered_set<std::string> evaluated_;

    // The node being visited.
    Mapping m_{};
    std::array<i64, kMaxDims> remaining_{};
    std::vector<const PartialBound::Fanout*> fanouts_; // per decided level
    PartialBound::Fanout none_;                        // a level not yet decided
    // (Node-based: the pointers fanouts_ holds survive a rehash.)
    std::unordered_map<FanoutKey, PartialBound::Fanout, FanoutKeyHash> fanoutCache_;

    std::vector<std::array<std::uint8_t, kMaxDims>> slots_; // bit kind: a free slot
    std::vector<std::array<i64, 2>> room_;                  // per level: free X, Y room
    std::array<int, kMaxDims> lastLevel_{};                 // d's outermost free slot
    std::array<int, kMaxDims> lastTemporal_{}; // d's outermost free temporal slot; -1: none
    std::vector<Mapping> batch_;
    // The divisors of each number asked (few: products of a layer's bounds).
    std::unordered_map<i64, std::vector<i64>> divisors_;
    const std::vector<i64>& divisors(i64 n);
    std::vector<std::vector<std::array<std::uint32_t, 3>>> options_; // generate's, reused
    std::vector<std::vector<LevelChoice>> spareChildren_;            // popped frames'
    std::vector<double> batchBound_, costs_;
    // A node's children before their bounds: each choice and its fan-out,
    // and the children whose fan-out is still to be described.
    std::vector<LevelChoice> candidates_;
    std::vector<std::array<PartialBound::Fanout*, kMaxLevels>> candidateFanouts_; // null: unset
    std::vector<std::pair<std::size_t, int>> undescribed_; // (candidate, level)
    // Per worker: the node being bounded, each with its own copy.
    struct BoundScratch {
        Mapping m;
        std::array<i64, kMaxDims> remaining;
        std::vector<const PartialBound::Fanout*> fanouts;
    };
    std::vector<BoundScratch> boundScratch_;

    // Figures.
    double nodes_ = 0, leaves_ = 0, prunedByBound_ = 0, prunedByFit_ = 0, leavesEvaluated_ = 0;
    double passes_ = 0, placementsPruned_ = 0;
    std::int64_t bounds_ = 0; // bounds computed
};

// Per tensor coordinate indexed by several dimensions (bound above 1), every
// one of them but the largest (the first of equals).
std::uint32_t slidingDimensions(const Problem& p) {
    const model_detail::Terms terms(p);
    std::uint32_t mask = 0;
    for (int t = 0; t < p.numTensors(); ++t)
        for (int r = 0, first = 0; r < terms.lanes[t]; first = terms.rankEnd[t][r++]) {
            if (terms.rankEnd[t][r] - first < 2)
                continue;
            int largest = terms.term[t][first].dim;
            for (int i = first + 1; i < terms.rankEnd[t][r]; ++i)
                if (p.dims[terms.term[t][i].dim].bound > p.dims[largest].bound)
                    largest = terms.term[t][i].dim;
            for (int i = first; i < terms.rankEnd[t][r]; ++i)
                if (terms.term[t][i].dim != largest)
                    mask |= 1u << terms.term[t][i].dim;
        }
    return mask;
}

std::vector<i64> divisorsOf(i64 n) {
    std::vector<i64> out;
    for (i64 i = 1; i * i <= n; ++i)
        if (n % i == 0) {
            out.push_back(i);
            if (i * i != n)
                out.push_back(n / i);
        }
    std::sort(out.begin(), out.end());
    return out;
}

const std::vector<i64>& OptimalSearch::divisors(i64 n) {
    auto [it, fresh] = divisors_.try_emplace(n);
    if (fresh)
        it->second = divisorsOf(n);
    return it->second;
}

void OptimalSearch::applyTo(const Frame& frame, const LevelChoice& c, Mapping& m,
                            std::array<i64, kMaxDims>& remaining) const {
    const int D = p_->numDims();
    LevelMapping& lm = m.levels[std::size_t(frame.level)];
    lm = frame.before;
    remaining = frame.remainingBefore;
    const bool spatial = frame.what == Decides::Whole || frame.what == Decides::Spatial;
    for (int d = 0; d < D; ++d) {
        const bool temporal = decidesTemporal(frame, d);
        if (temporal && hasRoom(d, frame.level, 0))
            lm.temporal[d] = c.t[d];
        if (spatial && hasRoom(d, frame.level, 1))
            lm.spatialX[d] = c.x[d];
        if (spatial && hasRoom(d, frame.level, 2))
            lm.spatialY[d] = c.y[d];
        remaining[d] /= i64(temporal ? c.t[d] : 1) * (spatial ? i64(c.x[d]) * c.y[d] : 1);
    }
}

void OptimalSearch::boundChildren(const Frame& frame) {
    // A bound costs a microsecond or more, and the pool's workers spin
    // between batches, so a fork-join costs about a bound: a few children are
    // worth sharing. (From 32, most nodes of an open space, some 21 children
    // each, were bounded on one thread: Eyeriss-like layer3.1.conv1 proved in
    // 2.42 s on 2 threads against 1.66 s from 8, medians of 4 alternated.)
    constexpr std::size_t kParallelFrom = 8;
    const std::size_t n = candidates_.size();
    const int workers = n >= kParallelFrom ? ctx_->workers() : 1;
    boundScratch_.resize(std::size_t(workers));
    for (int w = 0; w < workers; ++w) {
        BoundScratch& b = boundScratch_[std::size_t(w)];
        b.m = m_;
        b.fanouts = fanouts_;
    }
    const int k = decidedFrom(frame);
    const std::uint32_t spatialDecided = spatialDecidedAfter(frame);
    auto describeRange = [&](std::size_t begin, std::size_t end, int worker) {
        BoundScratch& b = boundScratch_[std::size_t(worker)];
        for (std::size_t u = begin; u < end; ++u) {
            const auto [i, level] = undescribed_[u];
            applyTo(frame, candidates_[i], b.m, b.remaining);
            bound_->describeFanout(b.m, level, *candidateFanouts_[i][std::size_t(level)]);
        }
    };
    // A child whose bound reaches the best so far is dropped and counted as
    // such whatever its bound's exact value: the bound may stop there.
    const double cutoff = useBound_ ? best() : kNoLimit;
    auto boundRange = [&](std::size_t begin, std::size_t end, int worker) {
        BoundScratch& b = boundScratch_[std::size_t(worker)];
        for (std::size_t i = begin; i < end; ++i) {
            LevelChoice& c = candidates_[i];
            applyTo(frame, c, b.m, b.remaining);
            for (int l = 0; l < a_->numLevels(); ++l)
                if (candidateFanouts_[i][std::size_t(l)])
                    b.fanouts[std::size_t(l)] = candidateFanouts_[i][std::size_t(l)];
            c.bound =
                bound_->at(b.m, k, b.remaining.data(), b.fanouts.data(), cutoff, spatialDecided)
                    .objective;
        }
    };
    if (workers > 1 && undescribed_.size() > 1)
        ctx_->parallelFor(undescribed_.size(), describeRange);
    else
        describeRange(0, undescribed_.size(), 0);
    if (workers > 1)
        ctx_->parallelFor(n, boundRange);
    else
        boundRange(0, n, 0);
}

std::pair<PartialBound::Fanout*, bool> OptimalSearch::fanoutEntry(int level) {
    const LevelMapping& lm = m_.levels[std::size_t(level)];
    FanoutKey key{};
    key[0] = std::uint32_t(level);
    for (int d = 0; d < p_->numDims(); ++d) {
        key[std::size_t(1 + d)] = lm.spatialX[d];
        key[std::size_t(1 + kMaxDims + d)] = lm.spatialY[d];
        // A spatial loop's stride: d's extent inside (no loop, no stride).
        if (lm.spatialX[d] * lm.spatialY[d] > 1)
            key[std::size_t(1 + 2 * kMaxDims + d)] = std::uint32_t(extentInside(level, d));
    }
    auto [it, fresh] = fanoutCache_.try_emplace(key);
    return {&it->second, fresh};
}

template <class Take> void OptimalSearch::fanoutsFixedBy(const Frame& frame, Take&& take) {
    if (frame.what == Decides::Whole || frame.what == Decides::Temporal)
        take(frame.level);
    const int k = decidedFrom(frame);
    for (int l = bound_->describedFrom(k, remaining_.data(), spatialDecidedAfter(frame)); l < k;
         ++l)
        take(l);
}

void OptimalSearch::describeFanouts(const Frame& frame) {
    fanoutsFixedBy(frame, [&](int level) {
        const auto [fanout, fresh] = fanoutEntry(level);
        if (fresh)
            bound_->describeFanout(m_, level, *fanout);
        fanouts_[std::size_t(level)] = fanout;
    });
}

// The children of the node frame stands for: every way to give level
// frame.level the factors its step decides from what is left, that fits
// it, with its bound.
void OptimalSearch::generate(Frame& frame) {
    const int D = p_->numDims(), j = frame.level;
    nodes_ += 1;
    frame.before = m_.levels[std::size_t(j)];
    frame.remainingBefore = remaining_;
    // Per dimension: its options (t, x, y) at this level.
    auto& options = options_;
    options.resize(std::size_t(D));
    for (auto& o : options)
        o.clear();
    static const std::vector<i64> one{1};
    const bool spatial = frame.what == Decides::Whole || frame.what == Decides::Spatial;
    for (int d = 0; d < D; ++d) {
        const i64 R = remaining_[d];
        const bool temporal = decidesTemporal(frame, d);
        // A step deciding everything places all of d at d's outermost free
        // slot; the steps deciding d's temporal factors, after the spatial
        // ones, all that is left at d's outermost temporal slot. With none,
        // what the spatial steps left of d can never be placed: the branch
        // ends here.
        if (frame.what != Decides::Whole && temporal && lastTemporal_[d] < 0 && R > 1)
            continue;
        const bool last =
            frame.what == Decides::Whole ? lastLevel_[d] == j : temporal && lastTemporal_[d] >= j;
        for (i64 t : temporal ? divisors(R) : one) {
            if (t > 1 && !hasRoom(d, j, 0))
                continue;
            for (i64 s : spatial ? divisors(R / t) : one) {
                if (last && t * s != R)
                    continue;
                if (s == 1) {
                    options[d].push_back({std::uint32_t(t), 1, 1});
                    continue;
                }
                if (hasRoom(d, j, 1) && s <= room_[std::size_t(j)][0])
                    options[d].push_back({std::uint32_t(t), std::uint32_t(s), 1});
                if (hasRoom(d, j, 2) && s <= room_[std::size_t(j)][1])
                    options[d].push_back({std::uint32_t(t), 1, std::uint32_t(s)});
            }
        }
    }
    // Extents inside the level, and the level's own fixed factors.
    i64 ext[kMaxDims];
    for (int d = 0; d < D; ++d)
        ext[d] = extentInside(j, d) * i64(frame.before.temporal[d]) * frame.before.spatialX[d] *
                 frame.before.spatialY[d];
    const std::uint8_t keep = m_.levels[std::size_t(j)].keepMask;
    LevelChoice c{};
    candidates_.clear();
    candidateFanouts_.clear();
    undescribed_.clear();
    PartialBound::Fanout* ownFanout = nullptr;
    auto descend = [&](auto&& self, int d, i64 usedX, i64 usedY) -> void {
        if (d == D) {
            // Each fan-out is described once: the first child with it has it
            // described (boundChildren, with the bounds).
            apply(frame, c);
            std::array<PartialBound::Fanout*, kMaxLevels> fanouts{};
            fanoutsFixedBy(frame, [&](int level) {
                // A temporal step's own fan-out (its spatial factors and the
                // extents inside) is the same for all its children.
                const bool own = level == j && frame.what == Decides::Temporal;
                if (own && ownFanout) {
                    fanouts[std::size_t(level)] = ownFanout;
                    return;
                }
                const auto [entry, fresh] = fanoutEntry(level);
                if (own)
                    ownFanout = entry;
                if (fresh)
                    undescribed_.push_back({candidates_.size(), level});
                fanouts[std::size_t(level)] = entry;
            });
            candidates_.push_back(c);
            candidateFanouts_.push_back(fanouts);
            return;
        }
        const i64 base = ext[d];
        // Tiles only grow with d's factor here: a factor known to overflow
        // (or to fit) answers for every larger (smaller) one, without the
        // tiles computed again (once per option, on the walk's serial part).
        i64 fitsUpTo = 0, overflowsFrom = std::numeric_limits<i64>::max();
        for (const auto& o : options[std::size_t(d)]) {
            const i64 x = usedX * o[1], y = usedY * o[2];
            if (x > room_[std::size_t(j)][0] || y > room_[std::size_t(j)][1])
                continue;
            const i64 factor = i64(o[0]) * o[1] * o[2];
            ext[d] = base * factor;
            // Tiles only grow with the dimensions still to choose.
            if (j > 0 && factor > fitsUpTo) {
                if (factor < overflowsFrom && !space_->overflows(j, ext, keep)) {
                    fitsUpTo = factor;
                } else {
                    overflowsFrom = std::min(overflowsFrom, factor);
                    prunedByFit_ += 1;
                    continue;
                }
            }
            c.t[d] = o[0];
            c.x[d] = o[1];
            c.y[d] = o[2];
            self(self, d + 1, x, y);
        }
        ext[d] = base;
    };
    descend(descend, 0, 1, 1);
    m_.levels[std::size_t(j)] = frame.before;
    remaining_ = frame.remainingBefore;
    boundChildren(frame);
    bounds_ += std::int64_t(candidates_.size());
    for (const LevelChoice& child : candidates_)
        if (!drop(child.bound))
            frame.children.push_back(child);
    std::stable_sort(frame.children.begin(), frame.children.end(),
                     [](const LevelChoice& a, const LevelChoice& b) { return a.bound < b.bound; });
}

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
    orders_->forEach(m_, [&](const Mapping& m) {
        if (ctx_->isKnown(m)) // evaluated already (by the first incumbent's search)
            return true;
        batch_.push_back(m);
        batchBound_.push_back(bound);
        return true;
    });
    if (batch_.size() >= batchSize_)
        flush();
}

void OptimalSearch::flush() {
    if (batch_.empty())
        return;
    costs_.resize(batch_.size());
    ctx_->evaluateBatch(batch_.data(), batch_.size(), costs_.data());
    std::size_t keep = 0; // candidates the budget left unevaluated stay open
    for (std::size_t i = 0; i < batch_.size(); ++i)
        if (std::isnan(costs_[i])) {
            batch_[keep] = batch_[i];
            batchBound_[keep++] = batchBound_[i];
        }
    batch_.resize(keep);
    batchBound_.resize(keep);
}

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
                for (double b : batchBound_)
                    open = std::min(open, b);
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
    if (batch_.empty())
        return true;
    for (double b : batchBound_) // the budget ran out among them
        open = std::min(open, b);
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
    batchSize_ = std::size_t(std::max(1.0, ctx.param("batch", 1024)));
    bound_ = std::make_unique<PartialBound>(*space_, objective);
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
    ctx.setStat("dataplacements", double(placements.size()));
    ctx.setStat("dataplacements_pruned", placementsPruned_);
    ctx.setStat("passes", passes_);
    ctx.setStat("bounds", double(bounds_));
    ctx.setStat("orders_tried", double(os.candidates));
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
                        : budget > 0 && ctx.evaluations() + bounds_ >= budget
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

} // namespace

std::unique_ptr<Searcher> makeOptimalSearch() {
    return std::make_unique<OptimalSearch>();
}

} // namespace mw
