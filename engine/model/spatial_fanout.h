#pragma once
// Internal to the cost model (data_movement.cpp): one level's spatial
// fan-out as one tensor sees it. Each child's tile is the first child's
// translated by its offset; children with equal offsets form a multicast
// group, and a child whose delta a grid neighbour held the step before is
// served over a link. Offsets are keyed in a mixed radix so that counting
// distinct ones is sorting integers.
#include "common/limits.h"
#include "model/loop_nest.h"
#include "model/terms.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

namespace mw::model_detail {

// A displacement in one tensor's coordinates, one entry per lane (Terms: a
// live rank); the lanes past the tensor's stay zero, so every operation runs
// over all W lanes (fixed trip counts the compiler unrolls and vectorizes).
// W is 4 where every tensor has at most 4 live ranks (convolutions at batch
// 1 and one group, GEMMs), else kMaxRanks: a third less lane work where it
// fits.
template <int W> struct Disp { i64 r[W]; };

template <int W> Disp<W> zeroDisp() {
    Disp<W> v;
    for (int i = 0; i < W; ++i)
        v.r[i] = 0;
    return v;
}

template <int W> bool sameDisp(const Disp<W>& a, const Disp<W>& b) {
    bool same = true;
    for (int i = 0; i < W; ++i)
        same &= a.r[i] == b.r[i];
    return same;
}

// Tensor t's coordinates as a table by dimension (Terms::unit), so that a
// loop's displacement is one multiplication per lane, or a single one where
// each dimension moves one lane (Terms::oneLanePerDim).
template <int W> struct Projection {
    const i64 (*unit)[kMaxRanks];
    const i64* coef;              // Terms::unitCoef
    const i64 (*mask)[kMaxRanks]; // Terms::unitMask
    bool oneLane;

    Projection(const Terms& all, int t)
        : unit(all.unit[t]), coef(all.unitCoef[t]), mask(all.unitMask[t]),
          oneLane(all.oneLanePerDim) {}
    // Displacement when dimension `dim` steps by `step` coordinates.
    Disp<W> displacement(int dim, i64 step) const {
        // (The same branch for every call of a problem: predicted.)
        return oneLane ? oneLaneDisplacement(dim, step) : anyDisplacement(dim, step);
    }
    // The two ways, for a hot loop to choose once (oneLane).
    Disp<W> oneLaneDisplacement(int dim, i64 step) const {
        Disp<W> v;
        const i64 moved = coef[dim] * step;
        for (int r = 0; r < W; ++r)
            v.r[r] = mask[dim][r] & moved;
        return v;
    }
    Disp<W> anyDisplacement(int dim, i64 step) const {
        Disp<W> v;
        for (int r = 0; r < W; ++r)
            v.r[r] = unit[dim][r] * step;
        return v;
    }
};

// Scratch for counting distinct keys; large fan-outs use a per-thread buffer
// that grows once and is reused (no allocation in steady state).
constexpr int kStackKeys = 4096;

struct KeyBuffer {
    i64 local[kStackKeys];
    i64* data = local;
    // `slot` tells apart buffers alive at the same time.
    KeyBuffer(std::size_t n, int slot) {
        if (n > std::size_t(kStackKeys)) {
            thread_local std::vector<i64> big[3];
            if (big[slot].size() < n)
                big[slot].resize(n);
            data = big[slot].data();
        }
    }
};

// Children with equal deltas form a group (Timeloop's multicast factor is its
// size); per size, how many groups (its scatter factor). Sorted by size.
struct Groups {
    static constexpr int kMax = 24;
    int n = 0;
    i64 size[kMax];
    i64 count[kMax];

