#pragma once
// The space of legal mappings of a problem onto an architecture. Each
// dimension's bound is split by allocating its prime factors to slots (a
// level's temporal loop, or its X or Y fan-out), so every move keeps the
// products exact. Each level has a loop order, and keeps or bypasses each
// tensor. User constraints narrow the space. It is Timeloop's mapper's space:
// one spatial factor per dimension and level, and each level's spatial
// factors within its own fan-out (the model, like timeloop-model, also
// accepts mappings that borrow fan-out the levels above leave unused).
#include "arch/architecture.h"
#include "mapping/mapping.h"
#include "mapspace/constraints.h"
#include "model/cost_model.h"
#include "model/evaluation.h"
#include "workload/problem.h"

#include <array>
#include <cstdint>
#include <random>
#include <vector>

namespace mw {

// xoshiro256** seeded through splitmix64: cheap to seed, so every candidate
// of a parallel batch can have its own stream derived from (seed, index) and
// runs reproduce whatever the thread count.
class Rng {
  public:
    using result_type = std::uint64_t;
    explicit Rng(std::uint64_t seed = 1);
    static Rng stream(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0);
    static constexpr result_type min() { return 0; }
    static constexpr result_type max() { return ~result_type(0); }
    // Inline: searchers draw about 30 numbers per candidate; out of line,
    // the calls cost 0.8 % of GAMMA's instructions (callgrind, conv3_x/Eyeriss).
    result_type operator()() {
        const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
        const std::uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }
    double uniform() { return double((*this)() >> 11) * 0x1.0p-53; } // [0, 1)
    // Uniform in [0, n), n > 0 (Lemire's multiply-shift; bias below 2^-40 here).
    std::uint64_t below(std::uint64_t n) {
        return static_cast<std::uint64_t>((static_cast<unsigned __int128>((*this)()) * n) >> 64);
    }
    template <typename It> void shuffle(It first, It last) {
        for (auto n = last - first; n > 1; --n)
            std::swap(first[n - 1], first[static_cast<std::ptrdiff_t>(below(std::uint64_t(n)))]);
    }

  private:
    static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    std::uint64_t s_[4];
};

std::vector<std::int64_t> primeFactors(std::int64_t n);
// The divisors of n > 0, ascending.
std::vector<std::int64_t> divisorsOf(std::int64_t n);

// log10 of the number of choices along each axis of the space.
struct MapSpaceSize {
    double tiling = 0.0;      // temporal factor allocations
    double parallelism = 0.0; // the extra choices fan-outs add
    double order = 0.0;       // loop permutations
    double bypass = 0.0;      // keep/bypass choices
    double total() const { return tiling + parallelism + order + bypass; }
};

// A mapping's canonical hash (MapSpace::hash) and each level's share of it.
struct MappingHash {
    std::uint64_t value = 0;
    std::array<std::uint64_t, kMaxLevels> levels{};
};

class MapSpace {
  public:
    MapSpace(const Problem& p, const Architecture& a, MapSpaceConstraints c = {});

    const Problem& problem() const { return *problem_; }
    const Architecture& arch() const { return *arch_; }
    // The cost model of this problem on this architecture, prepared once.
    const CostModel& model() const { return model_; }
    const MapSpaceConstraints& constraints() const { return constraints_; }

    // Puts every fixed factor, keep choice and constrained loop order of the
    // constraints into m (and keeps all at the outermost level, nothing at
    // dummy levels).
    void applyFixed(Mapping& m) const;
    // A random mapping that honours the constraints (it may still overflow a buffer).
    Mapping sample(Rng& rng) const;
    // Rejection sampling: a mapping that is legal, or false after maxTries.
    bool sampleLegal(Rng& rng, Mapping& out, Evaluation& scratch, int maxTries = 100000) const;

