// A lower bound of the objective over every completion of a partial tiling.
//
// The model's energy is the MACs' energy, leakage (per utilized instance and
// cycle) and, per level and tensor it keeps, reads, fills and updates, each
// whole vector costing its energy; its cycles are the compute cycles,
// stretched where a level's bandwidth cannot keep up. Every one of them only
// grows with the counts, so bounds of the counts bound the objective. For
// each tensor and each pair of successive levels keeping it (p above c, c
// possibly the MACs), counting words summed over all instances:
//
// * Deliveries to c. One child gets its tile, then at each step the words
//   the step brings (data_movement.cpp): with the first class above c a run
//   of loops that do not move the tensor, its tile again at every step of
//   the loops outside the run (tile x N / run over all instances, N the
//   iterations and instances above c; Timeloop's stride-repeat rule can
//   lower that only when two dimensions of one coordinate both have loops
//   above, and then it stays at least one tile per instance); with a moving
//   first class d, at least tile + delta(d) per further step, delta(d) the
//   new words of a step no shorter than d's extent at c. Where that loop's
//   factor n0 is known and no later step can repeat its stride (no two
//   dimensions of one coordinate loop above c, and d loops at no other level
//   above it), only its own n0 - 1 steps in n0 fetch delta(d), every other
//   step the whole tile: (tile + (n0 - 1) delta(d)) x N / n0. Also, whatever
//   the walk, the words a step fetches are those its tile has that an
//   earlier tile (the one its step is compared with) had not, so each child
//   fetches every word its tiles span at least once (`cover`: a tile is a
//   box, which a stride leaves with gaps between the windows).
// * Loop orders. Each tensor's walk takes the order that suits it, but a
//   level has one order: the pairs whose walks end at a decided level (its
//   first loop over a dimension they depend on) all meet its innermost loop
//   first, and those whose walks go on into the levels not decided meet
//   those levels' innermost loop. Per such place, energy adds the least,
//   over the loops that may be innermost there, of what the pairs cost
//   beyond their own best orders given that loop (cycles keep each pair's
//   own best).
// * Capacity. What is left of a dimension that only one open level can take
//   (a temporal slot, and room in its tiles and those of the levels above it
//   for the dimension's least factor left: tiles only grow with factors) goes
//   there whole; a node where some dimension fits nowhere, or where an open
//   level's tile overflows already, has no completion; a node whose
//   remainders are all so placed is bounded as that completion.
// * Reads of p for those deliveries: at least every word of the tensor the
//   computation touches, links or not. A link serves a child only what its
//   neighbour held the step before (the neighbour's offset is the child's
//   plus the step's move), so a word no child held before comes from p; in
//   each class of steps that links serve, the children no neighbour serves
//   still read their deltas from p (Deliveries::linkable: at least one
//   distinct delta unless the move is zero, and a zero move brings no new
//   word). Over p's instances these cover every word (test_optimal checks it
//   of the model near good mappings, where links act). Also the deliveries
//   divided by the children sharing each word (fan-out over distinct
//   offsets), times the least share of its distinct deltas a class of
//   steps leaves to p. Links act only at the fan-out right above c: the
//   model, as Timeloop, drops the link transfers of a fan-out whose children
//   bypass the tensor. And there a link moves a delta only along a
//   translation tr between neighbouring children, and a step moves tiles by
//   an integer combination of loop strides, so where no such translation is
//   a multiple of the strides' gcd in every coordinate no link can act (the
//   share is 1). A step moving by tr leaves to p at least the distinct
//   offsets o with o + tr no child's (no neighbour can hold their delta);
//   the share is the least of those over the translations a step may equal,
//   over the distinct offsets (a zero move that may serve leaves none).
//   And per walk granted: the model links a storage level's children only
//   in steps of a first class that moves the tensor, along that class's
//   (non-zero) move where consecutive tiles overlap, along any class's where
//   they do not; so a first class that is a run leaves every delta to p,
//   one whose step overlaps the tile the share of the non-zero translations,
//   and one stepping past the tile that share of its own steps at least
//   (only the later classes may move the tile by zero).
// * Sharing among tensors: where several pairs cross the same fan-outs whose
//   spatial factors are still open, the factors that share one tensor's
//   words mostly tell another's children apart (a dimension a tensor
//   indexes alone in a coordinate, or as its coordinate's largest term,
//   gives its children distinct offsets), so the pairs split the fan-outs'
//   room rather than each taking it whole (addJointSharing).
// * Partial sums: updates are those deliveries; reads and fills subtract the
//   first touches (at most the tensor times the children holding each word).
//   The model counts those as the tensor times, per fan-out above, its
//   children over the ratio of the parent's spatial working set to a child's
//   tile; a spatial factor of a dimension that is the only term of one of
//   the tensor's ranks grows that ratio at least as much as the children
//   (1 + c(e s - 1) >= s (1 + c(e - 1)) for c, e, s >= 1), so where a
//   fan-out's spatial factors are decided, whatever the extents inside it,
//   only the other dimensions' factors can multiply the first touches.
// * Cycles: at most every MAC the fan-outs can feed busy; each
//   bandwidth-limited level moves at least its bounded words per instance.
//   A spatial factor divides its dimension, so an axis of an open fan-out
//   holds at most the largest product of the prime factors left to place
//   that fits it (fanoutReach), at most the axis.
// Levels not yet decided contribute what holds for any tile: c fetches every
// word the computation touches, and every word each of its instances' tiles
// span (the cover above, with the spatial factors above c at most what is
// fixed or decided and what is left, and the extents inside c at least what
// its levels hold so far), and p reads every one, and where no link can act
// above c, those deliveries over the children sharing each word. A fan-out
// above the decided levels whose spatial factors are decided, with nothing
// left to place between it and them, is described as a decided one is (its
// strides are known), and the links across it are judged as there; the
// strides of the loops above its children are multiples of the extents
// inside its temporal loops. A fan-out whose spatial factors are known but
// whose strides are not is judged without them where it can be
// (openLinkShareLeft: dimensions alone in their ranks, and chains of
// offsets along a move; openSharingMax:
// sharingDims).
// The rules for levels not yet decided are in optimal_bound_open.cpp.
#include "search/optimal_bound.h"

