#include "mapspace/enumerate.h"

#include <algorithm>

namespace mw {

std::vector<std::vector<std::uint32_t>> slotAllocations(const MapSpace& space, int d) {
    const auto& slots = space.factorSlots(d);
    std::vector<std::vector<std::uint32_t>> result;
    std::vector<std::uint32_t> cur(slots.size(), 1);
    // Distinct primes with multiplicities; each multiplicity is spread over the
    // slots in every weak composition.
    std::vector<std::pair<std::uint32_t, int>> groups;
    for (const std::uint32_t p : space.freePrimes(d)) {
        if (!groups.empty() && groups.back().first == p)
            ++groups.back().second;
        else
            groups.push_back({p, 1});
    }
    if (slots.empty()) {
        result.push_back(cur);
        return result;
    }
    // Timeloop's space: a dimension fans out on one axis of a level at most.
    auto oneAxisPerLevel = [&] {
        for (std::size_t i = 0; i < slots.size(); ++i)
            for (std::size_t j = i + 1; j < slots.size(); ++j)
                if (slots[i].level == slots[j].level && slots[i].kind != 0 && slots[j].kind != 0 &&
                    cur[i] > 1 && cur[j] > 1)
                    return false;
        return true;
    };
    auto spread = [&](auto&& self, std::size_t g, std::size_t slot, int left) -> void {
        if (g == groups.size()) {
            if (oneAxisPerLevel())
                result.push_back(cur);
            return;
        }
        const std::uint32_t prime = groups[g].first;
        if (slot + 1 == slots.size()) { // the last slot takes what is left
            std::uint32_t mult = 1;
            for (int k = 0; k < left; ++k)
                mult *= prime;
            cur[slot] *= mult;
            const int next = g + 1 < groups.size() ? groups[g + 1].second : 0;
            self(self, g + 1, 0, next);
            cur[slot] /= mult;
            return;
        }
        std::uint32_t mult = 1;
        for (int k = 0; k <= left; ++k) {
            cur[slot] *= mult;
            self(self, g, slot + 1, left - k);
            cur[slot] /= mult;
            mult *= prime;
        }
    };
    spread(spread, 0, 0, groups.empty() ? 0 : groups[0].second);
    return result;
}

std::int64_t enumerateMappings(const MapSpace& space, const EnumerationOptions& options,
                               const std::function<bool(const Mapping&)>& visit) {
    const Problem& p = space.problem();
    const Architecture& a = space.arch();
    const int L = a.numLevels(), D = p.numDims();
    const MapSpaceConstraints& c = space.constraints();
    std::vector<std::vector<std::vector<std::uint32_t>>> alloc(static_cast<std::size_t>(D));
    for (int d = 0; d < D; ++d)
        alloc[d] = slotAllocations(space, d);
    const std::vector<std::pair<int, int>> keepBits = space.freeKeepChoices();
    int innermost = L - 1;
    while (innermost > 0 && !space.levelHasTemporal(innermost))
        --innermost;
    // The trivial mapping with every fixed factor, keep and order in place.
    Mapping base = makeTrivialMapping(p, a);
    space.applyFixed(base);
    base = space.canonical(base);

    std::int64_t visited = 0;
    bool go = true;
    std::vector<std::size_t> idx(static_cast<std::size_t>(D), 0);
    while (go) {
        Mapping m = base;
        for (int d = 0; d < D; ++d) {
            const auto& slots = space.factorSlots(d);
            for (std::size_t s = 0; s < slots.size(); ++s)
                MapSpace::factorAt(m, d, slots[s]) = alloc[d][idx[d]][s];
        }
        // Per level, the real loops an order constraint leaves free, temporal
        // (kind 0) and spatial (kind 1), each permuted from sorted.
        struct Perm {
            int level;
            bool spatial;
            std::vector<std::uint8_t> dims;
        };
        std::vector<Perm> perms;
        for (int l = 0; l < L; ++l) {
            const LevelConstraint& lc = c.levels[l];
            const LevelMapping& lm = m.levels[l];
            Perm t{l, false, {}}, s{l, true, {}};
            for (int d = 0; d < D; ++d) {
                if (space.levelHasTemporal(l) && lm.temporal[d] > 1 && lc.order.isFree(d) &&
                    (l != innermost || options.innermostOrders))
                    t.dims.push_back(static_cast<std::uint8_t>(d));
                if ((lm.spatialX[d] > 1 || lm.spatialY[d] > 1) && lc.spatialOrder.isFree(d) &&
                    options.spatialOrders)
                    s.dims.push_back(static_cast<std::uint8_t>(d));
            }
            if (t.dims.size() > 1)
                perms.push_back(t);
            if (s.dims.size() > 1)
                perms.push_back(s);
        }
        for (std::uint64_t keep = 0; go && keep < (std::uint64_t(1) << keepBits.size()); ++keep) {
            for (std::size_t b = 0; b < keepBits.size(); ++b)
                m.levels[keepBits[b].first].setKeep(keepBits[b].second, (keep >> b) & 1u);
            for (auto& q : perms)
                std::sort(q.dims.begin(), q.dims.end());
            for (;;) {
                Mapping o = m;
                for (int l = 0; l < L; ++l)
                    for (const bool spatial : {false, true}) {
                        auto& order = spatial ? o.levels[l].spatialOrder : o.levels[l].order;
                        // The permuted real loops first, the rest after, then the
                        // constraint puts its own dims in place.
                        const Perm* q = nullptr;
                        for (const auto& x : perms)
                            if (x.level == l && x.spatial == spatial)
                                q = &x;
                        int k = 0;
                        if (q)
                            for (auto d : q->dims)
                                order[k++] = d;
                        for (int d = 0; d < D; ++d)
                            if (!q || std::find(q->dims.begin(), q->dims.end(), d) == q->dims.end())
                                order[k++] = static_cast<std::uint8_t>(d);
                        (spatial ? c.levels[l].spatialOrder : c.levels[l].order).apply(order, D);
                    }
                ++visited;
                if (!visit(space.canonical(o))) {
                    go = false;
                    break;
                }
                std::size_t i = 0;
                while (i < perms.size() &&
                       !std::next_permutation(perms[i].dims.begin(), perms[i].dims.end()))
                    ++i;
                if (i == perms.size())
                    break;
            }
        }
        int d = 0;
        while (d < D && ++idx[d] == alloc[d].size())
            idx[d++] = 0;
        if (d == D)
            break;
    }
    return visited;
}

} // namespace mw
