// Random search: independent samples drawn uniformly over the slot allocations
// of prime factors, loop orders and keep choices. Every sample is charged, the
// illegal ones too (they fail the model's checks), as Timeloop's random mapper
// and GAMMA's random baseline count them; the legal ones are uniform over the
// legal mappings.
#include "search/searchers.h"

namespace mw {

namespace {

class RandomSearch : public Searcher {
  public:
    void run(SearchContext& ctx) override {
        const auto batch = static_cast<std::size_t>(ctx.countParam("batch", 1024, 1, kMaxBatch));
        const MapSpace& space = ctx.space();
        std::vector<Mapping> out(batch);
        std::vector<double> costs(batch);
        int barren = 0;
        while (!ctx.stopped()) {
            const std::int64_t before = ctx.evaluations();
            ctx.evaluateGenerated(
                batch,
                [&](std::size_t, Rng& rng, Mapping& m) {
                    m = space.sample(rng);
                    return true;
                },
                out.data(), costs.data());
            barren = ctx.evaluations() == before ? barren + 1 : 0;
            if (barren >= 8)
                ctx.stop("no new legal mapping found (space exhausted or too constrained)");
        }
    }
};

} // namespace

std::unique_ptr<Searcher> makeRandomSearch() {
    return std::make_unique<RandomSearch>();
}

} // namespace mw
