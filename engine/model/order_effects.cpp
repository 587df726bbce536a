// Which loop orders can change the counts of data_movement.cpp, and how.
//
// Fix a mapping's factors, keeps and spatial orders, and look at level k's
// temporal order. It acts only on the deliveries to children below k (the
// loops above a child at or above k are not k's). For a child c and tensor t,
// the walk there sees the loops above c in classes (each loop that moves t,
// and each run of loops that do not), and uses
//  (a) the first class above c: which loop it is (its stride, factor and the
//      overlap of one step) when it moves t, or where the run ends when it
//      does not; and the products of the loops above;
//  (b) every later class, through Timeloop's stride-repeat rule (a later step
//      that moves the tile by what the first class moved it fetches only the
//      first class's delta) and its link transfers (a delta a grid neighbour
//      had at the step before comes over a link).
// Classes outside level k see the same strides, weights and translations in
// every order of k: the moves of k's loops enter them whole or not at all.
// So wherever no class made of k's loops can take part in (b), k's order acts
// through (a) alone, which its signature records: for a tensor whose first
// class lies in an inner level nothing depends on k's order; for one whose
// first class starts at k, the innermost real loop of k when it moves t,
// else the set of loops of k in the run. A larger run only removes refetches
// of that tensor's tiles, and every count only raises energy and cycles, so
// of two signatures with the same innermost loop the one with the larger
// runs costs no more (signatureDominates).
//
// Whether a class of k can take part in (b) is settled by arithmetic on
// steps. With y the first class's loop and z a later one, and M the moving
// loops between them (any subset of the loops above c, so every order of
// every level is covered):
//  * stride repeat: z moves the tile by what y did when step(z) = 2 step(y)
//    + sum(M), or, after a first run, step(z) = sum(M); it matters only when
//    the first delta is smaller than the tile (an overlapping y, or a run).
//    A later run never repeats a stride (its move is minus a sum of steps);
//  * links: a class moves the tile by step(z) - sum(M), a run by -sum(M)
//    (M not empty), and a neighbour serves a child only when that is one of
//    the translations between neighbouring children (neighbourTranslations).
// When no such equation has a solution, (b) cannot see k's order.
#include "model/order_effects.h"

#include "arch/architecture.h"
#include "common/short_list.h"
#include "mapping/mapping.h"
#include "model/loop_nest.h"
#include "workload/problem.h"

#include <algorithm>
#include <vector>

namespace mw {

using model_detail::i64;
using model_detail::Offset;

OrderSignature orderSignature(const Problem& p, const std::array<std::uint8_t, kMaxDims>& order,
                              std::uint32_t real, std::uint8_t tensors) {
    OrderSignature sig;
    const int D = p.numDims();
    const std::array<std::uint8_t, kMaxDims> inner = innermostFirst(order, real, D);
    int n = 0;
    while (n < D && inner[std::size_t(n)] != 0xff)
        ++n;
    if (n == 0)
        return sig;
    sig.first = inner[0];
    for (int t = 0; t < p.numTensors(); ++t) {
        if (!((tensors >> t) & 1u))
            continue;
        const std::uint32_t moves = p.tensors[t].dimMask;
        for (int i = 0; i < n && !((moves >> inner[i]) & 1u); ++i)
            sig.run[t] |= 1u << inner[i];
    }
    return sig;
}

bool signatureDominates(const OrderSignature& a, const OrderSignature& b) {
    if (a.first != b.first)
        return false;
    for (int t = 0; t < kMaxTensors; ++t)
        if ((a.run[t] & b.run[t]) != b.run[t])
            return false;
    return true;
}

namespace {

// Tensor t's view of the temporal loops above one child: each loop's level
// and the translation one step of it gives t's tiles (zero when it does not
// move them).
struct StepLoop {
    int level;
    Offset step;
    bool moves;
};
// Lists on this path live on the stack (the optimal searcher asks for every
// order it considers): a level has at most one temporal loop per dimension.
using StepLoops = ShortList<StepLoop, std::size_t(kMaxLevels) * kMaxDims>;
using LevelSteps = ShortList<Offset, kMaxDims>; // steps of one level's loops

bool isZero(const Offset& v) {
    return std::all_of(v.begin(), v.end(), [](i64 x) { return x == 0; });
}

Offset minus(const Offset& a, const Offset& b) {
    Offset r;
    for (std::size_t i = 0; i < r.size(); ++i)
        r[i] = a[i] - b[i];
    return r;
}

// The sums of subsets of some steps, asked whether a target is one (of a
// non-empty subset if asked). Steps that each move one rank (convolutions,
// matrix products) are summed rank by rank, once, so that many targets cost
// a search each; others subset by subset per target (at most 2^kMaxDims).
class SubsetSums {
  public:
    SubsetSums() = default;
    explicit SubsetSums(const LevelSteps& steps) { reset(steps); }
    SubsetSums(const SubsetSums&) = delete; // (kilobytes of sums: built where used)
    SubsetSums& operator=(const SubsetSums&) = delete;

