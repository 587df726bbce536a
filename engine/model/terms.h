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
    // of dim) to rank `rank` (dimensions of bound 1 left out: they never move
    // a tile). Rank r's terms end at rankEnd[t][r].
    struct Term {
        int dim;
        int rank;
        i64 coef;
        i64 absCoef;
    };
    int count[kMaxTensors];
    Term term[kMaxTensors][kMaxRanks * kMaxTerms];
    int rankEnd[kMaxTensors][kMaxRanks];
    // Per tensor and dimension: how far one step of the dimension moves the
    // tensor's coordinates, per rank (lanes past the tensor's ranks are 0).
    i64 unit[kMaxTensors][kMaxDims][kMaxRanks];
    explicit Terms(const Problem& p);
};

} // namespace model_detail
} // namespace mw
