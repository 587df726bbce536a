#pragma once
// Recombination on mappings that keeps factor products exact: a child takes a
// dimension's whole allocation (every level's temporal and spatial factors),
// a level's loop order, or a keep choice from one parent.
#include "mapping/mapping.h"
#include "search/search.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace mw {

inline void takeDimension(Mapping& child, const Mapping& parent, int d) {
    for (int l = 0; l < child.numLevels; ++l) {
        child.levels[l].temporal[d] = parent.levels[l].temporal[d];
        child.levels[l].spatialX[d] = parent.levels[l].spatialX[d];
        child.levels[l].spatialY[d] = parent.levels[l].spatialY[d];
    }
}

inline void takeOrder(Mapping& child, const Mapping& parent, int l) {
    child.levels[l].order = parent.levels[l].order;
    child.levels[l].spatialOrder = parent.levels[l].spatialOrder;
}

inline void takeKeep(Mapping& child, const Mapping& parent, int l, int t) {
    child.levels[l].setKeep(t, parent.levels[l].keeps(t));
}

// Population indices, best first; unevaluated (NaN) costs count as infinite.
// Ties go to the lower index (as a stable sort orders them). With `first`,
// only that many are put in order; the rest follow in no particular order.
inline std::vector<std::size_t> rankByCost(std::vector<double>& cost,
                                           std::size_t first = std::size_t(-1)) {
    for (double& c : cost)
        if (std::isnan(c))
            c = SearchContext::kInfinity;
    std::vector<std::size_t> rank(cost.size());
    std::iota(rank.begin(), rank.end(), 0);
    const auto better = [&](std::size_t a, std::size_t b) {
        return cost[a] < cost[b] || (cost[a] == cost[b] && a < b);
    };
    std::partial_sort(rank.begin(), rank.begin() + std::ptrdiff_t(std::min(first, rank.size())),
                      rank.end(), better);
    return rank;
}

} // namespace mw
