#pragma once
// Internal to the cost model: a mapping unrolled into the loop nest that
// Timeloop's nest analysis walks, and the per-tensor data movement it counts.
// Fixed-size, so that building it allocates nothing.
#include "common/limits.h"
#include "model/cost_model.h"
#include "model/terms.h"
#include "model/tiles.h"

#include <array>
#include <cstdint>
#include <vector>

namespace mw {

struct Problem;
struct Architecture;
struct Mapping;
struct Evaluation;

namespace model_detail {

using i64 = std::int64_t;

// The nest, innermost loop first, as Timeloop builds it from a mapping: per
// storage level (innermost first) its spatial loops (X loops innermost, then
// Y loops), then its temporal loops; loops of factor 1 are left out.
struct LoopNest {
    struct Loop {
        int dim;
        i64 factor;
        i64 stride; // coordinate step of one iteration: product of the factors inside
    };
    Loop temporal[kMaxLevels * kMaxDims]; // non-unit temporal loops, innermost first
    int numTemporal = 0;
    // The temporal loops above level l's own loops (levels < l) are
    // temporal[firstAbove[l] .. numTemporal).
    int firstAbove[kMaxLevels + 1];
    i64 suffixProduct[kMaxLevels * kMaxDims + 1]; // product of the factors of loops i, i+1, ...
    i64 computeCycles = 1;                        // product of all temporal factors

