#include "mapspace/sampler.h"

#include "arch/architecture.h"
#include "model/cost_model.h"
#include "workload/problem.h"

#include <algorithm>

namespace mw {

std::vector<std::int64_t> primeFactors(std::int64_t n) {
    std::vector<std::int64_t> f;
    for (std::int64_t p = 2; p * p <= n; ++p)
        while (n % p == 0) {
            f.push_back(p);
            n /= p;
        }
    if (n > 1)
        f.push_back(n);
    return f;
}

Mapping sampleMapping(const Problem& p, const Architecture& a, std::mt19937_64& rng) {
    Mapping m = makeTrivialMapping(p, a);
    const int L = a.numLevels();
    struct Slot {
        int level;
        int kind; // 0 temporal, 1 X, 2 Y
    };
    std::vector<Slot> slots;
    for (int l = 0; l < L; ++l) {
        if (a.levels[l].cls != LevelClass::Dummy)
            slots.push_back({l, 0});
        if (a.fanoutX(l) > 1)
            slots.push_back({l, 1});
        if (a.fanoutY(l) > 1)
            slots.push_back({l, 2});
    }
    if (slots.empty())
        slots.push_back({0, 0});
    std::uniform_int_distribution<std::size_t> pick(0, slots.size() - 1);
    for (int d = 0; d < p.numDims(); ++d)
        for (std::int64_t prime : primeFactors(p.dims[d].bound)) {
            const Slot s = slots[pick(rng)];
            LevelMapping& lm = m.levels[s.level];
            auto& f = s.kind == 0 ? lm.temporal[d] : s.kind == 1 ? lm.spatialX[d] : lm.spatialY[d];
            f = static_cast<std::uint32_t>(f * prime);
        }
    std::bernoulli_distribution coin(0.5);
    for (int l = 0; l < L; ++l) {
        LevelMapping& lm = m.levels[l];
        std::shuffle(lm.order.begin(), lm.order.begin() + p.numDims(), rng);
        std::shuffle(lm.spatialOrder.begin(), lm.spatialOrder.begin() + p.numDims(), rng);
        if (l == 0 || a.levels[l].cls == LevelClass::Dummy)
            continue;
        for (int t = 0; t < p.numTensors(); ++t)
            lm.setKeep(t, coin(rng));
    }
    return m;
}

std::optional<Mapping> sampleLegalMapping(const Problem& p, const Architecture& a,
                                          std::mt19937_64& rng, int maxTries) {
    Evaluation e;
    for (int i = 0; i < maxTries; ++i) {
        Mapping m = sampleMapping(p, a, rng);
        evaluate(p, a, m, e);
        if (e.valid)
            return m;
    }
    return std::nullopt;
}

} // namespace mw