    // Constraints respected, fan-outs within each level, and the model finds
    // no violation (costs not computed).
    bool isLegal(const Mapping& m, Evaluation& scratch) const;
    bool meetsConstraints(const Mapping& m) const;
    // What the space asks beyond the model: the constraints, and each level's
    // spatial factors within its own fan-out (the model, as timeloop-model,
    // accepts more). A candidate outside it is illegal for every searcher.
    bool withinSpace(const Mapping& m) const { return meetsConstraints(m) && fanoutsFit(m); }
    // The same answer as isLegal for mappings whose factors sit in the space's
    // slots with exact products and whose loop orders are permutations
    // (everything sample, the moves and repair produce):
    // constraints, fan-outs and buffer capacities, counted directly without
    // running the model. The search loops call it for every candidate.
    bool isLegalQuick(const Mapping& m) const;
    // isLegalQuick(m) for m made from `parent`, which passes it, by moves
    // that keep every dimension's factor product (all of the space's do):
    // only the fan-outs of levels whose factors changed, and the buffers
    // whose tiles or keeps changed, are checked. (Debug builds assert the
    // answer against isLegalQuick.)
    bool isLegalQuickFrom(const Mapping& parent, const Mapping& m) const;

    // Neighbour moves; each returns false when it found nothing to change.
    bool moveTileFactor(Mapping& m, Rng& rng) const;  // one prime factor to another slot
    bool swapLoops(Mapping& m, Rng& rng) const;       // two loops of one level
    bool moveParallelism(Mapping& m, Rng& rng) const; // a prime into or out of a fan-out
    bool toggleBypass(Mapping& m, Rng& rng) const;    // keep <-> bypass at one level
    // GAMMA's growth and aging on a fixed hierarchy: fill an unused fan-out
    // axis with one dimension's primes from the temporal loops at or above it,
    // or fold all of one level's spatial factors back into its temporal loops.
    bool growParallelism(Mapping& m, Rng& rng) const;
    bool dropParallelism(Mapping& m, Rng& rng) const;
    bool randomMove(Mapping& m, Rng& rng) const; // one of the above

    // Turns any mapping into a nearby legal one: restores constraints and
    // factor products, then moves factors outwards until fan-outs and buffers fit.
    bool repair(Mapping& m, Rng& rng, Evaluation& scratch) const;
    // The second half of repair, for mappings whose factor products and orders
    // are intact (as for isLegalQuick): fan-outs, buffers, minimum utilization.
    bool repairFit(Mapping& m, Rng& rng, Evaluation& scratch) const;
    // Moves primes from over-full fan-outs to the temporal loops above them
    // (no tile grows, so no buffer overflows that did not before), then
    // answers as isLegalQuick.
    bool fixFanoutsThenCheck(Mapping& m, Rng& rng) const;
    // The same, then over-full buffers as repairFit fits them (primes move out
    // past the level, innermost level first): the cheap way to a legal child
    // of recombination. Answers as isLegalQuick.
    bool fitThenCheck(Mapping& m, Rng& rng) const;

    // Loops of factor 1 have no place in the order; the canonical form fixes
    // them, so equal mappings hash equally.
    Mapping canonical(const Mapping& m) const;
    std::uint64_t hash(const Mapping& m) const; // of the canonical form
    // The same hash with each level's share of it, so that a mapping one
    // move away from another is hashed over the levels the move changed:
    // rehash(from, hash of from, m) gives hashLevels(m), hashing only the
    // levels where m and from differ (searchers that walk from a mapping
    // keep its MappingHash).
    void hashLevels(const Mapping& m, MappingHash& out) const;
    void rehash(const Mapping& from, const MappingHash& fromHash, const Mapping& m,
                MappingHash& out) const;

    MapSpaceSize size() const;

    // The keep choices the constraints leave free, as (level, tensor): levels
    // that hold tiles (neither the outermost, which keeps every tensor, nor a
    // dummy level).
    std::vector<std::pair<int, int>> freeKeepChoices() const;

    // Slots a prime factor of dimension d may go to.
    struct Slot {
        std::int8_t level;
        std::int8_t kind; // 0 temporal, 1 X, 2 Y
    };
    const std::vector<Slot>& factorSlots(int d) const { return slots_[d]; }
    // Prime factors of d's bound left free by the constraints (one per slot choice).
    const std::vector<std::uint32_t>& freePrimes(int d) const { return freePrimes_[d]; }
    // Inline: every sampler, move and decode calls them per prime.
    static std::uint32_t& factorAt(Mapping& m, int d, Slot s) {
        LevelMapping& lm = m.levels[std::size_t(s.level)];
        return s.kind == 0   ? lm.temporal[std::size_t(d)]
               : s.kind == 1 ? lm.spatialX[std::size_t(d)]
                             : lm.spatialY[std::size_t(d)];
    }
    static std::uint32_t factorAt(const Mapping& m, int d, Slot s) {
        return factorAt(const_cast<Mapping&>(m), d, s);
    }

