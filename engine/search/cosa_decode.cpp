// Between CoSA's MIP solutions and mappings (cosa_model.h): decodes and the
// passes that mend them (keep pruning, operand keeps, DRAM reuse), and the
// greedy schedule that seeds CBC as a MIP start.
#include "search/cosa_model.h"

#include "arch/architecture.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace mw::cosa {

bool CosaModel::greedySchedule(bool closest, Mapping& out) {
    build();
    const bool saved = closestFill;
    closestFill = closest;
    std::vector<int> cols;
    std::vector<double> values;
    greedyStart(cols, values, &out);
    closestFill = saved;
    return !cols.empty();
}

Mapping CosaModel::decode(const std::vector<double>& sol) const {
    const int L = a_.numLevels();
    const int D = p_.numDims();
    const int T = p_.numTensors();
    const auto& cons = space_.constraints().levels;
    Mapping m = makeTrivialMapping(p_, a_);
    m.numLevels = L;
    for (int l = 0; l < L; ++l) {
        const LevelConstraint& lc = cons[static_cast<std::size_t>(l)];
        LevelMapping& lm = m.levels[static_cast<std::size_t>(l)];
        for (int d = 0; d < D; ++d) {
            lm.temporal[d] = lc.temporal[d] > 0 ? std::uint32_t(lc.temporal[d]) : 1;
            lm.spatialX[d] = lc.spatialX[d] > 0 ? std::uint32_t(lc.spatialX[d]) : 1;
            lm.spatialY[d] = lc.spatialY[d] > 0 ? std::uint32_t(lc.spatialY[d]) : 1;
        }
    }
    for (int d = 0; d < D; ++d) {
        const auto& slots = space_.factorSlots(d);
        const auto& xs = xVars_[static_cast<std::size_t>(d)];
        for (std::size_t n = 0; n < xs.size(); ++n) {
            std::size_t bestSlot = 0;
            for (std::size_t s = 1; s < xs[n].size(); ++s)
                if (sol[static_cast<std::size_t>(xs[n][s])] >
                    sol[static_cast<std::size_t>(xs[n][bestSlot])])
                    bestSlot = s;
            MapSpace::factorAt(m, d, slots[bestSlot]) *=
                static_cast<std::uint32_t>(primes_[static_cast<std::size_t>(d)][n]);
        }
    }
    for (int l = 0; l < L; ++l) {
        const LevelConstraint& lc = cons[static_cast<std::size_t>(l)];
        LevelMapping& lm = m.levels[static_cast<std::size_t>(l)];
        // Keeps.
        if (l == 0) {
            lm.keepMask = static_cast<std::uint8_t>((1u << T) - 1);
        } else if (!space_.levelHasTemporal(l)) {
            lm.keepMask = 0;
        } else {
            const auto& zs = patternVars_[static_cast<std::size_t>(l)];
            std::size_t bestPattern = 0;
            for (std::size_t q = 1; q < zs.size(); ++q)
                if (sol[static_cast<std::size_t>(zs[q].first)] >
                    sol[static_cast<std::size_t>(zs[bestPattern].first)])
                    bestPattern = q;
            if (!zs.empty())
                lm.keepMask = static_cast<std::uint8_t>(zs[bestPattern].second);
        }
        // Orders.
        for (int d = 0; d < D; ++d) {
            lm.order[d] = static_cast<std::uint8_t>(d);
            lm.spatialOrder[d] = static_cast<std::uint8_t>(d);
        }
        if (ranked_[static_cast<std::size_t>(l)]) {
            const RankBlock& rb = ranks_[static_cast<std::size_t>(l)];
            const std::size_t k = rb.dims.size();
            std::vector<std::pair<std::size_t, int>> byRank; // (rank, dim)
            for (std::size_t i = 0; i < k; ++i) {
                std::size_t bestZ = 0;
                for (std::size_t z = 1; z < k; ++z)
                    if (sol[static_cast<std::size_t>(rb.o[i][z])] >
                        sol[static_cast<std::size_t>(rb.o[i][bestZ])])
                        bestZ = z;
                byRank.push_back({bestZ, rb.dims[i]});
            }
            // Outer (high rank) first; dimensions without a loop here go last.
            std::sort(byRank.begin(), byRank.end(), [](const auto& x, const auto& y) {
                return x.first != y.first ? x.first > y.first : x.second < y.second;
            });
            std::uint32_t placed = 0;
            int i = 0;
            for (const auto& [z, d] : byRank) {
                lm.order[i++] = static_cast<std::uint8_t>(d);
                placed |= 1u << d;
            }
            for (int d = 0; d < D; ++d)
                if (!((placed >> d) & 1u))
                    lm.order[i++] = static_cast<std::uint8_t>(d);
        }
        lc.order.apply(lm.order, D);
        lc.spatialOrder.apply(lm.spatialOrder, D);
    }
    return m;
}