#include "arch/architecture.h"
#include "workload/problem.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>

namespace mw {

using model_detail::i64;

PartialBound::PartialBound(const MapSpace& space, const SearchObjective& objective)
    : space_(space), p_(space.problem()), a_(space.arch()), objective_(objective), terms_(p_) {
    const int L = a_.numLevels(), D = p_.numDims(), T = p_.numTensors();
    for (int t = 0; t < T; ++t) {
        touched_[t] = double(p_.touchedElements(t));
        size_[t] = double(p_.tensorSize(t));
        for (int i = 0; i < terms_.count[t]; ++i)
            negativeCoefficient_ = negativeCoefficient_ || terms_.term[t][i].coef < 0;
        for (int d = 0; d < D; ++d)
            onlyOwnRanks_[t][d] = true;
        for (int r = 0; r < terms_.lanes[t]; ++r) {
            const int first = r == 0 ? 0 : terms_.rankEnd[t][r - 1];
            const bool alone = terms_.rankEnd[t][r] - first == 1;
            for (int i = first; i < terms_.rankEnd[t][r]; ++i) {
                ownRank_[t][terms_.term[t][i].dim] |= alone;
                onlyOwnRanks_[t][terms_.term[t][i].dim] &= alone;
            }
        }
        std::uint32_t seen = 0;
        rankDisjoint_[t] = true;
        for (int r = 0; r < terms_.lanes[t]; ++r) {
            std::uint32_t dims = 0;
            for (int i = 0; i < terms_.count[t]; ++i)
                if (terms_.term[t][i].rank == r)
                    dims |= 1u << terms_.term[t][i].dim;
            rankDisjoint_[t] = rankDisjoint_[t] && !(dims & seen);
            seen |= dims;
        }
    }
    slotKinds_.assign(std::size_t(L), {});
    for (int d = 0; d < D; ++d)
        for (const MapSpace::Slot& s : space.factorSlots(d))
            slotKinds_[std::size_t(s.level)][std::size_t(d)] |= std::uint8_t(1u << s.kind);
    unitFanout_.distinct.fill(1);
}

namespace {

// Per translation, the distinct child offsets o of level `level`'s fan-out
// (tensor t) with o + translation no child's offset: a link along it serves
// none of those children (a child is served only by a neighbour whose offset
// is its own plus the step's move). The offsets are the same set whatever
// the spatial order, and o -> o + tr maps those served along tr onto those
// served along -tr, so either sign counts alike. Left at 0 (no claim) past
// kMaxEnumerated children.
void countUnserved(const model_detail::Terms& terms, const model_detail::LoopNest& nest, int level,
                   int t, model_detail::i64 fanout,
                   const std::vector<model_detail::Offset>& translations,
                   std::vector<model_detail::i64>& unserved) {
    using model_detail::Offset;
    unserved.assign(translations.size(), 0);
    constexpr i64 kMaxEnumerated = i64(1) << 16;
    if (translations.empty() || fanout > kMaxEnumerated)
        return;
    std::vector<Offset> offsets(1, Offset{});
    offsets.reserve(std::size_t(fanout));
    for (int s = 0; s < nest.numSpatial[level]; ++s) {
        const model_detail::LoopNest::Loop& loop = nest.spatial[level][s];
        const std::size_t n = offsets.size();
        for (i64 i = 1; i < loop.factor; ++i)
            for (std::size_t j = 0; j < n; ++j) {
                Offset o = offsets[j];
                for (int r = 0; r < kMaxRanks; ++r)
                    o[std::size_t(r)] += terms.unit[t][loop.dim][r] * loop.stride * i;
                offsets.push_back(o);
            }
    }
    std::sort(offsets.begin(), offsets.end());
    offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
    for (std::size_t i = 0; i < translations.size(); ++i) {
        i64 count = 0;
        for (const Offset& o : offsets) {
            Offset moved = o;
            for (int r = 0; r < kMaxRanks; ++r)
                moved[std::size_t(r)] += translations[i][std::size_t(r)];
            count += !std::binary_search(offsets.begin(), offsets.end(), moved);
        }
        unserved[i] = count;
    }
}

} // namespace

void PartialBound::describeFanout(const Mapping& m, int level, Fanout& out) const {
    const int T = p_.numTensors();
    model_detail::Factors f;
    model_detail::factorize(p_, a_, m, f); // fills f for decided levels whatever it says
    out.fanout = f.fanout[level];
    for (int t = 0; t < T; ++t) {
        out.distinct[t] = 1;
        out.translations[t].clear();
        out.unserved[t].clear();
    }
    if (out.fanout <= 1)
        return;
    model_detail::LoopNest nest;
    model_detail::buildLoopNest(p_, a_, m, f, nest);
    for (int t = 0; t < T; ++t)
        out.distinct[t] = model_detail::distinctChildOffsets(terms_, nest, level, t, out.fanout);
    for (int t = 0; t < T; ++t) {
        std::vector<model_detail::Offset>& tr = out.translations[t];
        model_detail::neighbourTranslationsAnyOrder(p_, a_, m, f, terms_, level, t, tr);
        // A translation and its opposite are both there; at() asks only
        // whether a step may equal one (a multiple of the strides' gcd, or
        // zero), which either answers alike: one of each pair is kept.
        std::erase_if(tr, [](const model_detail::Offset& x) {
            const auto nonzero = std::find_if(x.begin(), x.end(), [](auto v) { return v != 0; });
            return nonzero != x.end() && *nonzero < 0;
        });
        countUnserved(terms_, nest, level, t, out.fanout, tr, out.unserved[t]);
    }
}

PartialBound::Value PartialBound::at(const Mapping& m, int k, const std::int64_t* remaining,
                                     const Fanout* const* fanouts, double cutoff,
                                     std::uint32_t spatialDecided) const {
    return boundOf(m, k, remaining, fanouts, cutoff, spatialDecided, 0);
}

PartialBound::Value PartialBound::withOrdersAbove(const Mapping& m, const Fanout* const* fanouts,
                                                  int fixedAbove, int suffix,
                                                  const Evaluation& completion, double cutoff,
                                                  bool* suffixMatters) const {
    std::array<std::int64_t, kMaxDims> none;
    none.fill(1);
    return boundOf(m, 0, none.data(), fanouts, cutoff, (1u << a_.numLevels()) - 1, 0, &completion,
                   fixedAbove, suffix, suffixMatters);
}

PartialBound::Value PartialBound::boundOf(const Mapping& m, int k, const std::int64_t* remaining,
                                          const Fanout* const* fanouts, double cutoff,
                                          std::uint32_t spatialDecided, int describedAtLeast,
                                          const Evaluation* completion, int fixedAbove, int suffix,
                                          bool* suffixMatters) const {
    const int L = a_.numLevels(), D = p_.numDims(), T = p_.numTensors();
    if (suffixMatters)
        *suffixMatters = true; // (unless the bound is worked out whole)
    if (!completion)
        fixedAbove = suffix = 0;
    // Extents inside each level with the factors m holds so far: final from k
    // on; above k, the least its completions have (each a divisor of theirs).
    i64 ext[kMaxLevels + 1][kMaxDims];
    extentsFrom(m, 0, ext);
    // What is left of a dimension that only one open level can take (a
    // temporal slot, and room in its tiles and those of the levels above it
    // for d's least factor left) goes there whole: the node's completions
    // all have it, so it is bounded as a factor held there. A node where
    // some dimension fits nowhere has no completion. With everything placed,
    // and each open level's fan-out none or described by the caller, the
    // node is its one completion (loop orders aside), bounded as such.
    if (k >= 1) {
        LazyMapping placed;
        std::array<std::int64_t, kMaxDims> left{};
        switch (placeForced(m, k, remaining, spatialDecided, ext, placed, left)) {
        case Forced::None:
            break;
        case Forced::Impossible: {
            Value none;
            none.energy = none.cycles = none.objective = std::numeric_limits<double>::infinity();
            return none;
        }
        case Forced::Some: // (the fan-outs described are still the node's)
            return boundOf(*placed, k, left.data(), fanouts, cutoff, spatialDecided,
                           describedFrom(k, remaining, spatialDecided));
        case Forced::All: {
            // The open levels' fan-outs: none, or described already (no
            // placement lands between a described one and k: a level taking
            // one had an open temporal slot).
            std::array<const Fanout*, kMaxLevels> described{};
            std::copy_n(fanouts, L, described.begin());
            const int from = describedFrom(k, remaining, spatialDecided);
            bool all = true;
            for (int l = 0; l < k; ++l)
                if (a_.fanoutX(l) * a_.fanoutY(l) == 1)
                    described[std::size_t(l)] = &unitFanout_;
                else
                    all = all && l >= from;
            if (all)
                return boundOf(*placed, 0, left.data(), described.data(), cutoff, spatialDecided,
                               0);
            return boundOf(*placed, k, left.data(), fanouts, cutoff, spatialDecided, from);
        }
        }
    }
    const double computes = double(p_.computes());
    // Per level, its innermost real loops whose order is known (innermost
    // first): every one above fixedAbove, the innermost `suffix` there.
    std::array<int, kMaxLevels> innerKnown{};
    std::array<std::array<std::uint8_t, kMaxDims>, kMaxLevels> innerLoops;
    for (int l = 0; l <= fixedAbove && l < L; ++l) {
        const LevelMapping& lm = m.levels[std::size_t(l)];
        const std::uint32_t loops = temporalLoops(lm, D);
        innerLoops[l] = innermostFirst(lm.order, loops, D);
        innerKnown[l] = std::min(l < fixedAbove ? D : suffix, std::popcount(loops));
    }

    // Fan-outs described from level `described` on; the extents inside each
    // are known (those of levels from described + 1 on). (Not beyond those
    // the caller described: placed factors may close slots it saw open.)
    const int described = std::max(describedFrom(k, remaining, spatialDecided), describedAtLeast);
    // Spatial factors above k: fixed (or decided) ones, and room for the free
    // ones. A level whose spatial factors are decided has no free spatial slot.
    auto spatialSlots = [&](int l, int d) { return this->spatialSlots(l, d, spatialDecided); };
    double fixedSpatialAbove = 1.0, room = 1.0, freeSpatial = 1.0;
    std::array<bool, kMaxDims> temporalAbove{}; // d may have a temporal loop above k
    for (int d = 0; d < D; ++d)
        temporalAbove[d] = loopsAbove(m, k, remaining, k, d);
    std::array<double, kMaxDims> spatialAboveMax{};
    for (int d = 0; d < D; ++d)
        spatialAboveMax[d] = 1.0;
    std::array<double, kMaxLevels> levelFanoutMax{};
    std::array<bool, kMaxLevels> spatialKnown{}; // level l's spatial factors are m's
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
            freeSlot ? fanoutReach(m, remaining, l, spatialDecided) / fixedHere : 1.0;
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
    const double freeSpatialMax = std::min(room, freeSpatial);
    // Utilized instances of each level: bounds.
    std::array<double, kMaxLevels + 1> instLB{}, instUB{};
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
    const double macsUB = std::min(instUB[L], double(a_.compute.instances()));
    double cycles = std::ceil(computes / macsUB - 1e-9);

    auto loopsAbove = [&](int c, int d) { return this->loopsAbove(m, k, remaining, c, d); };
    auto strideRepeatPossible = [&](int c, int t) {
        return this->strideRepeatPossible(m, k, remaining, c, t);
    };
    // Of t's distinct deltas at described fan-out j (child j + 1), the least
    // share links may leave to the parent over any step: 1 where no link
    // can act, else the least over the translations a step may equal of
    // the offsets no link along it serves (0 where a zero move may serve;
    // without zeroMoves, over the other translations only).
    auto linkShareLeft = [&](int j, int t, bool zeroMoves = true) {
        const Fanout& fo = *fanouts[j];
        if (fo.fanout <= 1 || fo.translations[t].empty())
            return 1.0;
        const int c = j + 1;
        i64 g[kMaxRanks] = {};
        for (int i = 0; i < terms_.count[t]; ++i) {
            const auto& term = terms_.term[t][i];
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
    };
    // The least share of t's deliveries to keeper c that links may leave to
    // the parent (1: no link can act). Only at the fan-out right above c:
    // the model, as Timeloop, drops the link transfers of a fan-out whose
    // children bypass t (they hold nothing a neighbour could take).
    auto linkShareInto = [&](int c, int t) {
        const int j = c - 1;
        if (j >= described)
            return linkShareLeft(j, t);
        if (levelFanoutMax[j] <= 1.0)
            return 1.0;
        return spatialKnown[j] ? openLinkShareLeft(m, k, remaining, j, t) : 0.0;
    };
    // Children sharing each word between p and c, at most (`decidedPart`:
    // the share of the fan-outs whose spatial factors are known).
    auto sharingMax = [&](int p, int c, int t, double* decidedPart = nullptr) {
        double decided = 1.0, open = 1.0;
        for (int j = p; j < c; ++j) {
            if (j >= described) {
                decided *= double(fanouts[j]->fanout) / double(fanouts[j]->distinct[t]);
            } else if (spatialKnown[j]) {
                decided *= openSharingMax(m, j, t);
            } else {
                open *= levelFanoutMax[j];
            }
        }
        if (decidedPart)
            *decidedPart = decided;
        return decided * std::min(open, fixedSpatialAbove * freeSpatialMax);
    };
    // First touches over all instances of l (read-write tensors), at most.
    auto firstTouchesMax = [&](int l, int t) {
        double words = size_[t];
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
                const double tile = double(model_detail::tileExtents(terms_, t, child, e));
                const double ws = double(model_detail::tileExtents(terms_, t, set, e));
                words *= double(fo.fanout) * tile / ws;
            } else if (spatialKnown[j]) {
                // fanout x tile / working set whatever the extents inside:
                // a spatial factor of a dimension with a rank of its own
                // (one term) divides that rank's working set at least as
                // much as it multiplies the children.
                const LevelMapping& lm = m.levels[j];
                for (int d = 0; d < D; ++d)
                    if (!ownRank_[t][d])
                        words *= double(lm.spatialX[d]) * lm.spatialY[d];
            } else {
                words *= levelFanoutMax[j];
            }
        }
        return words;
    };
    // At most, the spatial factors of d above level c.
    auto spatialAbove = [&](int c, int d) {
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
    };
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
    auto coverAt = [&](int c, int t, const i64* e) {
        double cover = 1.0;
        for (int r = 0; r < terms_.lanes[t]; ++r) {
            double most = 1.0;
            for (int i = 0; i < terms_.count[t]; ++i) {
                const auto& term = terms_.term[t][i];
                if (term.rank != r)
                    continue;
                const double n = double(p_.dims[term.dim].bound) / spatialAbove(c, term.dim);
                const double x = double(ext[c][term.dim]);
                const double span = std::min(double(e[r]), double(term.absCoef) * x);
                most = std::max(most, n / x * span);
            }
            cover = rankDisjoint_[t] ? cover * most : std::max(cover, most);
        }
        return cover * instLB[c];
    };
    // May a step repeat the stride of a first class that is a loop of d
    // above c (the model's twins: a later step that moves t's tile as that
    // one did)? Only where two dimensions of one coordinate loop above c,
    // or d loops above c at a level other than `at`, the first class's: a
    // step moves a rank indexed by d alone by d's stride less the steps of
    // the d loops inside it, which equals the first class's only with
    // another d loop there.
    auto twinsPossible = [&](int c, int t, int d, int at) {
        if (strideRepeatPossible(c, t))
            return true;
        for (int l = 0; l < c; ++l)
            if (l != at && mayLoopAt(m, k, remaining, l, d))
                return true;
        return false;
    };
    // Deliveries to decided child c < L, over all its instances. Walking up
    // from c, the first decided level with a loop over a dimension t
    // depends on is where t's first class is settled (`end`; -1: none). With
    // `innermost` >= 0, only the orders whose innermost loop there is over
    // that dimension count (one of that level's loops; see the joint orders
    // below).
    constexpr int kOpenLevels = -2; // `end` where the walk goes on into the levels not decided
    // What deliveriesTo reads of child c's tile of t, whichever innermost
    // loop it is asked about (once per dimension for the joint orders):
    // made at the first call.
    struct ChildTile {
        bool ready = false;
        i64 e[kMaxRanks];
        double tile, N, cover;
    };
    std::array<std::array<ChildTile, kMaxTensors>, kMaxLevels + 1> childTiles;
    auto childTile = [&](int c, int t) -> const ChildTile& {
        ChildTile& x = childTiles[std::size_t(c)][std::size_t(t)];
        if (!x.ready) {
            x.ready = true;
            x.tile = double(model_detail::tileExtents(terms_, t, ext[c], x.e));
            x.N = 1.0;
            for (int d = 0; d < D; ++d)
                x.N *= double(p_.dims[d].bound / ext[c][d]);
            x.cover = std::max(coverAt(c, t, x.e), x.tile * instLB[c]);
        }
        return x;
    };
    // Whether some pair's walk ends at level fixedAbove without meeting a
    // loop that moves its tensor among those known there.
    bool suffixOpen = false;
    // With parentMin, also the least over the walks it grants of their
    // deliveries times the share links may leave to the parent (the caller
    // divides by the sharing): in the model, links serve a child of a
    // storage level only in steps of a first class that moves its tensor,
    // along that class's move where consecutive tiles overlap (a non-zero
    // move), along any class's where they do not; a first class that is a
    // run of loops not moving it leaves every delta to the parent.
    auto deliveriesTo = [&](int c, int t, int innermost = -1, int* end = nullptr,
                            double* parentMin = nullptr) {
        const DataSpace& ds = p_.tensors[t];
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
                for (int i = 0; i < terms_.count[t]; ++i)
                    if (terms_.term[t][i].rank == r && terms_.term[t][i].dim == d)
                        shift += std::abs(terms_.term[t][i].coef) * stride;
                return shift;
            };
            // Its step moves the tile at least d's extent at c.
            double overlap = 1.0;
            for (int r = 0; r < terms_.lanes[t]; ++r)
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
                for (int r = 0; r < terms_.lanes[t] && overlapping; ++r)
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
    };

    // A hair below, so that rounding in a different order of summation never
    // lifts the bound above a mapping that meets it exactly.
    constexpr double kSlack = 1.0 - 1e-9;
    double energy = computes * a_.compute.macEnergy;
    // Every term from here on only adds energy or cycles, so the sum so far,
    // with leakage over the compute cycles, bounds the objective too: once it
    // reaches the cutoff, it is the answer (most nodes are dropped, most of
    // them far above the cutoff).
    double leakAtComputeCycles = 0.0;
    for (int l = 0; l < L; ++l)
        leakAtComputeCycles += a_.levels[l].energy.leak * cycles * instLB[l];
    const double computeCycles = cycles;
    auto partial = [&] {
        Value v;
        v.energy = (energy + leakAtComputeCycles) * kSlack;
        v.cycles = computeCycles * kSlack;
        v.objective = objective_.value(v.energy, v.cycles);
        return v;
    };
    if (cutoff < std::numeric_limits<double>::infinity()) {
        if (const Value v = partial(); v.objective >= cutoff)
            return v;
    }
    std::array<double, kMaxLevels> reads{}, writes{};
    // Calls charge(level, words, energy per vector, read) for each access
    // the pair's deliveries make: fills of c, reads (and updates) of p.
    auto accesses = [&](const Pair& x, double delivered, double parentDelivered, auto&& charge) {
        const int t = x.t, p = x.p, c = x.c;
        if (c < L) {
            const double fills = x.rw ? std::max(0.0, delivered - x.firstTouchesC) : delivered;
            charge(c, fills, a_.levels[c].energy.write, false);
        }
        // Deliveries p reads (or takes as updates): every word, links or
        // not (see the file's header), and what the children fetch over
        // those sharing each word, times the share links may leave to p
        // (parentDelivered: that product, least over the walks granted).
        const double parent = std::max(touched_[t], parentDelivered / x.sharing);
        if (x.rw) {
            charge(p, parent, a_.levels[p].energy.update, false);
            charge(p, std::max(0.0, parent - x.firstTouchesP), a_.levels[p].energy.read, true);
        } else {
            charge(p, parent, a_.levels[p].energy.read, true);
        }
    };
    auto pairEnergy = [&](const Pair& x, double delivered, double parentDelivered) {
        double sum = 0.0;
        accesses(x, delivered, parentDelivered,
                 [&](int l, double w, double e, bool) { sum += energyOf(l, w, e); });
        return sum;
    };
    auto charge = [&](int l, double words, double perVector, bool read) {
        energy += energyOf(l, words, perVector);
        (read ? reads : writes)[l] += words;
    };
    std::array<Pair, kMaxTensors*(kMaxLevels + 1)> settled; // pairs with an end
    int numSettled = 0;
    // The fan-outs whose spatial factors are all still open, and the pairs
    // whose deliveries cross every one of them without links (at most one a
    // tensor): they share those fan-outs' spatial factors (see below).
    std::uint32_t openFanouts = 0;
    for (int j = 0; j < described; ++j)
        if (!spatialKnown[j] && levelFanoutMax[j] > 1.0)
            openFanouts |= 1u << j;
    std::array<Pair, kMaxTensors> across;
    int numAcross = 0;
    for (int t = 0; t < T; ++t) {
        const bool rw = p_.tensors[t].readWrite;
        int p = 0;
        for (int c = 1; c <= L; ++c) {
            if (c < L && !m.levels[c].keeps(t))
                continue;
            if (c <= fixedAbove) {
                // Deliveries into c depend on the loops above it only: the
                // completion's accesses of this pair are every ordering's
                // (fills of c; reads and updates of p, which serve only c).
                const LevelStats& parent = completion->levels[std::size_t(p)];
                const TensorLevelStats& from = parent.tensors[std::size_t(t)];
                energy += from.readEnergy + from.updateEnergy;
                reads[p] += double(from.reads) * double(parent.utilizedInstances);
                writes[p] += double(from.updates) * double(parent.utilizedInstances);
                if (c < L) {
                    const LevelStats& child = completion->levels[std::size_t(c)];
                    const TensorLevelStats& into = child.tensors[std::size_t(t)];
                    energy += into.fillEnergy;
                    writes[c] += double(into.fills) * double(child.utilizedInstances);
                }
                p = c;
                continue;
            }
            Pair x;
            x.t = t;
            x.p = p;
            x.c = c;
            x.rw = rw;
            x.linkShare = linkShareInto(c, t);
            if (c == L)
                x.delivered = computes;
            else if (c >= k)
                x.delivered = deliveriesTo(c, t, -1, &x.end, &x.parentDelivered);
            else { // a level not yet decided: every word its instances touch, once
                i64 e[kMaxRanks];
                model_detail::tileExtents(terms_, t, ext[c], e);
                x.delivered = std::max(touched_[t], coverAt(c, t, e));
            }
            if (c == L || c < k)
                x.parentDelivered = x.linkShare * x.delivered;
            if (c < L && rw)
                x.firstTouchesC = firstTouchesMax(c, t);
            if (rw)
                x.firstTouchesP = firstTouchesMax(p, t);
            x.sharing = sharingMax(p, c, t, &x.decidedSharing);
            accesses(x, x.delivered, x.parentDelivered, charge);
            if (openFanouts && x.linkShare == 1.0 && (openFanouts >> x.p) << x.p == openFanouts &&
                (openFanouts >> x.c) == 0)
                across[std::size_t(numAcross++)] = x;
            if (x.end != -1)
                settled[std::size_t(numSettled++)] = x;
            p = c;
        }
        if (cutoff < std::numeric_limits<double>::infinity() && t + 1 < T) {
            if (const Value v = partial(); v.objective >= cutoff)
                return v;
        }
    }
    // Sharing, jointly: the open fan-outs' factors do not share every
    // tensor's words at once (addJointSharing).
    if (numAcross > 1)
        addJointSharing(m, remaining, spatialDecided, openFanouts, levelFanoutMax.data(),
                        across.data(), numAcross, energy, reads.data(), writes.data());
    // Orders, jointly (energy only). Each tensor above took the order of
    // every level that suits it best, but one order serves all tensors at a
    // level: where the walks of several pairs end at a decided level, which
    // loop is innermost there decides each one's first class; where they go
    // on into the levels not decided, so does the innermost loop of those
    // (over a dimension that may still loop there). Per such place, the
    // least over its candidate loops of what the pairs then cost beyond the
    // above is added. (Cycles keep the pairs' own least deliveries.)
    // Both this extra and the joint sharing's may be added: a pair's parent
    // cost is h(D / s), h convex and increasing, for deliveries D and sharing
    // s; with D' >= D the deliveries at the actual innermost loop and
    // s <= S the sharing granted alone, d = D'/s is at least b + c - a for
    // a = D/S, b = D'/S, c = D/s (d - (b + c - a) = (b - a)(c - a) / a), so
    // h(d) - h(a) >= [h(b) - h(a)] + [h(c) - h(a)]: the orders extra and
    // the pair's share of the sharing extra. (Fills depend on D alone, and
    // each pair settles at one place.)
    for (int place = k - 1; place < L && numSettled > 0; ++place) {
        const int end = place < k ? kOpenLevels : place;
        double extra = std::numeric_limits<double>::infinity();
        bool any = false;
        if (place >= 0 && innerKnown[place] > 0)
            continue; // the pairs were charged at its known innermost loops
        for (int d = 0; d < D; ++d) {
            if (end == kOpenLevels ? !temporalAbove[d] : m.levels[place].temporal[d] <= 1)
                continue;
            double more = 0.0;
            for (int i = 0; i < numSettled; ++i) {
                const Pair& x = settled[std::size_t(i)];
                if (x.end != end)
                    continue;
                any = true;
                double parentGiven = 0.0;
                const double given = deliveriesTo(x.c, x.t, d, nullptr, &parentGiven);
                if (given <= x.delivered && parentGiven <= x.parentDelivered)
                    continue;
                more += pairEnergy(x, given, parentGiven) -
                        pairEnergy(x, x.delivered, x.parentDelivered);
            }
            extra = std::min(extra, more);
        }
        if (any)
            energy += extra;
    }
    for (int l = 0; l < L; ++l) {
        const StorageLevel& s = a_.levels[l];
        if (s.readBandwidth > 0)
            cycles = std::max(cycles, reads[l] / instUB[l] / s.readBandwidth);
        if (s.writeBandwidth > 0)
            cycles = std::max(cycles, writes[l] / instUB[l] / s.writeBandwidth);
    }
    for (int l = 0; l < L; ++l)
        energy += a_.levels[l].energy.leak * cycles * instLB[l];

    if (suffixMatters)
        *suffixMatters = suffixOpen;
    Value v;
    v.energy = energy * kSlack;
    v.cycles = cycles * kSlack;
    v.objective = objective_.value(v.energy, v.cycles);
    return v;
}

double PartialBound::energyOf(int l, double words, double perVector) const {
    const StorageLevel& s = a_.levels[std::size_t(l)];
    return words / (double(s.blockSize) * double(s.clusterSize)) * perVector;
}

} // namespace mw
