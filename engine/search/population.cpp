#include "search/searchers.h"

namespace mw {

std::vector<Mapping> initialMappings(SearchContext& ctx, std::size_t count) {
    const MapSpace& space = ctx.space();
    std::vector<Mapping> out;
    Evaluation scratch;
    for (Mapping m : ctx.settings().warmStart) {
        if (out.size() >= count)
            break;
        if (space.repair(m, ctx.rng(), scratch))
            out.push_back(m);
    }
    for (int attempt = 0; out.size() < count && attempt < 64 * int(count) + 64; ++attempt) {
        Mapping m;
        if (space.sampleLegal(ctx.rng(), m, scratch, 2000)) {
            out.push_back(m);
            continue;
        }
        m = space.sample(ctx.rng()); // rare legal points: repair a sample instead
        if (space.repair(m, ctx.rng(), scratch))
            out.push_back(m);
    }
    return out;
}

bool initialPopulation(SearchContext& ctx, std::size_t count, std::vector<Mapping>& pop,
                       std::vector<double>& fit) {
    pop = initialMappings(ctx, count);
    if (pop.empty()) {
        ctx.stop("no legal initial mapping found");
        return false;
    }
    fit.assign(pop.size(), 0.0);
    ctx.evaluateBatch(pop.data(), pop.size(), fit.data());
    return true;
}

} // namespace mw
