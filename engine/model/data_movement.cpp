// What moves between levels, counted as Timeloop 0fc43fb counts it.
//
// Timeloop's nest analysis walks the loop nest (loops of factor 1 left out)
// and, at each storage level's outermost loop, takes the *delta* between the
// tile a child instance holds at one iteration and the one it held at the
// last: words that are new there are fetched from the parent. It does not
// run every iteration. Each loop runs its iteration 0, then its iteration 1
// stands for all the others (weighted by factor - 1); across its parent's
// iterations the comparison is with the tile of that iteration 1. Spatial
// loops run the first child only; child k's delta is the first child's,
// translated by k's offset. The rules below are that walk in closed form.
//
// * Temporal reuse. Over the loops above a child (innermost first, factors
//   n_j, tile displacement v_j per step in the tensor's coordinates) the walk
//   is a binary counter, each step j moving the tile by
//   tau_j = v_j - (v_0 + ... + v_{j-1}). A delta subtracts the previous tile
//   only while the translation repeats the one before it (Timeloop resets on a
//   change of stride): so step 0 always fetches the tile minus its overlap
//   with the tile moved back by tau_0, and step j > 0 fetches the same only
//   if tau_j == tau_0, else the whole tile.
// * Multicast and spatial halo. Children whose deltas are equal are served
//   by one read of the parent; deltas are equal when the children's offsets
//   are, so the reads are the number of distinct offsets, not the spatial
//   factors of the dimensions the tensor depends on (two spatial loops
//   sliding one coordinate, P and R, give P + R - 1 distinct windows).
// * Link transfers. A child whose new delta equals the last delta of a grid
//   neighbour (one step along X or Y on the level's grid, which is the
//   physical fan-out or the logical one if larger, children numbered
//   row-major in nest order) gets it over a link, when that lowers the
//   parent's reads. Between MACs this is how an operand that did not change
//   is not read again; between PEs it is Eyeriss' diagonal input reuse.
// * Collapse. Tiles of levels that bypass the tensor are removed after the
//   fact: the parent's reads are rescaled to the bypassed level's reads (its
//   multicast kept), and its link transfers dropped. Fills are the parent's
//   deliveries (multicast included) per child instance plus link transfers
//   received; partial results skip the first read and fill of each word
//   (Timeloop's partition size, per instance).

#include "arch/architecture.h"
#include "mapping/mapping.h"
#include "model/evaluation.h"
#include "model/loop_nest.h"
#include "model/spatial_fanout.h"
#include "workload/problem.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <vector>

namespace mw::model_detail {

namespace {

// What one level's innermost loop hands down over the run, as Timeloop keeps
// it: the words read per (group size, number of groups) of children sharing
// a delta, summed in Timeloop's order (sizes ascending), whence the distinct
// deltas read (A), the words delivered counting multicast (W) and each
// child's share of them; and the words children got over links (LT).
// (No member initializers: an evaluation clears only the levels it has,
// with clear(); an array of kMaxLevels cleared whole showed in callgrind.)
struct Deliveries {
    double A, W, share, LT;
    double linked; // words per child moved from the plain count to linked classes

    static constexpr int kMaxEntries = 48;
    struct Entry {
        i64 size, groups;
        double words;
    };
    Entry entry[kMaxEntries];
    int numEntries;

    void clear() {
        A = W = share = LT = linked = 0.0;
        numEntries = 0;
    }

    void addGroups(double words, const Groups& g) {
        for (int i = 0; i < g.n; ++i) {
            int k = 0;
            while (k < numEntries && (entry[k].size != g.size[i] || entry[k].groups != g.count[i]))
                ++k;
            if (k == numEntries) {
                if (numEntries == kMaxEntries)
                    k = numEntries - 1; // (never seen) fold into the last
                else
                    entry[numEntries++] = {g.size[i], g.count[i], 0.0};
            }
            entry[k].words += words * double(g.count[i]);
        }
    }

