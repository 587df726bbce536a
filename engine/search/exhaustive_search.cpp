// Exhaustive search: every mapping of the space, as mapspace/enumerate.h
// lists them (every tiling, keep choice, temporal and spatial order). An
// illegal tiling costs one (illegal) evaluation, not one per order, as
// Timeloop counts invalid mappings (orders never change legality); so the
// budget bounds every run. The innermost level's orders are skipped only
// where they cannot change a count: it is the last level and feeds its MACs
// through no fan-out (one operand per MAC and step, in any order).
#include "mapspace/enumerate.h"
#include "search/searchers.h"

#include "arch/architecture.h"

namespace mw {

namespace {

bool sameTiling(const Mapping& a, const Mapping& b) {
    for (int l = 0; l < a.numLevels; ++l) {
        const LevelMapping& x = a.levels[std::size_t(l)];
        const LevelMapping& y = b.levels[std::size_t(l)];
        if (!sameFactors(x, y) || x.keepMask != y.keepMask)
            return false;
    }
    return true;
}

class ExhaustiveSearch : public Searcher {
  public:
    void run(SearchContext& ctx) override {
        const MapSpace& space = ctx.space();
        const Architecture& a = space.arch();
        const int L = a.numLevels();
        EnumerationOptions options;
        options.innermostOrders =
            !(space.levelHasTemporal(L - 1) && a.fanoutX(L - 1) == 1 && a.fanoutY(L - 1) == 1);
        const auto batchSize = static_cast<std::size_t>(ctx.countParam("batch", 512, 1, kMaxBatch));
        std::vector<Mapping> batch;
        std::vector<double> costs;
        auto flush = [&] {
            costs.resize(batch.size());
            ctx.evaluateBatch(batch.data(), batch.size(), costs.data());
            batch.clear();
        };
        Mapping last{};
        bool lastLegal = false, haveLast = false;
        enumerateMappings(space, options, [&](const Mapping& m) {
            if (haveLast && sameTiling(m, last)) {
                if (!lastLegal)
                    return true; // charged once already
            } else {
                last = m;
                haveLast = true;
                lastLegal = ctx.isLegal(m);
            }
            batch.push_back(m);
            if (batch.size() >= batchSize)
                flush();
            return !ctx.stopped();
        });
        if (ctx.stopped())
            return;
        flush();
        if (!ctx.stopped())
            ctx.stop("space exhausted");
    }
};

} // namespace

std::unique_ptr<Searcher> makeExhaustiveSearch() {
    return std::make_unique<ExhaustiveSearch>();
}

} // namespace mw
