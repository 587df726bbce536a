// The map space's neighbour moves (tile factors, loop orders, parallelism,
// bypass, GAMMA's growth and aging) and the repairs that bring a moved,
// drawn or recombined mapping back into the space (fan-outs, buffers,
// minimum utilization). Each draws from the Rng it is given.
#include "mapspace/mapspace.h"

#include "common/short_list.h"
#include "model/cost_model.h"

#include <algorithm>
#include <cassert>
#include <random>

namespace mw {

namespace {

std::uint32_t smallestPrime(std::uint32_t n) {
    for (std::uint32_t p = 2; p * p <= n; ++p)
        if (n % p == 0)
            return p;
    return n;
}

// A random prime factor of n (n > 1), weighted by multiplicity.
std::uint32_t randomPrimeOf(std::uint32_t n, Rng& rng) {
    std::uint32_t primes[32]; // a 32-bit number has at most 32 prime factors
    std::uint64_t count = 0;
    for (std::uint32_t p = 2; p * p <= n; ++p)
        while (n % p == 0) {
            primes[count++] = p;
            n /= p;
        }
    if (n > 1)
        primes[count++] = n;
    return primes[rng.below(count)];
}

template <typename T> const T& pickOne(const std::vector<T>& v, Rng& rng) {
    return v[rng.below(v.size())];
}

// The moves' candidate lists are ShortLists (on the stack: they run for every
// candidate), each move drawing one of its candidates.
template <typename T, std::size_t N> const T& pickOne(const ShortList<T, N>& l, Rng& rng) {
    return l.items[rng.below(l.size)];
}
constexpr std::size_t kMaxSlots = kMaxLevels * 3; // per dimension: temporal, X, Y per level
// Product of a level's spatial factors on one axis (kind 1: X, 2: Y).
std::int64_t axisUsed(const LevelMapping& lm, int kind, int D) {
    std::int64_t used = 1;
    for (int d = 0; d < D; ++d)
        used *= kind == 1 ? lm.spatialX[d] : lm.spatialY[d];
    return used;
}
// Both axes in one pass (the fan-out checks run for every candidate), and
// whether some dimension fans out on both (outside Timeloop's map space).
struct AxesUse {
    std::int64_t x = 1, y = 1;
    bool split = false;
    // Within a fan-out of fanX x fanY, on one axis per dimension.
    bool fits(std::int64_t fanX, std::int64_t fanY) const {
        return x <= fanX && y <= fanY && !split;
    }
};
AxesUse axesUsed(const LevelMapping& lm, int D) {
    AxesUse u;
    for (int d = 0; d < D; ++d) {
        u.x *= lm.spatialX[d];
        u.y *= lm.spatialY[d];
        u.split |= lm.spatialX[d] > 1 && lm.spatialY[d] > 1;
    }
    return u;
}

// A dimension on both axes of one level (outside Timeloop's map space) keeps
// one: its free factor on the other axis joins it, on an axis drawn at random.
// A factor a constraint fixes stays where it is, and a free one beside it goes
// out to the temporal loop of `target`. The fan-out fit that follows moves
// out whatever no longer fits.
void joinSplitAxes(Mapping& m, int l, int target, const LevelConstraint& lc, int D, Rng& rng) {
    LevelMapping& lm = m.levels[l];
    for (int d = 0; d < D; ++d) {
        if (lm.spatialX[d] == 1 || lm.spatialY[d] == 1)
            continue;
        const bool fixedX = lc.spatialX[d] > 0, fixedY = lc.spatialY[d] > 0;
        if (fixedX && fixedY)
            continue; // the constraints themselves split it; they are reported as such
        if (fixedX || fixedY) {
            auto& free = fixedX ? lm.spatialY[d] : lm.spatialX[d];
            m.levels[target].temporal[d] *= free;
            free = 1;
        } else if (rng() & 1u) {
            lm.spatialX[d] *= lm.spatialY[d];
            lm.spatialY[d] = 1;
        } else {
            lm.spatialY[d] *= lm.spatialX[d];
            lm.spatialX[d] = 1;
        }
    }
}

} // namespace

bool MapSpace::fanoutsFit(const Mapping& m) const {
    // Spatial factors sit in slots, and only levels that fan out have those.
    const int D = problem_->numDims();
    for (const int l : fanningLevels_) {
        const AxesUse u = axesUsed(m.levels[l], D);
        if (!u.fits(fanX_[l], fanY_[l]))
            return false;
    }
    return true;
}

bool MapSpace::isLegalQuickFrom(const Mapping& parent, const Mapping& m) const {
    if (!unconstrained_ || parent.numLevels != m.numLevels)
        return isLegalQuick(m);
    const int L = m.numLevels;
    const int D = problem_->numDims();
    // A level's tile spans the factors of it and the levels inside it. With
    // each dimension's product kept, the tiles that change are those of the
    // levels inside the outermost level whose factors changed, down to the
    // innermost one: (outer, inner].
    int outer = L, inner = -1;
    std::uint32_t keepsChanged = 0;
    bool legal = true;
    for (int l = 0; l < L && legal; ++l) {
        const LevelMapping& lm = m.levels[l];
        if (!sameFactors(lm, parent.levels[l])) {
            outer = std::min(outer, l);
            inner = l;
            if (fansOut_[static_cast<std::size_t>(l)]) {
                const AxesUse u = axesUsed(lm, D);
                legal = u.fits(fanX_[l], fanY_[l]);
            }
        }
        keepsChanged |= std::uint32_t(lm.keepMask != parent.levels[l].keepMask) << l;
    }
    if (legal) {
        const int lowest =
            std::max(1, std::min(outer + 1, keepsChanged ? __builtin_ctz(keepsChanged) : L));
        std::int64_t ext[kMaxDims];
        for (int d = 0; d < D; ++d)
            ext[d] = 1;
        for (int l = L - 1; l >= lowest && legal; --l) {
            growTileExtents(m, l, ext);
            if ((l > outer && l <= inner) || ((keepsChanged >> l) & 1u))
                legal = !overflows(l, ext, m.levels[l].keepMask);
        }
    }
    assert(legal == isLegalQuick(m));
    return legal;
}

bool MapSpace::fixFanoutsThenCheck(Mapping& m, Rng& rng) const {
    fixFanouts(m, rng);
    return innermostOverflow(m) < 0 && constraintsHold(m); // fan-outs now fit
}

bool MapSpace::moveTileFactor(Mapping& m, Rng& rng) const {
    if (movableDims_.empty())
        return false;
    const int d = pickOne(movableDims_, rng);
    ShortList<Slot, kMaxSlots> sources;
    for (const Slot& s : slots_[d])
        if (factorAt(m, d, s) > 1)
            sources.push(s);
    if (sources.empty())
        return false;
    const Slot from = pickOne(sources, rng);
    Slot to = from;
    while (to.level == from.level && to.kind == from.kind)
        to = pickOne(slots_[d], rng);
    const std::uint32_t prime = randomPrimeOf(factorAt(m, d, from), rng);
    factorAt(m, d, from) /= prime;
    factorAt(m, d, to) *= prime;
    return true;
}

bool MapSpace::swapLoops(Mapping& m, Rng& rng) const {
    ShortList<int, kMaxLevels> levels;
    for (int l = 0; l < arch_->numLevels(); ++l)
        if (levelHasTemporal(l) && !constraints_.levels[l].order.fixes(problem_->numDims()))
            levels.push(l);
    if (levels.empty() || problem_->numDims() < 2)
        return false;
    const int l = pickOne(levels, rng);
    LevelMapping& lm = m.levels[l];
    const OrderConstraint& oc = constraints_.levels[l].order;
    // Prefer swapping two real loops; a unit loop's position means nothing.
    // Loops a constraint places stay where they are.
    ShortList<int, kMaxDims> real;
    for (int i = 0; i < problem_->numDims(); ++i)
        if (lm.temporal[lm.order[i]] > 1 && oc.isFree(lm.order[i]))
            real.push(i);
    if (real.size < 2)
        return false;
    const std::size_t a = rng.below(real.size);
    std::size_t b = rng.below(real.size);
    while (b == a)
        b = rng.below(real.size);
    std::swap(lm.order[real.items[a]], lm.order[real.items[b]]);
    return true;
}

bool MapSpace::moveParallelism(Mapping& m, Rng& rng) const {
    // Pick a dimension with a fan-out slot; move a prime between that slot and
    // a temporal slot (either way).
    ShortList<DimSlot, kMaxDims * kMaxSlots> spatial;
    for (int d = 0; d < problem_->numDims(); ++d)
        for (const Slot& s : slots_[d])
            if (s.kind != 0)
                spatial.push({d, s});
    if (spatial.empty())
        return false;
    const auto [d, s] = pickOne(spatial, rng);
    ShortList<Slot, kMaxSlots> temporal;
    for (const Slot& t : slots_[d])
        if (t.kind == 0)
            temporal.push(t);
    if (temporal.empty())
        return false;
    std::bernoulli_distribution inward(0.5);
    if (factorAt(m, d, s) > 1 && (!inward(rng))) {
        const std::uint32_t prime = randomPrimeOf(factorAt(m, d, s), rng);
        factorAt(m, d, s) /= prime;
        factorAt(m, d, pickOne(temporal, rng)) *= prime;
        return true;
    }
    ShortList<Slot, kMaxSlots> sources;
    for (std::size_t i = 0; i < temporal.size; ++i)
        if (factorAt(m, d, temporal.items[i]) > 1)
            sources.push(temporal.items[i]);
    if (sources.empty())
        return false;
    const Slot from = pickOne(sources, rng);
    const std::uint32_t prime = randomPrimeOf(factorAt(m, d, from), rng);
    factorAt(m, d, from) /= prime;
    factorAt(m, d, s) *= prime;
    return true;
}

bool MapSpace::toggleBypass(Mapping& m, Rng& rng) const {
    struct LevelTensor {
        int level, tensor;
    };
    ShortList<LevelTensor, kMaxLevels * kMaxTensors> choices;
    for (int l = 1; l < arch_->numLevels(); ++l) {
        if (arch_->levels[l].cls == LevelClass::Dummy)
            continue;
        for (int t = 0; t < problem_->numTensors(); ++t)
            if (!((constraints_.levels[l].keepFixed >> t) & 1u))
                choices.push({l, t});
    }
    if (choices.empty())
        return false;
    const auto [l, t] = pickOne(choices, rng);
    m.levels[l].setKeep(t, !m.levels[l].keeps(t));
    return true;
}

bool MapSpace::growParallelism(Mapping& m, Rng& rng) const {
    struct Axis {
        int d;
        Slot to;
    };
    ShortList<Axis, kMaxDims * kMaxSlots> choices; // (dimension, unused fan-out axis)
    const int D = problem_->numDims();
    for (int d = 0; d < D; ++d)
        for (const Slot& to : slots_[d]) {
            if (to.kind == 0)
                continue;
            if (axisUsed(m.levels[to.level], to.kind, D) == 1)
                choices.push({d, to});
        }
    if (choices.empty())
        return false;
    const Axis a = pickOne(choices, rng);
    const int limit = a.to.kind == 1 ? fanX_[a.to.level] : fanY_[a.to.level];
    std::int64_t used = 1;
    // Nearest temporal loops first: the fewest tiles grow.
    bool moved = false;
    for (int l = a.to.level; l >= 0; --l) {
        const Slot from{static_cast<std::int8_t>(l), 0};
        bool offered = false;
        for (const Slot& s : slots_[a.d])
            offered = offered || (s.level == l && s.kind == 0);
        if (!offered)
            continue;
        for (;;) {
            const std::uint32_t f = factorAt(m, a.d, from);
            if (f == 1)
                break;
            const std::uint32_t prime = smallestPrime(f);
            if (used * prime > limit)
                break;
            used *= prime;
            factorAt(m, a.d, from) /= prime;
            factorAt(m, a.d, a.to) *= prime;
            moved = true;
        }
    }
    return moved;
}

bool MapSpace::dropParallelism(Mapping& m, Rng& rng) const {
    ShortList<int, kMaxLevels> levels; // fanned-out levels with free spatial factors
    const int D = problem_->numDims();
    for (int l = 0; l < m.numLevels; ++l) {
        const LevelConstraint& lc = constraints_.levels[l];
        bool any = false;
        for (int d = 0; d < D && !any; ++d)
            any = (lc.spatialX[d] == 0 && m.levels[l].spatialX[d] > 1) ||
                  (lc.spatialY[d] == 0 && m.levels[l].spatialY[d] > 1);
        if (any)
            levels.push(l);
    }
    if (levels.empty())
        return false;
    const int l = pickOne(levels, rng);
    const int target = nearestTemporalAbove(l); // the level's own loop when it has one
    const LevelConstraint& lc = constraints_.levels[l];
    for (int d = 0; d < D; ++d) {
        if (constraints_.levels[target].temporal[d] > 0)
            continue; // a fixed temporal factor cannot take it
        LevelMapping& lm = m.levels[l];
        if (lc.spatialX[d] == 0 && lm.spatialX[d] > 1) {
            m.levels[target].temporal[d] *= lm.spatialX[d];
            lm.spatialX[d] = 1;
        }
        if (lc.spatialY[d] == 0 && lm.spatialY[d] > 1) {
            m.levels[target].temporal[d] *= lm.spatialY[d];
            lm.spatialY[d] = 1;
        }
    }
    return true;
}

bool MapSpace::randomMove(Mapping& m, Rng& rng) const {
    std::uniform_int_distribution<int> kind(0, 9);
    for (int attempt = 0; attempt < 8; ++attempt) {
        const int k = kind(rng);
        // Tiling moves are the most common, as in the papers' neighbourhoods.
        const bool moved = k < 5   ? moveTileFactor(m, rng)
                           : k < 7 ? swapLoops(m, rng)
                           : k < 9 ? moveParallelism(m, rng)
                                   : toggleBypass(m, rng);
        if (moved)
            return true;
    }
    return false;
}

int MapSpace::nearestTemporalAbove(int l) const {
    for (int k = l; k >= 0; --k)
        if (levelHasTemporal(k))
            return k;
    return 0;
}

bool MapSpace::repair(Mapping& m, Rng& rng, Evaluation& scratch) const {
    const int L = arch_->numLevels();
    const int D = problem_->numDims();
    m.numLevels = L;
    // Orders must be permutations.
    for (int l = 0; l < L; ++l)
        for (auto* order : {&m.levels[l].order, &m.levels[l].spatialOrder}) {
            std::uint32_t seen = 0;
            for (int i = 0; i < D; ++i)
                seen |= (*order)[i] < D ? 1u << (*order)[i] : 0u;
            if (seen != (1u << D) - 1)
                for (int i = 0; i < D; ++i)
                    (*order)[i] = static_cast<std::uint8_t>(i);
        }
    applyFixed(m);
    // Factors off their slots, or products that do not match: resample that dimension.
    for (int d = 0; d < D; ++d) {
        std::int64_t prod = 1;
        bool stray = false;
        for (int l = 0; l < L; ++l) {
            const LevelMapping& lm = m.levels[l];
            if (lm.temporal[d] == 0 || lm.spatialX[d] == 0 || lm.spatialY[d] == 0)
                stray = true;
            const LevelConstraint& lc = constraints_.levels[l];
            if (lc.temporal[d] == 0)
                prod *= lm.temporal[d];
            if (lc.spatialX[d] == 0)
                prod *= lm.spatialX[d];
            if (lc.spatialY[d] == 0)
                prod *= lm.spatialY[d];
        }
        for (int l = 0; l < L; ++l) {
            const LevelConstraint& lc = constraints_.levels[l];
            const bool okX = (lc.spatialAllowedX >> d) & 1u, okY = (lc.spatialAllowedY >> d) & 1u;
            if (!levelHasTemporal(l) && m.levels[l].temporal[d] > 1)
                stray = true;
            if (lc.spatialX[d] == 0 && (!okX || fanX_[l] == 1) && m.levels[l].spatialX[d] > 1)
                stray = true;
            if (lc.spatialY[d] == 0 && (!okY || fanY_[l] == 1) && m.levels[l].spatialY[d] > 1)
                stray = true;
        }
        if (stray || prod != freeBound_[d])
            resampleDimension(m, d, rng);
    }
    return repairFit(m, rng, scratch);
}

bool MapSpace::fitBuffers(Mapping& m, Rng& rng) const {
    // Buffers, innermost first: a level that overflows sends primes from
    // itself and inside it outwards, past it. That only shrinks the tiles
    // inside the level and leaves those outside it as they were, so one pass
    // outwards fixes every level against a direct occupancy count.
    const int L = arch_->numLevels();
    const int D = problem_->numDims();
    std::int64_t ext[kMaxDims]; // extents of the current level's tiles
    for (int d = 0; d < D; ++d)
        ext[d] = 1;
    for (int level = L - 1; level >= 1; --level) { // the outermost level is never bounded
        growTileExtents(m, level, ext);
        if (!overflows(level, ext, m.levels[level].keepMask))
            continue;
        const int target = nearestTemporalAbove(level - 1);
        // The factors that may leave, kept up to date as primes move out
        // (one prime at a time: the nearest fit).
        DimSlot sources[kMaxDims * kMaxSlots]; // uninitialised: filled below
        std::size_t n = 0;
        for (const DimSlot& e : slotsInside_[static_cast<std::size_t>(level)]) {
            sources[n] = e; // kept when its factor is above 1 (no branch to mispredict)
            n += factorAt(m, e.d, e.s) > 1;
        }
        while (overflows(level, ext, m.levels[level].keepMask)) {
            if (n == 0) {
                // Tiles of size one still overflow: bypass a tensor here if allowed.
                bool changed = false;
                for (int t = 0; t < problem_->numTensors() && !changed; ++t)
                    if (m.levels[level].keeps(t) &&
                        !((constraints_.levels[level].keepFixed >> t) & 1u)) {
                        m.levels[level].setKeep(t, false);
                        changed = true;
                    }
                if (!changed)
                    return false;
                continue;
            }
            const std::size_t k = rng.below(n);
            const auto [d, s] = sources[k];
            const std::uint32_t prime = smallestPrime(factorAt(m, d, s));
            factorAt(m, d, s) /= prime;
            m.levels[target].temporal[d] *= prime;
            ext[d] /= prime;
            if (factorAt(m, d, s) == 1)
                sources[k] = sources[--n];
        }
    }
    return true;
}

bool MapSpace::fitThenCheck(Mapping& m, Rng& rng) const {
    fixFanouts(m, rng);
    return fitBuffers(m, rng) && constraintsHold(m); // fan-outs and buffers now fit
}

bool MapSpace::repairFit(Mapping& m, Rng& rng, Evaluation& scratch) const {
    const int L = arch_->numLevels();
    const int D = problem_->numDims();
    fixFanouts(m, rng);
    for (int attempt = 0; attempt < 4 * L * D; ++attempt) {
        if (!fitBuffers(m, rng))
            return false;
        if (meetsConstraints(m))
            return true; // products, orders, fan-outs and buffers all hold
        // Only the minimum utilization can still fail (the rest was restored
        // above): widen a fan-out, else resample a dimension, and fit again.
        if (!raiseParallelism(m, rng)) {
            resampleDimension(m, static_cast<int>(rng.below(std::uint64_t(D))), rng);
            fixFanouts(m, rng);
        }
    }
    return isLegal(m, scratch);
}

bool MapSpace::raiseParallelism(Mapping& m, Rng& rng) const {
    // Candidates: a prime of a temporal factor at or above a fan-out with room
    // for it. Taking it from the fan-out's own level (or the nearest above)
    // grows no tile, or the fewest.
    struct Move {
        int d;
        Slot from, to;
    };
    ShortList<Move, kMaxDims * kMaxSlots> moves;
    const int D = problem_->numDims();
    for (int d = 0; d < D; ++d)
        for (const Slot& to : slots_[d]) {
            if (to.kind == 0)
                continue;
            const std::int64_t used = axisUsed(m.levels[to.level], to.kind, D);
            const int limit = to.kind == 1 ? fanX_[to.level] : fanY_[to.level];
            const Slot* from = nullptr;
            for (const Slot& t : slots_[d])
                if (t.kind == 0 && t.level <= to.level && factorAt(m, d, t) > 1 &&
                    used * smallestPrime(factorAt(m, d, t)) <= limit &&
                    (!from || t.level > from->level))
                    from = &t;
            if (from)
                moves.push({d, *from, to});
        }
    if (moves.empty())
        return false;
    const Move mv = pickOne(moves, rng);
    const std::uint32_t prime = smallestPrime(factorAt(m, mv.d, mv.from));
    factorAt(m, mv.d, mv.from) /= prime;
    factorAt(m, mv.d, mv.to) *= prime;
    return true;
}

void MapSpace::fixFanouts(Mapping& m, Rng& rng) const {
    const int D = problem_->numDims();
    for (const int l : fanningLevels_) { // spatial factors sit in slots
        const AxesUse u = axesUsed(m.levels[l], D);
        if (u.fits(fanX_[l], fanY_[l]))
            continue; // the common case: nothing to move
        const int target = nearestTemporalAbove(l);
        const LevelConstraint& lc = constraints_.levels[l];
        if (u.split)
            joinSplitAxes(m, l, target, lc, D, rng);
        for (int axis = 1; axis <= 2; ++axis) {
            const int limit = axis == 1 ? fanX_[l] : fanY_[l];
            auto& factors = axis == 1 ? m.levels[l].spatialX : m.levels[l].spatialY;
            const auto& fixed = axis == 1 ? lc.spatialX : lc.spatialY;
            // The free factors above 1, in dimension order, kept so as primes
            // move out one at a time (the smallest first) until the axis fits.
            std::int64_t used = 1;
            int dims[kMaxDims];
            int n = 0;
            for (int d = 0; d < D; ++d) {
                used *= factors[d];
                if (factors[d] > 1 && fixed[d] == 0)
                    dims[n++] = d;
            }
            while (used > limit && n > 0) {
                const int k = int(rng.below(std::uint64_t(n)));
                const int d = dims[k];
                const std::uint32_t prime = smallestPrime(factors[d]);
                factors[d] /= prime;
                used /= prime;
                m.levels[target].temporal[d] *= prime;
                if (factors[d] == 1) {
                    std::copy(dims + k + 1, dims + n, dims + k);
                    --n;
                }
            }
        }
    }
}

} // namespace mw
