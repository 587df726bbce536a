#include "search/optimal_orders.h"

#include "arch/architecture.h"
#include "model/loop_nest.h"
#include "workload/problem.h"

#include <algorithm>

namespace mw {

OrderCandidates::OrderCandidates(const MapSpace& space, bool temporalRule, bool spatialRule)
    : space_(space), temporalRule_(temporalRule), spatialRule_(spatialRule),
      terms_(space.problem()) {}

namespace {

std::vector<std::uint8_t> dimsOf(std::uint32_t mask, int D) {
    std::vector<std::uint8_t> dims;
    for (int d = 0; d < D; ++d)
        if ((mask >> d) & 1u)
            dims.push_back(std::uint8_t(d));
    return dims;
}

// An order (outer to inner) with the real loops `dims` first, in that order,
// the other dimensions after them.
std::array<std::uint8_t, kMaxDims> arrangement(const std::vector<std::uint8_t>& dims,
                                               std::uint32_t real, int D) {
    std::array<std::uint8_t, kMaxDims> o{};
    int k = 0;
    for (auto d : dims)
        o[std::size_t(k++)] = d;
    for (int d = 0; d < D; ++d)
        if (!((real >> d) & 1u))
            o[std::size_t(k++)] = std::uint8_t(d);
    return o;
}

} // namespace

const std::vector<OrderCandidates::Order>& OrderCandidates::temporalAll(int level,
                                                                        std::uint32_t real) {
    auto [it, fresh] = all_.try_emplace({level, real});
    if (!fresh)
        return it->second;
    const int D = space_.problem().numDims();
    const OrderConstraint& oc = space_.constraints().levels[std::size_t(level)].order;
    std::vector<std::uint8_t> dims = dimsOf(real, D);
    do {
        Order o = arrangement(dims, real, D);
        if (oc.holds(o, real, D)) {
            oc.apply(o, D);
            it->second.push_back(o);
        }
    } while (std::next_permutation(dims.begin(), dims.end()));
    // Orders sharing their innermost loops side by side (and so in every
    // list drawn from this one): the optimal searcher walks them so.
    std::stable_sort(it->second.begin(), it->second.end(), [&](const Order& x, const Order& y) {
        return innermostFirst(x, real, D) < innermostFirst(y, real, D);
    });
    return it->second;
}

const std::vector<OrderCandidates::Order>&
OrderCandidates::temporalBySignature(int level, std::uint32_t real, std::uint8_t tensors) {
    auto [it, fresh] = bySignature_.try_emplace({level, real, tensors});
    if (!fresh)
        return it->second;
    const std::vector<Order>& all = temporalAll(level, real);
    std::vector<OrderSignature> sigs;
    std::vector<std::size_t> first;
    for (std::size_t i = 0; i < all.size(); ++i) {
        const OrderSignature s = orderSignature(space_.problem(), all[i], real, tensors);
        if (std::find(sigs.begin(), sigs.end(), s) == sigs.end()) {
            sigs.push_back(s);
            first.push_back(i);
        }
    }
    for (std::size_t i = 0; i < sigs.size(); ++i) {
        bool dominated = false;
        for (std::size_t j = 0; j < sigs.size() && !dominated; ++j)
            dominated = j != i && signatureDominates(sigs[j], sigs[i]);
        if (!dominated)
            it->second.push_back(all[first[i]]);
    }
    return it->second;
}

const std::vector<OrderCandidates::Order>& OrderCandidates::spatialAll(int level, std::uint32_t x,
                                                                       std::uint32_t y) {
    auto [it, fresh] = spatial_.try_emplace({level, x, y});
    if (!fresh)
        return it->second;
    const int D = space_.problem().numDims();
    const OrderConstraint& oc = space_.constraints().levels[std::size_t(level)].spatialOrder;
    const std::uint32_t real = x | y;
    std::vector<std::uint8_t> dims = dimsOf(real, D);
    // The nest takes the X loops in their order, then the Y loops: orders
    // that agree on each axis are one.
    std::vector<std::pair<std::vector<std::uint8_t>, std::vector<std::uint8_t>>> seen;
    do {
        Order o = arrangement(dims, real, D);
        if (!oc.holds(o, real, D))
            continue;
        std::pair<std::vector<std::uint8_t>, std::vector<std::uint8_t>> axes;
        for (auto d : dims)
            ((x >> d) & 1u ? axes.first : axes.second).push_back(d);
        if (std::find(seen.begin(), seen.end(), axes) != seen.end())
            continue;
        seen.push_back(axes);
        oc.apply(o, D);
        it->second.push_back(o);
    } while (std::next_permutation(dims.begin(), dims.end()));
    return it->second;
}

FanoutKey fanoutKey(const Mapping& m, int level, int numDims) {
    const LevelMapping& lm = m.levels[level];
    FanoutKey key{};
    key[0] = std::uint32_t(level);
    for (int d = 0; d < numDims; ++d) {
        key[std::size_t(1 + d)] = lm.spatialX[d];
        key[std::size_t(1 + kMaxDims + d)] = lm.spatialY[d];
        if (lm.spatialX[d] * lm.spatialY[d] <= 1) // no loop, no stride
            continue;
        std::uint32_t inside = 1; // (at most d's bound)
        for (int l = level + 1; l < m.numLevels; ++l)
            inside *= m.levels[l].temporal[d] * m.levels[l].spatialX[d] * m.levels[l].spatialY[d];
        key[std::size_t(1 + 2 * kMaxDims + d)] = inside;
    }
    return key;
}

const AnyOrderTranslations& OrderCandidates::anyOrderTranslations(const Mapping& m, int level) {
    const Problem& p = space_.problem();
    const Architecture& a = space_.arch();
    auto [it, fresh] = translations_.try_emplace(fanoutKey(m, level, p.numDims()));
    if (fresh) {
        model_detail::Factors f;
        model_detail::factorize(p, a, m, f);
        for (int t = 0; t < p.numTensors(); ++t)
            model_detail::neighbourTranslationsAnyOrder(p, a, m, f, terms_, level, t,
                                                        it->second[std::size_t(t)]);
    }
    return it->second;
}

bool OrderCandidates::forEach(const Mapping& tiling,
                              const std::function<bool(const Mapping&)>& visit) {
    return forEachPlan(tiling, [&](const Mapping& plan, const Lists& lists) {
        Mapping m = plan;
        return visitTemporal(m, lists, 0, visit);
    });
}

bool OrderCandidates::forEachPlan(const Mapping& tiling,
                                  const std::function<bool(const Mapping&, const Lists&)>& plan) {
    const Problem& p = space_.problem();
    const Architecture& a = space_.arch();
    const int L = a.numLevels(), D = p.numDims();
    ++stats_.tilings;
    Mapping m = tiling;
    double orders = 1.0;
    std::vector<std::pair<int, const std::vector<Order>*>> spatialOpen;
    for (int l = 0; l < L; ++l) {
        const LevelMapping& lm = m.levels[l];
        std::uint32_t x = 0, y = 0;
        for (int d = 0; d < D; ++d) {
            x |= std::uint32_t(lm.spatialX[d] > 1) << d;
            y |= std::uint32_t(lm.spatialY[d] > 1) << d;
        }
        const std::uint32_t real = temporalLoops(lm, D);
        if (space_.levelHasTemporal(l))
            orders *= double(temporalAll(l, real).size());
        if (x == 0 && y == 0)
            continue;
        const std::vector<Order>& list = spatialAll(l, x, y);
        orders *= double(list.size());
        if (list.size() > 1 &&
            (!spatialRule_ || spatialOrderMatters(p, a, m, l, &anyOrderTranslations(m, l)))) {
            spatialOpen.push_back({l, &list});
            ++stats_.spatialInFull;
        } else if (!list.empty()) {
            m.levels[l].spatialOrder = list[0];
        }
    }
    stats_.orders += orders;
    // Every combination of the open spatial orders, then the temporal ones.
    std::vector<std::size_t> idx(spatialOpen.size(), 0);
    for (;;) {
        for (std::size_t i = 0; i < spatialOpen.size(); ++i)
            m.levels[spatialOpen[i].first].spatialOrder = (*spatialOpen[i].second)[idx[i]];
        Lists lists{};
        prepareTemporal(m, lists);
        if (!plan(m, lists))
            return false;
        std::size_t i = 0;
        while (i < idx.size() && ++idx[i] == spatialOpen[i].second->size())
            idx[i++] = 0;
        if (i == idx.size())
            return true;
    }
}

void OrderCandidates::prepareTemporal(Mapping& m, Lists& lists) {
    const Problem& p = space_.problem();
    const Architecture& a = space_.arch();
    const int L = a.numLevels(), D = p.numDims();
    lists.fill(nullptr);
    // Each level's real loops, the levels with a choice of orders, and what
    // their orders can change.
    std::array<std::uint32_t, kMaxLevels> real{};
    std::uint32_t choices = 0;
    for (int l = 0; l < L; ++l) {
        if (!space_.levelHasTemporal(l))
            continue;
        real[std::size_t(l)] = temporalLoops(m.levels[l], D);
        choices |= std::uint32_t(temporalAll(l, real[std::size_t(l)]).size() > 1) << l;
    }
    std::array<TemporalOrderEffects, kMaxLevels> effects;
    if (temporalRule_ && choices)
        temporalOrderEffects(p, a, m, choices, effects.data());
    for (int l = 0; l < L; ++l) {
        if (!space_.levelHasTemporal(l))
            continue;
        const std::vector<Order>* list = &temporalAll(l, real[std::size_t(l)]);
        if (list->size() > 1 && temporalRule_) {
            const TemporalOrderEffects& fx = effects[std::size_t(l)];
            if (fx.tensors == 0) {
                list = nullptr; // any order: the one m has, put right by the constraint
            } else if (fx.beyondSignature) {
                ++stats_.levelsInFull;
            } else {
                list = &temporalBySignature(l, real[std::size_t(l)], fx.tensors);
                ++stats_.levelsBySignature;
            }
        }
        if (list == nullptr || list->size() == 1)
            m.levels[l].order = list ? list->front() : temporalAll(l, real[std::size_t(l)]).front();
        else if (!list->empty())
            lists[std::size_t(l)] = list;
    }
}

bool OrderCandidates::visitTemporal(Mapping& m, const Lists& lists, int level,
                                    const std::function<bool(const Mapping&)>& visit) {
    const int L = space_.arch().numLevels();
    while (level < L && lists[std::size_t(level)] == nullptr)
        ++level;
    if (level == L) {
        ++stats_.candidates;
        return visit(m);
    }
    for (const Order& o : *lists[std::size_t(level)]) {
        m.levels[level].order = o;
        if (!visitTemporal(m, lists, level + 1, visit))
            return false;
    }
    return true;
}

} // namespace mw
