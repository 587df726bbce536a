#pragma once
// What no completion of a partial tiling can beat, for the optimal searcher:
// levels from k inwards decided (their temporal and spatial factors, and every
// level's keep choices), the factors of the levels above and every loop order
// still open. See optimal_bound.cpp for each term and why it holds.
#include "mapspace/mapspace.h"
#include "model/loop_nest.h"
#include "search/search.h"

#include <array>
#include <limits>
#include <new>
#include <type_traits>
#include <vector>

namespace mw {

// A mapping made only if needed. (std::optional<Mapping> would do, but GCC 12
// zero-fills an empty optional's whole payload, 1.7 KB, where it is declared:
// a `rep stos` at every bound, about 1.5 % of a proof.)
class LazyMapping {
  public:
    LazyMapping() {} // (leaves the storage unmade)
    explicit operator bool() const { return made_; }
    void make(const Mapping& from) {
        ::new (static_cast<void*>(&storage_.m)) Mapping(from);
        made_ = true;
    }
    Mapping& operator*() { return storage_.m; }
    Mapping* operator->() { return &storage_.m; }

  private:
    static_assert(std::is_trivially_destructible_v<Mapping>);
    union Storage {
        Storage() {}
        Mapping m;
    } storage_;
    bool made_ = false;
};

namespace optimal_detail {

// One tensor's claim on the children sharing its words across the fan-outs
// the node leaves open: what its parent's accesses cost (energy, or words
// where a unit cost counts them) as a function of the words the parent
// serves (reach over the claim's sharing, at least every word the
// computation touches), and the most sharing it could have alone (logCap,
// natural log).
struct SharingClaim {
    double reach = 0.0;         // words the children fetch over the sharing decided elsewhere
    double touched = 0.0;       // words the parent serves at least
    double firstTouches = 0.0;  // (partial sums) words not read back, at most
    double perWord = 0.0;       // cost per word served (reads, or updates)
    double perWordBeyond = 0.0; // (partial sums) cost per word read back
    double logCap = 0.0;
    double costAt(double parentWords) const;
};
// A lower bound of the claims' least summed cost over every split of the
// sharing whose logs sum to at most logBudget (each within its own cap).
double leastJointCost(const SharingClaim* claims, int n, double logBudget);

} // namespace optimal_detail

class PartialBound {
  public:
    PartialBound(const MapSpace& space, const SearchObjective& objective);

    // A decided level's fan-out as each tensor sees it, described once when
    // the level is decided: its children, the distinct tile offsets among
    // them, and the translations between neighbouring children's tiles over
    // every spatial order the constraints allow (where link transfers can
    // act), each with the distinct offsets a link along it cannot serve (o
    // such that o + the translation is no child's offset, in any order).
    struct Fanout {
        model_detail::i64 fanout = 1;
        std::array<model_detail::i64, kMaxTensors> distinct{};
        std::array<std::vector<model_detail::Offset>, kMaxTensors> translations;
        std::array<std::vector<model_detail::i64>, kMaxTensors> unserved;
    };
    // m: levels from `level` inwards decided.
    void describeFanout(const Mapping& m, int level, Fanout& out) const;