    // Spatial loops of level l (its fan-out to its children) in nest order.
    // (Room for an X and a Y loop per dimension: the build writes before it
    // knows whether a loop is kept, and an illegal split has both.)
    Loop spatial[kMaxLevels][2 * kMaxDims];
    int numSpatial[kMaxLevels];
    int numSpatialX[kMaxLevels]; // the first numSpatialX[l] loops are on X
    i64 gridX[kMaxLevels];       // Timeloop's grid of children: max(physical, logical) per axis
    i64 gridY[kMaxLevels];
};

// The tile rule, for terms [first, last) of Terms::flat: each term widens
// its lane (slot - base in e) by |coef| x (ext[dim] - 1). One flat pass over
// the terms (most lanes have one): fewer instructions than a loop per lane
// around a loop over its terms.
inline void widenByTerms(const Terms::FlatTerm* first, const Terms::FlatTerm* last, int base,
                         const i64* ext, i64* e) {
    for (; first != last; ++first)
        e[first->slot - base] += first->absCoef * (ext[first->dim] - 1);
}

// A tile of tensor t whose dimensions span ext[d] coordinates: the bounding
// box, its extent per lane (Terms: a live rank) in e, its words returned.
inline i64 tileExtents(const Terms& terms, int t, const i64* ext, i64* e) {
    const int lanes = terms.lanes[t];
    for (int r = 0; r < lanes; ++r)
        e[r] = 1;
    widenByTerms(terms.flat + terms.flatBegin[t], terms.flat + terms.flatBegin[t + 1],
                 t * kMaxRanks, ext, e);
    i64 words = 1;
    for (int r = 0; r < lanes; ++r)
        words *= e[r];
    return words;
}

// tileExtents for every tensor at once, one pass over all terms: extents
// in e, tensor after tensor (kMaxRanks lanes each), and words in size. Only
// the first W lanes of each tensor are written, those past its live ranks
// 1: W is the data movement's (Terms::narrow), and no reader goes past it.
template <int W>
inline void tileExtentsAllOn(const Terms& terms, int numTensors, const i64* ext, i64* e,
                             i64* size) {
    for (int t = 0; t < numTensors; ++t)
        for (int r = 0; r < W; ++r)
            e[t * kMaxRanks + r] = 1;
    widenByTerms(terms.flat, terms.flat + terms.numFlat, 0, ext, e);
    for (int t = 0; t < numTensors; ++t) {
        i64 half[2] = {1, 1}; // (two half products: a shorter chain of multiplies)
        for (int r = 0; r < W; ++r)
            half[2 * r / W] *= e[t * kMaxRanks + r];
        size[t] = half[0] * half[1];
    }
}

// tileExtents where the terms are paired (Terms::pair): the extents of
// tensor t's kNarrowLanes lanes in e, its words returned.
inline i64 pairedTileWords(const Terms& terms, int t, const i64* ext, i64* e) {
    static_assert(Terms::kNarrowLanes == 4, "the words below multiply four lanes");
    for (int r = 0; r < Terms::kNarrowLanes; ++r) {
        const Terms::LanePair& q = terms.pair[t][r];
        e[r] = q.absCoef[0] * ext[q.dim[0]] + q.absCoef[1] * ext[q.dim[1]] + q.base;
    }
    return (e[0] * e[1]) * (e[2] * e[3]);
}

// tileExtentsAllOn<kNarrowLanes> where the terms are paired (Terms::pair).
inline void tileExtentsPaired(const Terms& terms, int numTensors, const i64* ext, i64* e,
                              i64* size) {
    for (int t = 0; t < numTensors; ++t)
        size[t] = pairedTileWords(terms, t, ext, e + t * kMaxRanks);
}

inline void tileExtentsAll(const Terms& terms, int numTensors, const i64* ext, i64* e, i64* size) {
    if (terms.paired)
        tileExtentsPaired(terms, numTensors, ext, e, size);
    else if (terms.narrow())
        tileExtentsAllOn<Terms::kNarrowLanes>(terms, numTensors, ext, e, size);
    else
        tileExtentsAllOn<kMaxRanks>(terms, numTensors, ext, e, size);
}

void buildLoopNest(const Problem& p, const Architecture& a, const Mapping& m, const Factors& f,
                   LoopNest& nest);

// The factors of m as the legality pass computes them; false when its factor
// products or orders are malformed (fan-outs and capacities are not checked).
bool factorize(const Problem& p, const Architecture& a, const Mapping& m, Factors& f);

// A translation in one tensor's coordinates, per lane (Terms; lanes past its
// live ranks 0).
using Offset = std::array<i64, kMaxRanks>;

// Tensor t's distinct child offsets across level l's fan-out (the parent
// reads one delta per distinct offset; fanout / distinct children share each).
i64 distinctChildOffsets(const Terms& terms, const LoopNest& nest, int level, int t, i64 fanout);
// The translations between the tiles of grid-neighbouring children of level
// l's fan-out (either way round, each once): a link transfer hands a delta to
// a neighbour only when the tile moved by one of them (see data_movement.cpp).
void neighbourTranslations(const Problem& p, const Terms& terms, const LoopNest& nest, int level,
                           int t, i64 fanout, std::vector<Offset>& out);
// The same over every order of each axis's spatial loops at level l of m (the
// spatial orders a search may choose; X loops sit inside Y loops whatever
// their order together), each translation once.
void neighbourTranslationsAnyOrder(const Problem& p, const Architecture& a, const Mapping& m,
                                   const Factors& f, const Terms& terms, int level, int t,
                                   std::vector<Offset>& out);

// Reads, fills and updates per instance of every level that keeps tensor t,
// as Timeloop 0fc43fb's nest analysis and tile collapse count them (see
// data_movement.cpp). Tiles (`tile`, `kept`) must already be set in `out`.
// deliveries[0 .. reuse) are taken as they are; the rest are counted and
// written there (deliveries may be null where reuse is 0: nothing is kept). With a memo, fan-outs
// it describes are taken from it and the others described there.
void countDataMovement(const Problem& p, const Architecture& a, const Mapping& m, const Factors& f,
                       const Terms& terms, const Tiles& tiles, const LoopNest& nest, int t,
                       LevelDelivery* deliveries, int reuse, FanoutMemo* memo, Evaluation& out);

} // namespace model_detail
} // namespace mw
