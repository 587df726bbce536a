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
//   new words of a step no shorter than d's extent at c. Also, whatever the
//   walk, the words a step fetches are those its tile has that an earlier
//   tile (the one its step is compared with) had not, so each child fetches
//   every word it touches at least once (`cover`).
// * Reads of p for those deliveries: at least every word of the tensor the
//   computation touches, links or not. A link serves a child only what its
//   neighbour held the step before (the neighbour's offset is the child's
//   plus the step's move), so a word no child held before comes from p; in
//   each class of steps that links serve, the children no neighbour serves
//   still read their deltas from p (Deliveries::linkable: at least one
//   distinct delta unless the move is zero, and a zero move brings no new
//   word). Over p's instances these cover every word (test_optimal checks it
//   of the model near good mappings, where links act). Where no link can act
//   between p and c, also the deliveries divided by the children sharing
//   each word (fan-out over distinct offsets): a link moves a delta only
//   along a translation between neighbouring children, and a step moves
//   tiles by an integer combination of loop strides, so where no such
//   translation is a multiple of the strides' gcd in every coordinate no
//   link can act.
// * Partial sums: updates are those deliveries; reads and fills subtract the
//   first touches (at most the tensor times the children holding each word).
// * Cycles: every MAC of the array busy at most; each bandwidth-limited level
//   moves at least its bounded words per instance.
// Levels not yet decided contribute what holds for any tile: c fetches every
// word the computation touches, and every word each of its instances
// touches (the cover above, with the spatial factors above c at most what
// is fixed or decided and what is left), and p reads every one. A fan-out
// above the decided levels whose spatial factors are decided, with nothing
// left to place between it and them, is described as a decided one is (its
// strides are known), and the links across it are judged as there; the
// strides of the loops above its children are multiples of the extents
// inside its temporal loops.
#include "search/optimal_bound.h"

#include "arch/architecture.h"
#include "workload/problem.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace mw {

using model_detail::i64;

PartialBound::PartialBound(const MapSpace& space, const SearchObjective& objective)
    : p_(space.problem()), a_(space.arch()), objective_(objective), terms_(p_) {
    const int L = a_.numLevels(), D = p_.numDims(), T = p_.numTensors();
    for (int t = 0; t < T; ++t) {
        touched_[t] = double(p_.touchedElements(t));
        size_[t] = double(p_.tensorSize(t));
        for (int i = 0; i < terms_.count[t]; ++i)
            negativeCoefficient_ = negativeCoefficient_ || terms_.term[t][i].coef < 0;
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
    noFanout_.resize(std::size_t(L));
}

void PartialBound::describeFanout(const Mapping& m, int level, Fanout& out) const {
    const int T = p_.numTensors();
    model_detail::Factors f;
    model_detail::factorize(p_, a_, m, f); // fills f for decided levels whatever it says
    out.fanout = f.fanout[level];
    for (int t = 0; t < T; ++t) {
        out.distinct[t] = 1;
        out.translations[t].clear();
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
    }
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
            open = open || (remaining[d] > 1 && (slotKinds_[std::size_t(j)][std::size_t(d)] & 1u));
        if (open)
            break;
    }
    return j;
}