    struct Value {
        double energy = 0.0; // pJ
        double cycles = 0.0;
        double objective = 0.0;
    };
    // For a node as at() takes it: the outermost level j <= k from which
    // every level's fan-out is fixed by the decided factors: each level of
    // [j, k) has its spatial factors decided and nothing left to place in the
    // levels between it and k, so the extents inside it (its spatial loops'
    // strides) are known.
    int describedFrom(int k, const std::int64_t* remaining, std::uint32_t spatialDecided) const;
    // m: levels from k inwards decided, the levels above holding only their
    // fixed factors, except that a level l above k whose bit is set in
    // spatialDecided holds its final spatial factors (the searcher may decide
    // the fan-outs before the tiling); remaining[d]: the product of d's free
    // factors still to place above k; fanouts[l]: describes level l of m for
    // every l >= describedFrom(k, remaining, spatialDecided). With a cutoff,
    // the bound may stop summing its terms once they reach it: the value is
    // then at or above the cutoff and at or below the full bound.
    Value at(const Mapping& m, int k, const std::int64_t* remaining, const Fanout* const* fanouts,
             double cutoff = std::numeric_limits<double>::infinity(),
             std::uint32_t spatialDecided = 0) const;
    // For a complete tiling m whose levels above `fixedAbove` hold their
    // final loop orders (temporal and spatial), and level fixedAbove the
    // innermost `suffix` of its real loops (those of m), the other orders
    // open: what no such ordering beats. A tensor's deliveries into a level
    // depend only on the loops above it, so those into the levels down to
    // fixedAbove, and the accesses they make, are any ordering's:
    // `completion` is one evaluated (m with any orders below). The rest are
    // bounded as at() bounds them, with the innermost loops known of each
    // level where they are. fanouts: as at() takes them for m at k = 0.
    // suffixMatters (if given): false where knowing more of level
    // fixedAbove's order cannot change the bound (every tensor whose first
    // class lies there meets a loop moving it among those known).
    Value withOrdersAbove(const Mapping& m, const Fanout* const* fanouts, int fixedAbove,
                          int suffix, const Evaluation& completion,
                          double cutoff = std::numeric_limits<double>::infinity(),
                          bool* suffixMatters = nullptr) const;

    // What at() assumes of fan-out j above level k that the node does not
    // describe (j < describedFrom) but whose spatial factors are known (m's):
    // the least share of t's distinct deltas there that link transfers may
    // leave to the parent at any step, whatever the extents inside it (1
    // where no link can act) ...
    double openLinkShareLeft(const Mapping& m, int k, const std::int64_t* remaining, int j,
                             int t) const;
    // ... and the most children that share each of t's words there.
    double openSharingMax(const Mapping& m, int j, int t) const;
    // The most children level l's fan-out can have, its spatial factors not
    // all decided: per axis, m's factors there times the largest product of
    // the prime factors still to place of the dimensions with a free slot on
    // that axis that the rest of the axis holds. (A spatial factor divides
    // its dimension: a 14 x 12 array without a factor 3 to place uses at
    // most 14 x 8 children.)
    double fanoutReach(const Mapping& m, const std::int64_t* remaining, int l,
                       std::uint32_t spatialDecided) const;
    // The dimensions whose spatial factors may share t's words at a fan-out
    // (the rest only tell children's offsets apart), given each dimension's
    // factor there or its most.
    std::uint32_t sharingDims(int t, const double* factor) const;