bool CosaModel::stationaryAbove(const Mapping& m, int l, int t) const {
    const int D = p_.numDims();
    for (int k = l - 1; k >= 0; --k) {
        const LevelMapping& km = m.levels[static_cast<std::size_t>(k)];
        for (int i = D - 1; i >= 0; --i) {
            const int d = km.order[i];
            if (km.temporal[d] > 1)
                return !depends(t, d);
        }
    }
    return false;
}

void CosaModel::pruneKeeps(Mapping& m) const {
    const int L = a_.numLevels();
    const int D = p_.numDims();
    const auto& cons = space_.constraints().levels;
    for (int t = 0; t < p_.numTensors(); ++t) {
        int child = L;
        for (int l = L - 1; l >= 1; --l) {
            LevelMapping& lm = m.levels[static_cast<std::size_t>(l)];
            if (!lm.keeps(t))
                continue;
            // Loops l serves, innermost first.
            bool relevant = false, irrelevant = false, outsideRelevant = false;
            for (int k = child - 1; k >= l; --k) {
                const LevelMapping& km = m.levels[static_cast<std::size_t>(k)];
                for (int i = D - 1; i >= 0; --i) {
                    const int d = km.order[i];
                    if (km.temporal[d] <= 1)
                        continue;
                    if (depends(t, d)) {
                        relevant = true;
                    } else {
                        irrelevant = true;
                        outsideRelevant = outsideRelevant || relevant;
                    }
                }
            }
            const bool stationary = stationaryAbove(m, l, t);
            const bool reuse =
                child == L ? irrelevant || stationary : outsideRelevant || (relevant && stationary);
            if (!reuse && !((cons[static_cast<std::size_t>(l)].keepFixed >> t) & 1u))
                lm.setKeep(t, false);
            else
                child = l;
        }
    }
}

bool CosaModel::addOperandKeeps(Mapping& m) const {
    const int L = a_.numLevels();
    const int D = p_.numDims();
    const auto& cons = space_.constraints().levels;
    bool added = false;
    for (int t = 0; t < p_.numTensors(); ++t) {
        int keeper = 0;
        for (int l = L - 1; l >= 1 && keeper == 0; --l)
            keeper = m.levels[static_cast<std::size_t>(l)].keeps(t) ? l : 0;
        std::int64_t ext[kMaxDims];
        for (int d = 0; d < D; ++d)
            ext[d] = 1;
        bool irrelevantInside = false; // a loop t ignores at or below l
        for (int l = L - 1; l > keeper; --l) {
            LevelMapping& lm = m.levels[static_cast<std::size_t>(l)];
            for (int d = 0; d < D; ++d) {
                ext[d] *= std::int64_t(lm.temporal[d]) * lm.spatialX[d] * lm.spatialY[d];
                irrelevantInside = irrelevantInside || (lm.temporal[d] > 1 && !depends(t, d));
            }
            const LevelConstraint& lc = cons[static_cast<std::size_t>(l)];
            if (!space_.levelHasTemporal(l) || ((lc.keepFixed >> t) & 1u) ||
                space_.overflows(l, ext, static_cast<std::uint8_t>(lm.keepMask | (1u << t))))
                continue;
            const bool stationary = stationaryAbove(m, l, t);
            if (!irrelevantInside && !stationary)
                continue;
            lm.setKeep(t, true);
            added = true;
            break;
        }
    }
    return added;
}

int CosaModel::outermostBuffer() const {
    for (int l = 1; l < a_.numLevels(); ++l)
        if (space_.levelHasTemporal(l) && !a_.levels[static_cast<std::size_t>(l)].unbounded())
            return l;
    return -1;
}

