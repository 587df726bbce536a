#pragma once
// Searching a whole network: every layer with one searcher, identical layers
// searched once, optionally warm-started from the finished layer most like the
// next one (the map-space study's replay buffer), with network totals.
#include "search/search.h"
#include "workload/presets.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mw {

struct LayerOutcome {
    std::string name;
    int sameAs = -1;     // index of the identical layer searched instead, or -1
    int warmFrom = -1;   // index of the layer whose mapping seeded this search
    SearchResult result; // for a repeated layer: the searched layer's result
    LowerBound bound;
};

struct NetworkOutcome {
    std::vector<LayerOutcome> layers;
    double energy = 0.0; // pJ, all layers
    double cycles = 0.0; // layers run one after another
    double edp = 0.0;    // J x cycles of the whole network
    std::int64_t evaluations = 0;
    double seconds = 0.0;
    int uniqueLayers = 0;
    bool cancelled = false;
};

struct NetworkSearchOptions {
    std::string searcher = "gamma";
    SearchSettings settings; // budget per unique layer
    bool warmStart = false;
    // Map-space constraints for every layer, resolved against each layer's
    // dimension and tensor names (see constraintsFromJson); empty: none.
    std::function<MapSpaceConstraints(const Problem&)> constraints;
    // Per layer, a mapping to start from before any other (a neighbouring
    // design point's, in a sweep); repaired by the searcher where needed.
    std::vector<std::optional<Mapping>> layerSeeds;
};

// How a layer's result came about, for tables: "same as L" (a repeated layer),
// "warm from L", or empty.
std::string layerNote(const NetworkOutcome& n, std::size_t layer);

// Whether two layers are the same problem (dimensions, bounds, tensors and
// their coordinates): a network searches such layers once.
bool sameShape(const Problem& a, const Problem& b);

// Per-dimension mismatch count between two problems of the same kind; -1 when
// their dimensions or tensors differ (not comparable).
int shapeDistance(const Problem& a, const Problem& b);

// The map-space study's warm start: keep a finished layer's orders, fan-out
// dimensions and keep choices; keep its tile factors from the innermost level
// outwards while they still divide the new bounds, and put what is left at the
// outermost level. The result may still need repair.
Mapping transferMapping(const Mapping& from, const Problem& fromProblem, const Problem& to,
                        const Architecture& a);

using LayerProgressFn = std::function<void(int layer, const SearchProgress&)>;

NetworkOutcome searchNetwork(const Network& net, const Architecture& a,
                             const NetworkSearchOptions& options,
                             const LayerProgressFn& progress = {},
                             const std::atomic<bool>* cancel = nullptr);

} // namespace mw