PartialBound::Value PartialBound::at(const Mapping& m, int k, const std::int64_t* remaining,
                                     const Fanout* const* fanouts, double cutoff,
                                     std::uint32_t spatialDecided) const {
    const int L = a_.numLevels(), D = p_.numDims(), T = p_.numTensors();
    const double computes = double(p_.computes());

    // Extents of the decided levels; what the levels above k hold of each
    // dimension (their fixed factors and the free ones left).
    i64 ext[kMaxLevels + 1][kMaxDims];
    for (int d = 0; d < D; ++d)
        ext[L][d] = 1;
    // Fan-outs described from level `described` on; the extents inside each
    // are known (those of levels from described + 1 on).
    const int described = describedFrom(k, remaining, spatialDecided);
    for (int l = L - 1; l > described || l >= k; --l) {
        const LevelMapping& lm = m.levels[l];
        for (int d = 0; d < D; ++d)
            ext[l][d] = ext[l + 1][d] * i64(lm.temporal[d]) * lm.spatialX[d] * lm.spatialY[d];
    }
    // Spatial factors above k: fixed (or decided) ones, and room for the free
    // ones. A level whose spatial factors are decided has no free spatial slot.
    auto spatialSlots = [&](int l, int d) {
        return (spatialDecided >> l) & 1u ? 0u : slotKinds_[l][d] & 6u;
    };
    double fixedSpatialAbove = 1.0, room = 1.0, freeSpatial = 1.0;
    std::array<bool, kMaxDims> temporalAbove{}; // d may have a temporal loop above k
    std::array<double, kMaxDims> spatialAboveMax{};
    for (int d = 0; d < D; ++d)
        spatialAboveMax[d] = 1.0;
    std::array<double, kMaxLevels> levelFanoutMax{};
    for (int l = 0; l < k; ++l) {
        const LevelMapping& lm = m.levels[l];
        double fixedHere = 1.0;
        bool freeSlot = false;
        for (int d = 0; d < D; ++d) {
            fixedHere *= double(lm.spatialX[d]) * lm.spatialY[d];
            spatialAboveMax[d] *= double(lm.spatialX[d]) * lm.spatialY[d];
            temporalAbove[d] = temporalAbove[d] || lm.temporal[d] > 1 ||
                               (remaining[d] > 1 && (slotKinds_[l][d] & 1u));
            freeSlot = freeSlot || (remaining[d] > 1 && spatialSlots(l, d));
        }
        fixedSpatialAbove *= fixedHere;
        const double roomHere = freeSlot ? double(a_.fanoutX(l)) * a_.fanoutY(l) / fixedHere : 1.0;
        room *= roomHere;
        levelFanoutMax[l] = fixedHere * roomHere;
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

    // Per tensor rank, whether two dimensions may both loop above child c.
    auto loopsAbove = [&](int c, int d) {
        if (temporalAbove[d])
            return true;
        for (int l = k; l < c; ++l)
            if (m.levels[l].temporal[d] > 1)
                return true;
        return false;
    };
    auto strideRepeatPossible = [&](int c, int t) {
        if (negativeCoefficient_)
            return true;
        int dimsPerRank[kMaxRanks] = {};
        for (int i = 0; i < terms_.count[t]; ++i)
            if (loopsAbove(c, terms_.term[t][i].dim))
                ++dimsPerRank[terms_.term[t][i].rank];
        for (int r = 0; r < kMaxRanks; ++r)
            if (dimsPerRank[r] > 1)
                return true;
        return false;
    };
    // Can a link transfer act at described fan-out j (child j + 1) for t?
    auto linkPossible = [&](int j, int t) {
        const Fanout& fo = *fanouts[j];
        if (fo.fanout <= 1 || fo.translations[t].empty())
            return false;
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
        for (const model_detail::Offset& tr : fo.translations[t]) {
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
            if (r < kMaxRanks)
                continue;
            // A zero move needs a step equal to moves between (only a MAC's
            // unchanged operand after a first run gets it for free).
            if (!zero || c == L || strideRepeatPossible(c, t))
                return true;
        }
        return false;
    };
    auto linksBetween = [&](int p, int c, int t) {
        for (int j = p; j < c; ++j) {
            if (j >= described) {
                if (linkPossible(j, t))
                    return true;
            } else if (levelFanoutMax[j] > 1.0) {
                return true;
            }
        }
        return false;
    };
    // Children sharing each word between p and c, at most.
    auto sharingMax = [&](int p, int c, int t) {
        double decided = 1.0, open = 1.0;
        for (int j = p; j < c; ++j) {
            if (j >= described)
                decided *= double(fanouts[j]->fanout) / double(fanouts[j]->distinct[t]);
            else
                open *= levelFanoutMax[j];
        }
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
    // Every word an instance of c touches, fetched once, over c's instances:
    // per rank the distinct coordinates over the dimensions' extents above
    // its spatial position (their product where no dimension indexes two
    // ranks, else the largest).
    auto coverAt = [&](int c, int t) {
        double cover = 1.0;
        for (int r = 0; r < terms_.lanes[t]; ++r) {
            double most = 1.0;
            for (int i = 0; i < terms_.count[t]; ++i) {
                const auto& term = terms_.term[t][i];
                if (term.rank == r)
                    most =
                        std::max(most, double(p_.dims[term.dim].bound) / spatialAbove(c, term.dim));
            }
            cover = rankDisjoint_[t] ? cover * most : std::max(cover, most);
        }
        return cover * instLB[c];
    };
    // Deliveries to decided child c < L, over all its instances.
    auto deliveriesTo = [&](int c, int t) {
        const DataSpace& ds = p_.tensors[t];
        i64 e[kMaxRanks];
        const double tile = double(model_detail::tileExtents(terms_, t, ext[c], e));
        double N = 1.0;
        for (int d = 0; d < D; ++d)
            N *= double(p_.dims[d].bound / ext[c][d]);
        const double inst = instLB[c];
        const double cover = std::max(coverAt(c, t), tile * inst);
        // The walk, by its first class above c.
        double run = 1.0;
        bool runPossible = false, anyLoop = false, walkDone = false;
        for (int l = c - 1; l >= k && !walkDone; --l) {
            bool relevant = false, irrelevant = false;
            double here = 1.0;
            for (int d = 0; d < D; ++d) {
                if (m.levels[l].temporal[d] <= 1)
                    continue;
                if ((ds.dimMask >> d) & 1u) {
                    relevant = true;
                } else {
                    irrelevant = true;
                    here *= double(m.levels[l].temporal[d]);
                }
            }
            if (!relevant && !irrelevant)
                continue;
            anyLoop = true;
            if (irrelevant) {
                runPossible = true;
                run *= here;
            }
            walkDone = relevant;
        }
        if (!walkDone) { // the run may go on into the undecided levels
            double open = 1.0;
            for (int d = 0; d < D; ++d)
                if (temporalAbove[d]) {
                    anyLoop = true;
                    if (!((ds.dimMask >> d) & 1u)) {
                        runPossible = true;
                        double fixed = 1.0;
                        for (int l = 0; l < k; ++l)
                            fixed *= double(m.levels[l].temporal[d]);
                        open *= fixed * double(remaining[d]);
                    }
                }
            run *= open;
        }
        if (!anyLoop)
            return std::max(cover, tile * inst);
        double best = std::numeric_limits<double>::infinity();
        if (runPossible)
            best = strideRepeatPossible(c, t) ? tile * inst : tile * N / run;
        for (int d = 0; d < D; ++d) {
            if (!((ds.dimMask >> d) & 1u) || !loopsAbove(c, d))
                continue;
            // One step of a d loop above c moves the tile at least d's extent at c.
            double overlap = 1.0;
            for (int r = 0; r < terms_.lanes[t]; ++r) {
                i64 shift = 0;
                for (int i = 0; i < terms_.count[t]; ++i)
                    if (terms_.term[t][i].rank == r && terms_.term[t][i].dim == d)
                        shift += std::abs(terms_.term[t][i].coef) * ext[c][d];
                overlap *= double(std::max<i64>(0, e[r] - shift));
            }
            const double delta = tile - overlap;
            best = std::min(best, delta * N + (tile - delta) * inst);
        }
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
    auto charge = [&](int l, double words, double perVector, bool read) {
        const StorageLevel& s = a_.levels[l];
        // Over all instances: a cluster's access serves up to clusterSize of them.
        energy += words / (double(s.blockSize) * double(s.clusterSize)) * perVector;
        (read ? reads : writes)[l] += words;
    };
    for (int t = 0; t < T; ++t) {
        const bool rw = p_.tensors[t].readWrite;
        int p = 0;
        for (int c = 1; c <= L; ++c) {
            if (c < L && !m.levels[c].keeps(t))
                continue;
            double delivered, fills;
            if (c == L) {
                delivered = fills = computes;
            } else if (c >= k) {
                delivered = deliveriesTo(c, t);
                fills = rw ? std::max(0.0, delivered - firstTouchesMax(c, t)) : delivered;
            } else {
                // A level not yet decided: every word its instances touch, once.
                delivered = std::max(touched_[t], coverAt(c, t));
                fills = rw ? std::max(0.0, delivered - firstTouchesMax(c, t)) : delivered;
            }
            if (c < L)
                charge(c, fills, a_.levels[c].energy.write, false);
            // Deliveries p reads (or takes as updates): every word, links or
            // not (see the file's header), and where no link can act, what
            // the children fetch over those sharing each word.
            double parent = touched_[t];
            if (c >= k && !linksBetween(p, c, t))
                parent = std::max(parent, delivered / sharingMax(p, c, t));
            if (rw) {
                charge(p, parent, a_.levels[p].energy.update, false);
                charge(p, std::max(0.0, parent - firstTouchesMax(p, t)), a_.levels[p].energy.read,
                       true);
            } else {
                charge(p, parent, a_.levels[p].energy.read, true);
            }
            p = c;
        }
        if (cutoff < std::numeric_limits<double>::infinity() && t + 1 < T) {
            if (const Value v = partial(); v.objective >= cutoff)
                return v;
        }
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

    Value v;
    v.energy = energy * kSlack;
    v.cycles = cycles * kSlack;
    v.objective = objective_.value(v.energy, v.cycles);
    return v;
}

} // namespace mw