void CosaModel::extentsFrom(const Mapping& m, int l, std::int64_t* ext) const {
    for (int d = 0; d < p_.numDims(); ++d) {
        ext[d] = 1;
        for (int k = l; k < a_.numLevels(); ++k) {
            const LevelMapping& km = m.levels[static_cast<std::size_t>(k)];
            ext[d] *= std::int64_t(km.temporal[d]) * km.spatialX[d] * km.spatialY[d];
        }
    }
}

bool CosaModel::addDramReuse(Mapping& m, int t) const {
    const int L = a_.numLevels();
    const int D = p_.numDims();
    const auto& cons = space_.constraints().levels;
    bool changed = false;
    if (!cons[0].order.fixes(D)) {
        LevelMapping& dram = m.levels[0];
        std::array<std::uint8_t, kMaxDims> order = dram.order;
        int k = 0;
        for (int pass = 0; pass < 2; ++pass) // depended-on dims first (outer)
            for (int i = 0; i < D; ++i)
                if (depends(t, dram.order[i]) == (pass == 0))
                    order[k++] = dram.order[i];
        cons[0].order.apply(order, D);
        changed = order != dram.order;
        dram.order = order;
    }
    // Tile extents at each level, innermost first; the outermost level
    // that fits t wins.
    std::int64_t ext[kMaxDims];
    for (int d = 0; d < D; ++d)
        ext[d] = 1;
    int keeper = -1;
    for (int l = L - 1; l >= 1; --l) {
        const LevelMapping& lm = m.levels[static_cast<std::size_t>(l)];
        for (int d = 0; d < D; ++d)
            ext[d] *= std::int64_t(lm.temporal[d]) * lm.spatialX[d] * lm.spatialY[d];
        const LevelConstraint& lc = cons[static_cast<std::size_t>(l)];
        if (!space_.levelHasTemporal(l) || a_.levels[static_cast<std::size_t>(l)].unbounded())
            continue;
        if (lm.keeps(t) ||
            (!((lc.keepFixed >> t) & 1u) &&
             !space_.overflows(l, ext, static_cast<std::uint8_t>(lm.keepMask | (1u << t)))))
            keeper = l;
    }
    if (keeper > 0 && !m.levels[static_cast<std::size_t>(keeper)].keeps(t)) {
        m.levels[static_cast<std::size_t>(keeper)].setKeep(t, true);
        changed = true;
    }
    return changed;
}

bool CosaModel::hoistDramReuse(Mapping& m, int t) const {
    const int D = p_.numDims();
    const auto& cons = space_.constraints().levels;
    const int keeper = outermostBuffer();
    if (keeper < 0 || cons[static_cast<std::size_t>(keeper)].order.constrains() ||
        (((cons[static_cast<std::size_t>(keeper)].keepFixed >> t) & 1u) &&
         !m.levels[static_cast<std::size_t>(keeper)].keeps(t)))
        return false;
    Mapping c = m;
    LevelMapping& dram = c.levels[0];
    LevelMapping& km = c.levels[static_cast<std::size_t>(keeper)];
    const LevelConstraint& kc = cons[static_cast<std::size_t>(keeper)];
    std::array<std::uint8_t, kMaxDims> moved{};
    int nMoved = 0;
    bool ignoredOutside = false;
    for (int i = 0; i < D; ++i) {
        const int d = dram.order[i];
        if (dram.temporal[d] <= 1)
            continue;
        if (!depends(t, d)) {
            ignoredOutside = true;
        } else if (ignoredOutside && cons[0].temporal[d] == 0 && kc.temporal[d] == 0) {
            km.temporal[d] *= dram.temporal[d];
            dram.temporal[d] = 1;
            moved[static_cast<std::size_t>(nMoved++)] = static_cast<std::uint8_t>(d);
        }
    }
    if (nMoved == 0)
        return false;
    // The moved loops go outermost at the keeper, in their DRAM order.
    std::array<std::uint8_t, kMaxDims> order = km.order;
    int k = 0;
    for (int i = 0; i < nMoved; ++i)
        order[static_cast<std::size_t>(k++)] = moved[static_cast<std::size_t>(i)];
    for (int i = 0; i < D; ++i)
        if (std::find(moved.begin(), moved.begin() + nMoved, km.order[i]) == moved.begin() + nMoved)
            order[static_cast<std::size_t>(k++)] = km.order[i];
    km.order = order;
    km.setKeep(t, true);
    std::int64_t ext[kMaxDims];
    extentsFrom(c, keeper, ext);
    if (space_.overflows(keeper, ext, km.keepMask))
        return false;
    m = c;
    return true;
}

