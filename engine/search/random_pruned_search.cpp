// Timeloop's random-pruned mapper: draw a random index factorization (tile
// factors and keep choices); if it is illegal it costs one (illegal)
// evaluation, otherwise visit up to 16 random permutations of it in which loops
// of factor 1 have no place and the innermost level keeps one order. Stop after
// `victory` consecutive legal non-improving mappings or `timeout` consecutive
// illegal ones (Timeloop defaults: 16 permutations, victory 500, timeout 1000).
#include "search/searchers.h"

#include <algorithm>
#include <cmath>

namespace mw {

namespace {

class RandomPrunedSearch : public Searcher {
  public:
    void run(SearchContext& ctx) override {
        const int perms = int(ctx.countParam("permutations", 16, 1, 10'000));
        const auto victory = static_cast<std::int64_t>(ctx.param("victory", 500));
        const auto timeout = static_cast<std::int64_t>(ctx.param("timeout", 1000));
        const int factorizations = int(ctx.countParam("factorizations_per_batch", 16, 1, 10'000));
        const MapSpace& space = ctx.space();
        const int L = space.arch().numLevels();
        const int D = space.problem().numDims();
        int innermost = L - 1;
        while (innermost > 0 && !space.levelHasTemporal(innermost))
            --innermost;
        const std::size_t n = std::size_t(factorizations) * std::size_t(perms);
        std::vector<Mapping> factorized(static_cast<std::size_t>(factorizations));
        std::vector<char> legal(factorized.size());
        std::vector<Mapping> out(n);
        std::vector<double> costs(n);
        std::int64_t sinceImprovement = 0, illegalRun = 0;
        double runningBest = SearchContext::kInfinity;
        Evaluation scratch;
        while (!ctx.stopped()) {
            for (std::size_t f = 0; f < factorized.size(); ++f) {
                factorized[f] = space.sample(ctx.rng());
                legal[f] = space.isLegal(factorized[f], scratch); // order cannot change it
            }
            ctx.evaluateGenerated(
                n,
                [&](std::size_t i, Rng& rng, Mapping& m) {
                    const std::size_t f = i / std::size_t(perms);
                    if (!legal[f] && i % std::size_t(perms) != 0)
                        return false; // an illegal factorization is charged once
                    m = factorized[f];
                    for (int l = 0; l < L; ++l) {
                        const OrderConstraint& oc = space.constraints().levels[l].order;
                        if (!space.levelHasTemporal(l) || oc.fixes(D))
                            continue;
                        if (l == innermost) { // its order cannot matter: one canonical order
                            for (int k = 0; k < D; ++k)
                                m.levels[l].order[k] = static_cast<std::uint8_t>(k);
                        } else {
                            std::shuffle(m.levels[l].order.begin(), m.levels[l].order.begin() + D,
                                         rng);
                        }
                        oc.apply(m.levels[l].order, D);
                    }
                    return true; // duplicates (pruned equivalents) are not charged
                },
                out.data(), costs.data());
            for (std::size_t i = 0; i < n; ++i) {
                if (std::isnan(costs[i]))
                    continue;
                if (costs[i] >= SearchContext::kInfinity) {
                    ++illegalRun;
                    continue;
                }
                illegalRun = 0;
                if (costs[i] < runningBest) {
                    runningBest = costs[i];
                    sinceImprovement = 0;
                } else {
                    ++sinceImprovement;
                }
            }
            if (victory > 0 && sinceImprovement >= victory)
                ctx.stop("victory condition: " + std::to_string(victory) +
                         " consecutive mappings without improvement");
            if (timeout > 0 && illegalRun >= timeout)
                ctx.stop("timeout: " + std::to_string(timeout) + " consecutive illegal mappings");
        }
    }
};

} // namespace

std::unique_ptr<Searcher> makeRandomPrunedSearch() {
    return std::make_unique<RandomPrunedSearch>();
}

} // namespace mw
