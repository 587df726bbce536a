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
// The rules for levels not yet decided are in optimal_bound_open.cpp; the
// bounds of each pair's deliveries, sharing and links at a node are in
// optimal_bound_node.cpp, and this file adds up what they imply.
#include "search/optimal_bound.h"
#include "search/optimal_bound_node.h"

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
    Node node(*this, m, k, remaining, fanouts, spatialDecided, ext, describedAtLeast, fixedAbove,
              suffix);
    const double macsUB = std::min(node.instUB[L], double(a_.compute.instances()));
    double cycles = std::ceil(computes / macsUB - 1e-9);

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
        leakAtComputeCycles += a_.levels[l].energy.leak * cycles * node.instLB[l];
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
    for (int j = 0; j < node.described; ++j)
        if (!node.spatialKnown[j] && node.levelFanoutMax[j] > 1.0)
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
            x.linkShare = node.linkShareInto(c, t);
            if (c == L)
                x.delivered = computes;
            else if (c >= k)
                x.delivered = node.deliveriesTo(c, t, -1, &x.end, &x.parentDelivered);
            else { // a level not yet decided: every word its instances touch, once
                i64 e[kMaxRanks];
                model_detail::tileExtents(terms_, t, ext[c], e);
                x.delivered = std::max(touched_[t], node.coverAt(c, t, e));
            }
            if (c == L || c < k)
                x.parentDelivered = x.linkShare * x.delivered;
            if (c < L && rw)
                x.firstTouchesC = node.firstTouchesMax(c, t);
            if (rw)
                x.firstTouchesP = node.firstTouchesMax(p, t);
            x.sharing = node.sharingMax(p, c, t, &x.decidedSharing);
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
        addJointSharing(m, remaining, spatialDecided, openFanouts, node.levelFanoutMax.data(),
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
        const int end = place < k ? Node::kOpenLevels : place;
        double extra = std::numeric_limits<double>::infinity();
        bool any = false;
        if (place >= 0 && node.innerKnown[place] > 0)
            continue; // the pairs were charged at its known innermost loops
        for (int d = 0; d < D; ++d) {
            if (end == Node::kOpenLevels ? !node.temporalAbove[d]
                                         : m.levels[place].temporal[d] <= 1)
                continue;
            double more = 0.0;
            for (int i = 0; i < numSettled; ++i) {
                const Pair& x = settled[std::size_t(i)];
                if (x.end != end)
                    continue;
                any = true;
                double parentGiven = 0.0;
                const double given = node.deliveriesTo(x.c, x.t, d, nullptr, &parentGiven);
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
            cycles = std::max(cycles, reads[l] / node.instUB[l] / s.readBandwidth);
        if (s.writeBandwidth > 0)
            cycles = std::max(cycles, writes[l] / node.instUB[l] / s.writeBandwidth);
    }
    for (int l = 0; l < L; ++l)
        energy += a_.levels[l].energy.leak * cycles * node.instLB[l];

    if (suffixMatters)
        *suffixMatters = node.suffixOpen;
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
