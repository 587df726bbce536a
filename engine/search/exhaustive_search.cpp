// Exhaustive search of the pruned space (Timeloop's linear-pruned with no stop
// condition): every allocation of each dimension's prime factors to its slots,
// every keep choice, and every order of the loops whose factor is not 1 (one
// order at the innermost level, where order cannot matter). An illegal
// factorization costs one (illegal) evaluation, not one per permutation, as
// Timeloop counts invalid mappings; so the budget bounds every run.
#include "mapspace/enumerate.h"
#include "search/searchers.h"

#include <algorithm>

namespace mw {

namespace {

class ExhaustiveSearch : public Searcher {
  public:
    void run(SearchContext& ctx) override {
        const MapSpace& space = ctx.space();
        const Problem& p = space.problem();
        const int L = space.arch().numLevels();
        const int D = p.numDims();
        const int T = p.numTensors();
        std::vector<std::vector<std::vector<std::uint32_t>>> alloc(static_cast<std::size_t>(D));
        for (int d = 0; d < D; ++d)
            alloc[d] = slotAllocations(space, d);
        // Free keep bits.
        std::vector<std::pair<int, int>> keepBits;
        for (int l = 1; l < L; ++l)
            if (space.levelHasTemporal(l))
                for (int t = 0; t < T; ++t)
                    if (!((space.constraints().levels[l].keepFixed >> t) & 1u))
                        keepBits.push_back({l, t});
        int innermost = L - 1;
        while (innermost > 0 && !space.levelHasTemporal(innermost))
            --innermost;

        const auto batchSize = static_cast<std::size_t>(ctx.param("batch", 512));
        std::vector<Mapping> batch;
        std::vector<double> costs;
        auto flush = [&] {
            costs.resize(batch.size());
            ctx.evaluateBatch(batch.data(), batch.size(), costs.data());
            batch.clear();
        };

        std::vector<std::size_t> idx(static_cast<std::size_t>(D), 0);
        Mapping base = makeTrivialMapping(p, space.arch());
        for (;;) {
            // Factorization given by idx.
            Mapping m = base;
            for (int d = 0; d < D; ++d) {
                const auto& slots = space.factorSlots(d);
                for (std::size_t s = 0; s < slots.size(); ++s)
                    MapSpace::factorAt(m, d, slots[s]) = alloc[d][idx[d]][s];
            }
            for (std::uint64_t keep = 0; keep < (std::uint64_t(1) << keepBits.size()); ++keep) {
                for (std::size_t b = 0; b < keepBits.size(); ++b)
                    m.levels[keepBits[b].first].setKeep(keepBits[b].second, (keep >> b) & 1u);
                if (!ctx.isLegal(m)) { // order never changes legality: charge it once
                    batch.push_back(m);
                    if (batch.size() >= batchSize) {
                        flush();
                        if (ctx.stopped())
                            return;
                    }
                    continue;
                }
                // Orders: per level, the real loops a constraint leaves free in
                // every order (sorted start), the constrained ones in their places.
                std::vector<std::vector<std::uint8_t>> real(static_cast<std::size_t>(L));
                for (int l = 0; l < L; ++l) {
                    const OrderConstraint& oc = space.constraints().levels[l].order;
                    if (!space.levelHasTemporal(l) || l == innermost || oc.fixes(D))
                        continue;
                    for (int d = 0; d < D; ++d)
                        if (m.levels[l].temporal[d] > 1 && oc.isFree(d))
                            real[l].push_back(static_cast<std::uint8_t>(d));
                }
                for (;;) {
                    Mapping c = m;
                    for (int l = 0; l < L; ++l) {
                        int k = 0;
                        for (auto d : real[l])
                            c.levels[l].order[k++] = d;
                        for (int d = 0; d < D; ++d)
                            if (std::find(real[l].begin(), real[l].end(), d) == real[l].end())
                                c.levels[l].order[k++] = static_cast<std::uint8_t>(d);
                        space.constraints().levels[l].order.apply(c.levels[l].order, D);
                        space.constraints().levels[l].spatialOrder.apply(c.levels[l].spatialOrder,
                                                                         D);
                    }
                    batch.push_back(c);
                    if (batch.size() >= batchSize) {
                        flush();
                        if (ctx.stopped())
                            return;
                    }
                    int l = 0;
                    while (l < L && !std::next_permutation(real[l].begin(), real[l].end()))
                        ++l;
                    if (l == L)
                        break;
                }
            }
            int d = 0;
            while (d < D && ++idx[d] == alloc[d].size())
                idx[d++] = 0;
            if (d == D)
                break;
        }
        if (!batch.empty())
            flush();
        ctx.stop("space exhausted");
    }
};

} // namespace

std::unique_ptr<Searcher> makeExhaustiveSearch() {
    return std::make_unique<ExhaustiveSearch>();
}

} // namespace mw