    // `weight` invocations of `words` words per child whose deltas may come
    // from neighbours: the first child's tile moved by tau since the last
    // delta, and that delta had the same shape.
    template <int W>
    void linkable(SpatialFanout<W>& sp, i64 distinct, double weight, i64 words,
                  const Disp<W>& tau) {
        if (words == 0 || weight == 0.0)
            return;
        i64 served = 0, left = 0;
        Groups groups;
        sp.linkTransfers(tau, served, left, groups);
        if (left >= distinct) // Timeloop takes link transfers only when they save reads
            return;
        const double w = weight * double(words);
        linked += w;
        addGroups(w, groups);
        LT += w * double(served);
    }

    // The rest (`plain` words per child, `all` the groups without links).
    void finish(double plain, const Groups& all, i64 fanout) {
        if (plain - linked > 0.0)
            addGroups(plain - linked, all);
        std::sort(entry, entry + numEntries, [](const Entry& a, const Entry& b) {
            return a.size < b.size || (a.size == b.size && a.groups < b.groups);
        });
        for (int k = 0; k < numEntries; ++k) {
            A += entry[k].words;
            const double delivered = entry[k].words * double(entry[k].size);
            W += delivered;
            share += fanout == 1 ? delivered : delivered / double(fanout);
        }
    }
};

// std::round (half away from zero), as Timeloop rounds, without a libm call
// (and without a branch on the sign: selects).
i64 roundHalfAway(double x) {
    const double magnitude = std::fabs(x);
    i64 whole = static_cast<i64>(magnitude);
    whole += magnitude - double(whole) >= 0.5 ? 1 : 0;
    return x < 0.0 ? -whole : whole;
}

// Words of a tile with lane extents `e` that a copy moved by tau does not
// cover. Over all W lanes: those past the tensor's have extent 1 (Tiles)
// and move 0, so they keep 1. (Two half products: a shorter chain of
// multiplies.)
template <int W> i64 overlapWith(const i64* e, const Disp<W>& tau) {
    i64 half[2] = {1, 1};
    for (int r = 0; r < W; ++r) {
        const i64 keep = e[r] - std::abs(tau.r[r]);
        half[2 * r / W] *= keep > 0 ? keep : 0;
    }
    return half[0] * half[1];
}

} // namespace

i64 distinctChildOffsets(const Terms& terms, const LoopNest& nest, int level, int t, i64 fanout) {
    if (fanout <= 1)
        return 1;
    const Projection<kMaxRanks> proj(terms, t);
    SpatialFanout<kMaxRanks> fan;
    fan.reset(terms.lanes[t], proj, nest, level, fanout);
    return fan.distinct();
}

namespace {

// The translations between grid-neighbouring children of spatial loops
// `loops` (nest order, the first nx on X) on a grid of gridX x gridY,
// appended to out (either way round; unsorted, maybe repeated).
void appendNeighbourTranslations(const DataSpace& ds, const Projection<kMaxRanks>& proj,
                                 const LoopNest::Loop* loops, int ns, int nx, i64 gridX, i64 gridY,
                                 std::vector<Offset>& out) {
    Offset u[2 * kMaxDims]; // each loop's move of the tile per iteration
    i64 count = 1, logicalX = 1;
    for (int s = 0; s < ns; ++s) {
        u[s].fill(0);
        if ((ds.dimMask >> loops[s].dim) & 1u) {
            const Disp<kMaxRanks> d = proj.displacement(loops[s].dim, loops[s].stride);
            std::copy(d.r, d.r + kMaxRanks, u[s].begin());
        }
        count *= loops[s].factor;
        if (s < nx)
            logicalX *= loops[s].factor;
    }
    auto add = [&out](const Offset& there) {
        Offset back;
        for (int r = 0; r < kMaxRanks; ++r)
            back[std::size_t(r)] = -there[std::size_t(r)];
        out.push_back(there);
        out.push_back(back);
    };
    if (gridX == logicalX || nx == ns) {
        // The grid is the logical one (X loops fill whole rows, or there is
        // one row): a step to the X neighbour counts up the X loops' mixed
        // radix, a step to the Y neighbour the Y loops', and each carry
        // occurs. A carry into loop j moves the tile by u_j less the full
        // runs of the loops inside j on that axis.
        for (int axis = 0; axis < 2; ++axis) {
            Offset runs{};
            for (int j = axis == 0 ? 0 : nx; j < (axis == 0 ? nx : ns); ++j) {
                Offset there;
                for (int r = 0; r < kMaxRanks; ++r) {
                    there[std::size_t(r)] = u[j][std::size_t(r)] - runs[std::size_t(r)];
                    runs[std::size_t(r)] += (loops[j].factor - 1) * u[j][std::size_t(r)];
                }
                add(there);
            }
        }
        return;
    }
    // Any grid: children numbered in nest order (the first loop fastest)
    // fill rows of gridX (SpatialFanout::bruteForce's neighbours).
    std::vector<Offset> offset(static_cast<std::size_t>(count));
    offset[0].fill(0);
    i64 filled = 1;
    for (int s = 0; s < ns; ++s) {
        for (i64 d = 1; d < loops[s].factor; ++d)
            for (i64 i = 0; i < filled; ++i)
                for (int r = 0; r < kMaxRanks; ++r)
                    offset[std::size_t(d * filled + i)][std::size_t(r)] =
                        offset[std::size_t(i)][std::size_t(r)] + d * u[s][std::size_t(r)];
        filled *= loops[s].factor;
    }
    auto between = [&](i64 from, i64 to) {
        Offset there;
        for (int r = 0; r < kMaxRanks; ++r)
            there[std::size_t(r)] =
                offset[std::size_t(to)][std::size_t(r)] - offset[std::size_t(from)][std::size_t(r)];
        add(there);
    };
    for (i64 k = 0; k < count; ++k) {
        const i64 h = k % gridX, row = k / gridX;
        if (h + 1 < gridX && k + 1 < count)
            between(k, k + 1);
        if (row + 1 < gridY && k + gridX < count)
            between(k, k + gridX);
    }
}

void sortUnique(std::vector<Offset>& out) {
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
}

} // namespace

void neighbourTranslations(const Problem& p, const Terms& terms, const LoopNest& nest, int level,
                           int t, i64 fanout, std::vector<Offset>& out) {
    out.clear();
    if (fanout <= 1)
        return;
    appendNeighbourTranslations(p.tensors[t], Projection<kMaxRanks>(terms, t), nest.spatial[level],
                                nest.numSpatial[level], nest.numSpatialX[level], nest.gridX[level],
                                nest.gridY[level], out);
    sortUnique(out);
}

void neighbourTranslationsAnyOrder(const Problem& p, const Architecture& a, const Mapping& m,
                                   const Factors& f, const Terms& terms, int level, int t,
                                   std::vector<Offset>& out) {
    out.clear();
    if (f.fanout[level] <= 1)
        return;
    const int D = p.numDims();
    // One nest (outer to inner at the level: the Y loops, the X loops, then
    // the others); its spatial loops are then permuted per axis, which
    // changes neither the grid nor the strides.
    // (A permutation even where a dimension is split over both axes, which
    // no legal mapping does.)
    Mapping ordered = m;
    const LevelMapping& lm = m.levels[level];
    auto group = [&lm](int d) { return lm.spatialY[d] > 1 ? 0 : lm.spatialX[d] > 1 ? 1 : 2; };
    int k = 0;
    for (int g = 0; g < 3; ++g)
        for (int d = 0; d < D; ++d)
            if (group(d) == g)
                ordered.levels[level].spatialOrder[k++] = std::uint8_t(d);
    LoopNest nest;
    buildLoopNest(p, a, ordered, f, nest);
    const int ns = nest.numSpatial[level], nx = nest.numSpatialX[level];
    LoopNest::Loop loops[2 * kMaxDims];
    std::copy(nest.spatial[level], nest.spatial[level] + ns, loops);
    auto byDim = [](const LoopNest::Loop& x, const LoopNest::Loop& y) { return x.dim < y.dim; };
    std::sort(loops, loops + nx, byDim);
    std::sort(loops + nx, loops + ns, byDim);
    const Projection<kMaxRanks> proj(terms, t);
    do {
        do {
            appendNeighbourTranslations(p.tensors[t], proj, loops, ns, nx, nest.gridX[level],
                                        nest.gridY[level], out);
        } while (std::next_permutation(loops + nx, loops + ns, byDim));
    } while (std::next_permutation(loops, loops + nx, byDim));
    sortUnique(out);
}

void buildLoopNest(const Problem& p, const Architecture& a, const Mapping& m, const Factors& f,
                   LoopNest& nest) {
    const int L = a.numLevels();
    const int D = p.numDims();
    nest.numTemporal = 0;
    nest.computeCycles = 1;
    nest.firstAbove[L] = 0;
    for (int l = L - 1; l >= 0; --l) {
        const LevelMapping& lm = m.levels[l];
        // Spatial loops: X (innermost first), then Y, as export-timeloop
        // writes the permutation and split.
        // Loops are written unconditionally and kept by advancing the count:
        // whether a factor is 1 is a coin toss on a search's mappings, and a
        // mispredicted branch costs more than the store.
        int ns = 0;
        nest.numSpatialX[l] = 0;
        if (f.fanout[l] > 1) {
            i64 logical[2] = {1, 1}; // X, Y
            for (int axis = 0; axis < 2; ++axis) {
                const auto& factors = axis == 0 ? lm.spatialX : lm.spatialY;
                const std::uint32_t dims = f.spatialDims[l][axis];
                if ((dims & (dims - 1)) == 0) {
                    // One loop or none on the axis (most often): no order to follow.
                    if (dims != 0) {
                        const int d = __builtin_ctz(dims);
                        nest.spatial[l][ns++] = {d, i64(factors[d]), f.ext[l + 1][d]};
                        logical[axis] = factors[d];
                    }
                } else {
                    for (int i = D - 1; i >= 0; --i) {
                        const int d = lm.spatialOrder[i];
                        const i64 factor = factors[d];
                        nest.spatial[l][ns] = {d, factor, f.ext[l + 1][d]};
                        ns += factor > 1;
                        logical[axis] *= factor;
                    }
                }
                if (axis == 0)
                    nest.numSpatialX[l] = ns;
            }
            nest.gridX[l] = std::max<i64>(a.fanoutX(l), logical[0]);
            nest.gridY[l] = std::max<i64>(a.fanoutY(l), logical[1]);
        }
        nest.numSpatial[l] = ns;
        if (!f.hasTemporal[l]) { // (no loop to add: dummy levels, and some others)
            nest.firstAbove[l] = nest.numTemporal;
            continue;
        }
        // A temporal loop steps over the level's spatial tile: the tile
        // inside, times the spatial factors (none where the level does not
        // fan out; the loop is written twice so as not to multiply by them).
        auto addTemporal = [&](auto strideOf) {
            int nt = nest.numTemporal;
            i64 cycles = nest.computeCycles;
            for (int i = D - 1; i >= 0; --i) {
                const int d = lm.order[i];
                const i64 factor = lm.temporal[d];
                nest.temporal[nt] = {d, factor, strideOf(d)};
                nt += factor > 1;
                cycles *= factor;
            }
            nest.numTemporal = nt;
            nest.computeCycles = cycles;
            nest.firstAbove[l] = nt;
        };
        const i64* inside = f.ext[l + 1];
        if (f.fanout[l] > 1)
            addTemporal([&](int d) { return inside[d] * lm.spatialX[d] * lm.spatialY[d]; });
        else
            addTemporal([inside](int d) { return inside[d]; });
    }
    nest.suffixProduct[nest.numTemporal] = 1;
    for (int i = nest.numTemporal - 1; i >= 0; --i)
        nest.suffixProduct[i] = nest.suffixProduct[i + 1] * nest.temporal[i].factor;
}

Terms::Terms(const Problem& p) {
    for (int t = 0; t < p.numTensors(); ++t) {
        const DataSpace& ds = p.tensors[t];
        i64(&unit)[kMaxDims][kMaxRanks] = this->unit[t];
        for (int d = 0; d < kMaxDims; ++d)
            for (int r = 0; r < kMaxRanks; ++r)
                unit[d][r] = 0;
        int n = 0, lane = 0;
        for (int r = 0; r < ds.numRanks; ++r) {
            const int first = n;
            for (int i = 0; i < ds.ranks[r].numTerms; ++i) {
                const int d = ds.ranks[r].terms[i].dim;
                const i64 coef = ds.ranks[r].terms[i].coef;
                if (p.dims[d].bound > 1) {
                    term[t][n++] = {d, lane, coef, coef < 0 ? -coef : coef};
                    unit[d][lane] += coef;
                }
            }
            if (n > first)
                rankEnd[t][lane++] = n;
        }
        count[t] = n;
        lanes[t] = lane;
        maxLanes = std::max(maxLanes, lane);
        flatBegin[t] = numFlat;
        for (int i = 0; i < n; ++i)
            flat[numFlat++] = {term[t][i].dim, t * kMaxRanks + term[t][i].rank, term[t][i].absCoef};
    }
    for (int t = p.numTensors(); t <= kMaxTensors; ++t)
        flatBegin[t] = numFlat;
    for (int t = 0; t < kMaxTensors; ++t)
        for (int d = 0; d < kMaxDims; ++d) {
            const bool live = t < p.numTensors();
            unitCoef[t][d] = 0;
            int moved = 0;
            for (int r = 0; r < kMaxRanks; ++r) {
                const bool moves = live && unit[t][d][r] != 0;
                unitMask[t][d][r] = moves ? ~i64(0) : 0;
                if (moves) {
                    unitCoef[t][d] = unit[t][d][r];
                    ++moved;
                }
            }
            oneLanePerDim = oneLanePerDim && moved <= 1;
        }
    paired = narrow();
    for (int t = 0; t < p.numTensors() && paired; ++t)
        for (int lane = 0, first = 0; lane < lanes[t]; first = rankEnd[t][lane++]) {
            if (rankEnd[t][lane] - first > 2) {
                paired = false;
                break;
            }
            for (int i = first; i < rankEnd[t][lane]; ++i) {
                pair[t][lane].dim[i - first] = term[t][i].dim;
                pair[t][lane].absCoef[i - first] = term[t][i].absCoef;
                pair[t][lane].base -= term[t][i].absCoef;
            }
        }
    i64 bounds[kMaxDims];
    for (int d = 0; d < kMaxDims; ++d)
        bounds[d] = d < p.numDims() ? p.dims[d].bound : 1;
    for (i64& e : wholeExtent)
        e = 1;
    for (i64& words : wholeSize)
        words = 1;
    tileExtentsAll(*this, p.numTensors(), bounds, wholeExtent, wholeSize);
}

namespace {

// countDataMovement on W lanes.
template <int W>
void countOnLanes(const Problem& p, const Architecture& a, const Mapping& m, const Factors& f,
                  const Terms& terms, const Tiles& tiles, const LoopNest& nest, int t,
                  LevelDelivery* deliveries, int reuse, FanoutMemo* memo, Evaluation& out) {
    using Disp = model_detail::Disp<W>;
    const int L = a.numLevels();
    const DataSpace& ds = p.tensors[t];
    const int lanes = terms.lanes[t];
    const Projection<W> proj(terms, t);

    // The temporal loops in classes: each loop that moves t's tiles is a
    // class, and so is each run of loops that do not. A class's g is its
    // step's move less the moves of all loops inside it (for a run, less
    // only); a child whose loops start at loop `first` (prefix S there) sees
    // step m move its tile by tau_m = g_m + S_first, and repeat step 0's
    // stride exactly when g_m equals g of first's class.
    struct Class {
        int begin, end; // loops [begin, end)
        bool moves;     // a loop that moves the tiles (end == begin + 1)
        Disp step;      // its move (zero for a run)
        Disp S;         // moves of all loops before begin
        Disp g;
        double w;     // invocations the class starts: Q[begin] - Q[end]
        double twinW; // w of the later classes with the same g (-1: not yet known)
    };
    const i64* Q = nest.suffixProduct; // Q[i]: product of the factors of loops i and outward
    Class cls[kMaxLevels * kMaxDims];
    // The class of the first loop above each level's own loops.
    int classAbove[kMaxLevels + 1];
    int numClasses = 0;
    // (Only levels not taken from a cache walk the classes.)
    if (reuse < L) {
        // One pass, the same work for every loop: a loop that does not move
        // the tiles has a zero step, so a run's S and g stay what its first
        // loop wrote, and rewriting them as the run goes on changes nothing.
        // Only where a class begins depends on the loop, and it is counted,
        // not branched on (a search's loops are a coin toss to a predictor).
        int classOf[kMaxLevels * kMaxDims + 1]; // the class holding each loop
        const int n = nest.numTemporal;
        // (Written for either way of computing a displacement, chosen once.)
        auto walk = [&](auto displacement) {
            Disp S = zeroDisp<W>();
            int k = -1, begin = 0;
            bool lastMoves = true; // (so that loop 0 begins a class)
            for (int i = 0; i < n; ++i) {
                const LoopNest::Loop& loop = nest.temporal[i];
                const bool moves = (ds.dimMask >> loop.dim) & 1u;
                const bool begins = moves || lastMoves;
                k += begins;
                begin = begins ? i : begin;
                lastMoves = moves;
                Class& c = cls[k];
                c.begin = begin;
                c.moves = moves;
                c.step = displacement(loop.dim, loop.stride);
                for (int r = 0; r < W; ++r) {
                    c.S.r[r] = S.r[r];
                    c.g.r[r] = c.step.r[r] - S.r[r];
                    S.r[r] += c.step.r[r];
                }
                c.end = i + 1;
                c.w = double(Q[begin] - Q[i + 1]); // (the run's last loop writes its w)
                c.twinW = -1.0;
                classOf[i] = k;
            }
            return k + 1;
        };
        numClasses =
            proj.oneLane
                ? walk([&proj](int dim, i64 step) { return proj.oneLaneDisplacement(dim, step); })
                : walk([&proj](int dim, i64 step) { return proj.anyDisplacement(dim, step); });
        classOf[n] = numClasses;
        for (int c = 1; c <= L; ++c)
            classAbove[c] = classOf[nest.firstAbove[c]];
    }
    // The weight of the classes after k with k's g (computed when first asked).
    auto twinWeight = [&](int k) {
        if (cls[k].twinW >= 0.0)
            return cls[k].twinW;
        double w = 0.0;
        for (int j = k + 1; j < numClasses; ++j)
            if (sameDisp(cls[j].g, cls[k].g))
                w += cls[j].w;
        cls[k].twinW = w;
        return w;
    };

    Deliveries deliv[kMaxLevels];
    i64 distinctAll[kMaxLevels];
    SpatialFanout<W> ownFan;
    SpatialFanout<W>* memoFans = memo ? memo->of<W>(t) : nullptr; // by level
    const Disp zero = zeroDisp<W>();
    // What level par's innermost loop hands down to its children (the tiles
    // of level par + 1, or operands of the MACs below the innermost level),
    // and the distinct offsets of its children.
    auto count = [&](int par, Deliveries& d, i64& distinctOut) {
        const int child = par + 1;
        const bool macs = child == L;
        const i64 F = f.fanout[par];
        SpatialFanout<W>& fan = memoFans ? memoFans[par] : ownFan;
        i64 distinct = 1;
        if (F > 1) {
            if (!memoFans || !fan.describes(lanes, nest, par, F))
                fan.reset(lanes, proj, nest, par, F);
            distinct = fan.distinct();
        }
        distinctOut = distinct;
        if (!macs && F == 1 && !m.levels[child].keeps(t)) {
            // The child bypasses t, so the collapse keeps only what these
            // deliveries are per read (here one: no fan-out); skip the walk.
            d.A = d.W = 1.0;
            return;
        }
        const int first = nest.firstAbove[child];
        const i64 tile = macs ? 1 : tiles.size[child][t];
        // Words per child over the run, before link transfers: the first
        // delta (whole tiles), then the steps.
        double plain = double(tile);
        if (first < nest.numTemporal) {
            const int k0 = classAbove[child];
            const Class& c0 = cls[k0];
            const Disp& tau0 = c0.step; // (zero for a run)
            const double n0 = double(nest.temporal[first].factor);
            const double Q1 = double(Q[first + 1]);
            // Steps that repeat step 0's stride: the rest of first's run, and
            // later classes with the same g.
            const double rest = c0.moves ? 0.0 : double(Q[first + 1] - Q[c0.end]);
            if (macs) {
                // Operands: a point per MAC, no deltas; every step compares.
                plain = double(Q[first]);
                if (F > 1) {
                    d.linkable(fan, distinct, double(Q[first]) - Q1, 1, tau0);
                    if (rest > 0.0)
                        d.linkable(fan, distinct, rest, 1, zero);
                    // (Outer classes move the operands past every neighbour:
                    // those are told apart here, without the call.)
                    const Disp box = fan.reachBox();
                    for (int k = k0 + 1; k < numClasses; ++k) {
                        Disp tau;
                        for (int r = 0; r < W; ++r)
                            tau.r[r] = cls[k].g.r[r] + c0.S.r[r];
                        if (SpatialFanout<W>::within(tau, box))
                            d.linkable(fan, distinct, cls[k].w, 1, tau);
                    }
                }
            } else {
                // Step 0's delta (S0): the tile less its overlap with the last.
                const i64 overlap0 = c0.moves ? overlapWith(tiles.extentOf(child, t), tau0) : tile;
                const i64 delta0 = tile - overlap0;
                const bool fullShape = overlap0 == 0; // S0 is a whole tile
                const double SW = rest + (delta0 == tile ? 0.0 : twinWeight(k0));
                // Step 0 always fetches S0 (weight (n0 - 1) Q1 in all); step
                // m fetches S0 if it repeats the stride, else the tile.
                plain += (n0 - 1.0) * double(delta0) * Q1 + double(tile) * (Q1 - 1.0) -
                         double(tile - delta0) * SW;
                if (F > 1 && fullShape) {
                    // Every delta has the shape of a whole tile.
                    d.linkable(fan, distinct, (n0 - 1.0) * Q1, delta0, tau0);
                    // (As for the operands: only classes that can reach a neighbour.)
                    const Disp box = fan.reachBox();
                    for (int k = k0 + 1; k < numClasses; ++k) {
                        Disp tau;
                        for (int r = 0; r < W; ++r)
                            tau.r[r] = cls[k].g.r[r] + c0.S.r[r];
                        if (SpatialFanout<W>::within(tau, box))
                            d.linkable(fan, distinct, cls[k].w, tile, tau);
                    }
                } else if (F > 1 && SW > 0.0 && delta0 > 0) {
                    // Only steps repeating the stride (and step 0 after them)
                    // have S0's shape twice in a row; all move by tau0.
                    d.linkable(fan, distinct, SW * n0, delta0, tau0);
                }
            }
        }
        if (F > 1) {
            d.finish(plain, fan.allGroups(), F);
        } else {
            // One child, no links: finish() with one group of one child, which
            // is this (the same sums from zero, so the same doubles).
            d.A = d.W = d.share = plain > 0.0 ? plain : 0.0;
        }
    };
    for (int par = 0; par < L; ++par) {
        Deliveries& d = deliv[par];
        d.clear();
        if (par < reuse) {
            const LevelDelivery& kept = deliveries[par];
            d.A = kept.distinctReads;
            d.W = kept.delivered;
            d.share = kept.share;
            d.LT = kept.linked;
            distinctAll[par] = kept.distinctOffsets;
            continue;
        }
        count(par, d, distinctAll[par]);
        if (deliveries)
            deliveries[par] = {d.A, d.W, d.share, d.LT, distinctAll[par]};
    }

    // Collapse to the levels that keep t (Timeloop's tiling.cpp).
    const bool rw = ds.readWrite;
    i64 partition[kMaxLevels];
    if (rw) {
        partition[0] = tiles.size[0][t];
        for (int l = 1; l < L; ++l) {
            i64 denom = tiles.size[l][t];
            if (f.fanout[l - 1] > 1) { // the parent's spatial working set
                denom = 1;
                for (int r = 0; r < ds.numRanks; ++r) {
                    const Rank& rank = ds.ranks[r];
                    i64 x = 1;
                    for (int i = 0; i < rank.numTerms; ++i) {
                        const int dim = rank.terms[i].dim;
                        const i64 e = f.ext[l][dim] * m.levels[l - 1].spatialX[dim] *
                                      m.levels[l - 1].spatialY[dim];
                        x += std::abs(rank.terms[i].coef) * (e - 1);
                    }
                    denom *= x;
                }
            }
            // (Divisions cost tens of cycles each: skipped where the ratio is 1.)
            // (Tiles stay below 2^50 (finalizeProblem), so the product of
            // two may pass 2^63: then it is taken in 128 bits.)
            i64 product = 0;
            partition[l] = denom == tiles.size[l][t] ? partition[l - 1]
                           : !__builtin_mul_overflow(partition[l - 1], tiles.size[l][t], &product)
                               ? product / denom
                               : i64(__int128(partition[l - 1]) * tiles.size[l][t] / denom);
        }
    }
    for (int l = L - 1; l >= 1; --l) {
        if (m.levels[l].keeps(t))
            continue;
        Deliveries& outer = deliv[l - 1];
        if (outer.A != 0.0 && outer.W != 0.0) {
            // (x / 1 is x: the division, tens of cycles, is skipped for the
            // one-word deliveries of a level that hands down to a bypass.)
            double factor = deliv[l].A * double(f.fanout[l - 1]);
            if (outer.W != 1.0)
                factor /= outer.W;
            outer.A *= factor;
            outer.W *= factor;
            outer.LT = 0.0;
        }
        deliv[l].A = 0.0;
    }

    // Per level, innermost first: the children sharing each word it sends
    // down, up to the next keeper (`sharedBy`), and, where it keeps t, its
    // accesses: fills from the parent's per-child share plus what its
    // instances received over links (`peer`). (One pass: a loop per
    // quantity cost 2 % of an evaluation's instructions.)
    double sharedBy = 1.0;
    for (int l = L - 1; l >= 0; --l) {
        if (l + 1 < L && m.levels[l + 1].keeps(t))
            sharedBy = 1.0;
        if (f.fanout[l] != distinctAll[l])
            sharedBy *= double(f.fanout[l]) / double(distinctAll[l]);
        TensorLevelStats& ts = out.levels[l].tensors[t];
        if (!ts.kept)
            continue;
        const double share = l == 0 ? 0.0 : deliv[l - 1].share;
        const double peer = l >= 1 && deliv[l - 1].LT != 0.0
                                ? deliv[l - 1].LT / double(out.levels[l].utilizedInstances)
                                : 0.0;
        const double A = deliv[l].A;
        if (rw) {
            const double part = double(partition[l]);
            ts.firstTouches = partition[l];
            ts.updates = roundHalfAway(A);
            ts.reads = roundHalfAway(A + peer - part);
            ts.fills = l == 0 ? roundHalfAway(share + peer) : roundHalfAway(share + peer - part);
        } else {
            ts.reads = roundHalfAway(A + peer);
            ts.fills = static_cast<i64>(share + peer);
            ts.updates = 0;
        }
        ts.sharedBy = std::max<i64>(1, roundHalfAway(sharedBy));
    }
}

} // namespace

void countDataMovement(const Problem& p, const Architecture& a, const Mapping& m, const Factors& f,
                       const Terms& terms, const Tiles& tiles, const LoopNest& nest, int t,
                       LevelDelivery* deliveries, int reuse, FanoutMemo* memo, Evaluation& out) {
    if (terms.narrow())
        countOnLanes<Terms::kNarrowLanes>(p, a, m, f, terms, tiles, nest, t, deliveries, reuse,
                                          memo, out);
    else
        countOnLanes<kMaxRanks>(p, a, m, f, terms, tiles, nest, t, deliveries, reuse, memo, out);
}

void FanoutMemoDeleter::operator()(FanoutMemo* memo) const noexcept {
    delete memo;
}

FanoutMemoPtr makeFanoutMemo() {
    return FanoutMemoPtr(new FanoutMemo);
}

} // namespace mw::model_detail
