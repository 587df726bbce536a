#pragma once
// A mapping: per storage level, the temporal loops (a factor per dimension and
// their order), the spatial loops that fan out to the level's children (a factor
// per dimension and mesh axis), and which tensors the level keeps. It is a plain
// fixed-size value so searchers can copy and mutate it freely.
#include "common/limits.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace mw {

struct Problem;
struct Architecture;

struct LevelMapping {
    std::array<std::uint32_t, kMaxDims> temporal{};
    std::array<std::uint32_t, kMaxDims> spatialX{};
    std::array<std::uint32_t, kMaxDims> spatialY{};
    std::array<std::uint8_t, kMaxDims> order{};        // temporal loops, outer to inner
    std::array<std::uint8_t, kMaxDims> spatialOrder{}; // spatial loops, outer to inner
    std::uint8_t keepMask = 0;                         // bit t: tensor t is kept here

    bool keeps(int t) const { return (keepMask >> t) & 1u; }
    void setKeep(int t, bool keep);
};

// The dimensions with a temporal loop (factor above 1) at lm, as bits.
inline std::uint32_t temporalLoops(const LevelMapping& lm, int numDims) {
    std::uint32_t loops = 0;
    for (int d = 0; d < numDims; ++d)
        loops |= std::uint32_t(lm.temporal[std::size_t(d)] > 1) << d;
    return loops;
}

// The dimensions of `loops` as `order` (outer to inner) has them, innermost
// first; the rest 0xff.
inline std::array<std::uint8_t, kMaxDims>
innermostFirst(const std::array<std::uint8_t, kMaxDims>& order, std::uint32_t loops, int numDims) {
    std::array<std::uint8_t, kMaxDims> inner;
    inner.fill(0xff);
    std::size_t k = 0;
    for (int i = numDims - 1; i >= 0; --i)
        if ((loops >> order[std::size_t(i)]) & 1u)
            inner[k++] = order[std::size_t(i)];
    return inner;
}

struct Mapping {
    std::array<LevelMapping, kMaxLevels> levels{};
    int numLevels = 0;
};

// to = from over the levels in use. A Mapping holds kMaxLevels levels, and
// copying the unused ones is a measurable part of breeding and sampling (both
// copy a mapping per candidate they try). Levels past numLevels are never
// read, and within one search they stay as every mapping there is made: default.
inline void copyLevelsInUse(Mapping& to, const Mapping& from) {
    to.numLevels = from.numLevels;
    std::copy(from.levels.begin(), from.levels.begin() + from.numLevels, to.levels.begin());
}

// Level comparisons, each over fields that lie side by side without padding
// (layout asserted below): the cost model's cache compares every level at
// every evaluation, and the searchers' hashes from a parent every level of
// every candidate. A loop over the arrays or-ing differences compiles to a
// scalar compare per factor (about 90 instructions for the factors), and a
// memcmp call to about 25 plus the call (4 % of an annealing run's time, perf);
// the words xor-ed and or-ed below are about 35, vector, with no branch.
namespace level_layout {
inline constexpr std::size_t kFactorBytes = 3 * kMaxDims * sizeof(std::uint32_t);
inline constexpr std::size_t kOrderBytes = 2 * kMaxDims;
static_assert(std::is_standard_layout_v<LevelMapping> && offsetof(LevelMapping, temporal) == 0 &&
              offsetof(LevelMapping, spatialY) + sizeof(LevelMapping::spatialY) == kFactorBytes &&
              offsetof(LevelMapping, order) == kFactorBytes &&
              offsetof(LevelMapping, spatialOrder) == kFactorBytes + kMaxDims &&
              offsetof(LevelMapping, keepMask) == kFactorBytes + kOrderBytes);

// Whether the N bytes at a and b are equal (N a multiple of 4).
template <std::size_t N> inline bool sameBytes(const unsigned char* a, const unsigned char* b) {
    static_assert(N % 4 == 0, "whole words");
    std::uint64_t diff = 0;
    std::size_t i = 0;
    for (; i + 8 <= N; i += 8) {
        std::uint64_t u, v;
        std::memcpy(&u, a + i, 8);
        std::memcpy(&v, b + i, 8);
        diff |= u ^ v;
    }
    for (; i < N; i += 4) {
        std::uint32_t u, v;
        std::memcpy(&u, a + i, 4);
        std::memcpy(&v, b + i, 4);
        diff |= u ^ v;
    }
    return diff == 0;
}
inline const unsigned char* bytesOf(const LevelMapping& lm) {
    return reinterpret_cast<const unsigned char*>(&lm);
}
} // namespace level_layout

// Whether two levels have the same temporal and spatial factors (their
// orders and keeps aside).
inline bool sameFactors(const LevelMapping& a, const LevelMapping& b) {
    using namespace level_layout;
    return sameBytes<kFactorBytes>(bytesOf(a), bytesOf(b));
}

// Whether two levels have the same temporal and spatial loop orders.
inline bool sameOrders(const LevelMapping& a, const LevelMapping& b) {
    // (From the level's own bytes: the orders span two arrays.)
    using namespace level_layout;
    return sameBytes<kOrderBytes>(bytesOf(a) + kFactorBytes, bytesOf(b) + kFactorBytes);
}

// Whether two levels are the same in every field.
inline bool sameLevel(const LevelMapping& a, const LevelMapping& b) {
    using namespace level_layout;
    return sameBytes<kFactorBytes + kOrderBytes>(bytesOf(a), bytesOf(b)) &&
           a.keepMask == b.keepMask;
}

// Whether two mappings are the same over the levels in use.
inline bool sameMapping(const Mapping& a, const Mapping& b) {
    if (a.numLevels != b.numLevels)
        return false;
    for (int l = 0; l < a.numLevels; ++l)
        if (!sameLevel(a.levels[std::size_t(l)], b.levels[std::size_t(l)]))
            return false;
    return true;
}

// All factors 1, identity loop order, every tensor kept at every real level
// (dummy levels keep nothing).
Mapping makeTrivialMapping(const Problem& p, const Architecture& a);

// A loop as shown to people: "for K in [0:16)" or "for C in [0:4) (Spatial-X)".
struct LoopView {
    int dim;
    std::uint32_t factor;
    enum Kind { Temporal, SpatialX, SpatialY } kind;
};
// Non-unit loops of one level, outer to inner: temporal loops, then spatial.
std::vector<LoopView> levelLoops(const Problem& p, const Mapping& m, int level);
std::string loopText(const Problem& p, const LoopView& loop);

// The whole nest in Timeloop's textual form, one header per level listing the
// tile each kept tensor occupies. `tiles[l][t]` is optional (from an evaluation).
std::string renderLoopNest(const Problem& p, const Architecture& a, const Mapping& m,
                           const std::vector<std::vector<std::int64_t>>& tiles = {});

} // namespace mw
