#pragma once
// What a level's loop orders can change in the model's counts, for a mapping
// whose tile factors and keep choices are fixed: the facts the optimal
// searcher prunes orders by (see order_effects.cpp for the argument).
#include "common/limits.h"

#include <array>
#include <cstdint>
#include <vector>

namespace mw {

struct Problem;
struct Architecture;
struct Mapping;

// A temporal order's signature at one level: its innermost real loop (factor
// above 1), and for each tensor that loop does not move, the set of real
// loops innermost at the level that do not move it either (the run a child's
// tile of that tensor stays put over). Dimensions as bits.
struct OrderSignature {
    int first = -1; // dimension of the innermost real loop; -1 when the level has none
    std::array<std::uint32_t, kMaxTensors> run{}; // 0 for the tensors `first` moves
    bool operator==(const OrderSignature&) const = default;
};

// order: outer to inner (LevelMapping::order); real: the dimensions with a
// factor above 1; tensors: the tensors to describe (bit t).
OrderSignature orderSignature(const Problem& p, const std::array<std::uint8_t, kMaxDims>& order,
                              std::uint32_t real, std::uint8_t tensors);
// a costs at most what b costs wherever orders act only through signatures:
// the same innermost loop, and every run of a a superset of b's.
bool signatureDominates(const OrderSignature& a, const OrderSignature& b);

struct TemporalOrderEffects {
    std::uint8_t tensors = 0;     // tensors whose counts the order can change (none: any order)
    bool beyondSignature = false; // it can change them other than through its signature
};
// For each level l of m whose bit is set in `levels` (its factors, keeps and
// spatial orders as given, the temporal orders anything): effects[l], for
// l < numLevels (the others' left empty). All at once: the loops above each
// child and its fan-out's translations serve every level above it.
void temporalOrderEffects(const Problem& p, const Architecture& a, const Mapping& m,
                          std::uint32_t levels, TemporalOrderEffects* effects);

// Per tensor, the translations between grid neighbours of one level's
// children in every order of its spatial loops (what
// model_detail::neighbourTranslationsAnyOrder gives).
using AnyOrderTranslations =
    std::array<std::vector<std::array<std::int64_t, kMaxRanks>>, kMaxTensors>;

// Whether the order of level's spatial loops can change any count (it decides
// which children are grid neighbours, which only link transfers look at).
// A caller that keeps level's translations (they depend only on its spatial
// factors and their strides) may give them.
bool spatialOrderMatters(const Problem& p, const Architecture& a, const Mapping& m, int level,
                         const AnyOrderTranslations* translations = nullptr);

// Whether level l + 1's temporal loops act, in every count, as level l's
// innermost loops would: l + 1 keeps nothing (it has no tile, access or
// transfer of its own) and l has no spatial loops (so nothing lies between
// the two), and either the two levels loop over different dimensions (so
// l's order can take l + 1's loops whole, innermost) or each loops over one
// and the same dimension only (two adjacent loops of it, one loop of their
// product). The optimal searcher's merge rule rests on it.
bool loopsJoinLevelAbove(const Mapping& m, int l, int numDims);

} // namespace mw
