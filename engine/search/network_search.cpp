#include "search/network_search.h"

#include "model/cost_model.h"

#include <algorithm>
#include <chrono>

namespace mw {

bool sameShape(const Problem& a, const Problem& b) {
    if (a.numDims() != b.numDims() || a.numTensors() != b.numTensors())
        return false;
    for (int d = 0; d < a.numDims(); ++d)
        if (a.dims[d].name != b.dims[d].name || a.dims[d].bound != b.dims[d].bound)
            return false;
    for (int t = 0; t < a.numTensors(); ++t) {
        const DataSpace &x = a.tensors[t], &y = b.tensors[t];
        if (x.name != y.name || x.numRanks != y.numRanks || x.readWrite != y.readWrite)
            return false;
        for (int r = 0; r < x.numRanks; ++r) {
            if (x.ranks[r].numTerms != y.ranks[r].numTerms)
                return false;
            for (int i = 0; i < x.ranks[r].numTerms; ++i)
                if (x.ranks[r].terms[i].dim != y.ranks[r].terms[i].dim ||
                    x.ranks[r].terms[i].coef != y.ranks[r].terms[i].coef)
                    return false;
        }
    }
    return true;
}

std::string layerNote(const NetworkOutcome& n, std::size_t layer) {
    const LayerOutcome& l = n.layers[layer];
    if (l.sameAs >= 0)
        return "same as " + n.layers[static_cast<std::size_t>(l.sameAs)].name;
    if (l.warmFrom >= 0)
        return "warm from " + n.layers[static_cast<std::size_t>(l.warmFrom)].name;
    return "";
}

int shapeDistance(const Problem& a, const Problem& b) {
    if (a.numDims() != b.numDims() || a.numTensors() != b.numTensors())
        return -1;
    int mismatches = 0;
    for (int d = 0; d < a.numDims(); ++d) {
        if (a.dims[d].name != b.dims[d].name)
            return -1;
        mismatches += a.dims[d].bound != b.dims[d].bound;
    }
    for (int t = 0; t < a.numTensors(); ++t)
        if (a.tensors[t].name != b.tensors[t].name)
            return -1;
    return mismatches;
}

Mapping transferMapping(const Mapping& from, const Problem& fromProblem, const Problem& to,
                        const Architecture& a) {
    Mapping m = from;
    const int L = a.numLevels();
    for (int d = 0; d < to.numDims(); ++d) {
        if (fromProblem.dims[d].bound == to.dims[d].bound)
            continue;
        const std::int64_t bound = to.dims[d].bound;
        std::int64_t kept = 1;
        // Innermost first: spatial factors of a level sit inside its temporal loop.
        for (int l = L - 1; l >= 0; --l)
            for (auto* f :
                 {&m.levels[l].spatialY[d], &m.levels[l].spatialX[d], &m.levels[l].temporal[d]}) {
                // The largest divisor of what is left that does not exceed the old factor.
                const std::int64_t rest = bound / kept;
                std::int64_t g = std::min<std::int64_t>(*f, rest);
                while (g > 1 && rest % g != 0)
                    --g;
                *f = static_cast<std::uint32_t>(std::max<std::int64_t>(1, g));
                kept *= *f;
            }
        // What is left goes to the outermost level.
        m.levels[0].temporal[d] =
            static_cast<std::uint32_t>(m.levels[0].temporal[d] * (bound / kept));
    }
    return m;
}

NetworkOutcome searchNetwork(const Network& net, const Architecture& a,
                             const NetworkSearchOptions& options, const LayerProgressFn& progress,
                             const std::atomic<bool>* cancel) {
    NetworkOutcome out;
    const auto t0 = std::chrono::steady_clock::now();
    std::chrono::steady_clock::duration inProgressCalls{};
    std::vector<Problem> problems;
    for (const auto& l : net.layers)
        problems.push_back(buildProblem(l));
    struct Finished {
        int layer;
        Mapping mapping;
    };
    std::vector<Finished> replay;
    for (std::size_t i = 0; i < problems.size(); ++i) {
        LayerOutcome lo;
        lo.name = net.layers[i].name;
        lo.bound = lowerBound(problems[i], a, options.settings.objective);
        for (std::size_t j = 0; j < i; ++j)
            if (out.layers[j].sameAs < 0 && sameShape(problems[i], problems[j])) {
                lo.sameAs = static_cast<int>(j);
                lo.result = out.layers[j].result;
                break;
            }
        if (lo.sameAs < 0 && !(cancel && cancel->load())) {
            SearchSettings s = options.settings;
            s.seed = options.settings.seed + 7919 * static_cast<std::uint64_t>(i);
            if (i < options.layerSeeds.size() && options.layerSeeds[i])
                s.warmStart.push_back(*options.layerSeeds[i]);
            if (options.warmStart) {
                int bestDistance = 1 << 30;
                const Finished* source = nullptr;
                for (const auto& f : replay) { // ties: the most recent
                    const int dist = shapeDistance(problems[f.layer], problems[i]);
                    if (dist >= 0 && dist <= bestDistance) {
                        bestDistance = dist;
                        source = &f;
                    }
                }
                if (source) {
                    s.warmStart.push_back(
                        transferMapping(source->mapping, problems[source->layer], problems[i], a));
                    lo.warmFrom = source->layer;
                }
            }
            const MapSpace space(problems[i], a,
                                 options.constraints ? options.constraints(problems[i])
                                                     : MapSpaceConstraints{});
            // (The time in the caller's callback is not the search's: a pause.)
            lo.result = runSearch(space, options.searcher, s,
                                  progress ? ProgressFn([&, i](const SearchProgress& p) {
                                      const auto called = std::chrono::steady_clock::now();
                                      progress(int(i), p);
                                      inProgressCalls += std::chrono::steady_clock::now() - called;
                                  })
                                           : ProgressFn(),
                                  cancel);
            out.evaluations += lo.result.evaluations;
            out.cancelled = out.cancelled || lo.result.cancelled;
            ++out.uniqueLayers;
            if (lo.result.found)
                replay.push_back({static_cast<int>(i), lo.result.best});
        }
        if (lo.result.found) {
            out.energy += lo.result.bestEvaluation.energy;
            out.cycles += double(lo.result.bestEvaluation.cycles);
        }
        out.layers.push_back(std::move(lo));
    }
    out.edp = out.energy * 1e-12 * out.cycles;
    out.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0 - inProgressCalls)
            .count();
    return out;
}

} // namespace mw
