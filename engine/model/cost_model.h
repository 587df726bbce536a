#pragma once
// The analytical cost model. It follows Timeloop v0.4's semantics for dense
// tensor algebra and reproduces its reference outputs; see cost_model.cpp for
// the rules. evaluate() performs no heap allocation and no string work.
#include "mapping/mapping.h"
#include "model/evaluation.h"
#include "model/terms.h"
#include "model/tiles.h"

#include <memory>

namespace mw {

struct Problem;
struct Architecture;
struct Mapping;

// What one level's innermost loop hands down of one tensor over the run,
// before bypassed levels are collapsed (see data_movement.cpp): the part of
// an evaluation that a neighbouring mapping can reuse.
// (No member initializers: a cache entry's are written before they are read,
// and an evaluation without a cache keeps none.)
struct LevelDelivery {
    double distinctReads; // words read from the level for its children
    double delivered;     // words its children receive, multicast counted
    double share;         // of them, per child
    double linked;        // words children got over links
    std::int64_t distinctOffsets;
};

// What evaluations leave for the next ones, so that a mapping that differs
// from a recent one only at inner levels (a search's neighbour) is re-costed
// only there. Level par's delivery depends on the loops of levels 0..par, on
// the tile of level par + 1 and on whether that level keeps the tensor; for a
// legal mapping that tile is fixed by the outer factors. So a mapping whose
// levels 0..k are a kept one's takes its deliveries of the levels above k.
//
// A mapping whose factors are all a kept one's (a move of loop orders or
// keeps, by any searcher; every leaf of the optimal searcher but the first
// of its tiling) also takes its factor products and tiles, and of the
// legality pass only what orders and keeps decide is checked again.
//
// Two mappings are kept: a searcher's candidates are mostly neighbours of
// one mapping (its current one), which the last candidate is a move further
// from. A candidate reuses the entry it shares more with and replaces the
// other, so that the common parent stays.
namespace model_detail {
struct FanoutMemo;
struct FanoutMemoDeleter {
    void operator()(FanoutMemo* memo) const noexcept;
};
using FanoutMemoPtr = std::unique_ptr<FanoutMemo, FanoutMemoDeleter>;
FanoutMemoPtr makeFanoutMemo();
} // namespace model_detail

struct EvaluationCache {
    struct Entry {
        std::uint64_t model = 0; // CostModel::id() of the model that filled it; 0 when empty
        Mapping mapping;
        std::array<std::array<LevelDelivery, kMaxLevels>, kMaxTensors> deliveries{};
        model_detail::Factors factors; // (written before model is set, like the deliveries)
        model_detail::Tiles tiles;
    };
    std::array<Entry, 2> entries;
    std::int64_t evaluations = 0;   // through this cache
    std::int64_t levelsReused = 0;  // deliveries taken from it, over all tensors
    std::int64_t levelsCounted = 0; // deliveries computed
    std::int64_t tilesReused = 0;   // evaluations that took an entry's factors and tiles
    // The fan-outs last described (model/spatial_fanout.h), made with the
    // cache so that evaluating allocates nothing.
    model_detail::FanoutMemoPtr fanouts = model_detail::makeFanoutMemo();
};

// The model for one problem on one architecture, with what no mapping changes
// prepared once; both must outlive it. Searches and benchmarks hold one;
// the free functions below build one per call.
class CostModel {
  public:
    CostModel(const Problem& p, const Architecture& a);

    void evaluate(const Mapping& m, Evaluation& out) const;
    // The same, reusing what `cache` holds of the last mapping evaluated
    // through it, and leaving m's there. Exactly evaluate(m, out)'s result
    // (MAPWRIGHT_CHECK_INCREMENTAL=1 in the environment checks every call
    // against a full evaluation and aborts on a difference).
    void evaluate(const Mapping& m, Evaluation& out, EvaluationCache& cache) const;
    // Legality only; see isLegal() below.
    bool isLegal(const Mapping& m, Evaluation& scratch) const;
    // Words of the tiles keepMask names at a level whose tiles span ext[d]
    // coordinates of each dimension d (the product of the factors there and
    // inside), as the capacity check counts them: sparse tensors stored
    // compressed. (The map space's moves check buffers with it.)
    std::int64_t tileWords(const std::int64_t* ext, std::uint8_t keepMask) const;

    // Tells models apart for caches (copies share it: they compute the same).
    std::uint64_t id() const { return id_; }
    const Problem& problem() const { return *p_; }
    const Architecture& arch() const { return *a_; }

  private:
    const Problem* p_;
    const Architecture* a_;
    model_detail::Terms terms_;
    std::uint64_t id_;
    bool checkIncremental_ = false;
};

void evaluate(const Problem& p, const Architecture& a, const Mapping& m, Evaluation& out);
Evaluation evaluate(const Problem& p, const Architecture& a, const Mapping& m);

// Legality only (factor products, orders, fan-outs, capacities), without the
// costs: what a mapper checks before it spends an evaluation. `scratch` receives
// the violations.
bool isLegal(const Problem& p, const Architecture& a, const Mapping& m, Evaluation& scratch);

} // namespace mw