  private:
    // One node of boundOf: what it knows, and the bounds of its pairs'
    // deliveries (optimal_bound_node.h).
    struct Node;
    // A tensor's deliveries from keeper p to keeper c in boundOf, with what
    // its accesses depend on besides them.
    struct Pair {
        int t = 0, p = 0, c = 0;
        int end = -1; // the decided level settling t's first class above c (-1: none; kOpenLevels)
        bool rw = false;
        double linkShare = 1.0; // of the deliveries' distinct deltas, the least links leave to p
                                // (1: no link can act)
        double delivered = 0.0;
        double parentDelivered = 0.0; // deliveries times the share links leave to p, at least
        double sharing = 1.0;         // children sharing each word between p and c, at most
        double decidedSharing = 1.0;  // its part at fan-outs whose spatial factors are known
        double firstTouchesC = 0.0, firstTouchesP = 0.0;
    };
    // The open fan-outs' sharing split among the pairs crossing all of them
    // (optimal_bound_sharing.cpp): adds to energy, and to reads[l] and
    // writes[l] of each bandwidth-limited parent, what the least split costs
    // beyond what the pairs were charged alone.
    void addJointSharing(const Mapping& m, const std::int64_t* remaining,
                         std::uint32_t spatialDecided, std::uint32_t openFanouts,
                         const double* levelFanoutMax, const Pair* pairs, int n, double& energy,
                         double* reads, double* writes) const;
    // Whether level l of the node has a free spatial slot for d (an X or a
    // Y factor), unless its spatial factors are decided.
    std::uint32_t spatialSlots(int l, int d, std::uint32_t spatialDecided) const {
        return (spatialDecided >> l) & 1u
                   ? 0u
                   : slotKinds_[std::size_t(l)][std::size_t(d)] & (kXSlot | kYSlot);
    }
    // pJ of `words` accesses to level l over all its instances, at
    // perVector a vector: a cluster's access serves up to clusterSize of them.
    double energyOf(int l, double words, double perVector) const;
    // at(), trusting `fanouts` only from describedAtLeast on at most (a node
    // completed by placeForced keeps its caller's descriptions).
    // With a completion, as withOrdersAbove (k = 0).
    Value boundOf(const Mapping& m, int k, const std::int64_t* remaining,
                  const Fanout* const* fanouts, double cutoff, std::uint32_t spatialDecided,
                  int describedAtLeast, const Evaluation* completion = nullptr, int fixedAbove = 0,
                  int suffix = 0, bool* suffixMatters = nullptr) const;
    // Whether d may loop at level l of the node (levels from k decided): l
    // holds a factor of d, or is open with a temporal slot for what is left.
    bool mayLoopAt(const Mapping& m, int k, const std::int64_t* remaining, int l, int d) const;
    // Whether d may loop above level c of the node.
    bool loopsAbove(const Mapping& m, int k, const std::int64_t* remaining, int c, int d) const;
    // Whether two dimensions of one of t's coordinates may both loop above c.
    bool strideRepeatPossible(const Mapping& m, int k, const std::int64_t* remaining, int c,
                              int t) const;
    // ext[l][d] for l from `lowest` to L: the extents inside level l (the
    // factors of levels l and below), ext[L] all 1.
    void extentsFrom(const Mapping& m, int lowest, model_detail::i64 (*ext)[kMaxDims]) const;
    // placeForced's outcome: nothing placed; some dimensions placed; all
    // placed; or no completion at all.
    enum class Forced { None, Some, All, Impossible };
    // Places in `placed` what is left of each dimension that only one open
    // level (one with a temporal slot and no spatial one) can take by
    // capacity (`placed` is made only if something is), and what is then
    // left in `left`; Impossible where some dimension fits nowhere or an
    // open level overflows already. `ext` holds m's extentsFrom(m, 0), and
    // still does where nothing is placed (else those of `placed`).
    Forced placeForced(const Mapping& m, int k, const std::int64_t* remaining,
                       std::uint32_t spatialDecided, model_detail::i64 (*ext)[kMaxDims],
                       LazyMapping& placed, std::array<std::int64_t, kMaxDims>& left) const;

    const MapSpace& space_;
    const Problem& p_;
    const Architecture& a_;
    SearchObjective objective_;
    model_detail::Terms terms_;
    std::array<double, kMaxTensors> touched_{};
    std::array<double, kMaxTensors> size_{};       // words of each tensor
    std::array<bool, kMaxTensors> rankDisjoint_{}; // no dimension in two ranks
    // d is the only term of one of t's ranks; of every rank of t it indexes.
    std::array<std::array<bool, kMaxDims>, kMaxTensors> ownRank_{}, onlyOwnRanks_{};
    // Per level and dimension: a free slot for a temporal factor, an X or a
    // Y factor (bit 1 << MapSpace::Slot::kind).
    std::vector<std::array<std::uint8_t, kMaxDims>> slotKinds_;
    static constexpr std::uint32_t kTemporalSlot = 1u, kXSlot = 2u, kYSlot = 4u;
    Fanout unitFanout_; // a level without a fan-out, described
    bool negativeCoefficient_ = false;
};

} // namespace mw