    // Words of the tiles keepMask names at a level whose per-dimension extents
    // (product of the factors there and inside) are ext: the model's count
    // (CostModel::tileWords).
    std::int64_t tileWords(const std::int64_t* ext, std::uint8_t keepMask) const {
        return model_.tileWords(ext, keepMask);
    }
    // Whether those tiles overflow the level (multiple buffering counted; an
    // unbounded level never overflows).
    bool overflows(int level, const std::int64_t* ext, std::uint8_t keepMask) const;
    // The innermost level whose tile (the factors of it and the levels below)
    // overflows it, or -1.
    int innermostOverflow(const Mapping& m) const;
    // Multiplies ext (the extents of the tiles inside level) by level's
    // factors: the extents of level's tiles. innermostOverflow and fitBuffers
    // call it from the innermost level outwards.
    void growTileExtents(const Mapping& m, int level, std::int64_t* ext) const;

    // Spreads the factors of dimension d randomly over its slots.
    void resampleDimension(Mapping& m, int d, Rng& rng) const;
    // Whether level l may have temporal loops (a dummy level has none).
    // Inline: the moves' tile checks ask per level.
    bool levelHasTemporal(int l) const { return arch_->levels[l].cls != LevelClass::Dummy; }

  private:
    std::uint64_t levelShare(const LevelMapping& lm, int l) const; // level l's share of hash
    // sample() in two steps: factors and keep choices, then loop orders.
    // With stopAtFullFanout, false as soon as a fan-out is overfilled (m is then unfinished).
    bool drawTiling(Rng& rng, Mapping& m, bool stopAtFullFanout = false) const;
    void drawOrders(Rng& rng, Mapping& m) const;
    // One outward pass that moves primes out of every over-full buffer (false:
    // a level overflows with tiles of size one and nothing it may bypass).
    bool fitBuffers(Mapping& m, Rng& rng) const;
    bool fanoutsFit(const Mapping& m) const;
    bool constraintsHold(const Mapping& m) const; // meetsConstraints, for factors in slots
    void fixFanouts(Mapping& m, Rng& rng) const;  // moves primes from over-full fan-outs outwards
    bool raiseParallelism(Mapping& m,
                          Rng& rng) const; // one temporal prime into a fan-out with room
    int nearestTemporalAbove(int l) const; // a level at or above l that may hold temporal loops

    const Problem* problem_;
    const Architecture* arch_;
    CostModel model_;
    MapSpaceConstraints constraints_;
    std::vector<std::vector<Slot>> slots_; // per dimension, free slots
    // A plain struct, not std::pair: arrays of it are not zeroed on every call.
    struct DimSlot {
        int d;
        Slot s;
    };
    // Per level, the free slots at or inside it, by dimension then slot order:
    // the factors an over-full buffer there may send out (fitBuffers).
    std::vector<std::vector<DimSlot>> slotsInside_;
    std::vector<std::int64_t> freeBound_;                // bound divided by fixed factors
    std::vector<std::vector<std::uint32_t>> freePrimes_; // prime factors of freeBound_
    std::vector<int> movableDims_;                       // free primes, more than one slot
    bool unconstrained_ = true;                        // no user constraint at all: a faster check
    std::vector<char> fansOut_;                        // per level: any fan-out below it
    std::vector<int> fanningLevels_;                   // the levels that fan out
    std::vector<int> fanX_, fanY_;                     // per level: fan-out on each axis
    std::vector<std::array<std::int64_t, 2>> fanRoom_; // per level and axis: room for free primes
    Mapping trivial_{};                                // all factors 1, the start of every sample
};

} // namespace mw

namespace mw {

// Why the space holds no legal mapping, or an empty reason when one was
// found. Fixed spatial factors beyond a fan-out, or a tensor a level must
// keep whose smallest tile (every free factor as far out as it may go)
// overflows it, are proven; otherwise `draws` sampled and repaired mappings
// are tried, and finding none proves nothing.
struct EmptySpace {
    std::string reason; // empty: a legal mapping exists
    bool proven = false;
};
EmptySpace whyNoLegalMapping(const MapSpace& space, int draws = 2000);

} // namespace mw
