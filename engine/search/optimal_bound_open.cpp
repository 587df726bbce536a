// PartialBound's rules for the levels above k that the walk has not decided
// yet: where a dimension may still loop, which fan-outs are described, how
// many children an open fan-out can have, what it allows of links and
// sharing, and the capacity placement.
// Why each holds is argued with the bound's terms in optimal_bound.cpp.
#include "search/optimal_bound.h"

#include "arch/architecture.h"
#include "workload/problem.h"

namespace mw {

using model_detail::i64;

namespace {

// The largest product of some of primes[0 .. n) (each used at most once)
// that is at most cap; cap itself above 1,024 (not worth the table).
i64 largestProductAtMost(const std::uint32_t* primes, int n, i64 cap) {
    constexpr i64 kMaxTable = 1024;
    if (cap <= 1)
        return 1;
    if (cap > kMaxTable)
        return cap;
    std::array<bool, kMaxTable + 1> reached{}; // products made so far
    reached[1] = true;
    for (int i = 0; i < n && !reached[std::size_t(cap)]; ++i) {
        const i64 prime = primes[i];
        for (i64 v = cap / prime; v >= 1; --v) // (downwards: each prime once)
            if (reached[std::size_t(v)])
                reached[std::size_t(v * prime)] = true;
    }
    i64 best = cap;
    while (!reached[std::size_t(best)])
        --best;
    return best;
}

} // namespace

double PartialBound::fanoutReach(const Mapping& m, const std::int64_t* remaining, int l,
                                 std::uint32_t spatialDecided) const {
    const LevelMapping& lm = m.levels[std::size_t(l)];
    const int D = p_.numDims();
    double reach = 1.0;
    for (int axis = 0; axis < 2; ++axis) {
        const auto& factors = axis == 0 ? lm.spatialX : lm.spatialY;
        const std::uint32_t slot = axis == 0 ? kXSlot : kYSlot;
        i64 fixed = 1;
        // The prime factors left to place of the dimensions with a free slot
        // here: those of remaining[d], a divisor of d's free part.
        std::uint32_t primesLeft[kMaxDims * 64]; // uninitialised: filled below
        int numPrimes = 0;
        for (int d = 0; d < D; ++d) {
            fixed *= factors[std::size_t(d)];
            if (remaining[d] == 1 || !(spatialSlots(l, d, spatialDecided) & slot))
                continue;
            i64 left = remaining[d];
            for (std::uint32_t prime : space_.freePrimes(d))
                if (left % prime == 0) {
                    left /= prime;
                    primesLeft[numPrimes++] = prime;
                }
        }
        const i64 size = axis == 0 ? a_.fanoutX(l) : a_.fanoutY(l);
        reach *= double(fixed) * double(largestProductAtMost(primesLeft, numPrimes, size / fixed));
    }
    return reach;
}

int PartialBound::describedFrom(int k, const std::int64_t* remaining,
                                std::uint32_t spatialDecided) const {
    int j = k;
    for (; j > 0 && ((spatialDecided >> (j - 1)) & 1u); --j) {
        if (j == k)
            continue;
        // Level j lies between level j - 1 and k: a temporal factor still to
        // place there would change the extents inside level j - 1.
        bool open = false;
        for (int d = 0; d < p_.numDims(); ++d)
            open = open || (remaining[d] > 1 &&
                            (slotKinds_[std::size_t(j)][std::size_t(d)] & kTemporalSlot));
        if (open)
            break;
    }
    return j;
}

bool PartialBound::mayLoopAt(const Mapping& m, int k, const std::int64_t* remaining, int l,
                             int d) const {
    // (An open level may hold factors of d already: the walk may have placed
    // some on levels it has not decided whole.)
    return m.levels[l].temporal[d] > 1 ||
           (l < k && remaining[d] > 1 &&
            (slotKinds_[std::size_t(l)][std::size_t(d)] & kTemporalSlot));
}

bool PartialBound::loopsAbove(const Mapping& m, int k, const std::int64_t* remaining, int c,
                              int d) const {
    // Only levels above c count, also where c is not yet decided.
    for (int l = 0; l < c; ++l)
        if (mayLoopAt(m, k, remaining, l, d))
            return true;
    return false;
}

void PartialBound::extentsFrom(const Mapping& m, int lowest, i64 (*ext)[kMaxDims]) const {
    const int L = a_.numLevels(), D = p_.numDims();
    for (int d = 0; d < D; ++d)
        ext[L][d] = 1;
    for (int l = L - 1; l >= lowest; --l) {
        const LevelMapping& lm = m.levels[l];
        for (int d = 0; d < D; ++d)
            ext[l][d] = ext[l + 1][d] * i64(lm.temporal[d]) * lm.spatialX[d] * lm.spatialY[d];
    }
}

bool PartialBound::strideRepeatPossible(const Mapping& m, int k, const std::int64_t* remaining,
                                        int c, int t) const {
    if (negativeCoefficient_)
        return true;
    int dimsPerRank[kMaxRanks] = {};
    for (int i = 0; i < terms_.count[t]; ++i)
        if (loopsAbove(m, k, remaining, c, terms_.term[t][i].dim))
            ++dimsPerRank[terms_.term[t][i].rank];
    for (int r = 0; r < kMaxRanks; ++r)
        if (dimsPerRank[r] > 1)
            return true;
    return false;
}

double PartialBound::openLinkShareLeft(const Mapping& m, int k, const std::int64_t* remaining,
                                       int j, int t) const {
    // Two children apart along a dimension d that is alone in every rank of
    // t it indexes are fewer than d's spatial factor s of d's extent inside
    // apart on d's rank, and every step above them moves that rank by a
    // multiple of s times that extent: no step moves by their translation.
    // So only 0 may, where a dimension t ignores fans out (children sharing
    // offsets), and a link moves a zero step's delta as at a described
    // fan-out: for the MACs, or where a stride may repeat.
    const LevelMapping& lm = m.levels[j];
    auto factor = [&lm](int d) { return i64(lm.spatialX[d]) * lm.spatialY[d]; };
    bool shared = false, linkable = false;
    for (int d = 0; d < p_.numDims(); ++d) {
        if (factor(d) <= 1)
            continue;
        if (!((p_.tensors[t].dimMask >> d) & 1u))
            shared = true;
        else if (!onlyOwnRanks_[t][d])
            linkable = true;
    }
    if (!shared && !linkable)
        return 1.0;
    // A step moving by tr != 0 splits the distinct offsets into chains (o,
    // o + tr, ...), each leaving its last to the parent (no child holds its
    // delta): at least the offsets over the longest chain. The fanning
    // dimensions linked by sharing ranks of t place children on those ranks
    // alone, so a chain moving them holds at most the product of their
    // factors, whatever the extents inside; and a step that moves a rank of
    // a dimension alone in its ranks serves no child (above), so only the
    // groups with another dimension count.
    std::uint32_t group[kMaxRanks];
    int groups = 0;
    for (int r = 0; r < terms_.lanes[t]; ++r) {
        std::uint32_t dims = 0;
        for (int i = 0; i < terms_.count[t]; ++i)
            if (terms_.term[t][i].rank == r && factor(terms_.term[t][i].dim) > 1)
                dims |= 1u << terms_.term[t][i].dim;
        if (!dims)
            continue;
        for (int g = 0; g < groups;) { // (groups stay disjoint: one pass merges)
            if (group[g] & dims) {
                dims |= group[g];
                group[g] = group[--groups];
            } else {
                ++g;
            }
        }
        group[groups++] = dims;
    }
    double longest = 1.0;
    bool coincide = shared; // two children may share an offset (a zero translation)
    for (int g = 0; g < groups; ++g) {
        double product = 1.0;
        bool chains = false;
        for (int d = 0; d < p_.numDims(); ++d)
            if ((group[g] >> d) & 1u) {
                product *= double(factor(d));
                chains = chains || !onlyOwnRanks_[t][d];
            }
        if (chains)
            longest = std::max(longest, product);
        coincide = coincide || (group[g] & (group[g] - 1)) != 0; // (P and R on one coordinate)
    }
    if (coincide && (j + 1 == a_.numLevels() || strideRepeatPossible(m, k, remaining, j + 1, t)))
        return 0.0;
    return linkable ? 1.0 / longest : 1.0;
}

std::uint32_t PartialBound::sharingDims(int t, const double* factor) const {
    // Children apart along a dimension with a rank of its own have t's tiles
    // at different offsets, whatever the extents. Where no dimension indexes
    // two of t's ranks, children apart along any one term of a coordinate
    // have different offsets too, and the distinct offsets are the product
    // of each coordinate's distinct values: at least its largest term's
    // factor. So only the other terms' factors, and those of the dimensions
    // t ignores, can share.
    std::uint32_t dims = 0;
    for (int d = 0; d < p_.numDims(); ++d)
        if (!((p_.tensors[t].dimMask >> d) & 1u) || (!rankDisjoint_[t] && !ownRank_[t][d]))
            dims |= 1u << d;
    if (!rankDisjoint_[t])
        return dims;
    for (int r = 0; r < terms_.lanes[t]; ++r) {
        std::uint32_t terms = 0;
        int largest = -1;
        for (int i = 0; i < terms_.count[t]; ++i) {
            const int d = terms_.term[t][i].dim;
            if (terms_.term[t][i].rank != r)
                continue;
            terms |= 1u << d;
            if (largest < 0 || factor[d] > factor[largest])
                largest = d;
        }
        dims |= terms & ~(largest < 0 ? 0u : 1u << largest);
    }
    return dims;
}

double PartialBound::openSharingMax(const Mapping& m, int j, int t) const {
    const LevelMapping& lm = m.levels[j];
    std::array<double, kMaxDims> factor{};
    for (int d = 0; d < p_.numDims(); ++d)
        factor[d] = double(lm.spatialX[d]) * lm.spatialY[d];
    const std::uint32_t dims = sharingDims(t, factor.data());
    double sharing = 1.0;
    for (int d = 0; d < p_.numDims(); ++d)
        if ((dims >> d) & 1u)
            sharing *= factor[d];
    return sharing;
}

PartialBound::Forced PartialBound::placeForced(const Mapping& m, int k,
                                               const std::int64_t* remaining,
                                               std::uint32_t spatialDecided, i64 (*ext)[kMaxDims],
                                               LazyMapping& placed,
                                               std::array<std::int64_t, kMaxDims>& left) const {
    const int D = p_.numDims();
    // Tiles only grow with the factors still to place: an open level that
    // overflows already has no completion.
    for (int j = 1; j < k; ++j)
        if (space_.overflows(j, ext[j], m.levels[j].keepMask))
            return Forced::Impossible;
    bool open = false;
    for (int d = 0; d < D; ++d)
        open = open || remaining[d] > 1;
    if (!open)
        return Forced::None;
    for (int d = 0; d < D; ++d)
        left[d] = remaining[d];
    // (A placement grows tiles, which may leave another dimension one level.)
    for (bool changed = true; changed;) {
        changed = false; // (ext: of m, or of `placed` since its last placement)
        for (int d = 0; d < D; ++d) {
            if (left[d] <= 1)
                continue;
            i64 least = 2;
            while (left[d] % least != 0)
                ++least;
            int levels = 0, only = -1;
            bool temporalOnly = true;
            // d's least factor at level l grows the tiles of l and of the
            // levels above it: it fits there if levels 1..l all fit it. Each
            // is checked once, outwards from 1, up to the first that does
            // not (levels 1..fitting do).
            int fitting = 0;
            bool overflowFound = false;
            auto fitsAt = [&](int l) {
                while (fitting < l && !overflowFound) {
                    const int j = fitting + 1;
                    const i64 saved = ext[j][d];
                    ext[j][d] = saved * least;
                    overflowFound =
                        space_.overflows(j, ext[j], m.levels[j].keepMask); // (m's keeps)
                    ext[j][d] = saved;
                    fitting += overflowFound ? 0 : 1;
                }
                return fitting >= l;
            };
            for (int l = 0; l < k; ++l) {
                const bool temporal = slotKinds_[l][d] & kTemporalSlot;
                const bool spatial = spatialSlots(l, d, spatialDecided) != 0;
                if (!temporal && !spatial)
                    continue;
                if (!fitsAt(l))
                    continue;
                ++levels;
                only = l;
                temporalOnly = !spatial;
            }
            if (levels == 0)
                return Forced::Impossible;
            if (levels > 1 || !temporalOnly)
                continue;
            if (!placed)
                placed.make(m);
            placed->levels[only].temporal[d] *= std::uint32_t(left[d]);
            // (extentsFrom(*placed, 0, ext), where only d's extents at and
            // above `only` change)
            for (int l = 0; l <= only; ++l)
                ext[l][d] *= left[d];
            left[d] = 1;
            changed = true;
        }
    }
    if (!placed)
        return Forced::None;
    for (int d = 0; d < D; ++d)
        if (left[d] > 1)
            return Forced::Some;
    return Forced::All;
}

} // namespace mw
