// The optimal searcher's children of a node (see optimal_search.cpp for the
// walk): the factors each step may give its level, the fan-outs those fix,
// described once in the whole walk, and the children's bounds, computed on
// the run's threads and sorted best first.
#include "search/optimal_walk.h"

#include "arch/architecture.h"
#include "model/order_effects.h"
#include "workload/problem.h"

#include <algorithm>
#include <cmath>

namespace mw::optimal_detail {

// (The largest: the first of equals.)
std::uint32_t slidingDimensions(const Problem& p) {
    const model_detail::Terms terms(p);
    std::uint32_t mask = 0;
    for (int t = 0; t < p.numTensors(); ++t)
        for (int r = 0, first = 0; r < terms.lanes[t]; first = terms.rankEnd[t][r++]) {
            if (terms.rankEnd[t][r] - first < 2)
                continue;
            int largest = terms.term[t][first].dim;
            for (int i = first + 1; i < terms.rankEnd[t][r]; ++i)
                if (p.dims[terms.term[t][i].dim].bound > p.dims[largest].bound)
                    largest = terms.term[t][i].dim;
            for (int i = first; i < terms.rankEnd[t][r]; ++i)
                if (terms.term[t][i].dim != largest)
                    mask |= 1u << terms.term[t][i].dim;
        }
    return mask;
}

const std::vector<i64>& OptimalSearch::divisors(i64 n) {
    auto [it, fresh] = divisors_.try_emplace(n);
    if (fresh)
        it->second = divisorsOf(n);
    return it->second;
}

void OptimalSearch::applyTo(const Frame& frame, const LevelChoice& c, Mapping& m,
                            std::array<i64, kMaxDims>& remaining) const {
    const int D = p_->numDims();
    LevelMapping& lm = m.levels[std::size_t(frame.level)];
    lm = frame.before;
    remaining = frame.remainingBefore;
    const bool spatial = frame.what == Decides::Whole || frame.what == Decides::Spatial;
    for (int d = 0; d < D; ++d) {
        const bool temporal = decidesTemporal(frame, d);
        if (temporal && hasRoom(d, frame.level, 0))
            lm.temporal[d] = c.t[d];
        if (spatial && hasRoom(d, frame.level, 1))
            lm.spatialX[d] = c.x[d];
        if (spatial && hasRoom(d, frame.level, 2))
            lm.spatialY[d] = c.y[d];
        remaining[d] /= i64(temporal ? c.t[d] : 1) * (spatial ? i64(c.x[d]) * c.y[d] : 1);
    }
}

void OptimalSearch::boundChildren(const Frame& frame) {
    // A bound costs a microsecond or more, and the pool's workers spin
    // between batches, so a fork-join costs about a bound: a few children are
    // worth sharing. (From 32, most nodes of an open space, some 21 children
    // each, were bounded on one thread: Eyeriss-like layer3.1.conv1 proved in
    // 2.42 s on 2 threads against 1.66 s from 8, medians of 4 alternated.)
    constexpr std::size_t kParallelFrom = 8;
    const std::size_t n = candidates_.size();
    const int workers = n >= kParallelFrom ? ctx_->workers() : 1;
    boundScratch_.resize(std::size_t(workers));
    for (int w = 0; w < workers; ++w) {
        BoundScratch& b = boundScratch_[std::size_t(w)];
        b.m = m_;
        b.fanouts = fanouts_;
    }
    const int k = decidedFrom(frame);
    const std::uint32_t spatialDecided = spatialDecidedAfter(frame);
    auto describeRange = [&](std::size_t begin, std::size_t end, int worker) {
        BoundScratch& b = boundScratch_[std::size_t(worker)];
        for (std::size_t u = begin; u < end; ++u) {
            const auto [i, level] = undescribed_[u];
            applyTo(frame, candidates_[i], b.m, b.remaining);
            bound_->describeFanout(b.m, level, *candidateFanouts_[i][std::size_t(level)]);
        }
    };
    // A child whose bound reaches the best so far is dropped and counted as
    // such whatever its bound's exact value: the bound may stop there.
    const double cutoff = useBound_ ? best() : kNoLimit;
    auto boundRange = [&](std::size_t begin, std::size_t end, int worker) {
        BoundScratch& b = boundScratch_[std::size_t(worker)];
        for (std::size_t i = begin; i < end; ++i) {
            LevelChoice& c = candidates_[i];
            applyTo(frame, c, b.m, b.remaining);
            for (int l = 0; l < a_->numLevels(); ++l)
                if (candidateFanouts_[i][std::size_t(l)])
                    b.fanouts[std::size_t(l)] = candidateFanouts_[i][std::size_t(l)];
            c.bound =
                bound_->at(b.m, k, b.remaining.data(), b.fanouts.data(), cutoff, spatialDecided)
                    .objective;
        }
    };
    if (workers > 1 && undescribed_.size() > 1)
        ctx_->parallelFor(undescribed_.size(), describeRange);
    else
        describeRange(0, undescribed_.size(), 0);
    if (workers > 1)
        ctx_->parallelFor(n, boundRange);
    else
        boundRange(0, n, 0);
}

std::pair<PartialBound::Fanout*, bool> OptimalSearch::fanoutEntry(int level) {
    auto [it, fresh] = fanoutCache_.try_emplace(fanoutKey(m_, level, p_->numDims()));
    return {&it->second, fresh};
}

template <class Take> void OptimalSearch::fanoutsFixedBy(const Frame& frame, Take&& take) {
    if (frame.what == Decides::Whole || frame.what == Decides::Temporal)
        take(frame.level);
    const int k = decidedFrom(frame);
    for (int l = bound_->describedFrom(k, remaining_.data(), spatialDecidedAfter(frame)); l < k;
         ++l)
        take(l);
}

void OptimalSearch::describeFanouts(const Frame& frame) {
    fanoutsFixedBy(frame, [&](int level) {
        const auto [fanout, fresh] = fanoutEntry(level);
        if (fresh)
            bound_->describeFanout(m_, level, *fanout);
        fanouts_[std::size_t(level)] = fanout;
    });
}

// The children of the node frame stands for: every way to give level
// frame.level the factors its step decides from what is left, that fits
// it, with its bound.
void OptimalSearch::generate(Frame& frame) {
    const int D = p_->numDims(), j = frame.level;
    nodes_ += 1;
    frame.before = m_.levels[std::size_t(j)];
    frame.remainingBefore = remaining_;
    // Per dimension: its options (t, x, y) at this level.
    auto& options = options_;
    options.resize(std::size_t(D));
    for (auto& o : options)
        o.clear();
    static const std::vector<i64> one{1};
    const bool spatial = frame.what == Decides::Whole || frame.what == Decides::Spatial;
    for (int d = 0; d < D; ++d) {
        const i64 R = remaining_[d];
        const bool temporal = decidesTemporal(frame, d);
        // A step deciding everything places all of d at d's outermost free
        // slot; the steps deciding d's temporal factors, after the spatial
        // ones, all that is left at d's outermost temporal slot. With none,
        // what the spatial steps left of d can never be placed: the branch
        // ends here.
        if (frame.what != Decides::Whole && temporal && lastTemporal_[d] < 0 && R > 1)
            continue;
        const bool last =
            frame.what == Decides::Whole ? lastLevel_[d] == j : temporal && lastTemporal_[d] >= j;
        for (i64 t : temporal ? divisors(R) : one) {
            if (t > 1 && !hasRoom(d, j, 0))
                continue;
            for (i64 s : spatial ? divisors(R / t) : one) {
                if (last && t * s != R)
                    continue;
                if (s == 1) {
                    options[d].push_back({std::uint32_t(t), 1, 1});
                    continue;
                }
                if (hasRoom(d, j, 1) && s <= room_[std::size_t(j)][0])
                    options[d].push_back({std::uint32_t(t), std::uint32_t(s), 1});
                if (hasRoom(d, j, 2) && s <= room_[std::size_t(j)][1])
                    options[d].push_back({std::uint32_t(t), 1, std::uint32_t(s)});
            }
        }
    }
    // Extents inside the level, and the level's own fixed factors.
    i64 ext[kMaxDims];
    for (int d = 0; d < D; ++d)
        ext[d] = extentInside(j, d) * i64(frame.before.temporal[d]) * frame.before.spatialX[d] *
                 frame.before.spatialY[d];
    const std::uint8_t keep = m_.levels[std::size_t(j)].keepMask;
    // The merge rule. Where the level inside keeps nothing and this level
    // has no spatial loops, and their loops share no dimension (or both loop
    // over one and the same only), the inner level's loops act as this
    // level's innermost ones would (loopsJoinLevelAbove): such a child is
    // matched, order for order, by the tiling that moves them here, which
    // has all those orders and more, so it is dropped. (Where they share a
    // dimension beside others, its two loops may sit apart, which no single
    // level's order has.) The inner level's factors must be free to move,
    // into free slots here, under no loop order constraint here.
    const int inner = j + 1;
    std::uint32_t innerLoops = 0;
    if ((frame.what == Decides::Temporal || frame.what == Decides::Whole) &&
        inner < a_->numLevels() && mergeable_[std::size_t(j)]) {
        for (int d = 0; d < D; ++d) {
            if (m_.levels[std::size_t(inner)].temporal[d] <= 1)
                continue;
            if (!hasRoom(d, inner, 0) || !hasRoom(d, j, 0) ||
                base_.levels[std::size_t(inner)].temporal[d] != 1) {
                innerLoops = 0;
                break;
            }
            innerLoops |= 1u << d;
        }
    }
    LevelChoice c{};
    candidates_.clear();
    candidateFanouts_.clear();
    undescribed_.clear();
    PartialBound::Fanout* ownFanout = nullptr;
    auto descend = [&](auto&& self, int d, i64 usedX, i64 usedY) -> void {
        if (d == D) {
            // Each fan-out is described once: the first child with it has it
            // described (boundChildren, with the bounds).
            apply(frame, c);
            if (innerLoops && loopsJoinLevelAbove(m_, j, D)) {
                prunedByMerge_ += 1;
                return;
            }
            std::array<PartialBound::Fanout*, kMaxLevels> fanouts{};
            fanoutsFixedBy(frame, [&](int level) {
                // A temporal step's own fan-out (its spatial factors and the
                // extents inside) is the same for all its children.
                const bool own = level == j && frame.what == Decides::Temporal;
                if (own && ownFanout) {
                    fanouts[std::size_t(level)] = ownFanout;
                    return;
                }
                const auto [entry, fresh] = fanoutEntry(level);
                if (own)
                    ownFanout = entry;
                if (fresh)
                    undescribed_.push_back({candidates_.size(), level});
                fanouts[std::size_t(level)] = entry;
            });
            candidates_.push_back(c);
            candidateFanouts_.push_back(fanouts);
            return;
        }
        const i64 base = ext[d];
        // Tiles only grow with d's factor here: a factor known to overflow
        // (or to fit) answers for every larger (smaller) one, without the
        // tiles computed again (once per option, on the walk's serial part).
        i64 fitsUpTo = 0, overflowsFrom = std::numeric_limits<i64>::max();
        for (const auto& o : options[std::size_t(d)]) {
            const i64 x = usedX * o[1], y = usedY * o[2];
            if (x > room_[std::size_t(j)][0] || y > room_[std::size_t(j)][1])
                continue;
            const i64 factor = i64(o[0]) * o[1] * o[2];
            ext[d] = base * factor;
            // Tiles only grow with the dimensions still to choose.
            if (j > 0 && factor > fitsUpTo) {
                if (factor < overflowsFrom && !space_->overflows(j, ext, keep)) {
                    fitsUpTo = factor;
                } else {
                    overflowsFrom = std::min(overflowsFrom, factor);
                    prunedByFit_ += 1;
                    continue;
                }
            }
            c.t[d] = o[0];
            c.x[d] = o[1];
            c.y[d] = o[2];
            self(self, d + 1, x, y);
        }
        ext[d] = base;
    };
    descend(descend, 0, 1, 1);
    m_.levels[std::size_t(j)] = frame.before;
    remaining_ = frame.remainingBefore;
    boundChildren(frame);
    bounds_ += std::int64_t(candidates_.size());
    for (const LevelChoice& child : candidates_)
        if (!drop(child.bound))
            frame.children.push_back(child);
    std::stable_sort(frame.children.begin(), frame.children.end(),
                     [](const LevelChoice& a, const LevelChoice& b) { return a.bound < b.bound; });
}

} // namespace mw::optimal_detail