    // steps must outlive the queries. (The sums are made at the first:
    // many classes are never asked.)
    void reset(const LevelSteps& steps) {
        steps_ = &steps;
        ready_ = false;
    }

    bool contains(const Offset& target, bool nonEmpty) const {
        if (!ready_)
            prepare();
        if (!perRank_) {
            const LevelSteps& steps = *steps_;
            for (std::uint32_t mask = nonEmpty ? 1 : 0; mask < (1u << steps.size); ++mask) {
                Offset sum{};
                for (std::size_t i = 0; i < steps.size; ++i)
                    if ((mask >> i) & 1u)
                        for (std::size_t r = 0; r < sum.size(); ++r)
                            sum[r] += steps.items[i][r];
                if (sum == target)
                    return true;
            }
            return false;
        }
        for (std::size_t r = 0; r < kMaxRanks; ++r)
            if (!std::binary_search(rank_[r].begin(), rank_[r].end(), target[r]))
                return false;
        return !nonEmpty || !isZero(target) || zeroFromSome_;
    }

  private:
    void prepare() const {
        ready_ = true;
        const LevelSteps& steps = *steps_;
        perRank_ = true;
        zeroFromSome_ = false;
        for (const Offset& s : steps) {
            int ranks = 0;
            for (i64 x : s)
                ranks += x != 0;
            perRank_ = perRank_ && ranks == 1;
        }
        if (!perRank_)
            return;
        for (std::size_t r = 0; r < kMaxRanks; ++r) {
            Sums& sums = rank_[r];
            sums.clear();
            // (The distinct sums of j steps, at most 2^j, and each step
            // doubles them at most before duplicates go.)
            sums.push(0);
            for (const Offset& s : steps) {
                if (s[r] == 0)
                    continue;
                const std::size_t n = sums.size;
                for (std::size_t i = 0; i < n; ++i) {
                    zeroFromSome_ = zeroFromSome_ || sums.items[i] + s[r] == 0;
                    sums.push(sums.items[i] + s[r]);
                }
                std::sort(sums.begin(), sums.end());
                sums.size = std::size_t(std::unique(sums.begin(), sums.end()) - sums.begin());
            }
        }
    }

