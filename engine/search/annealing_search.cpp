// Simulated annealing, as the Mind Mappings baseline runs it through the
// simanneal library: Metropolis acceptance with exponential cooling from Tmax
// to Tmin over the budget. The library tunes Tmax for ~98 % acceptance and
// Tmin where improvements stop; we set both from a short charged probe of
// neighbour moves on log-cost, so the schedule is scale-free. With
// parallel_moves = k each step proposes k neighbours at once and takes the
// first one Metropolis accepts, in index order (reproducible).
#include "search/searchers.h"

#include <algorithm>
#include <cmath>

namespace mw {

namespace {

class AnnealingSearch : public Searcher {
  public:
    void run(SearchContext& ctx) override {
        const MapSpace& space = ctx.space();
        // Acceptance shares strictly inside (0, 1): the temperatures are
        // -typical / log(share), infinite at 0 and 1.
        const double acceptStart = ctx.param("accept_start", 0.98, 1e-12, 0.999999);
        const double acceptEnd = ctx.param("accept_end", 1e-4, 1e-12, 0.999999);
        const int probeMoves = int(ctx.countParam("probe", 32, 1, kMaxBatch));
        // One chain by default: proposing k neighbours per step in parallel costs a
        // thread hand-off per step, which is slower than one core at these rates.
        const auto width =
            static_cast<std::size_t>(ctx.countParam("parallel_moves", 1, 1, kMaxBatch));

        std::vector<Mapping> start = initialMappings(ctx, 1);
        if (start.empty()) {
            ctx.stop("no legal starting mapping found");
            return;
        }
        Mapping current = start.front();
        double currentCost = ctx.evaluate(current);
        if (!(currentCost < SearchContext::kInfinity)) {
            ctx.stop("starting mapping is illegal");
            return;
        }

        // The current mapping's hash by level: a neighbour differs from it in
        // the one or two levels its move changed, and only those are hashed.
        const bool deduplicate = ctx.settings().deduplicate;
        MappingHash currentHash;
        if (deduplicate)
            space.hashLevels(current, currentHash);
        // Every neighbour returned passes isLegalQuick, so once current does,
        // a neighbour is checked from it (isLegalQuickFrom).
        bool currentQuickLegal = space.isLegalQuick(current);
        // A neighbour passed isLegalQuick (or was repaired to pass it): the
        // note tells the driver, which then skips its own check of the space.
        auto neighbour = [&](Rng& rng, const Mapping& from, Mapping& m, MappingHash& hash,
                             CandidateNote& note) {
            thread_local Evaluation scratch;
            for (int attempt = 0; attempt < 16; ++attempt) {
                copyLevelsInUse(m, from); // (levels past them stay default)
                space.randomMove(m, rng);
                const bool legal =
                    currentQuickLegal ? space.isLegalQuickFrom(from, m) : space.isLegalQuick(m);
                if (legal || space.repairFit(m, rng, scratch)) {
                    if (deduplicate) {
                        space.rehash(from, currentHash, m, hash);
                        note.hash = hash.value;
                        note.hashed = true;
                    }
                    return note.quickLegal = true;
                }
            }
            return false;
        };
        std::vector<Mapping> out(std::max<std::size_t>(width, std::size_t(probeMoves)));
        std::vector<MappingHash> outHash(out.size());
        const SearchContext::NotingGenerator fromCurrent = [&](std::size_t i, Rng& rng, Mapping& m,
                                                               CandidateNote& note) {
            return neighbour(rng, current, m, outHash[i], note);
        };

        // Probe: typical |delta log cost| of a move sets the temperatures.
        std::vector<double> costs(out.size());
        double tMax = ctx.param("t_max", 0.0, 0.0, 1e9), tMin = ctx.param("t_min", 0.0, 0.0, 1e9);
        if (tMax <= 0.0 || tMin <= 0.0) {
            ctx.evaluateGenerated(std::size_t(probeMoves), fromCurrent, out.data(), costs.data());
            double sum = 0.0;
            int n = 0;
            for (int i = 0; i < probeMoves; ++i)
                if (costs[i] > 0 && costs[i] < SearchContext::kInfinity) {
                    sum += std::abs(std::log(costs[i]) - std::log(currentCost));
                    ++n;
                }
            const double typical = n ? std::max(sum / n, 1e-6) : 1.0;
            if (tMax <= 0.0)
                tMax = -typical / std::log(acceptStart);
            if (tMin <= 0.0)
                tMin = -typical / std::log(acceptEnd);
        }
        const std::int64_t startEvals = ctx.evaluations();
        const double budgetEvals = ctx.settings().budget.evaluations > 0
                                       ? double(ctx.settings().budget.evaluations - startEvals)
                                       : 0.0;
        const double budgetSeconds = ctx.settings().budget.seconds;
        const double t0 = ctx.elapsed();

        double currentLog = std::log(currentCost); // (kept across the steps that stay)
        while (!ctx.stopped()) {
            // Progress through the budget sets the temperature.
            double progress = 0.0;
            if (budgetEvals > 0)
                progress = double(ctx.evaluations() - startEvals) / budgetEvals;
            if (budgetSeconds > 0)
                progress = std::max(progress, (ctx.elapsed() - t0) / budgetSeconds);
            const double T = tMax * std::pow(tMin / tMax, std::min(1.0, progress));
            ctx.evaluateGenerated(width, fromCurrent, out.data(), costs.data());
            for (std::size_t i = 0; i < width; ++i) {
                if (std::isnan(costs[i]) || costs[i] >= SearchContext::kInfinity)
                    continue;
                const double candidateLog = std::log(costs[i]);
                const double dE = candidateLog - currentLog;
                if (dE <= 0.0 || std::exp(-dE / T) > ctx.rng().uniform()) {
                    copyLevelsInUse(current, out[i]);
                    currentHash = outHash[i];
                    currentQuickLegal = true;
                    currentCost = costs[i];
                    currentLog = candidateLog;
                    break;
                }
            }
        }
    }
};

} // namespace

std::unique_ptr<Searcher> makeAnnealingSearch() {
    return std::make_unique<AnnealingSearch>();
}

} // namespace mw
