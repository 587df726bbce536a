#pragma once
// One node of PartialBound::boundOf (optimal_bound.h): what the node knows of
// the extents, fan-outs and instances of its completions, and the bounds it
// derives from them of each tensor's deliveries between two keepers, their
// sharing and the links' share (optimal_bound_node.cpp). boundOf adds up
// the accesses and cycles those bounds imply (optimal_bound.cpp); the file
// header of optimal_bound.cpp gives the rules.
#include "search/optimal_bound.h"

#include <array>
#include <cstdint>

namespace mw {

struct PartialBound::Node {
    using i64 = model_detail::i64;

    // The node at() takes (m, k, remaining, fanouts, spatialDecided; see
    // there), once placeForced has placed nothing, with ext made
    // (extentsFrom(m, 0)); fixedAbove, suffix: the known orders, as
    // withOrdersAbove takes them (0 and 0 without a completion);
    // describedAtLeast: as boundOf takes it.
    Node(const PartialBound& bound, const Mapping& m, int k, const std::int64_t* remaining,
         const Fanout* const* fanouts, std::uint32_t spatialDecided, const i64 (*ext)[kMaxDims],
         int describedAtLeast, int fixedAbove, int suffix);

    // Of t's distinct deltas at described fan-out j (child j + 1), the least
    // share links may leave to the parent over any step (without zeroMoves:
    // over the translations that are not zero only).
    double linkShareLeft(int j, int t, bool zeroMoves = true) const;
    // The least share of t's deliveries to keeper c that links may leave to
    // the parent (1: no link can act).
    double linkShareInto(int c, int t) const;
    // Children sharing each word between p and c, at most (`decidedPart`:
    // the share of the fan-outs whose spatial factors are known).
    double sharingMax(int p, int c, int t, double* decidedPart = nullptr) const;
    // First touches over all instances of l (read-write tensors), at most.
    double firstTouchesMax(int l, int t) const;
    // At most, the spatial factors of d above level c.
    double spatialAbove(int c, int d) const;
    // Every word an instance of c holds, fetched once, over c's instances
    // (e: the tile's extents on t's ranks, from tileExtents).
    double coverAt(int c, int t, const i64* e) const;
    // May a step repeat the stride of a first class that is a loop of d at
    // level `at` above c?
    bool twinsPossible(int c, int t, int d, int at) const;
    // Deliveries to decided child c < L, over all its instances, at least;
    // `end`: the decided level settling t's first class (-1: none;
    // kOpenLevels); with innermost >= 0, only the orders whose innermost
    // loop there is over that dimension; with parentMin, also the least of
    // the deliveries times the share links may leave to the parent.
    // (Keeps what it reads of c's tile, and notes suffixOpen.)
    double deliveriesTo(int c, int t, int innermost = -1, int* end = nullptr,
                        double* parentMin = nullptr);
    // `end` where the walk goes on into the levels not decided.
    static constexpr int kOpenLevels = -2;

    const PartialBound& bound;
    const Mapping& m;
    const int k;
    const std::int64_t* const remaining;
    const Fanout* const* const fanouts;
    const std::uint32_t spatialDecided;
    const int L, D;
    const i64 (*const ext)[kMaxDims]; // boundOf's
    const int fixedAbove;
    // Per level, its innermost real loops whose order is known (innermost
    // first): every one above fixedAbove, the innermost `suffix` there.
    std::array<int, kMaxLevels> innerKnown{};
    std::array<std::array<std::uint8_t, kMaxDims>, kMaxLevels> innerLoops;
    // Fan-outs described from level `described` on; the extents inside each
    // are known (those of levels from described + 1 on).
    int described = 0;
    // Spatial factors above k: the fixed (or decided) ones, and the most the
    // free ones can add.
    double fixedSpatialAbove = 1.0, freeSpatialMax = 1.0;
    std::array<bool, kMaxDims> temporalAbove{}; // d may have a temporal loop above k
    std::array<double, kMaxDims> spatialAboveMax{};
    std::array<double, kMaxLevels> levelFanoutMax{};
    std::array<bool, kMaxLevels> spatialKnown{}; // level l's spatial factors are m's
    // Utilized instances of each level: bounds.
    std::array<double, kMaxLevels + 1> instLB{}, instUB{};
    // Whether some pair's walk ends at level fixedAbove without meeting a
    // loop that moves its tensor among those known there.
    bool suffixOpen = false;

  private:
    // What deliveriesTo reads of child c's tile of t, whichever innermost
    // loop it is asked about (once per dimension for the joint orders):
    // made at the first call.
    struct ChildTile {
        bool ready = false;
        i64 e[kMaxRanks];
        double tile, N, cover;
    };
    const ChildTile& childTile(int c, int t);
    std::array<std::array<ChildTile, kMaxTensors>, kMaxLevels + 1> childTiles;

    std::uint32_t spatialSlots(int l, int d) const {
        return bound.spatialSlots(l, d, spatialDecided);
    }
    bool loopsAbove(int c, int d) const { return bound.loopsAbove(m, k, remaining, c, d); }
    bool strideRepeatPossible(int c, int t) const {
        return bound.strideRepeatPossible(m, k, remaining, c, t);
    }
};

} // namespace mw
