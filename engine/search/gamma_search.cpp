// GAMMA (Kao & Krishna, ICCAD 2020) as its Timeloop port runs it on a
// level-by-level map space (the port the map-space study used):
//   population 100 (for 10,000 samples; smaller budgets: about 1.1 sqrt(budget), at
//   least 20); parents = the best 15 % (GAMMA's code, parents_ratio; the port
//   uses 50 %, which on the conv1d small space found the optimum within 2,000
//   samples on 28 of 40 seeds against 40 of 40, and on ResNet-50/Accel-B ended
//   no better: measured); elites max(1, 5 %) survive;
//   3 % of each generation are fresh random mappings (injection: a few
//   uniform draws, else a random mapping repaired; an injected child costs
//   about twice a model evaluation. 10 %, 5 %, 3 % and 2 % ended alike at
//   5,000 evaluations (geomean of 60-seed medians over nine ResNet-50 layers
//   47.2 at 5 %, 46.9 at 3 %, 47.3 at 2 %), each found the conv1d optimum on
//   40 of 40 seeds, and 3 % had the lowest conv3_x/Eyeriss median at 100,000:
//   measured);
//   per child: crossover with probability 1 in the first generation and 0.5
//   after (one gene type: a dimension's tiling, the loop orders, the
//   parallelism, or the keep choices), then mutate-order 0.1, mutate-
//   parallelism 0.1, mutate-bypass 0.5, mutate-level 0.1 (swap two levels'
//   tiles; 0.5 made most of the illegal children, 0 ended worse: measured),
//   mutate-tile 1.0 (re-scatter one dimension's factors, or move one prime
//   factor); then the child is fitted (fit 2): fan-outs it overfills give
//   their excess primes to the temporal loops above, and buffers it
//   overfills, innermost first, send primes out past them. (Re-breeding
//   illegal children instead, about 0.9 per child on conv3_x/Eyeriss even
//   with fan-outs fitted (fit 1), cost more than the model call; fitting them
//   was 7 % faster there and lowered the geomean of 60-seed medians at 5,000
//   evaluations over nine ResNet-50 layers on Accel-B and Eyeriss from 49.2
//   to 47.2: measured.)
//   A child seen before (or one fitting cannot make legal) is bred again, up
//   to 4 times, each retry with one more random move, then repaired (seen
//   children are not charged but still cost their breeding: a converged
//   population otherwise breeds mostly copies; 4 retries cut them from about
//   half the children to 5 % on conv3_x/Eyeriss, and lowered the ResNet-50/
//   Accel-B medians: measured).
// GAMMA's growth and aging add and drop a parallel level of its variable-depth
// genome (its code: 0.57 and 0.27). On a fixed hierarchy they become filling an
// unused fan-out axis and folding a level's fan-out back into time ("growth",
// "aging"); the port has neither and on ResNet-50/Accel-B they did not lower
// the median EDP at 5,000 evaluations (measured), so both default to 0.
// All rates are parameters; the paper itself uses 0.5 for every operator and a
// population of 200 (pass them to reproduce it).
#include "search/operators.h"
#include "search/searchers.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace mw {

