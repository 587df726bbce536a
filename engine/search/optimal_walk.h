#pragma once
// Internal to the optimal searcher: the walk's state and steps, shared by
// optimal_search.cpp (the passes, the proof), optimal_children.cpp (a
// node's children: their factors, fan-outs and bounds) and
// optimal_leaf_orders.cpp (a complete tiling's loop orders).
#include "mapspace/mapspace.h"
#include "model/cost_model.h"
#include "search/optimal_bound.h"
#include "search/optimal_orders.h"
#include "search/search.h"

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace mw::optimal_detail {

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
    // A complete tiling of this bound: its loop orders wait for a batch.
    void leaf(double bound);
    // The waiting tilings' orders, walked on the run's threads; the orderings
    // that beat the incumbent go to the record. Left waiting once stopped.
    void flush();
    // One plan of a tiling's candidate orders (OrderCandidates::forEachPlan).
    struct OrderTask {
        Mapping m;
        OrderCandidates::Lists lists;
        std::array<const PartialBound::Fanout*, kMaxLevels> fanouts; // the tiling's
        double bound;                                                // the tiling's
    };
    // Per worker: the ordering in hand, its evaluation, and counts.
    struct OrderScratch {
        Mapping m;
        Evaluation e;
        EvaluationCache cache;
        std::int64_t evaluations = 0, bounds = 0;
        double pruned = 0; // orderings below a bound that pruned them
    };
    // Walks task's orderings as a tree, outer levels first, a node's subtree
    // dropped where withOrdersAbove reaches the cutoff; each ordering below
    // the cutoff lowers it and is appended to `found`.
    void walkOrders(const OrderTask& task, OrderScratch& s, double& cutoff,
                    std::vector<Mapping>& found) const;
    // One pass over the nodes below the threshold; false when stopped (by the
    // budget, or after maxLeaves tilings), with open the least bound left
    // unvisited.
    bool walk(const std::vector<Placement>& placements, double& open, double maxLeaves = kNoLimit);
    double best() const { return ctx_->bestCost(); }
    // A node is visited while its bound is below this.
    double limit() const { return useBound_ ? std::min(threshold_, best()) : kNoLimit; }
    // The budget, with each bound computed counted as an evaluation, and
    // each evaluation of the order walks.
    bool stopped() const {
        const std::int64_t budget = ctx_->settings().budget.evaluations;
        return ctx_->stopped() ||
               (budget > 0 && ctx_->evaluations() + bounds_ + orderEvaluations_ >= budget);
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
    bool orderBound_ = true; // a tiling's orderings walked as a tree (walkOrders)
    double minOrderingsBounded_ = 3;
    // Per level: whether the loops of the level inside it may join its own
    // (the merge rule in generate; no loop order constrained here).
    std::vector<char> mergeable_;
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
    // A fan-out's description depends on its level, its spatial factors and
    // their strides (the extents of the level inside), nothing else: each is
    // described once in the whole walk, where many nodes share it. (Hashed:
    // a child is looked up per bound, so no string, no allocation, no
    // ordering. Node-based: the pointers fanouts_ holds survive a rehash.)
    std::unordered_map<FanoutKey, PartialBound::Fanout, FanoutKeyHash> fanoutCache_;

    std::vector<std::array<std::uint8_t, kMaxDims>> slots_; // bit kind: a free slot
    std::vector<std::array<i64, 2>> room_;                  // per level: free X, Y room
    std::array<int, kMaxDims> lastLevel_{};                 // d's outermost free slot
    std::array<int, kMaxDims> lastTemporal_{}; // d's outermost free temporal slot; -1: none
    std::unique_ptr<CostModel> model_;         // the order walks' (the driver's are its own)
    std::vector<OrderTask> tasks_;             // waiting for a batch
    double waitingOrders_ = 0;                 // their orderings
    std::vector<std::unique_ptr<OrderScratch>> orderScratch_;
    std::vector<std::vector<Mapping>> found_; // per task, in a batch
    std::vector<Mapping> batch_;              // a batch's orderings for the record
    std::vector<std::size_t> batchTask_;      // each one's task
    std::vector<CandidateNote> batchNotes_;
    std::vector<Mapping> generated_; // (the driver's copies of batch_)
    // The divisors of each number asked (few: products of a layer's bounds).
    std::unordered_map<i64, std::vector<i64>> divisors_;
    const std::vector<i64>& divisors(i64 n);
    std::vector<std::vector<std::array<std::uint32_t, 3>>> options_; // generate's, reused
    std::vector<std::vector<LevelChoice>> spareChildren_;            // popped frames'
    std::vector<double> costs_;
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
    double prunedByMerge_ = 0;
    double passes_ = 0, placementsPruned_ = 0;
    std::int64_t bounds_ = 0;           // bounds computed
    std::int64_t orderEvaluations_ = 0; // by the order walks
    double ordersPruned_ = 0;
};

// Per tensor coordinate indexed by several dimensions (bound above 1), every
// one of them but the largest: the sliding dimensions placed first.
std::uint32_t slidingDimensions(const Problem& p);

} // namespace mw::optimal_detail