bool CosaModel::sinkDramLoop(Mapping& m, int t) const {
    const int D = p_.numDims();
    const auto& cons = space_.constraints().levels;
    const int keeper = outermostBuffer();
    if (keeper < 0 || cons[static_cast<std::size_t>(keeper)].order.constrains())
        return false;
    LevelMapping& dram = m.levels[0];
    LevelMapping& km = m.levels[static_cast<std::size_t>(keeper)];
    // The outermost DRAM loop t ignores with a loop t depends on inside it.
    int sink = -1;
    bool dependsInside = false;
    for (int i = D - 1; i >= 0; --i) {
        const int d = dram.order[i];
        if (dram.temporal[d] <= 1)
            continue;
        if (depends(t, d))
            dependsInside = true;
        else if (dependsInside)
            sink = d;
    }
    if (sink < 0 || cons[0].temporal[sink] != 0 ||
        cons[static_cast<std::size_t>(keeper)].temporal[sink] != 0)
        return false;
    bool moved = false;
    for (std::int64_t prime : primeFactors(dram.temporal[sink])) {
        km.temporal[sink] *= static_cast<std::uint32_t>(prime);
        std::int64_t ext[kMaxDims];
        extentsFrom(m, keeper, ext);
        if (space_.overflows(keeper, ext, km.keepMask)) {
            km.temporal[sink] /= static_cast<std::uint32_t>(prime);
            break;
        }
        dram.temporal[sink] /= static_cast<std::uint32_t>(prime);
        moved = true;
    }
    if (moved) { // the sunk loop outermost at the keeper
        auto it = std::find(km.order.begin(), km.order.begin() + D, std::uint8_t(sink));
        std::rotate(km.order.begin(), it, it + 1);
    }
    return moved;
}

double CosaModel::tileLog(const Mapping& m, int l, int t) const {
    const int L = a_.numLevels();
    auto span = [&](int d) {
        std::int64_t e = 1;
        for (int k = l; k < L; ++k)
            e *= std::int64_t(m.levels[k].temporal[d]) * m.levels[k].spatialX[d] *
                 m.levels[k].spatialY[d];
        return e;
    };
    double s = 0.0;
    for (int d = 0; d < p_.numDims(); ++d)
        if (depends(t, d))
            s += std::log2(double(span(d)));
    const DataSpace& ds = p_.tensors[t];
    for (int r = 0; r < ds.numRanks; ++r) {
        const Rank& rank = ds.ranks[r];
        const auto [strided, coef] = stridedTerm(rank);
        if (strided < 0 || span(strided) <= 1)
            continue;
        bool others = false;
        for (int i = 0; i < rank.numTerms; ++i)
            others = others || (rank.terms[i].dim != strided && span(rank.terms[i].dim) > 1);
        if (!others)
            s += std::log2(double(coef));
    }
    return s;
}

bool CosaModel::tilesFit(const Mapping& m, int l, unsigned mask) const {
    std::array<double, kMaxTensors> logs{};
    for (int t = 0; t < p_.numTensors(); ++t)
        if ((mask >> t) & 1u)
            logs[static_cast<std::size_t>(t)] = tileLog(m, l, t);
    return fitsCapacity(l, mask, logs);
}