namespace {

class GammaSearch : public Searcher {
  public:
    void run(SearchContext& ctx) override {
        const MapSpace& space = ctx.space();
        // The port runs 100 x 100 for 10,000 samples; smaller budgets get a smaller
        // population (about 1.1 sqrt of the budget, 20..100) so they still see generations.
        const std::int64_t budget = ctx.settings().budget.evaluations;
        const double autoPop =
            budget > 0 ? std::clamp(std::round(1.12 * std::sqrt(double(budget))), 20.0, 100.0)
                       : 100.0;
        // (Shares and rates in [0, 1]; the population within what memory holds.)
        const auto popSize = static_cast<std::size_t>(
            ctx.countParam("population", std::int64_t(autoPop), 4, kMaxPopulation));
        const double parentsRatio = ctx.param("parents", 0.15, 0.0, 1.0);
        const double eliteRatio = ctx.param("elite", 0.05, 0.0, 0.5);
        const double injection = ctx.param("injection", 0.03, 0.0, 0.5);
        const double crossFirst = ctx.param("crossover_first", 1.0, 0.0, 1.0);
        const double cross = ctx.param("crossover", 0.5, 0.0, 1.0);
        const double pOrder = ctx.param("mutate_order", 0.1, 0.0, 1.0);
        const double pPar = ctx.param("mutate_parallelism", 0.1, 0.0, 1.0);
        const double pGrow = ctx.param("growth", 0.0, 0.0, 1.0);
        const double pAge = ctx.param("aging", 0.0, 0.0, 1.0);
        const double pBypass = ctx.param("mutate_bypass", 0.5, 0.0, 1.0);
        const double pLevel = ctx.param("mutate_level", 0.1, 0.0, 1.0);
        const double pTile = ctx.param("mutate_tile", 1.0, 0.0, 1.0);
        const double pRescatter = ctx.param("tile_rescatter", 0.25, 0.0, 1.0);
        // 0: re-breed every illegal child; 1: fit its fan-outs; 2: its fan-outs and buffers.
        const int fitChildren = int(ctx.countParam("fit", 2, 0, 2));
        const bool novelty = ctx.param("novelty", 1) != 0; // re-vary children seen before
        const int varyAttempts = int(ctx.countParam("vary_attempts", 4, 1, 1000));
        // Uniform draws keep injection unbiased; a repaired draw is biased
        // towards small inner tiles. (One try instead of 8 is 9 % faster on
        // conv3_x/Eyeriss but ends worse on ResNet-50/Accel-B: measured.)
        const int injectionTries = int(ctx.countParam("injection_tries", 8, 1, 1'000'000));
        const int L = space.arch().numLevels();
        const int D = space.problem().numDims();
        const int T = space.problem().numTensors();
        std::vector<int> temporalLevels;
        for (int l = 0; l < L; ++l)
            if (space.levelHasTemporal(l))
                temporalLevels.push_back(l);
        std::vector<int> tileDims;
        for (int d = 0; d < D; ++d)
            if (space.factorSlots(d).size() > 1)
                tileDims.push_back(d);

        std::vector<Mapping> pop;
        std::vector<double> fit;
        if (!initialPopulation(ctx, popSize, pop, fit))
            return;
        const std::size_t elites = std::max<std::size_t>(1, std::size_t(eliteRatio * popSize));
        const std::size_t fresh = std::size_t(injection * popSize);
        const std::size_t nChildren = popSize - elites;
        // Children are bred in place in next, behind room for the elites, so
        // the next population costs few copies of these large structs (the
        // serial part between parallel batches).
        std::vector<Mapping> next(popSize);
        std::vector<double> nextFit(popSize);
        // Each member's hash by level: a child differs from its first parent
        // in the levels crossover and mutation changed, and only those are
        // hashed (the hash then goes to the driver with the child).
        const bool deduplicate = ctx.settings().deduplicate;
        std::vector<MappingHash> popHash, nextHash;
        if (deduplicate) {
            popHash.resize(pop.size());
            for (std::size_t i = 0; i < pop.size(); ++i)
                space.hashLevels(pop[i], popHash[i]);
        }
        int generation = 0;
        while (!ctx.stopped()) {
            next.resize(popSize);
            nextFit.resize(popSize);
            if (deduplicate)
                nextHash.resize(popSize);
            const std::size_t parents = std::max<std::size_t>(
                2, std::min(pop.size(), std::size_t(parentsRatio * pop.size())));
            // Only the parents and elites need an order (a full sort of the
            // population is a measurable part of the serial step between batches).
            std::vector<std::size_t> rank = rankByCost(fit, std::max(parents, elites));
            const double pCross = generation == 0 ? crossFirst : cross;
            // Returns the child's first parent (its index in pop).
            auto vary = [&](Rng& rng, Mapping& child) {
                // (Rng::below: cheaper than std::uniform_int_distribution.)
                const std::size_t dadAt = rank[rng.below(parents)];
                const Mapping& dad = pop[dadAt];
                const Mapping& mom = pop[rank[rng.below(parents)]];
                copyLevelsInUse(child, dad);
                if (rng.uniform() < pCross) {
                    switch (rng.below(4)) {
                    case 0: // tiling of one dimension, at every level
                        if (!tileDims.empty())
                            takeDimension(child, mom, tileDims[rng.below(tileDims.size())]);
                        break;
                    case 1: // loop orders of every level
                        for (int l = 0; l < L; ++l)
                            takeOrder(child, mom, l);
                        break;
                    case 2: // parallelism: the dimensions mom spreads spatially
                        for (int d = 0; d < D; ++d) {
                            bool spatial = false;
                            for (int l = 0; l < L; ++l)
                                spatial = spatial || mom.levels[l].spatialX[d] > 1 ||
                                          mom.levels[l].spatialY[d] > 1;
                            if (spatial)
                                takeDimension(child, mom, d);
                        }
                        break;
                    default: // keep choices
                        for (int l = 1; l < L; ++l)
                            for (int t = 0; t < T; ++t)
                                takeKeep(child, mom, l, t);
                    }
                }
                if (rng.uniform() < pOrder)
                    space.swapLoops(child, rng);
                if (rng.uniform() < pPar)
                    space.moveParallelism(child, rng);
                if (pGrow > 0 && rng.uniform() < pGrow)
                    space.growParallelism(child, rng);
                if (pAge > 0 && rng.uniform() < pAge)
                    space.dropParallelism(child, rng);
                if (rng.uniform() < pBypass)
                    space.toggleBypass(child, rng);
                if (temporalLevels.size() > 1 && rng.uniform() < pLevel) {
                    // Swap the temporal tiles of two levels (free factors only).
                    const int a = temporalLevels[rng.below(temporalLevels.size())];
                    const int b = temporalLevels[rng.below(temporalLevels.size())];
                    for (int d = 0; d < D; ++d)
                        if (space.constraints().levels[a].temporal[d] == 0 &&
                            space.constraints().levels[b].temporal[d] == 0)
                            std::swap(child.levels[a].temporal[d], child.levels[b].temporal[d]);
                }
                if (!tileDims.empty() && rng.uniform() < pTile) {
                    // The port re-scatters a whole dimension; moving one prime
                    // is the finer step (tile_rescatter sets the mix).
                    if (rng.uniform() < pRescatter)
                        space.resampleDimension(child, tileDims[rng.below(tileDims.size())], rng);
                    else
                        space.moveTileFactor(child, rng);
                }
                return dadAt;
            };
            ctx.evaluateGenerated(
                nChildren,
                [&](std::size_t i, Rng& rng, Mapping& child, CandidateNote& note) {
                    thread_local Evaluation scratch;
                    // The child's hash, from its first parent's where it has one.
                    auto hashChild = [&](const std::size_t* dadAt) {
                        if (!deduplicate)
                            return;
                        MappingHash& h = nextHash[elites + i];
                        if (dadAt)
                            space.rehash(pop[*dadAt], popHash[*dadAt], child, h);
                        else
                            space.hashLevels(child, h);
                        note.hash = h.value;
                        note.hashed = true;
                    };
                    if (i >= nChildren - fresh) {
                        // Injection: a uniform legal mapping when a few draws find one
                        // (small spaces), else a random mapping repaired.
                        if (!space.sampleLegal(rng, child, scratch, injectionTries)) {
                            child = space.sample(rng);
                            if (!space.repairFit(child, rng, scratch))
                                return false;
                        }
                        hashChild(nullptr);
                        return note.quickLegal = true;
                    }
                    // Vary two parents; an illegal child is varied again from scratch a
                    // few times (cheap) before it is repaired (moves factors outwards).
                    // A child seen before is varied again too: a converged population
                    // otherwise spends its time on copies.
                    for (int attempt = 0;; ++attempt) {
                        const std::size_t dadAt = vary(rng, child);
                        // A retry after a known child steps further: one more random
                        // move per retry (a converged population breeds copies).
                        for (int extra = 0; extra < attempt; ++extra)
                            if (rng.uniform() < 0.5)
                                space.moveTileFactor(child, rng);
                            else
                                space.swapLoops(child, rng);
                        const bool legal = fitChildren == 2 ? space.fitThenCheck(child, rng)
                                           : fitChildren == 1
                                               ? space.fixFanoutsThenCheck(child, rng)
                                               : space.isLegalQuick(child);
                        const bool last = attempt + 1 >= varyAttempts;
                        // The hash goes to the driver with the child (the look-up
                        // takes it from the note), so a child kept on its last
                        // attempt is looked up at no extra cost.
                        note = {};
                        if (legal)
                            hashChild(&dadAt);
                        if (legal && (!novelty || !ctx.isKnown(child, &note) || last))
                            return note.quickLegal = true;
                        if (last) { // illegal: repair it
                            if (!space.repairFit(child, rng, scratch))
                                return false;
                            hashChild(&dadAt);
                            return note.quickLegal = true;
                        }
                    }
                },
                next.data() + elites, nextFit.data() + elites);
            // The elites, the valid children, then (for children lost to the
            // budget) the next best of pop.
            std::size_t n = 0;
            for (; n < elites && n < rank.size(); ++n) {
                copyLevelsInUse(next[n], pop[rank[n]]);
                nextFit[n] = fit[rank[n]];
                if (deduplicate)
                    nextHash[n] = popHash[rank[n]];
            }
            for (std::size_t i = elites; i < elites + nChildren; ++i)
                if (!std::isnan(nextFit[i])) {
                    if (n != i) {
                        copyLevelsInUse(next[n], next[i]);
                        nextFit[n] = nextFit[i];
                        if (deduplicate)
                            nextHash[n] = nextHash[i];
                    }
                    ++n;
                }
            if (n < popSize) // children lost to the budget: the next best of pop fill in
                rank = rankByCost(fit);
            for (std::size_t k = elites; n < popSize && k < rank.size(); ++k, ++n) {
                copyLevelsInUse(next[n], pop[rank[k]]);
                nextFit[n] = fit[rank[k]];
                if (deduplicate)
                    nextHash[n] = popHash[rank[k]];
            }
            next.resize(n);
            nextFit.resize(n);
            pop.swap(next);
            fit.swap(nextFit);
            if (deduplicate) {
                nextHash.resize(n);
                popHash.swap(nextHash);
            }
            ++generation;
        }
    }
};

} // namespace

std::unique_ptr<Searcher> makeGammaSearch() {
    return std::make_unique<GammaSearch>();
}

} // namespace mw