    using Sums = ShortList<i64, std::size_t(1) << kMaxDims>;
    const LevelSteps* steps_ = nullptr;
    // Made at the first question.
    mutable bool ready_ = false;
    mutable bool perRank_ = true;
    mutable Sums rank_[kMaxRanks];      // per rank, the distinct sums, ascending
    mutable bool zeroFromSome_ = false; // a non-empty subset of one rank sums to zero
};

// The moving loops above child c (c == L: the MACs), as tensor t sees them.
void loopsAbove(const Problem& p, const model_detail::Terms& terms,
                const model_detail::LoopNest& nest, int c, int t, StepLoops& out) {
    out.clear();
    const DataSpace& ds = p.tensors[t];
    // Loops of level l are temporal[firstAbove[l + 1], firstAbove[l]).
    for (int l = c - 1; l >= 0; --l)
        for (int i = nest.firstAbove[l + 1]; i < nest.firstAbove[l]; ++i) {
            const model_detail::LoopNest::Loop& loop = nest.temporal[i];
            StepLoop s{l, Offset{}, ((ds.dimMask >> loop.dim) & 1u) != 0};
            for (int k = 0; k < terms.count[t]; ++k)
                if (terms.term[t][k].dim == loop.dim)
                    s.step[std::size_t(terms.term[t][k].rank)] +=
                        terms.term[t][k].coef * loop.stride;
            out.push(s);
        }
}

// A child's tile of tensor t, its extent per lane (1 in the lanes past its
// live ranks, which no step moves).
Offset childTile(const model_detail::Terms& terms, int t, const i64* ext) {
    i64 e[kMaxRanks];
    model_detail::tileExtents(terms, t, ext, e);
    Offset extent;
    extent.fill(1);
    for (int r = 0; r < terms.lanes[t]; ++r)
        extent[std::size_t(r)] = e[r];
    return extent;
}

// Whether some class of level k's loops (or, with k < 0, of any level's) can
// move t's tiles above a child by one of `translations`, or repeat the first
// class's stride. macs: the child is the MACs (operands: no stride repeats,
// and links follow a first run too); else extent is the child's tile.
//
// The moves between the first class and a class at level l are every moving
// loop of the levels between l and the child (whatever their orders), and
// some of level l's own; the first class is a loop (or a run) of the
// innermost level above the child that has loops.
bool classCanAct(const StepLoops& above, int k, const Offset& extent,
                 const std::vector<Offset>& translations, bool macs, bool twins = true) {
    if (above.empty())
        return false;
    const bool withTwins = twins && !macs;
    // Tiles pass over links only after a moving first class, which is then
    // among the moves between.
    const bool linkNeedsMove = !macs;
    int first = above.items[0].level; // loops come innermost first
    for (const StepLoop& s : above)
        first = std::max(first, s.level);
    bool firstRun = false;
    for (const StepLoop& s : above)
        firstRun = firstRun || (s.level == first && !s.moves);
    auto overlaps = [&](const Offset& step) {
        for (std::size_t r = 0; r < extent.size(); ++r)
            if (extent[r] - std::abs(step[r]) <= 0)
                return false;
        return true;
    };
    // For a class at level l: the moves of the levels inside l (all between)
    // as one sum, and l's own moving loops but `except` (some between).
    // (Its free steps' sums are prepared once: every translation asks them.)
    struct Between {
        Offset forced{};
        bool forcedAny = false;
        ShortList<const StepLoop*, kMaxDims> free; // (one loop per dimension)
        LevelSteps freeSteps;
        SubsetSums sums;
    };
    auto between = [&](int level, const StepLoop* except, Between& b) {
        for (const StepLoop& s : above) {
            if (!s.moves || &s == except)
                continue;
            if (s.level > level) {
                for (std::size_t r = 0; r < b.forced.size(); ++r)
                    b.forced[r] += s.step[r];
                b.forcedAny = true;
            } else if (s.level == level) {
                b.free.push(&s);
                b.freeSteps.push(s.step);
            }
        }
        b.sums.reset(b.freeSteps);
    };
    // Whether target = forced + a sum of free steps (but `skip`), a non-empty
    // one overall if asked.
    auto reaches = [&](const Between& b, Offset target, const StepLoop* skip, bool nonEmpty) {
        for (std::size_t r = 0; r < target.size(); ++r)
            target[r] -= b.forced[r];
        nonEmpty = nonEmpty && !b.forcedAny;
        if (skip == nullptr)
            return b.sums.contains(target, nonEmpty);
        LevelSteps steps;
        for (const StepLoop* s : b.free)
            if (s != skip)
                steps.push(s->step);
        return SubsetSums(steps).contains(target, nonEmpty);
    };
    // A stride repeat: the class moves the tile by what the first class did,
    // g(z) = g(first). With moves(z) its own step (zero for a run): after a
    // first run, moves(z) = sum between; after an overlapping first loop y,
    // moves(z) = 2 step(y) + sum between but y.
    auto repeatsStride = [&](const Between& b, const Offset& move, int level) {
        if (firstRun && reaches(b, move, nullptr, true))
            return true;
        for (const StepLoop& y : above) {
            if (!y.moves || y.level != first || !overlaps(y.step))
                continue;
            if (y.level > level) {
                Offset target = move;
                for (std::size_t r = 0; r < target.size(); ++r)
                    target[r] -= 2 * y.step[r] - y.step[r]; // y is in the forced sum
                if (reaches(b, target, nullptr, false))
                    return true;
            } else if (std::find(b.free.begin(), b.free.end(), &y) != b.free.end()) {
                Offset target = move;
                for (std::size_t r = 0; r < target.size(); ++r)
                    target[r] -= 2 * y.step[r];
                if (reaches(b, target, &y, false))
                    return true;
            }
        }
        return false;
    };
    for (const StepLoop& z : above) {
        if (!z.moves || (k >= 0 && z.level != k))
            continue;
        Between b;
        between(z.level, &z, b);
        if (withTwins && repeatsStride(b, z.step, z.level))
            return true;
        for (const Offset& tr : translations)
            if (reaches(b, minus(z.step, tr), nullptr, linkNeedsMove))
                return true;
    }
    // Runs (of loops that do not move t) at level k, or at any level: their
    // own move is zero, and moves between them and the first class at least
    // one loop.
    ShortList<int, kMaxLevels> runLevels;
    for (const StepLoop& s : above)
        if (!s.moves && (k < 0 || s.level == k) &&
            std::find(runLevels.begin(), runLevels.end(), s.level) == runLevels.end())
            runLevels.push(s.level);
    for (const int level : runLevels) {
        Between b;
        between(level, nullptr, b);
        if (withTwins && repeatsStride(b, Offset{}, level))
            return true;
        for (const Offset& tr : translations) {
            Offset target;
            for (std::size_t r = 0; r < target.size(); ++r)
                target[r] = -tr[r];
            if (reaches(b, target, nullptr, true))
                return true;
        }
    }
    // Between MACs a first run hands each operand on unchanged (translation 0).
    if (macs && k < 0)
        for (const Offset& tr : translations)
            if (isZero(tr))
                return true;
    return false;
}

} // namespace

void temporalOrderEffects(const Problem& p, const Architecture& a, const Mapping& m,
                          std::uint32_t levels, TemporalOrderEffects* effects) {
    const int L = a.numLevels(), T = p.numTensors();
    model_detail::Factors f;
    if (!model_detail::factorize(p, a, m, f)) {
        for (int l = 0; l < L; ++l)
            effects[l] = {static_cast<std::uint8_t>((1u << T) - 1), true};
        return;
    }
    for (int l = 0; l < L; ++l)
        effects[l] = {};
    const model_detail::Terms terms(p);
    model_detail::LoopNest nest;
    model_detail::buildLoopNest(p, a, m, f, nest);
    std::vector<Offset> translations;
    StepLoops above;
    // Each child's loops above and its fan-out's translations, described
    // once for every level above it (they do not depend on that level).
    for (int t = 0; t < T; ++t) {
        for (int c = 1; c <= L; ++c) {
            const bool macs = c == L;
            const i64 F = f.fanout[c - 1];
            // Deliveries the model skips, or whose count nothing reads: a child
            // that bypasses t behind no fan-out; operands of MACs behind none
            // (one per MAC and step, in any order).
            if (F == 1 && (macs || !m.levels[c].keeps(t)))
                continue;
            bool described = false;
            Offset extent{};
            for (int level = 0; level < c; ++level) {
                if (!((levels >> level) & 1u) ||
                    nest.firstAbove[level] == nest.firstAbove[level + 1])
                    continue; // not asked, or no real loop at the level: any order
                TemporalOrderEffects& fx = effects[level];
                fx.tensors = static_cast<std::uint8_t>(fx.tensors | (1u << t));
                if (fx.beyondSignature)
                    continue;
                if (!described) {
                    loopsAbove(p, terms, nest, c, t, above);
                    extent = macs ? Offset{} : childTile(terms, t, f.ext[c]);
                    translations.clear();
                    if (F > 1)
                        model_detail::neighbourTranslations(p, terms, nest, c - 1, t, F,
                                                            translations);
                    described = true;
                }
                if (classCanAct(above, level, extent, translations, macs))
                    fx.beyondSignature = true;
            }
        }
    }
}

bool spatialOrderMatters(const Problem& p, const Architecture& a, const Mapping& m, int level,
                         const AnyOrderTranslations* translations) {
    const int L = a.numLevels(), D = p.numDims(), T = p.numTensors();
    model_detail::Factors f;
    if (!model_detail::factorize(p, a, m, f))
        return true;
    if (f.fanout[level] <= 1)
        return false;
    const LevelMapping& lm = m.levels[level];
    int x = 0, y = 0;
    for (int d = 0; d < D; ++d) {
        x += lm.spatialX[d] > 1;
        y += lm.spatialY[d] > 1;
    }
    if (x < 2 && y < 2) // one loop per axis: a single order
        return false;
    const model_detail::Terms terms(p);
    const int c = level + 1;
    const bool macs = c == L;
    model_detail::LoopNest nest;
    model_detail::buildLoopNest(p, a, m, f, nest);
    std::vector<Offset> computed;
    StepLoops above;
    for (int t = 0; t < T; ++t) {
        bool moved = false;
        for (int d = 0; d < D; ++d)
            moved = moved || (((p.tensors[t].dimMask >> d) & 1u) &&
                              std::int64_t(lm.spatialX[d]) * lm.spatialY[d] > 1);
        if (!moved) // every child holds the same tile: neighbours look alike in any order
            continue;
        if (!translations)
            model_detail::neighbourTranslationsAnyOrder(p, a, m, f, terms, level, t, computed);
        const std::vector<Offset>& all = translations ? (*translations)[t] : computed;
        loopsAbove(p, terms, nest, c, t, above);
        // Any class of any level (the first one's own step is a sum over
        // an empty set of moves between).
        const Offset extent = macs ? Offset{} : childTile(terms, t, f.ext[c]);
        if (classCanAct(above, -1, extent, all, macs, false))
            return true;
    }
    return false;
}

// Why the counts agree: the model collapses a level that keeps nothing (its
// loops join the walk of every tensor between the keepers around it), and a
// level's tiles span its own loops and those inside, so l's tiles already
// span l + 1's loops; only where they sit in the nest could tell them apart,
// and with no spatial loop of l between them, they sit alike. Two adjacent
// loops of one dimension visit the coordinates one loop of their product
// does, in the same order (the outer one's step moves the tile by the inner
// one's stride: a repeat of its stride, which Timeloop's rule counts alike).
bool loopsJoinLevelAbove(const Mapping& m, int l, int numDims) {
    if (l < 0 || l + 1 >= m.numLevels || m.levels[l + 1].keepMask != 0)
        return false;
    const LevelMapping &outer = m.levels[l], &inner = m.levels[l + 1];
    for (int d = 0; d < numDims; ++d)
        if (outer.spatialX[d] * outer.spatialY[d] > 1)
            return false;
    const std::uint32_t innerLoops = temporalLoops(inner, numDims);
    const std::uint32_t outerLoops = temporalLoops(outer, numDims);
    const bool oneAndTheSame = innerLoops == outerLoops && (innerLoops & (innerLoops - 1)) == 0;
    return (innerLoops & outerLoops) == 0 || oneAndTheSame;
}

} // namespace mw