void CosaModel::greedyStart(std::vector<int>& cols, std::vector<double>& values,
                            Mapping* start) const {
    const int L = a_.numLevels();
    const int D = p_.numDims();
    const auto& cons = space_.constraints().levels;
    Mapping m = makeTrivialMapping(p_, a_);
    for (int l = 0; l < L; ++l)
        for (int d = 0; d < D; ++d) {
            const LevelConstraint& lc = cons[static_cast<std::size_t>(l)];
            LevelMapping& lm = m.levels[static_cast<std::size_t>(l)];
            lm.temporal[d] = lc.temporal[d] > 0 ? std::uint32_t(lc.temporal[d]) : 1;
            lm.spatialX[d] = lc.spatialX[d] > 0 ? std::uint32_t(lc.spatialX[d]) : 1;
            lm.spatialY[d] = lc.spatialY[d] > 0 ? std::uint32_t(lc.spatialY[d]) : 1;
        }
    // Unplaced primes, largest first.
    std::vector<std::pair<std::int64_t, int>> unplaced; // (prime, dim)
    for (int d = 0; d < D; ++d)
        for (std::int64_t q : primes_[static_cast<std::size_t>(d)])
            unplaced.push_back({q, d});
    std::sort(unplaced.begin(), unplaced.end(), std::greater<>());
    for (int l = 0; l < L; ++l)
        for (std::int8_t axis = 1; axis <= 2; ++axis) {
            const int fan = axis == 1 ? a_.fanoutX(l) : a_.fanoutY(l);
            std::int64_t used = 1;
            for (int d = 0; d < D; ++d)
                used *= axis == 1 ? m.levels[l].spatialX[d] : m.levels[l].spatialY[d];
            // The subset of offered primes with the largest product that fits
            // (a 0/1 knapsack over products; fan-outs are small), so a fan-out
            // of 4 takes 2 x 2 rather than a lone 3.
            if (!closestFill) {
                for (std::size_t i = 0; i < unplaced.size();) {
                    const auto [q, d] = unplaced[i];
                    const MapSpace::Slot slot{static_cast<std::int8_t>(l), axis};
                    const auto& slots = space_.factorSlots(d);
                    const bool offered = std::any_of(slots.begin(), slots.end(), [&](auto s) {
                        return s.level == slot.level && s.kind == slot.kind;
                    });
                    if (offered && used * q <= fan) {
                        used *= q;
                        MapSpace::factorAt(m, d, slot) *= static_cast<std::uint32_t>(q);
                        unplaced.erase(unplaced.begin() + static_cast<std::ptrdiff_t>(i));
                    } else {
                        ++i;
                    }
                }
                continue;
            }
            std::map<std::int64_t, std::vector<std::size_t>> reach{{used, {}}};
            const MapSpace::Slot slot{static_cast<std::int8_t>(l), axis};
            for (std::size_t i = 0; i < unplaced.size(); ++i) {
                const auto [q, d] = unplaced[i];
                const auto& slots = space_.factorSlots(d);
                if (!std::any_of(slots.begin(), slots.end(), [&](auto s) {
                        return s.level == slot.level && s.kind == slot.kind;
                    }))
                    continue;
                const auto before = reach;
                for (const auto& [product, items] : before)
                    if (product * q <= fan && !reach.count(product * q)) {
                        auto more = items;
                        more.push_back(i);
                        reach.emplace(product * q, std::move(more));
                    }
            }
            const std::vector<std::size_t>& take = reach.rbegin()->second;
            for (auto it = take.rbegin(); it != take.rend(); ++it) { // erase back to front
                const auto [q, d] = unplaced[*it];
                MapSpace::factorAt(m, d, slot) *= static_cast<std::uint32_t>(q);
                unplaced.erase(unplaced.begin() + static_cast<std::ptrdiff_t>(*it));
            }
        }
    std::vector<int> home(static_cast<std::size_t>(D), -1); // outermost temporal slot level
    for (int d = 0; d < D; ++d)
        for (const auto& sl : space_.factorSlots(d))
            if (sl.kind == 0 && home[static_cast<std::size_t>(d)] < 0)
                home[static_cast<std::size_t>(d)] = sl.level;
    for (const auto& [q, d] : unplaced) {
        if (home[static_cast<std::size_t>(d)] < 0)
            return; // nowhere to put it: no start
        m.levels[home[static_cast<std::size_t>(d)]].temporal[d] *= static_cast<std::uint32_t>(q);
    }
    // Keep patterns: the most tensors kept that fit.
    std::vector<std::size_t> chosen(static_cast<std::size_t>(L), 0);
    for (int l = 1; l < L; ++l) {
        const auto& zs = patternVars_[static_cast<std::size_t>(l)];
        if (zs.empty())
            continue;
        int most = -1;
        for (std::size_t i = 0; i < zs.size(); ++i) {
            const int kept = __builtin_popcount(zs[i].second);
            if (kept > most && tilesFit(m, l, zs[i].second)) {
                most = kept;
                chosen[static_cast<std::size_t>(l)] = i;
            }
        }
        if (most < 0)
            return;
    }
    auto allFit = [&](int upTo) {
        for (int l = 1; l <= upTo; ++l)
            if (!patternVars_[static_cast<std::size_t>(l)].empty() &&
                !tilesFit(
                    m, l,
                    patternVars_[static_cast<std::size_t>(l)][chosen[static_cast<std::size_t>(l)]]
                        .second))
                return false;
        return true;
    };
    for (int i = 0; i + 1 < L; ++i) {
        const int l = greedyStartMode == 1 ? L - 1 - i : i + 1;
        if (!space_.levelHasTemporal(l))
            continue;
        for (const auto& [q, d] : unplaced) {
            const int from = home[static_cast<std::size_t>(d)];
            if (from >= l || m.levels[from].temporal[d] % q != 0)
                continue;
            const auto& slots = space_.factorSlots(d);
            if (!std::any_of(slots.begin(), slots.end(),
                             [&](auto s) { return s.level == l && s.kind == 0; }))
                continue;
            m.levels[from].temporal[d] /= static_cast<std::uint32_t>(q);
            m.levels[l].temporal[d] *= static_cast<std::uint32_t>(q);
            if (!allFit(l)) {
                m.levels[l].temporal[d] /= static_cast<std::uint32_t>(q);
                m.levels[from].temporal[d] *= static_cast<std::uint32_t>(q);
            }
        }
    }
    if (!allFit(L - 1))
        return;
    startFrom(m, cols, values);
    if (start && !cols.empty())
        *start = m;
    if (cols.empty())
        return;
    for (int l = 1; l < L; ++l) {
        const auto& zs = patternVars_[static_cast<std::size_t>(l)];
        for (std::size_t i = 0; i < zs.size(); ++i) {
            cols.push_back(zs[i].first);
            values.push_back(i == chosen[static_cast<std::size_t>(l)] ? 1.0 : 0.0);
        }
    }
}

