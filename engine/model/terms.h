#pragma once
// Internal to the cost model: a problem's projections in the two shapes the
// model reads them in, built once per problem (CostModel keeps them) so that
// no evaluation rebuilds them.
#include "common/limits.h"

#include <cstdint>

namespace mw {

struct Problem;

namespace model_detail {

using i64 = std::int64_t;

struct Terms {
    // Per tensor, as a flat list in rank order: a term adds coef x (coordinate
    // of dim) to lane `rank`. Dimensions of bound 1 are left out (they never
    // move a tile or widen it), and so are the ranks left without terms (a
    // convolution's N and G ranks at batch 1 and one group): their extent is
    // always 1. So the model's lanes are the tensor's live ranks, in rank
    // order, lanes[t] of them; lane r's terms end at rankEnd[t][r].
    struct Term {
        int dim;
        int rank; // lane
        i64 coef;
        i64 absCoef;
    };
    int count[kMaxTensors];
    Term term[kMaxTensors][kMaxRanks * kMaxTerms];
    int rankEnd[kMaxTensors][kMaxRanks];
    int lanes[kMaxTensors];
    int maxLanes = 0; // over the tensors
    // The model's passes run over a fixed number of lanes: kNarrowLanes where
    // every tensor fits (convolutions, GEMMs), else kMaxRanks. The tile pass
    // and the data movement must choose alike (the latter reads only the
    // lanes the former wrote).
    static constexpr int kNarrowLanes = 4;
    bool narrow() const { return maxLanes <= kNarrowLanes; }
    // Per tensor and dimension: how far one step of the dimension moves the
    // tensor's coordinates, per lane (lanes past lanes[t] are 0).
    i64 unit[kMaxTensors][kMaxDims][kMaxRanks];
    // The same where every dimension moves at most one lane of each tensor
    // (`oneLanePerDim`: convolutions, GEMMs, MTTKRP): the lane's coefficient
    // (0 for none) and an all-ones mask on that lane. A displacement is then
    // one scalar product masked into place, not a 64-bit vector multiply per
    // lane (which SSE2 builds of three 32-bit ones: 6 % of an evaluation).
    i64 unitCoef[kMaxTensors][kMaxDims];
    i64 unitMask[kMaxTensors][kMaxDims][kMaxRanks];
    bool oneLanePerDim = true;
    // Every tensor's terms in one list, tensor after tensor (t's are
    // flat[flatBegin[t] .. flatBegin[t + 1])): the one list the tile rule
    // reads (loop_nest.h), for a level's tiles in one pass or one tensor's.
    struct FlatTerm {
        int dim;
        int slot; // tensor x kMaxRanks + lane
        i64 absCoef;
    };
    FlatTerm flat[kMaxTensors * kMaxRanks * kMaxTerms];
    int numFlat = 0;
    int flatBegin[kMaxTensors + 1];
    // The same terms for the narrow tile pass where no lane has more than
    // two (`paired`: convolutions' sliding windows, GEMMs): per tensor and
    // lane, two terms, a missing one of coefficient 0. A fixed shape is
    // straight-line code with no add into memory to reload (perf: the flat
    // pass's adds, chained through store forwarding, took a fifth of the
    // tile pass).
    // An extent 1 + c0 (e0 - 1) + c1 (e1 - 1) is computed as c0 e0 + c1 e1 +
    // base, base = 1 - c0 - c1 (the same integer, two subtractions fewer).
    struct LanePair {
        int dim[2];
        i64 absCoef[2];
        i64 base = 1;
    };
    LanePair pair[kMaxTensors][kNarrowLanes]{};
    bool paired = false; // narrow(), every lane of at most two terms
    // The tiles of the outermost level of every legal mapping, whose factors
    // there multiply to the bounds: the whole tensors, as tileExtentsAll
    // writes them (loop_nest.h).
    i64 wholeExtent[kMaxTensors * kMaxRanks];
    i64 wholeSize[kMaxTensors];
    explicit Terms(const Problem& p);
};

} // namespace model_detail
} // namespace mw
