// PartialBound::Node (optimal_bound_node.h): a node's facts and the bounds of
// its pairs' deliveries. The rules are in optimal_bound.cpp's file header.
#include "search/optimal_bound_node.h"

#include "arch/architecture.h"
#include "workload/problem.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numeric>

namespace mw {

PartialBound::Node::Node(const PartialBound& bound, const Mapping& m, int k,
                         const std::int64_t* remaining, const Fanout* const* fanouts,
                         std::uint32_t spatialDecided, const i64 (*ext)[kMaxDims],
                         int describedAtLeast, int fixedAbove, int suffix)
    : bound(bound), m(m), k(k), remaining(remaining), fanouts(fanouts),
      spatialDecided(spatialDecided), L(bound.a_.numLevels()), D(bound.p_.numDims()), ext(ext),
      fixedAbove(fixedAbove) {
    for (int l = 0; l <= fixedAbove && l < L; ++l) {
        const LevelMapping& lm = m.levels[std::size_t(l)];
        const std::uint32_t loops = temporalLoops(lm, D);
        innerLoops[l] = innermostFirst(lm.order, loops, D);
        innerKnown[l] = std::min(l < fixedAbove ? D : suffix, std::popcount(loops));
    }
    // (Not beyond the fan-outs the caller described: placed factors may
    // close slots it saw open.)
    described = std::max(bound.describedFrom(k, remaining, spatialDecided), describedAtLeast);
    // A level whose spatial factors are decided has no free spatial slot.
    double room = 1.0, freeSpatial = 1.0;
    for (int d = 0; d < D; ++d)
        temporalAbove[d] = loopsAbove(k, d);
    for (int d = 0; d < D; ++d)
        spatialAboveMax[d] = 1.0;
    for (int l = 0; l < k; ++l) {
        const LevelMapping& lm = m.levels[l];
        double fixedHere = 1.0;
        bool freeSlot = false;
        for (int d = 0; d < D; ++d) {
            fixedHere *= double(lm.spatialX[d]) * lm.spatialY[d];
            spatialAboveMax[d] *= double(lm.spatialX[d]) * lm.spatialY[d];
            freeSlot = freeSlot || (remaining[d] > 1 && spatialSlots(l, d));
        }
        fixedSpatialAbove *= fixedHere;
        const double roomHere =
            freeSlot ? bound.fanoutReach(m, remaining, l, spatialDecided) / fixedHere : 1.0;
        room *= roomHere;
        levelFanoutMax[l] = fixedHere * roomHere;
        spatialKnown[l] = !freeSlot;
    }
    for (int d = 0; d < D; ++d) {
        bool spatialSlot = false;
        for (int l = 0; l < k; ++l)
            spatialSlot = spatialSlot || spatialSlots(l, d);
        if (spatialSlot) {
            freeSpatial *= double(remaining[d]);
            spatialAboveMax[d] *= double(remaining[d]);
        }
    }
    freeSpatialMax = std::min(room, freeSpatial);
    {
        double fixedSoFar = 1.0, fanoutSoFar = 1.0;
        for (int l = 0; l <= L; ++l) {
            if (l <= k) {
                instLB[l] = fixedSoFar;
                instUB[l] = std::min(fanoutSoFar, fixedSoFar * freeSpatialMax);
            } else {
                const double decided = double(fanouts[l - 1]->fanout);
                instLB[l] = instLB[l - 1] * decided;
                instUB[l] = instUB[l - 1] * decided;
            }
            if (l < k) {
                double fixedHere = 1.0;
                for (int d = 0; d < D; ++d)
                    fixedHere *= double(m.levels[l].spatialX[d]) * m.levels[l].spatialY[d];
                fixedSoFar *= fixedHere;
                fanoutSoFar *= levelFanoutMax[l];
            }
        }
    }
}

// Of t's distinct deltas at described fan-out j (child j + 1), the least
// share links may leave to the parent over any step: 1 where no link
// can act, else the least over the translations a step may equal of
// the offsets no link along it serves (0 where a zero move may serve;
// without zeroMoves, over the other translations only).
double PartialBound::Node::linkShareLeft(int j, int t, bool zeroMoves) const {
    const Fanout& fo = *fanouts[j];
    if (fo.fanout <= 1 || fo.translations[t].empty())
        return 1.0;
    const int c = j + 1;
    i64 g[kMaxRanks] = {};
    for (int i = 0; i < bound.terms_.count[t]; ++i) {
        const auto& term = bound.terms_.term[t][i];
        const i64 coef = std::abs(term.coef);
        for (int l = k; l <= j; ++l)
            if (m.levels[l].temporal[term.dim] > 1)
                g[term.rank] = std::gcd(g[term.rank], coef * ext[l + 1][term.dim] *
                                                          m.levels[l].spatialX[term.dim] *
                                                          m.levels[l].spatialY[term.dim]);
        // Any stride above k is a multiple of ext[k]. Above child j + 1 of
        // a level j not yet decided, it is one of the extent inside j's
        // temporal loops: ext[j + 1] times j's spatial factors.
        if (temporalAbove[term.dim])
            g[term.rank] = std::gcd(g[term.rank], j >= k ? coef * ext[k][term.dim]
                                                         : coef * ext[c][term.dim] *
                                                               m.levels[j].spatialX[term.dim] *
                                                               m.levels[j].spatialY[term.dim]);
    }
    double least = 1.0;
    for (std::size_t i = 0; i < fo.translations[t].size(); ++i) {
        const model_detail::Offset& tr = fo.translations[t][i];
        bool zero = true;
        int r = 0;
        for (; r < kMaxRanks; ++r) {
            const i64 x = tr[std::size_t(r)];
            if (x == 0)
                continue;
            zero = false;
            // (A remainder costs tens of cycles, and g is mostly 1.)
            if (g[r] == 0 || (g[r] > 1 && x % g[r] != 0))
                break; // no step moves by x here
        }
        if (r < kMaxRanks || (zero && !zeroMoves))
            continue;
        // A zero move needs a step equal to moves between (only a MAC's
        // unchanged operand after a first run gets it for free).
        if (zero && (c == L || strideRepeatPossible(c, t)))
            return 0.0;
        if (!zero)
            least = std::min(least, double(fo.unserved[t][i]) / double(fo.distinct[t]));
    }
    return least;
}

// The least share of t's deliveries to keeper c that links may leave to
// the parent (1: no link can act). Only at the fan-out right above c:
// the model, as Timeloop, drops the link transfers of a fan-out whose
// children bypass t (they hold nothing a neighbour could take).
double PartialBound::Node::linkShareInto(int c, int t) const {
    const int j = c - 1;
    if (j >= described)
        return linkShareLeft(j, t);
    if (levelFanoutMax[j] <= 1.0)
        return 1.0;
    return spatialKnown[j] ? bound.openLinkShareLeft(m, k, remaining, j, t) : 0.0;
}

// Children sharing each word between p and c, at most (`decidedPart`:
// the share of the fan-outs whose spatial factors are known).
double PartialBound::Node::sharingMax(int p, int c, int t, double* decidedPart) const {
    double decided = 1.0, open = 1.0;
    for (int j = p; j < c; ++j) {
        if (j >= described) {
            decided *= double(fanouts[j]->fanout) / double(fanouts[j]->distinct[t]);
        } else if (spatialKnown[j]) {
            decided *= bound.openSharingMax(m, j, t);
        } else {
            open *= levelFanoutMax[j];
        }
    }
    if (decidedPart)
        *decidedPart = decided;
    return decided * std::min(open, fixedSpatialAbove * freeSpatialMax);
}

// First touches over all instances of l (read-write tensors), at most.
double PartialBound::Node::firstTouchesMax(int l, int t) const {
    double words = bound.size_[t];
    for (int j = 0; j < l; ++j) {
        if (j >= k) {
            const Fanout& fo = *fanouts[j];
            if (fo.fanout <= 1)
                continue;
            // The model's partition: tile / the parent's spatial working set.
            i64 e[kMaxRanks], child[kMaxDims], set[kMaxDims];
            for (int d = 0; d < D; ++d) {
                child[d] = ext[j + 1][d];
                set[d] = child[d] * m.levels[j].spatialX[d] * m.levels[j].spatialY[d];
            }
            const double tile = double(model_detail::tileExtents(bound.terms_, t, child, e));
            const double ws = double(model_detail::tileExtents(bound.terms_, t, set, e));
            words *= double(fo.fanout) * tile / ws;
        } else if (spatialKnown[j]) {
            // fanout x tile / working set whatever the extents inside:
            // a spatial factor of a dimension with a rank of its own
            // (one term) divides that rank's working set at least as
            // much as it multiplies the children.
            const LevelMapping& lm = m.levels[j];
            for (int d = 0; d < D; ++d)
                if (!bound.ownRank_[t][d])
                    words *= double(lm.spatialX[d]) * lm.spatialY[d];
        } else {
            words *= levelFanoutMax[j];
        }
    }
    return words;
}

// At most, the spatial factors of d above level c.
double PartialBound::Node::spatialAbove(int c, int d) const {
    if (c >= k) {
        double spatial = spatialAboveMax[d];
        for (int l = k; l < c; ++l)
            spatial *= double(m.levels[l].spatialX[d]) * m.levels[l].spatialY[d];
        return spatial;
    }
    double spatial = 1.0;
    bool slot = false;
    for (int l = 0; l < c; ++l) {
        spatial *= double(m.levels[l].spatialX[d]) * m.levels[l].spatialY[d];
        slot = slot || spatialSlots(l, d);
    }
    return slot ? spatial * double(remaining[d]) : spatial;
}

// Every word an instance of c holds, fetched once, over c's instances:
// per rank the distinct coordinates its tiles span, over the dimensions'
// extents above its spatial position (their product where no dimension
// indexes two ranks, else the largest). A tile is a box e[r] wide on
// rank r, and its offset along each dimension d is a multiple of d's
// extent x at c (every stride above c is), so with the rank's other
// terms held, the n / x tiles along d lie at least |coef| x apart: they
// span n / x times min(e[r], |coef| x) coordinates, n where coef is 1,
// and with a stride the gaps between windows where they do not overlap
// (a 1x1 convolution of stride 2 with P looping inside c spans 2x - 1
// rows per tile, not x). Extents above k are the least the completions
// have, and the span only grows with them.
// (e: the tile's extents on t's ranks, from tileExtents.)
double PartialBound::Node::coverAt(int c, int t, const i64* e) const {
    double cover = 1.0;
    for (int r = 0; r < bound.terms_.lanes[t]; ++r) {
        double most = 1.0;
        for (int i = 0; i < bound.terms_.count[t]; ++i) {
            const auto& term = bound.terms_.term[t][i];
            if (term.rank != r)
                continue;
            const double n = double(bound.p_.dims[term.dim].bound) / spatialAbove(c, term.dim);
            const double x = double(ext[c][term.dim]);
            const double span = std::min(double(e[r]), double(term.absCoef) * x);
            most = std::max(most, n / x * span);
        }
        cover = bound.rankDisjoint_[t] ? cover * most : std::max(cover, most);
    }
    return cover * instLB[c];
}

// May a step repeat the stride of a first class that is a loop of d
// above c (the model's twins: a later step that moves t's tile as that
// one did)? Only where two dimensions of one coordinate loop above c,
// or d loops above c at a level other than `at`, the first class's: a
// step moves a rank indexed by d alone by d's stride less the steps of
// the d loops inside it, which equals the first class's only with
// another d loop there.
bool PartialBound::Node::twinsPossible(int c, int t, int d, int at) const {
    if (strideRepeatPossible(c, t))
        return true;
    for (int l = 0; l < c; ++l)
        if (l != at && bound.mayLoopAt(m, k, remaining, l, d))
            return true;
    return false;
}

const PartialBound::Node::ChildTile& PartialBound::Node::childTile(int c, int t) {
    ChildTile& x = childTiles[std::size_t(c)][std::size_t(t)];
    if (!x.ready) {
        x.ready = true;
        x.tile = double(model_detail::tileExtents(bound.terms_, t, ext[c], x.e));
        x.N = 1.0;
        for (int d = 0; d < D; ++d)
            x.N *= double(bound.p_.dims[d].bound / ext[c][d]);
        x.cover = std::max(coverAt(c, t, x.e), x.tile * instLB[c]);
    }
    return x;
}

// Deliveries to decided child c < L, over all its instances. Walking up
// from c, the first decided level with a loop over a dimension t
// depends on is where t's first class is settled (`end`; -1: none). With
// `innermost` >= 0, only the orders whose innermost loop there is over
// that dimension count (one of that level's loops; see the joint orders
// in boundOf).
// With parentMin, also the least over the walks it grants of their
// deliveries times the share links may leave to the parent (the caller
// divides by the sharing): in the model, links serve a child of a
// storage level only in steps of a first class that moves its tensor,
// along that class's move where consecutive tiles overlap (a non-zero
// move), along any class's where they do not; a first class that is a
// run of loops not moving it leaves every delta to the parent.
double PartialBound::Node::deliveriesTo(int c, int t, int innermost, int* end, double* parentMin) {
    const DataSpace& ds = bound.p_.tensors[t];
    const ChildTile& known = childTile(c, t);
    const i64* e = known.e;
    const double tile = known.tile, N = known.N, cover = known.cover;
    const double inst = instLB[c];
    auto moves = [&](int d) { return ((ds.dimMask >> d) & 1u) != 0; };
    // The walk: the first decided level with loops above c (`first`),
    // and the run of loops that do not move t from there on, at most.
    double run = 1.0;
    bool runPossible = false, walkDone = false;
    bool runFirst = false; // a known run of loops that do not move t comes first
    int first = -1;
    if (end)
        *end = -1;
    for (int l = c - 1; l >= k && !walkDone; --l) {
        bool relevant = false, irrelevant = false;
        double here = 1.0;
        for (int d = 0; d < D; ++d) {
            if (m.levels[l].temporal[d] <= 1)
                continue;
            if (moves(d)) {
                relevant = true;
            } else {
                irrelevant = true;
                here *= double(m.levels[l].temporal[d]);
            }
        }
        if (!relevant && !irrelevant)
            continue;
        if (first < 0)
            first = l;
        walkDone = relevant;
        if (walkDone && end)
            *end = l;
        if (walkDone && innerKnown[l] > 0) {
            // The level's innermost loops are known: a moving one
            // innermost is the first class; a run of others is, exactly
            // the loops before the first moving one (or, where none is
            // known yet, at most every other loop of the level).
            double before = 1.0;
            int mover = -1;
            for (int i = 0; i < innerKnown[l] && mover < 0; ++i) {
                const int d = innerLoops[l][std::size_t(i)];
                if (moves(d))
                    mover = d;
                else
                    before *= double(m.levels[l].temporal[d]);
            }
            if (mover >= 0 && before == 1.0) {
                innermost = mover;
            } else {
                runFirst = true;
                if (mover >= 0)
                    here = before;
            }
            suffixOpen = suffixOpen || (l == fixedAbove && mover < 0);
        } else if (walkDone && l == fixedAbove) {
            suffixOpen = true;
        }
        if (walkDone && innermost >= 0 && moves(innermost)) {
            // The innermost loop here moves t: it is the first class,
            // or it ends the run of the levels below.
            runPossible = runPossible && first != l;
            break;
        }
        if (irrelevant) {
            runPossible = true;
            run *= here;
        }
    }
    bool anyOpen = false; // a loop may sit on the levels not yet decided
    if (!walkDone) {      // the run may go on into the undecided levels
        double open = 1.0;
        for (int d = 0; d < D; ++d)
            if (temporalAbove[d]) {
                anyOpen = true;
                if (!moves(d)) {
                    double fixed = 1.0;
                    for (int l = 0; l < k; ++l)
                        fixed *= double(m.levels[l].temporal[d]);
                    open *= fixed * double(remaining[d]);
                }
            }
        if (anyOpen && end)
            *end = kOpenLevels;
        // The innermost loop of the undecided levels, where given: one
        // that moves t ends the run below it (or is the first class).
        if (innermost < 0 || !moves(innermost)) {
            runPossible = runPossible || open > 1.0;
            run *= open;
        }
    }
    if (first < 0 && !anyOpen) { // one tile per instance: no step, no link
        if (parentMin)
            *parentMin = std::max(cover, tile * inst);
        return std::max(cover, tile * inst);
    }
    double best = std::numeric_limits<double>::infinity();
    double parentBest = std::numeric_limits<double>::infinity();
    double shareAll = -1.0, shareMoving = -1.0; // (worked out if asked)
    // `own`: of the words, those the first class's own steps deliver
    // (moving t by its step, never by zero: links serve them only along
    // a translation between neighbours that is not zero).
    auto option = [&](double words, bool moving, bool overlapping, double own = 0.0) {
        best = std::min(best, words);
        if (!parentMin)
            return;
        double share = 1.0;
        if (moving) {
            if (shareAll < 0.0)
                shareAll = linkShareInto(c, t);
            share = shareAll;
            if (overlapping && c - 1 >= described) {
                if (shareMoving < 0.0)
                    shareMoving = linkShareLeft(c - 1, t, false);
                share = shareMoving;
            }
        }
        double parent = share * std::max(cover, words);
        // Where a zero move may serve the other steps, the own steps
        // still leave at least the share of the moves that are not zero.
        if (moving && !overlapping && share < 1.0 && c - 1 >= described) {
            if (shareMoving < 0.0)
                shareMoving = linkShareLeft(c - 1, t, false);
            parent = std::max(parent, shareMoving * own);
        }
        parentBest = std::min(parentBest, parent);
    };
    if (runPossible)
        option(strideRepeatPossible(c, t) ? tile * inst : tile * N / run, false, false);
    // A first class that moves t: a loop over d, at the first decided
    // level with loops (over t's dimensions there), else anywhere above.
    for (int d = 0; d < D; ++d) {
        if (!moves(d) || runFirst || (innermost >= 0 && d != innermost))
            continue;
        if (first >= 0 ? m.levels[first].temporal[d] <= 1 : !loopsAbove(c, d))
            continue;
        // How far a step of `stride` coordinates of d moves t's tile
        // along lane r.
        auto shiftOf = [&](int r, i64 stride) {
            i64 shift = 0;
            for (int i = 0; i < bound.terms_.count[t]; ++i)
                if (bound.terms_.term[t][i].rank == r && bound.terms_.term[t][i].dim == d)
                    shift += std::abs(bound.terms_.term[t][i].coef) * stride;
            return shift;
        };
        // Its step moves the tile at least d's extent at c.
        double overlap = 1.0;
        for (int r = 0; r < bound.terms_.lanes[t]; ++r)
            overlap *= double(std::max<i64>(0, e[r] - shiftOf(r, ext[c][d])));
        const double delta = tile - overlap;
        // Whether consecutive tiles overlap: the loop's step is known
        // where its level is decided (the extent inside its temporal
        // loops).
        bool overlapping = false;
        if (first >= 0 && parentMin) {
            const i64 stride =
                ext[first + 1][d] * m.levels[first].spatialX[d] * m.levels[first].spatialY[d];
            overlapping = true;
            for (int r = 0; r < bound.terms_.lanes[t] && overlapping; ++r)
                overlapping = e[r] > shiftOf(r, stride);
        }
        // Its own steps: n0 - 1 of every n0 of the N tiles' walk, each
        // fetching at least the delta (n0 >= 2 where its level is open).
        const double n0 = first >= 0 ? double(m.levels[first].temporal[d]) : 2.0;
        const double own = (n0 - 1.0) / n0 * N * delta;
        if (first >= 0 && !twinsPossible(c, t, d, first)) {
            // Only its own n0 - 1 steps fetch the delta; every other
            // step fetches the whole tile (no step repeats its stride).
            option(N / n0 * (tile + (n0 - 1.0) * delta), true, overlapping, own);
        } else {
            option(delta * N + (tile - delta) * inst, true, overlapping, own);
        }
    }
    if (parentMin)
        *parentMin = parentBest;
    return std::max(cover, best);
}
} // namespace mw