bool CosaModel::keepStart(const Mapping& m, std::vector<int>& cols,
                          std::vector<double>& values) const {
    for (int l = 1; l < a_.numLevels(); ++l) {
        const auto& zs = patternVars_[static_cast<std::size_t>(l)];
        if (zs.empty())
            continue;
        const unsigned mask = m.levels[static_cast<std::size_t>(l)].keepMask;
        std::size_t chosen = zs.size();
        for (std::size_t i = 0; i < zs.size() && chosen == zs.size(); ++i)
            if (zs[i].second == mask && tilesFit(m, l, mask))
                chosen = i;
        if (chosen == zs.size())
            return false;
        for (std::size_t i = 0; i < zs.size(); ++i) {
            cols.push_back(zs[i].first);
            values.push_back(i == chosen ? 1.0 : 0.0);
        }
    }
    return true;
}

void CosaModel::startFrom(const Mapping& m, std::vector<int>& cols,
                          std::vector<double>& values) const {
    for (int d = 0; d < p_.numDims(); ++d) {
        const auto& slots = space_.factorSlots(d);
        std::vector<std::int64_t> left;
        for (const auto& sl : slots)
            left.push_back(MapSpace::factorAt(m, d, sl));
        const auto& xs = xVars_[static_cast<std::size_t>(d)];
        for (std::size_t n = 0; n < xs.size(); ++n) {
            const std::int64_t q = primes_[static_cast<std::size_t>(d)][n];
            std::size_t at = slots.size();
            for (std::size_t s = 0; s < slots.size() && at == slots.size(); ++s)
                if (left[s] % q == 0)
                    at = s;
            if (at == slots.size()) // m does not match this model: no start
                return cols.clear(), values.clear();
            left[at] /= q;
            for (std::size_t s = 0; s < slots.size(); ++s) {
                cols.push_back(xs[n][s]);
                values.push_back(s == at ? 1.0 : 0.0);
            }
        }
    }
    for (int l = 0; l < a_.numLevels(); ++l) {
        const RankBlock& rb = ranks_[static_cast<std::size_t>(l)];
        const LevelMapping& lm = m.levels[static_cast<std::size_t>(l)];
        const std::size_t k = rb.dims.size();
        for (std::size_t i = 0; i < k; ++i) {
            // Rank = how many of the block's dimensions lie inside this one.
            int pos = 0;
            for (int j = 0; j < p_.numDims(); ++j)
                if (lm.order[j] == rb.dims[i])
                    pos = j;
            std::size_t z = 0;
            for (std::size_t o = 0; o < k; ++o)
                for (int j = pos + 1; j < p_.numDims(); ++j)
                    z += lm.order[j] == rb.dims[o];
            for (std::size_t zz = 0; zz < k; ++zz) {
                cols.push_back(rb.o[i][zz]);
                values.push_back(zz == z ? 1.0 : 0.0);
            }
        }
    }
}

} // namespace mw::cosa