    void add(i64 groupSize, i64 groups) {
        int i = 0;
        while (i < n && size[i] < groupSize)
            ++i;
        if (i < n && size[i] == groupSize) {
            count[i] += groups;
            return;
        }
        if (n == kMax) { // more sizes than kept: fold into the largest (never seen)
            count[n - 1] += groups;
            return;
        }
        for (int j = n; j > i; --j) {
            size[j] = size[j - 1];
            count[j] = count[j - 1];
        }
        size[i] = groupSize;
        count[i] = groups;
        ++n;
    }
};

// Distinct keys (sorting them); with `groups`, also their group sizes.
inline i64 countDistinct(i64* keys, i64 n, Groups* groups = nullptr) {
    if (groups)
        groups->n = 0;
    if (n == 0)
        return 0;
    std::sort(keys, keys + n);
    i64 distinct = 1, run = 1;
    for (i64 i = 1; i < n; ++i) {
        if (keys[i] != keys[i - 1]) {
            ++distinct;
            if (groups)
                groups->add(run, 1);
            run = 1;
        } else {
            ++run;
        }
    }
    if (groups)
        groups->add(run, 1);
    return distinct;
}

// The children of one level's spatial fan-out, as one tensor sees them: each
// child's offset (the translation of its delta from the first child's), the
// number of distinct offsets, and the link transfers a given step allows.
template <int W> class SpatialFanout {
  public:
    // Describes level `level`'s fan-out to tensor t's eyes (its first
    // `lanes` lanes live).
    void reset(int lanes, const Projection<W>& proj, const LoopNest& nest, int level, i64 fanout) {
        described_ = true;
        R_ = lanes;
        n_ = nest.numSpatial[level];
        nx_ = nest.numSpatialX[level];
        fanout_ = fanout;
        gridX_ = nest.gridX[level];
        gridY_ = nest.gridY[level];
        logicalX_ = 1;
        distinct_ = 1;
        keysReady_ = false;
        numCached_ = 0;
        unsigned seen = 0;
        bool disjoint = true;
        for (int s = 0; s < n_; ++s) {
            const LoopNest::Loop& loop = nest.spatial[level][s];
            dim_[s] = loop.dim;
            stride_[s] = loop.stride;
            factor_[s] = loop.factor;
            if (s < nx_)
                logicalX_ *= loop.factor;
            // (A dimension t ignores has a zero row, so it moves nothing.)
            u_[s] = proj.displacement(loop.dim, loop.stride);
            unsigned mask = 0;
            for (int r = 0; r < R_; ++r)
                mask |= unsigned(u_[s].r[r] != 0) << r;
            mask_[s] = mask;
            disjoint = disjoint && !(seen & mask);
            seen |= mask;
            distinct_ *= mask ? loop.factor : 1;
        }
        disjoint_ = disjoint;
        groupsReady_ = false;
        if (!disjoint) { // loops sharing a rank (P and R on one input coordinate)
            const Groups& groups = allGroups();
            if (!radixOverflow_) { // (offsets too wide to key: counted as independent)
                distinct_ = 0;
                for (int i = 0; i < groups.n; ++i)
                    distinct_ += groups.count[i];
            }
        }
    }

    // Whether reset() with these arguments (and the same tensor's
    // projection) would describe the fan-out this one describes: then its
    // offsets, groups and link transfers stand. (Every input of reset() is
    // compared, the grid too, though the same loops on one architecture
    // imply it.)
    bool describes(int lanes, const LoopNest& nest, int level, i64 fanout) const {
        if (!described_ || R_ != lanes || fanout_ != fanout || n_ != nest.numSpatial[level] ||
            nx_ != nest.numSpatialX[level] || gridX_ != nest.gridX[level] ||
            gridY_ != nest.gridY[level])
            return false;
        bool same = true;
        for (int s = 0; s < n_; ++s) {
            const LoopNest::Loop& loop = nest.spatial[level][s];
            same &= dim_[s] == loop.dim && factor_[s] == loop.factor && stride_[s] == loop.stride;
        }
        return same;
    }
    // Until the next reset(), describes() is false.
    void forget() { described_ = false; }

    i64 distinct() const { return distinct_; }

    // The groups of children with equal offsets (no link transfers).
    const Groups& allGroups() {
        if (!groupsReady_) {
            groupsReady_ = true;
            all_.n = 0;
            if (!disjoint_)
                prepareKeys();
            if (disjoint_ || radixOverflow_) {
                // every offset equally often
                all_.add(distinct_ == fanout_ ? 1 : fanout_ / distinct_, distinct_);
            } else {
                KeyBuffer keys(std::size_t(fanout_), 0);
                offsetKeys(0, n_, keys.data);
                countDistinct(keys.data, fanout_, &all_);
            }
        }
        return all_;
    }

    // Link transfers when the first child's tile moved by tau since the last
    // delta (and the deltas have the same shape): the children served by a
    // neighbour, and the distinct deltas left for the parent.
    // `left` receives the groups of the children left to the parent.
    void linkTransfers(const Disp<W>& tau, i64& served, i64& remaining, Groups& left) {
        served = 0;
        remaining = distinct_;
        if (!reaches(tau))
            return;
        const i64 key = keyOf(tau, false);
        for (int i = 0; i < numCached_; ++i)
            if (cachedKey_[i] == key) {
                served = cachedServed_[i];
                remaining = cachedRemaining_[i];
                left = cachedLeft_[i];
                return;
            }
        if (gridX_ == logicalX_)
            separable(key, served, remaining, left);
        else
            bruteForce(key, served, remaining, left);
        if (numCached_ < kCache) {
            cachedKey_[numCached_] = key;
            cachedServed_[numCached_] = served;
            cachedRemaining_[numCached_] = remaining;
            cachedLeft_[numCached_] = left;
            ++numCached_;
        }
    }

    // Whether two children's offsets may differ by tau (else no child can
    // have a neighbour's delta: the outer loops' moves, mostly).
    bool reaches(const Disp<W>& tau) { return within(tau, reachBox()); }

    // The moves that reach, as a box for within(): the offsets' spread per
    // lane, or -1 (nothing reaches) where the keys would overflow. For a
    // caller that tests many moves against one fan-out (a tensor's classes
    // of loops), so that the ones that reach nothing cost no call.
    Disp<W> reachBox() {
        prepareKeys();
        Disp<W> box;
        for (int r = 0; r < W; ++r)
            box.r[r] = radixOverflow_ ? -1 : spread_[r];
        return box;
    }
    static bool within(const Disp<W>& tau, const Disp<W>& box) {
        bool beyond = false;
        for (int r = 0; r < W; ++r)
            beyond |= std::abs(tau.r[r]) > box.r[r];
        return !beyond;
    }

  private:
    static constexpr int kCache = 4;

    // Offsets span [lo, lo + spread] per rank. Keys encode an offset in a
    // radix of twice the span, so a difference of keys names one difference
    // of offsets.
    void prepareKeys() {
        if (keysReady_)
            return;
        keysReady_ = true;
        radixOverflow_ = false;
        i64 mult = 1;
        for (int r = 0; r < R_; ++r) {
            lo_[r] = 0;
            spread_[r] = 0;
            for (int s = 0; s < n_; ++s) {
                const i64 span = (factor_[s] - 1) * u_[s].r[r];
                if (span < 0)
                    lo_[r] += span;
                spread_[r] += std::abs(span);
            }
            radix_[r] = mult;
            const i64 width = 2 * (spread_[r] + 1);
            i64 next;
            if (__builtin_mul_overflow(mult, width, &next) || next > (i64(1) << 62))
                radixOverflow_ = true;
            else
                mult = next;
        }
        for (int r = R_; r < W; ++r)
            spread_[r] = 0;
    }

    i64 keyOf(const Disp<W>& v, bool offset) const {
        i64 k = 0;
        for (int r = 0; r < R_; ++r)
            k += (offset ? v.r[r] - lo_[r] : v.r[r]) * radix_[r];
        return k;
    }

    // Keys of the offsets of loops [from, to) over their mixed-radix index
    // (the first loop fastest), written to keys[0 .. product).
    i64 offsetKeys(int from, int to, i64* keys) const {
        i64 count = 1;
        keys[0] = 0;
        for (int s = from; s < to; ++s) {
            const i64 step = keyOf(u_[s], false);
            for (i64 d = 1; d < factor_[s]; ++d)
                for (i64 i = 0; i < count; ++i)
                    keys[d * count + i] = keys[i] + d * step;
            count *= factor_[s];
        }
        return count;
    }

    // The grid is the logical one (X loops fill whole rows): a child is
    // served if its X neighbour or its Y neighbour had its delta, so the
    // children left form a product of the unserved X and Y positions.
    void separable(i64 key, i64& served, i64& remaining, Groups& left) const {
        const i64 LX = logicalX_, LY = fanout_ / logicalX_;
        KeyBuffer xs(std::size_t(LX), 0), ys(std::size_t(LY), 1);
        offsetKeys(0, nx_, xs.data);
        offsetKeys(nx_, n_, ys.data);
        const i64 keepX = compactUnserved(xs.data, LX, key);
        const i64 keepY = compactUnserved(ys.data, LY, key);
        served = fanout_ - keepX * keepY;
        left.n = 0;
        if (served == 0) {
            remaining = distinct_;
            return;
        }
        if (keepX == 0 || keepY == 0) {
            remaining = 0;
            return;
        }
        KeyBuffer sums(std::size_t(keepX * keepY), 2);
        for (i64 b = 0; b < keepY; ++b)
            for (i64 a = 0; a < keepX; ++a)
                sums.data[b * keepX + a] = xs.data[a] + ys.data[b];
        remaining = countDistinct(sums.data, keepX * keepY, &left);
    }

    // Moves the keys of the positions no neighbour (previous or next) serves
    // to the front; returns how many.
    static i64 compactUnserved(i64* keys, i64 n, i64 key) {
        // served[i]: the neighbour before or after i had i's delta last time
        // (its offset is i's plus tau).
        i64 kept = 0;
        i64 prev = 0;
        for (i64 i = 0; i < n; ++i) {
            const i64 here = keys[i];
            const bool servedBefore = i > 0 && prev - here == key;
            const bool servedAfter = i + 1 < n && keys[i + 1] - here == key;
            prev = here;
            if (!servedBefore && !servedAfter)
                keys[kept++] = here;
        }
        return kept;
    }

    // Any grid: children numbered in nest order fill rows of gridX_ (rows
    // may hold children of several logical rows).
    void bruteForce(i64 key, i64& served, i64& remaining, Groups& left) const {
        const i64 F = fanout_;
        Groups& groups = left;
        KeyBuffer keys(std::size_t(F), 0), rest(std::size_t(F), 1);
        offsetKeys(0, n_, keys.data);
        i64 kept = 0;
        served = 0;
        for (i64 k = 0; k < F; ++k) {
            const i64 here = keys.data[k];
            const i64 h = k % gridX_, row = k / gridX_;
            const bool hit =
                (h >= 1 && keys.data[k - 1] - here == key) ||
                (h + 1 < gridX_ && k + 1 < F && keys.data[k + 1] - here == key) ||
                (row >= 1 && keys.data[k - gridX_] - here == key) ||
                (row + 1 < gridY_ && k + gridX_ < F && keys.data[k + gridX_] - here == key);
            if (hit)
                ++served;
            else
                rest.data[kept++] = here;
        }
        groups.n = 0;
        remaining = served == 0 ? distinct_ : countDistinct(rest.data, kept, &groups);
    }

    bool described_ = false;
    int R_ = 0, n_ = 0, nx_ = 0;
    i64 fanout_ = 1, gridX_ = 1, gridY_ = 1, logicalX_ = 1;
    int dim_[kMaxDims];
    i64 stride_[kMaxDims];
    i64 factor_[kMaxDims];
    Disp<W> u_[kMaxDims];
    unsigned mask_[kMaxDims]; // lanes each loop moves
    i64 lo_[kMaxRanks], spread_[kMaxRanks], radix_[kMaxRanks];
    bool keysReady_ = false, radixOverflow_ = false;
    i64 distinct_ = 1;
    bool disjoint_ = true;
    bool groupsReady_ = false;
    Groups all_;
    int numCached_ = 0;
    i64 cachedKey_[kCache], cachedServed_[kCache], cachedRemaining_[kCache];
    Groups cachedLeft_[kCache];
};

// The fan-outs an evaluation cache keeps described from one evaluation to
// the next, per tensor and level (the last one met there): a search's
// neighbours, the optimal searcher's loop orders above all, mostly keep
// their fan-outs, and a fan-out's groups and link transfers (sorted keys)
// are much of its tensor's count. One set per lane width.
struct FanoutMemo {
    std::uint64_t model = 0; // CostModel::id() of the model whose projections they use
    SpatialFanout<Terms::kNarrowLanes> narrow[kMaxTensors][kMaxLevels];
    SpatialFanout<kMaxRanks> wide[kMaxTensors][kMaxLevels];

    template <int W> SpatialFanout<W>* of(int t) {
        if constexpr (W == Terms::kNarrowLanes)
            return narrow[t];
        else
            return wide[t];
    }
    void forgetAll() {
        for (int t = 0; t < kMaxTensors; ++t)
            for (int l = 0; l < kMaxLevels; ++l) {
                narrow[t][l].forget();
                wide[t][l].forget();
            }
    }
};

} // namespace mw::model_detail
