#include "mapspace/mapspace.h"

#include "common/error.h"
#include "common/short_list.h"
#include "model/cost_model.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numeric>

namespace mw {

namespace {
std::uint64_t splitmix(std::uint64_t& x) {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
} // namespace

Rng::Rng(std::uint64_t seed) {
    for (auto& s : s_)
        s = splitmix(seed);
}

Rng Rng::stream(std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
    std::uint64_t x = seed;
    const std::uint64_t h = splitmix(x) ^ (a * 0xd1342543de82ef95ull);
    std::uint64_t y = h;
    return Rng(splitmix(y) ^ (b * 0x9e3779b97f4a7c15ull));
}

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

std::vector<std::int64_t> divisorsOf(std::int64_t n) {
    std::vector<std::int64_t> low, high;
    for (std::int64_t e = 1; e * e <= n; ++e)
        if (n % e == 0) {
            low.push_back(e);
            if (e != n / e)
                high.push_back(n / e);
        }
    low.insert(low.end(), high.rbegin(), high.rend());
    return low;
}

namespace {

double log10Binomial(int n, int k) {
    return (std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0)) /
           std::log(10.0);
}

} // namespace

MapSpace::MapSpace(const Problem& p, const Architecture& a, MapSpaceConstraints c)
    : problem_(&p), arch_(&a), model_(p, a), constraints_(std::move(c)) {
    const int L = a.numLevels();
    const int D = p.numDims();
    if (constraints_.levels.empty())
        constraints_.levels.resize(static_cast<std::size_t>(L));
    if (static_cast<int>(constraints_.levels.size()) != L)
        throw InputError("constraints", "have " + std::to_string(constraints_.levels.size()) +
                                            " levels; the architecture has " + std::to_string(L));
    for (const LevelConstraint& lc : constraints_.levels) {
        const std::uint32_t others = ~((1u << D) - 1);
        unconstrained_ = unconstrained_ && !lc.order.constrains() &&
                         !lc.spatialOrder.constrains() && lc.keepFixed == 0 &&
                         (lc.spatialAllowedX | others) == ~0u &&
                         (lc.spatialAllowedY | others) == ~0u;
        for (int d = 0; d < D; ++d)
            unconstrained_ =
                unconstrained_ && lc.temporal[d] == 0 && lc.spatialX[d] == 0 && lc.spatialY[d] == 0;
    }
    unconstrained_ = unconstrained_ && constraints_.minSpatialUtilization <= 0.0;
    for (int l = 0; l < L; ++l) {
        fanX_.push_back(a.fanoutX(l));
        fanY_.push_back(a.fanoutY(l));
        fansOut_.push_back(fanX_.back() * fanY_.back() > 1);
        if (fansOut_.back())
            fanningLevels_.push_back(l);
        // What the fixed spatial factors leave of each axis for free primes.
        std::int64_t fixedX = 1, fixedY = 1;
        for (int d = 0; d < D; ++d) {
            fixedX *= std::max<std::int64_t>(1, constraints_.levels[l].spatialX[d]);
            fixedY *= std::max<std::int64_t>(1, constraints_.levels[l].spatialY[d]);
        }
        fanRoom_.push_back({fanX_.back() / fixedX, fanY_.back() / fixedY});
    }
    trivial_ = makeTrivialMapping(p, a);
    slots_.assign(static_cast<std::size_t>(D), {});
    freeBound_.assign(static_cast<std::size_t>(D), 1);
    freePrimes_.assign(static_cast<std::size_t>(D), {});
    for (int d = 0; d < D; ++d) {
        std::int64_t fixed = 1;
        for (int l = 0; l < L; ++l) {
            const LevelConstraint& lc = constraints_.levels[l];
            if (lc.temporal[d] > 0)
                fixed *= lc.temporal[d];
            else if (levelHasTemporal(l))
                slots_[d].push_back({static_cast<std::int8_t>(l), 0});
            if (lc.spatialX[d] > 0)
                fixed *= lc.spatialX[d];
            else if (((lc.spatialAllowedX >> d) & 1u) && a.fanoutX(l) > 1)
                slots_[d].push_back({static_cast<std::int8_t>(l), 1});
            if (lc.spatialY[d] > 0)
                fixed *= lc.spatialY[d];
            else if (((lc.spatialAllowedY >> d) & 1u) && a.fanoutY(l) > 1)
                slots_[d].push_back({static_cast<std::int8_t>(l), 2});
        }
        if (p.dims[d].bound % fixed != 0)
            throw InputError("constraints", "fixed factors of dimension " + p.dims[d].name +
                                                " multiply to " + std::to_string(fixed) +
                                                ", which does not divide its bound " +
                                                std::to_string(p.dims[d].bound));
        freeBound_[d] = p.dims[d].bound / fixed;
        for (std::int64_t prime : primeFactors(freeBound_[d]))
            freePrimes_[d].push_back(static_cast<std::uint32_t>(prime));
        if (freeBound_[d] > 1 && slots_[d].empty())
            throw InputError("constraints", "dimension " + p.dims[d].name +
                                                " has factors left but no level may hold them");
        if (freeBound_[d] > 1 && slots_[d].size() > 1)
            movableDims_.push_back(d);
    }
    slotsInside_.assign(static_cast<std::size_t>(L), {});
    for (int l = 0; l < L; ++l)
        for (int d = 0; d < D; ++d)
            for (const Slot& s : slots_[d])
                if (s.level >= l)
                    slotsInside_[static_cast<std::size_t>(l)].push_back({d, s});
}

std::vector<std::pair<int, int>> MapSpace::freeKeepChoices() const {
    std::vector<std::pair<int, int>> out;
    for (int l = 1; l < arch_->numLevels(); ++l)
        if (levelHasTemporal(l))
            for (int t = 0; t < problem_->numTensors(); ++t)
                if (!((constraints_.levels[std::size_t(l)].keepFixed >> t) & 1u))
                    out.push_back({l, t});
    return out;
}

void MapSpace::applyFixed(Mapping& m) const {
    const int L = arch_->numLevels();
    for (int l = 0; l < L; ++l) {
        const LevelConstraint& lc = constraints_.levels[l];
        LevelMapping& lm = m.levels[l];
        for (int d = 0; d < problem_->numDims() && !unconstrained_; ++d) {
            if (lc.temporal[d] > 0)
                lm.temporal[d] = static_cast<std::uint32_t>(lc.temporal[d]);
            if (lc.spatialX[d] > 0)
                lm.spatialX[d] = static_cast<std::uint32_t>(lc.spatialX[d]);
            if (lc.spatialY[d] > 0)
                lm.spatialY[d] = static_cast<std::uint32_t>(lc.spatialY[d]);
        }
        lc.order.apply(lm.order, problem_->numDims());
        lc.spatialOrder.apply(lm.spatialOrder, problem_->numDims());
        lm.keepMask = lc.withFixedKeeps(lm.keepMask);
        if (l == 0)
            lm.keepMask = static_cast<std::uint8_t>((1u << problem_->numTensors()) - 1);
        if (arch_->levels[l].cls == LevelClass::Dummy)
            lm.keepMask = 0;
    }
}

void MapSpace::resampleDimension(Mapping& m, int d, Rng& rng) const {
    for (const Slot& s : slots_[d])
        factorAt(m, d, s) = 1;
    if (slots_[d].empty())
        return;
    const auto& slots = slots_[d];
    for (std::uint32_t prime : freePrimes_[d])
        factorAt(m, d, slots[rng.below(slots.size())]) *= prime;
}

Mapping MapSpace::sample(Rng& rng) const {
    Mapping m;
    drawTiling(rng, m);
    drawOrders(rng, m);
    return m;
}

bool MapSpace::drawTiling(Rng& rng, Mapping& m, bool stopAtFullFanout) const {
    copyLevelsInUse(m, trivial_); // callers start m from trivial_ or a default Mapping
    const int D = problem_->numDims();
    // Fan-out use only grows as primes are placed, so a draw that has already
    // overfilled one fails whatever comes next: stopping there leaves the
    // accepted draws exactly as uniform, and skips most of a failing draw.
    std::int64_t used[kMaxLevels][2];
    for (int l = 0; l < arch_->numLevels(); ++l)
        used[l][0] = used[l][1] = 1;
    for (int d = 0; d < D; ++d)
        for (std::uint32_t prime : freePrimes_[d]) {
            const Slot s = slots_[d][rng.below(slots_[d].size())];
            factorAt(m, d, s) *= prime;
            if (stopAtFullFanout && s.kind != 0 &&
                (used[s.level][s.kind - 1] *= prime) > fanRoom_[s.level][s.kind - 1])
                return false;
        }
    // Eight bits a level from each draw: a hierarchy of more than eight
    // levels (the front end's dummy levels make Simba's nine) draws again.
    std::uint64_t keepBits = 0;
    for (int l = 0; l < arch_->numLevels(); ++l) {
        if (l % 8 == 0)
            keepBits = rng();
        m.levels[l].keepMask = static_cast<std::uint8_t>((keepBits >> (8 * (l % 8))) &
                                                         ((1u << problem_->numTensors()) - 1));
    }
    applyFixed(m);
    return true;
}

void MapSpace::drawOrders(Rng& rng, Mapping& m) const {
    const int D = problem_->numDims();
    for (int l = 0; l < arch_->numLevels(); ++l) {
        LevelMapping& lm = m.levels[l];
        const LevelConstraint& lc = constraints_.levels[l];
        if (levelHasTemporal(l) && !lc.order.fixes(D)) { // dummy levels have none
            rng.shuffle(lm.order.begin(), lm.order.begin() + D);
            lc.order.apply(lm.order, D);
        }
        if (fansOut_[l] && !lc.spatialOrder.fixes(D)) {
            rng.shuffle(lm.spatialOrder.begin(), lm.spatialOrder.begin() + D);
            lc.spatialOrder.apply(lm.spatialOrder, D);
        }
    }
}

bool MapSpace::meetsConstraints(const Mapping& m) const {
    const int L = arch_->numLevels();
    if (unconstrained_) { // only the structural rule: no temporal loops at dummy levels
        for (int l = 0; l < L; ++l)
            if (!levelHasTemporal(l))
                for (int d = 0; d < problem_->numDims(); ++d)
                    if (m.levels[l].temporal[d] > 1)
                        return false;
        return true;
    }
    for (int l = 0; l < L; ++l) {
        const LevelConstraint& lc = constraints_.levels[l];
        const LevelMapping& lm = m.levels[l];
        for (int d = 0; d < problem_->numDims(); ++d) {
            if (lc.temporal[d] > 0 && lm.temporal[d] != lc.temporal[d])
                return false;
            if ((lc.spatialX[d] > 0 && lm.spatialX[d] != lc.spatialX[d]) ||
                (lc.spatialY[d] > 0 && lm.spatialY[d] != lc.spatialY[d]))
                return false;
            if ((!((lc.spatialAllowedX >> d) & 1u) && lm.spatialX[d] > 1) ||
                (!((lc.spatialAllowedY >> d) & 1u) && lm.spatialY[d] > 1))
                return false;
            if (!levelHasTemporal(l) && lm.temporal[d] > 1)
                return false;
        }
        if (!lc.keepsHold(lm.keepMask))
            return false;
        // Only the relative order of real loops matters.
        if (lc.order.constrains() || lc.spatialOrder.constrains()) {
            std::uint32_t real = 0, realSpatial = 0;
            for (int d = 0; d < problem_->numDims(); ++d) {
                real |= std::uint32_t(lm.temporal[d] > 1) << d;
                realSpatial |= std::uint32_t(lm.spatialX[d] > 1 || lm.spatialY[d] > 1) << d;
            }
            if (!lc.order.holds(lm.order, real, problem_->numDims()) ||
                !lc.spatialOrder.holds(lm.spatialOrder, realSpatial, problem_->numDims()))
                return false;
        }
    }
    if (constraints_.minSpatialUtilization > 0.0) {
        std::int64_t used = 1;
        for (int l = 0; l < L; ++l)
            for (int d = 0; d < problem_->numDims(); ++d)
                used *= std::int64_t(m.levels[l].spatialX[d]) * m.levels[l].spatialY[d];
        if (double(used) < constraints_.minSpatialUtilization * double(arch_->compute.instances()))
            return false;
    }
    return true;
}

bool MapSpace::isLegal(const Mapping& m, Evaluation& scratch) const {
    // The model accepts what timeloop-model accepts: fan-outs checked
    // cumulatively, so a level's spatial factor may exceed its own fan-out
    // when the levels above leave room. Timeloop's mapper (its Uber map
    // space) keeps each level within its own fan-out, and so does this one.
    return withinSpace(m) && model_.isLegal(m, scratch);
}

bool MapSpace::isLegalQuick(const Mapping& m) const {
    return fanoutsFit(m) && innermostOverflow(m) < 0 && constraintsHold(m);
}

bool MapSpace::constraintsHold(const Mapping& m) const {
    // With no user constraint, meetsConstraints checks only that dummy levels
    // have no temporal loops, which factors in slots cannot break.
    return unconstrained_ || meetsConstraints(m);
}

bool MapSpace::overflows(int level, const std::int64_t* ext, std::uint8_t keepMask) const {
    const StorageLevel& s = arch_->levels[level];
    return !s.unbounded() && keepMask != 0 &&
           double(model_.tileWords(ext, keepMask)) * s.multipleBuffering > double(s.capacityWords);
}

int MapSpace::innermostOverflow(const Mapping& m) const {
    const int D = problem_->numDims();
    std::int64_t ext[kMaxDims];
    for (int d = 0; d < D; ++d)
        ext[d] = 1;
    for (int l = m.numLevels - 1; l >= 1; --l) { // the outermost level is never bounded
        growTileExtents(m, l, ext);
        if (overflows(l, ext, m.levels[l].keepMask))
            return l;
    }
    return -1;
}

void MapSpace::growTileExtents(const Mapping& m, int level, std::int64_t* ext) const {
    const int D = problem_->numDims();
    const LevelMapping& lm = m.levels[level];
    // Factors sit in slots (see the header): no spatial ones where the level
    // does not fan out, no temporal ones at dummy levels.
    if (fansOut_[static_cast<std::size_t>(level)])
        for (int d = 0; d < D; ++d)
            ext[d] *= std::int64_t(lm.temporal[d]) * lm.spatialX[d] * lm.spatialY[d];
    else if (levelHasTemporal(level))
        for (int d = 0; d < D; ++d)
            ext[d] *= lm.temporal[d];
}

bool MapSpace::sampleLegal(Rng& rng, Mapping& out, Evaluation&, int maxTries) const {
    // Legality does not depend on loop order, so the orders are drawn only for
    // a tiling that fits (most draws do not). A draw that returns fits its
    // fan-outs' sizes; a dimension drawn onto both axes of one level, buffers
    // and constraints are left to check.
    out = trivial_;
    for (int i = 0; i < maxTries; ++i) {
        if (drawTiling(rng, out, true) && fanoutsFit(out) && innermostOverflow(out) < 0 &&
            constraintsHold(out)) {
            drawOrders(rng, out);
            return true;
        }
    }
    return false;
}

Mapping MapSpace::canonical(const Mapping& m) const {
    Mapping c = m;
    const int D = problem_->numDims();
    for (int l = 0; l < c.numLevels; ++l) {
        LevelMapping& lm = c.levels[l];
        auto normalise = [&](std::array<std::uint8_t, kMaxDims>& order, auto isReal) {
            std::array<std::uint8_t, kMaxDims> out{};
            int k = 0;
            for (int i = 0; i < D; ++i)
                if (isReal(order[i]))
                    out[k++] = order[i];
            for (int d = 0; d < D; ++d)
                if (!isReal(d))
                    out[k++] = static_cast<std::uint8_t>(d);
            for (int i = D; i < kMaxDims; ++i)
                out[i] = order[i];
            order = out;
        };
        normalise(lm.order, [&](int d) { return lm.temporal[d] > 1; });
        normalise(lm.spatialOrder, [&](int d) { return lm.spatialX[d] > 1 || lm.spatialY[d] > 1; });
        for (int d = D; d < kMaxDims; ++d) {
            lm.temporal[d] = lm.spatialX[d] = lm.spatialY[d] = 1;
            lm.order[d] = lm.spatialOrder[d] = static_cast<std::uint8_t>(d);
        }
    }
    for (int l = c.numLevels; l < kMaxLevels; ++l)
        c.levels[l] = LevelMapping{};
    return c;
}

namespace {
// A mapping's hash before its levels' shares are added (times its levels + 1).
constexpr std::uint64_t kHashSeed = 0x243f6a8885a308d3ull;
} // namespace

// (Inlined into the loops over levels below: out of line, the call and the
// set-up per level cost a fifth more than the old chained hash.)
[[gnu::always_inline]] inline std::uint64_t MapSpace::levelShare(const LevelMapping& lm,
                                                                 int l) const {
    // The canonical form of one level: its factors, then the order of its
    // real loops only (unit loops have no place), then its keep choices.
    const int D = problem_->numDims();
    const std::uint32_t dimMask = (1u << D) - 1;
    // The factors are read two to a 64-bit word, over the problem's dimensions
    // only (the canonical form sets the rest to 1): the half of a last word past
    // them is masked off.
    constexpr int kMaxWords = (kMaxDims + 1) / 2;
    static_assert(kMaxDims <= 16 && std::endian::native == std::endian::little);
    const int words = (D + 1) / 2;
    const std::uint64_t lastMask = D % 2 ? 0xffffffffull : ~0ull;
    auto word = [&](const std::array<std::uint32_t, kMaxDims>& a, int k) {
        std::uint64_t w;
        std::memcpy(&w, a.data() + 2 * k, sizeof w);
        return k + 1 == words ? w & lastMask : w;
    };
    // Odd multipliers, one per word of each factor array: the factors are summed
    // with independent multiplies, no chain through h.
    static constexpr std::uint64_t kMul[3][kMaxWords] = {
        {0x9e3779b97f4a7c15ull, 0xbf58476d1ce4e5b9ull, 0x94d049bb133111ebull, 0xd6e8feb86659fd93ull,
         0xa0761d6478bd642full},
        {0xe7037ed1a0b428dbull, 0x8ebc6af09c88c6e3ull, 0x589965cc75374cc3ull, 0x1d8e4e27c47d124full,
         0xc2b2ae3d27d4eb4full},
        {0x165667b19e3779f9ull, 0x85ebca77c2b2ae63ull, 0x27d4eb2f165667c5ull, 0xff51afd7ed558ccdull,
         0xc4ceb9fe1a85ec53ull}};
    static_assert(kMaxWords <= 5);
    // Bit 31 of each half of ((w >> 1) & 0x7fffffff) + 0x7fffffff is set when
    // that half's factor exceeds 1 (factors are >= 1; a masked half is 0).
    auto above1 = [](std::uint64_t w) {
        constexpr std::uint64_t low31 = 0x7fffffff7fffffffull;
        const std::uint64_t y = ((w >> 1) & low31) + low31;
        return std::uint32_t(((y >> 31) & 1u) | ((y >> 62) & 2u));
    };
    std::uint64_t factors = 0;
    for (int k = 0; k < words; ++k)
        factors += word(lm.temporal, k) * kMul[0][k] + word(lm.spatialX, k) * kMul[1][k] +
                   word(lm.spatialY, k) * kMul[2][k];
    // Which loops are real matters only where loops have an order: temporal
    // loops off dummy levels, spatial ones where the level fans out (the
    // factors themselves are hashed at every level).
    // (A malformed mapping may have more levels than the architecture.)
    const bool known = l < arch_->numLevels();
    std::uint32_t realT = 0, realS = 0;
    if (!known || levelHasTemporal(l))
        for (int k = 0; k < words; ++k)
            realT |= above1(word(lm.temporal, k)) << (2 * k);
    if (!known || fansOut_[static_cast<std::size_t>(l)])
        for (int k = 0; k < words; ++k)
            realS |= above1(word(lm.spatialX, k) | word(lm.spatialY, k)) << (2 * k);
    realT &= dimMask;
    realS &= dimMask;
    // The real loops in their order, 4 bits each: their positions as a bit
    // mask first, then read in position order (no chain through a
    // conditional per position). With fewer than two real loops there is
    // no order to tell apart (most levels have at most one real spatial
    // loop). (& 31 keeps the shift defined for a malformed order; such a
    // mapping fails the model anyway.)
    auto realOrder = [D](const std::array<std::uint8_t, kMaxDims>& order, std::uint32_t real) {
        std::uint64_t key = 0;
        if ((real & (real - 1)) == 0)
            return key;
        std::uint32_t at = 0;
        for (int i = 0; i < D; ++i)
            at |= ((real >> (order[i] & 31u)) & 1u) << i;
        for (; at != 0; at &= at - 1)
            key = (key << 4) | ((order[std::size_t(__builtin_ctz(at))] & 31u) + 1);
        return key;
    };
    const std::uint64_t order = realOrder(lm.order, realT);
    const std::uint64_t spatialOrder = realOrder(lm.spatialOrder, realS);
    // The two words, and the level's index (the same level content means
    // something else one level down), mixed into a share of the hash.
    std::uint64_t h = factors * 0x9e3779b97f4a7c15ull + std::uint64_t(l + 1);
    h = (h ^ (h >> 31)) * 0xbf58476d1ce4e5b9ull;
    h ^= order ^ (spatialOrder << 40) ^ (std::uint64_t(lm.keepMask) << 60);
    h = (h ^ (h >> 29)) * 0x94d049bb133111ebull;
    return h ^ (h >> 32);
}

std::uint64_t MapSpace::hash(const Mapping& m) const {
    // hashLevels(m).value, without keeping the shares.
    std::uint64_t h = kHashSeed * std::uint64_t(m.numLevels + 1);
    for (int l = 0; l < m.numLevels && l < kMaxLevels; ++l)
        h += levelShare(m.levels[l], l);
    return h;
}

void MapSpace::hashLevels(const Mapping& m, MappingHash& out) const {
    // The shares are summed: a level's share can be taken out and another
    // put in (rehash) without hashing the other levels again.
    out.value = kHashSeed * std::uint64_t(m.numLevels + 1);
    for (int l = 0; l < m.numLevels && l < kMaxLevels; ++l)
        out.value += out.levels[std::size_t(l)] = levelShare(m.levels[l], l);
}

void MapSpace::rehash(const Mapping& from, const MappingHash& fromHash, const Mapping& m,
                      MappingHash& out) const {
    if (m.numLevels != from.numLevels) {
        hashLevels(m, out);
        return;
    }
    out.value = fromHash.value;
    for (int l = 0; l < m.numLevels && l < kMaxLevels; ++l) {
        const std::uint64_t share = sameLevel(m.levels[l], from.levels[l])
                                        ? fromHash.levels[std::size_t(l)]
                                        : levelShare(m.levels[l], l);
        out.value += share - fromHash.levels[std::size_t(l)];
        out.levels[std::size_t(l)] = share;
    }
}

MapSpaceSize MapSpace::size() const {
    MapSpaceSize s;
    const int D = problem_->numDims();
    for (int d = 0; d < D; ++d) {
        int temporalSlots = 0;
        for (const Slot& sl : slots_[d])
            temporalSlots += sl.kind == 0;
        const int allSlots = static_cast<int>(slots_[d].size());
        // Each prime of multiplicity k spreads over S slots in C(k+S-1, S-1) ways.
        std::vector<std::int64_t> primes = primeFactors(freeBound_[d]);
        for (std::size_t i = 0; i < primes.size();) {
            std::size_t j = i;
            while (j < primes.size() && primes[j] == primes[i])
                ++j;
            const int k = static_cast<int>(j - i);
            if (temporalSlots > 0)
                s.tiling += log10Binomial(k + temporalSlots - 1, temporalSlots - 1);
            if (allSlots > 0)
                s.parallelism += log10Binomial(k + allSlots - 1, allSlots - 1);
            i = j;
        }
    }
    s.parallelism -= s.tiling;
    for (int l = 0; l < arch_->numLevels(); ++l) {
        if (!levelHasTemporal(l))
            continue;
        const OrderConstraint& oc = constraints_.levels[l].order;
        if (!oc.fixes(D))
            s.order += std::lgamma(D - oc.numOuter - oc.numInner + 1.0) / std::log(10.0);
        if (l > 0)
            for (int t = 0; t < problem_->numTensors(); ++t)
                if (!((constraints_.levels[l].keepFixed >> t) & 1u))
                    s.bypass += std::log10(2.0);
    }
    return s;
}

} // namespace mw
