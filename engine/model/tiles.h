#pragma once
// Internal to the cost model: what a mapping's factors alone decide, before
// any loop order is looked at (the legality pass's products and every level's
// tiles). Plain arrays, so that an evaluation cache can keep them.
#include "common/limits.h"

#include <cstdint>

namespace mw::model_detail {

using i64 = std::int64_t;

// Per-level factor products, filled by the legality pass.
struct Factors {
    i64 ext[kMaxLevels + 1][kMaxDims]; // coordinates of d covered inside level l (l included)
    i64 fanout[kMaxLevels];            // spatial factors of level l, all dimensions
    bool hasTemporal[kMaxLevels];      // level l has a temporal factor above 1
    // The dimensions with a spatial factor above 1 at level l, as bits, on X
    // and on Y (where level l fans out; else 0).
    std::uint32_t spatialDims[kMaxLevels][2];
};

// Tiles of every tensor at every level, kept or not (Timeloop analyses them
// all and removes the bypassed ones afterwards): extents per lane, and words.
struct Tiles {
    // tileExtentsAll's: per tensor, kMaxRanks lanes of which the data
    // movement's W are written, those past the tensor's live ranks 1.
    i64 extent[kMaxLevels][kMaxTensors * kMaxRanks];
    i64 size[kMaxLevels][kMaxTensors];
    const i64* extentOf(int l, int t) const { return extent[l] + t * kMaxRanks; }
};

} // namespace mw::model_detail
