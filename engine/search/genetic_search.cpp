// The standard genetic algorithm of the Mind Mappings baselines (DEAP):
// population 100, crossover probability 0.75, mutation probability 0.05.
// Genes are a mapping's attributes: each dimension's tiling, each level's loop
// order, each keep choice. Crossover is uniform over genes (swap with
// probability 0.5); mutation resets each gene with probability 0.05; parents
// come from 3-way tournaments; one elite survives (the paper states none of
// selection, tournament size or elitism, so these follow DEAP's eaSimple).
// Children are repaired (uncharged) before they are evaluated.
#include "search/operators.h"
#include "search/searchers.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace mw {

namespace {

class GeneticSearch : public Searcher {
  public:
    void run(SearchContext& ctx) override {
        const MapSpace& space = ctx.space();
        const auto popSize =
            static_cast<std::size_t>(ctx.countParam("population", 100, 2, kMaxPopulation));
        const double crossover = ctx.param("crossover", 0.75, 0.0, 1.0);
        const double mutation = ctx.param("mutation", 0.05, 0.0, 1.0);
        // (A tournament draws with replacement: any size up to a bound works.)
        const int tournament = int(ctx.countParam("tournament", 3, 1, 1000));
        const auto elites =
            static_cast<std::size_t>(ctx.countParam("elites", 1, 0, std::int64_t(popSize) - 1));
        const int L = space.arch().numLevels();
        const int D = space.problem().numDims();
        const int T = space.problem().numTensors();

        std::vector<Mapping> pop;
        std::vector<double> fit;
        if (!initialPopulation(ctx, popSize, pop, fit))
            return;
        std::vector<Mapping> children(popSize);
        std::vector<double> childFit(popSize);
        while (!ctx.stopped()) {
            const std::vector<std::size_t> rank = rankByCost(fit);
            ctx.evaluateGenerated(
                popSize,
                [&](std::size_t i, Rng& rng, Mapping& child) {
                    thread_local Evaluation scratch;
                    if (i < elites) { // elites pass unchanged (cached: not charged again)
                        child = pop[rank[i % rank.size()]];
                        return true;
                    }
                    auto pick = [&]() -> const Mapping& {
                        std::uniform_int_distribution<std::size_t> u(0, pop.size() - 1);
                        std::size_t best = u(rng);
                        for (int k = 1; k < tournament; ++k) {
                            const std::size_t c = u(rng);
                            if (fit[c] < fit[best])
                                best = c;
                        }
                        return pop[best];
                    };
                    const Mapping& mom = pick();
                    const Mapping& dad = pick();
                    child = mom;
                    if (rng.uniform() < crossover) {
                        for (int d = 0; d < D; ++d)
                            if (rng.uniform() < 0.5)
                                takeDimension(child, dad, d);
                        for (int l = 0; l < L; ++l) {
                            if (rng.uniform() < 0.5)
                                takeOrder(child, dad, l);
                            for (int t = 0; t < T; ++t)
                                if (rng.uniform() < 0.5)
                                    takeKeep(child, dad, l, t);
                        }
                    }
                    for (int d = 0; d < D; ++d)
                        if (rng.uniform() < mutation)
                            space.resampleDimension(child, d, rng);
                    for (int l = 0; l < L; ++l) {
                        if (rng.uniform() < mutation) {
                            std::shuffle(child.levels[l].order.begin(),
                                         child.levels[l].order.begin() + D, rng);
                            // A constrained order keeps its constrained places.
                            space.constraints().levels[l].order.apply(child.levels[l].order, D);
                        }
                        for (int t = 0; t < T; ++t)
                            if (l > 0 && rng.uniform() < mutation)
                                child.levels[l].setKeep(t, !child.levels[l].keeps(t));
                    }
                    if (space.isLegalQuick(child))
                        return true;
                    return space.repairFit(child, rng, scratch);
                },
                children.data(), childFit.data());
            // Generational replacement; withdrawn children keep their parent's slot.
            for (std::size_t i = 0; i < popSize && i < pop.size(); ++i)
                if (!std::isnan(childFit[i])) {
                    pop[i] = children[i];
                    fit[i] = childFit[i];
                }
        }
    }
};

} // namespace

std::unique_ptr<Searcher> makeGeneticSearch() {
    return std::make_unique<GeneticSearch>();
}

} // namespace mw
