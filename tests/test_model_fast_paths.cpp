// The cost model's fast paths against what they stand for (see the class
// comment below).
#include "mapspace/mapspace.h"
#include "model/cost_model.h"
#include "model/loop_nest.h"
#include "model/spatial_fanout.h"
#include "model_support.h"
#include "workload/presets.h"

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

using namespace mw;
using namespace mw::model_test;

namespace {

// Five dimensions for the hand-made problems of the tile and displacement
// tests.
std::vector<Dimension> pqrsDims() {
    return {{"P", 7}, {"Q", 5}, {"R", 3}, {"S", 3}, {"C", 4}};
}

// A rank of three terms (a strided window over two filters' dimensions).
Problem threeTermsProblem() {
    return makeProblem("three_terms", pqrsDims(),
                       {{"W", {{{"R", 1}}, {{"S", 1}}, {{"C", 1}}}},
                        {"I", {{{"P", 2}, {"R", 1}, {"S", 1}}, {{"Q", 1}}, {{"C", 1}}}},
                        {"O", {{{"P", 1}}, {{"Q", 1}}}, true}});
}

} // namespace

// The model's fast paths agree with what they stand for: the incremental
// evaluation with a full one, the memo of fan-outs with a fresh description,
// the closed-form neighbour translations with a walk of the grid, the narrow
// tile pass and the one-lane displacements with their general forms.
class TestModelFastPaths : public QObject {
    Q_OBJECT
  private slots:
    void incrementalEqualsFull();
    void incrementalTakesTilesOfEqualFactors();
    void fanoutMemoKeepsToItsModel();
    void neighbourTranslationsWalkTheGrid();
    void tilePassesAgree();
    void displacementsAgree();
};

// Chains of neighbours (the moves searchers make) evaluated through one
// cache agree with full evaluations on every figure, on architectures with
// fan-outs, links, bypasses and a strided layer; and the cache is used
// (otherwise this would test nothing).
void TestModelFastPaths::incrementalEqualsFull() {
    const auto check = [](const Problem& p, const Architecture& a, std::uint64_t seed) {
        const MapSpace space(p, a);
        Rng rng(seed);
        Evaluation scratch, full, inc;
        Mapping current;
        QVERIFY(space.sampleLegal(rng, current, scratch, 20000));
        EvaluationCache cache;
        int legal = 0;
        for (int i = 0; i < 3000; ++i) {
            Mapping m = current;
            space.randomMove(m, rng);
            space.model().evaluate(m, full);
            space.model().evaluate(m, inc, cache);
            QCOMPARE(inc.valid, full.valid);
            if (!full.valid)
                continue;
            ++legal;
            QCOMPARE(inc.cycles, full.cycles);
            QCOMPARE(inc.energy, full.energy); // bit for bit: the same sums in the same order
            for (int l = 0; l < full.numLevels; ++l)
                for (int t = 0; t < full.numTensors; ++t) {
                    const TensorLevelStats &x = inc.levels[l].tensors[t],
                                           &y = full.levels[l].tensors[t];
                    QCOMPARE(x.reads, y.reads);
                    QCOMPARE(x.fills, y.fills);
                    QCOMPARE(x.updates, y.updates);
                    QCOMPARE(x.sharedBy, y.sharedBy);
                    QCOMPARE(x.tile, y.tile);
                }
            if (rng.below(4) == 0) // a walk, as annealing's accepted moves make
                current = m;
        }
        QVERIFY(legal > 300);
        QVERIFY(cache.levelsReused > 0);
        QVERIFY(cache.tilesReused > 0); // order and keep moves
    };
    const Problem conv = conv2dProblem("conv3x3_s2", 1, 1, 32, 64, 28, 28, 3, 3, 2, 2);
    const Problem gemm = gemmProblem("gemm", 64, 128, 96);
    for (const char* name : {"eyeriss_like", "simba_like", "tensor_core_like"}) {
        const Architecture a = sampleArchitecture(name);
        check(conv, a, 11);
        check(gemm, a, 12);
    }
    // One cache across models: an entry of another model (even one made
    // where a destroyed model was) is never taken for this one's.
    const Architecture a = sampleArchitecture("eyeriss_like");
    const Problem wide = conv2dProblem("wide", 1, 1, 64, 64, 28, 28, 3, 3);
    const Problem narrow = conv2dProblem("narrow", 1, 1, 64, 64, 28, 28, 1, 1);
    Rng rng(5);
    Mapping m;
    Evaluation scratch, full, inc;
    QVERIFY(MapSpace(wide, a).sampleLegal(rng, m, scratch, 20000));
    EvaluationCache cache;
    for (int round = 0; round < 4; ++round) {
        const CostModel model(round % 2 ? narrow : wide, a); // same stack slot each round
        const CostModel other(wide, a);
        // m's R and S loops fold into the others for the 1x1 layer.
        Mapping here = m;
        if (round % 2)
            for (int l = 0; l < here.numLevels; ++l)
                for (int d : {wide.dimIndex("R"), wide.dimIndex("S")}) {
                    here.levels[l].temporal[d] = 1;
                    here.levels[l].spatialX[d] = 1;
                    here.levels[l].spatialY[d] = 1;
                }
        model.evaluate(here, full);
        model.evaluate(here, inc, cache);
        QCOMPARE(inc.valid, full.valid);
        QCOMPARE(inc.energy, full.energy);
        QCOMPARE(inc.cycles, full.cycles);
        QVERIFY(other.id() != model.id());
    }
}

// A cache's fan-outs are described with one model's projections: a model
// of the same layer at another stride (the same loops, other input offsets
// between children, so other link transfers) must not take them; nor may
// the same loops on the other axis of the array.
void TestModelFastPaths::fanoutMemoKeepsToItsModel() {
    const Architecture a = sampleArchitecture("eyeriss_like");
    const Problem unit = conv2dProblem("s1", 1, 1, 16, 16, 14, 14, 3, 3, 1, 1);
    const Problem strided = conv2dProblem("s2", 1, 1, 16, 16, 14, 14, 3, 3, 2, 2);
    const CostModel first(unit, a), second(strided, a);
    const MapSpace space(unit, a);
    Rng rng(9);
    Evaluation scratch, x, y;
    int differing = 0;
    for (int i = 0; i < 400; ++i) {
        Mapping m;
        QVERIFY(space.sampleLegal(rng, m, scratch, 20000));
        first.evaluate(m, x);
        second.evaluate(m, y);
        if (!y.valid)
            continue;
        EvaluationCache cache; // the two models in turn, twice
        for (int round = 0; round < 4; ++round) {
            const CostModel& model = round % 2 ? second : first;
            const Evaluation& full = round % 2 ? y : x;
            Evaluation inc;
            model.evaluate(m, inc, cache);
            QCOMPARE(inc.energy, full.energy);
            QCOMPARE(inc.cycles, full.cycles);
        }
        differing += x.energy != y.energy;
    }
    QVERIFY(differing > 50);

    // The same loops on the other axis of a two-dimensional array (the tensor
    // core's; Eyeriss-like fans each axis at its own level): other
    // neighbours, other links.
    const Architecture grid = sampleArchitecture("tensor_core_like");
    const CostModel onGrid(unit, grid);
    const MapSpace gridSpace(unit, grid);
    int moved = 0;
    for (int i = 0; i < 400; ++i) {
        Mapping m;
        QVERIFY(gridSpace.sampleLegal(rng, m, scratch, 20000));
        onGrid.evaluate(m, x);
        for (int l = 0; l < m.numLevels; ++l)
            for (int d = 0; d < unit.numDims(); ++d) {
                if (m.levels[l].spatialX[d] <= 1)
                    continue;
                Mapping turned = m;
                std::swap(turned.levels[l].spatialX[d], turned.levels[l].spatialY[d]);
                onGrid.evaluate(turned, y);
                if (!y.valid || y.energy == x.energy)
                    continue;
                ++moved;
                EvaluationCache cache;
                for (int round = 0; round < 4; ++round) {
                    Evaluation inc;
                    onGrid.evaluate(round % 2 ? turned : m, inc, cache);
                    QCOMPARE(inc.energy, (round % 2 ? y : x).energy);
                }
            }
    }
    QVERIFY(moved > 20);
}

// A mapping whose factors are a cached one's takes its tiles and factor
// products and rechecks only orders and keeps: a malformed order, a missing
// outermost keep and a keep that overflows a buffer are each reported as a
// full evaluation reports them, and the cached tiles stay good after them.
void TestModelFastPaths::incrementalTakesTilesOfEqualFactors() {
    const Architecture a = sampleArchitecture("eyeriss_like");
    const Problem p = conv2dProblem("conv3x3", 1, 1, 32, 64, 28, 28, 3, 3);
    const MapSpace space(p, a);
    Rng rng(21);
    Evaluation scratch, full, inc;
    Mapping base;
    QVERIFY(space.sampleLegal(rng, base, scratch, 20000));
    EvaluationCache cache;
    space.model().evaluate(base, inc, cache);
    QVERIFY(inc.valid);
    const auto sameAsFull = [&](const Mapping& m) {
        const std::int64_t before = cache.tilesReused;
        space.model().evaluate(m, full);
        space.model().evaluate(m, inc, cache);
        QCOMPARE(cache.tilesReused, before + 1);
        QCOMPARE(inc.valid, full.valid);
        QCOMPARE(inc.numViolations, full.numViolations);
        for (int i = 0; i < full.numViolations; ++i) {
            QCOMPARE(int(inc.violations[i].kind), int(full.violations[i].kind));
            QCOMPARE(inc.violations[i].level, full.violations[i].level);
            QCOMPARE(inc.violations[i].tensor, full.violations[i].tensor);
            QCOMPARE(inc.violations[i].needed, full.violations[i].needed);
        }
        if (full.valid) {
            QCOMPARE(inc.energy, full.energy);
            QCOMPARE(inc.cycles, full.cycles);
        }
    };
    const int L = base.numLevels;
    Mapping reordered = base; // every level's orders reversed
    for (int l = 0; l < L; ++l) {
        std::reverse(reordered.levels[l].order.begin(),
                     reordered.levels[l].order.begin() + p.numDims());
        std::reverse(reordered.levels[l].spatialOrder.begin(),
                     reordered.levels[l].spatialOrder.begin() + p.numDims());
    }
    sameAsFull(reordered);
    QVERIFY(full.valid);
    Mapping malformed = base; // a dimension twice in one order
    malformed.levels[1].order[0] = malformed.levels[1].order[1];
    sameAsFull(malformed);
    QVERIFY(!full.valid);
    QCOMPARE(int(full.violations[0].kind), int(ViolationKind::BadPermutation));
    Mapping unkept = base;
    unkept.levels[0].setKeep(0, false);
    sameAsFull(unkept);
    QVERIFY(!full.valid);
    Mapping overfull = base; // every tensor in every buffer
    for (int l = 1; l < L; ++l)
        for (int t = 0; t < p.numTensors(); ++t)
            overfull.levels[l].setKeep(t, true);
    sameAsFull(overfull);
    QVERIFY(!full.valid);
    QCOMPARE(int(full.violations[0].kind), int(ViolationKind::Capacity));
    sameAsFull(base);
    QVERIFY(full.valid);
}

// The translations between grid neighbours (what link transfers may carry)
// as their definition reads: every child's offset, children numbered in nest
// order filling rows of gridX, each neighbour pair compared. The model takes
// a closed form where the grid is the logical one; both kinds of grid occur.
void TestModelFastPaths::neighbourTranslationsWalkTheGrid() {
    using model_detail::LoopNest;
    using model_detail::Offset;
    using i64 = std::int64_t;
    const auto byDefinition = [](const Problem& p, const model_detail::Terms& terms,
                                 const LoopNest::Loop* loops, int ns, i64 gridX, i64 gridY, int t,
                                 std::set<Offset>& out) {
        std::vector<Offset> offset{Offset{}};
        for (int s = 0; s < ns; ++s) {
            const std::size_t before = offset.size();
            for (i64 d = 1; d < loops[s].factor; ++d)
                for (std::size_t i = 0; i < before; ++i) {
                    Offset o = offset[i];
                    if ((p.tensors[t].dimMask >> loops[s].dim) & 1u)
                        for (int r = 0; r < kMaxRanks; ++r)
                            o[std::size_t(r)] +=
                                d * loops[s].stride * terms.unit[t][loops[s].dim][r];
                    offset.push_back(o);
                }
        }
        const i64 n = i64(offset.size());
        auto pair = [&](i64 from, i64 to) {
            Offset there, back;
            for (int r = 0; r < kMaxRanks; ++r) {
                there[std::size_t(r)] = offset[std::size_t(to)][std::size_t(r)] -
                                        offset[std::size_t(from)][std::size_t(r)];
                back[std::size_t(r)] = -there[std::size_t(r)];
            }
            out.insert(there);
            out.insert(back);
        };
        for (i64 k = 0; k < n; ++k) {
            if (k % gridX + 1 < gridX && k + 1 < n)
                pair(k, k + 1);
            if (k / gridX + 1 < gridY && k + gridX < n)
                pair(k, k + gridX);
        }
    };
    const Problem conv = conv2dProblem("conv3x3_s2", 1, 1, 32, 64, 28, 28, 3, 3, 2, 2);
    const Problem gemm = gemmProblem("gemm", 64, 128, 96);
    int logicalGrids = 0, widerGrids = 0, unions = 0;
    for (const char* name : {"eyeriss_like", "simba_like", "tensor_core_like"}) {
        const Architecture a = sampleArchitecture(name);
        for (const Problem* p : {&conv, &gemm}) {
            const MapSpace space(*p, a);
            const model_detail::Terms terms(*p);
            Rng rng(21);
            for (int i = 0; i < 100; ++i) {
                const Mapping m = space.sample(rng);
                model_detail::Factors f;
                if (!model_detail::factorize(*p, a, m, f))
                    continue;
                LoopNest nest;
                model_detail::buildLoopNest(*p, a, m, f, nest);
                for (int l = 0; l < a.numLevels(); ++l) {
                    if (f.fanout[l] <= 1)
                        continue;
                    const int ns = nest.numSpatial[l], nx = nest.numSpatialX[l];
                    i64 logicalX = 1;
                    for (int s = 0; s < nx; ++s)
                        logicalX *= nest.spatial[l][s].factor;
                    (nest.gridX[l] == logicalX || nx == ns ? logicalGrids : widerGrids) += 1;
                    for (int t = 0; t < p->numTensors(); ++t) {
                        std::set<Offset> expected;
                        byDefinition(*p, terms, nest.spatial[l], ns, nest.gridX[l], nest.gridY[l],
                                     t, expected);
                        std::vector<Offset> got;
                        model_detail::neighbourTranslations(*p, terms, nest, l, t, f.fanout[l],
                                                            got);
                        QCOMPARE(got, std::vector<Offset>(expected.begin(), expected.end()));
                        // Any order of each axis's loops: the union over the orders
                        // (where that is few enough children to list; random
                        // mappings fan out far beyond the meshes).
                        if (f.fanout[l] > 4096 || nx > 3 || ns - nx > 3)
                            continue;
                        std::vector<LoopNest::Loop> loops(nest.spatial[l], nest.spatial[l] + ns);
                        auto byDim = [](const LoopNest::Loop& x, const LoopNest::Loop& y) {
                            return x.dim < y.dim;
                        };
                        std::sort(loops.begin(), loops.begin() + nx, byDim);
                        std::sort(loops.begin() + nx, loops.end(), byDim);
                        std::set<Offset> union_;
                        do {
                            do {
                                byDefinition(*p, terms, loops.data(), ns, nest.gridX[l],
                                             nest.gridY[l], t, union_);
                            } while (std::next_permutation(loops.begin() + nx, loops.end(), byDim));
                        } while (std::next_permutation(loops.begin(), loops.begin() + nx, byDim));
                        model_detail::neighbourTranslationsAnyOrder(*p, a, m, f, terms, l, t, got);
                        ++unions;
                        QCOMPARE(got, std::vector<Offset>(union_.begin(), union_.end()));
                    }
                }
            }
        }
    }
    QVERIFY(logicalGrids > 20);
    QVERIFY(widerGrids > 20);
    QVERIFY(unions > 200);
}

// The tile rule in its three shapes (Terms: the flat list for one tensor, the
// narrow pass over all tensors, the paired one where no lane has more than
// two terms) gives the extents and words of its definition: per rank,
// 1 + sum |coef| x (extent - 1), and words their product.
void TestModelFastPaths::tilePassesAgree() {
    using i64 = std::int64_t;
    const std::vector<Dimension> pqrs = pqrsDims();
    const Problem threeTerms = threeTermsProblem();
    const Problem wide =
        makeProblem("wide", pqrs,
                    {{"A", {{{"P", 1}}, {{"Q", 1}}, {{"R", 1}}, {{"S", 1}}, {{"C", 1}}}},
                     {"B", {{{"C", 1}}}},
                     {"O", {{{"P", 1}, {"R", 1}}, {{"Q", 1}}}, true}});
    const Problem conv = conv2dProblem("conv_s2", 1, 1, 32, 64, 28, 28, 3, 3, 2, 2);
    const Problem gemm = gemmProblem("gemm", 64, 128, 96);
    const Problem mttkrp = mttkrpProblem("mttkrp", 16, 8, 12, 10);
    Problem sparseConv = conv;
    sparseConv.tensors[0].density = 0.3;
    struct Case {
        const Problem* p;
        bool paired, narrow;
    };
    const Architecture arch = twoLevelArray(); // (the capacity count does not read it)
    Rng rng(5);
    for (const Case& c : {Case{&conv, true, true}, Case{&gemm, true, true},
                          Case{&mttkrp, true, true}, Case{&threeTerms, false, true},
                          Case{&wide, false, false}, Case{&sparseConv, true, true}}) {
        const Problem& p = *c.p;
        const model_detail::Terms terms(p);
        const CostModel model(p, arch);
        QCOMPARE(terms.paired, c.paired);
        QCOMPARE(terms.narrow(), c.narrow);
        const int W = terms.narrow() ? model_detail::Terms::kNarrowLanes : kMaxRanks;
        for (int trial = 0; trial < 200; ++trial) {
            i64 ext[kMaxDims];
            for (int d = 0; d < kMaxDims; ++d)
                ext[d] = d < p.numDims() ? 1 + i64(rng.below(std::uint64_t(p.dims[d].bound))) : 1;
            i64 all[kMaxTensors * kMaxRanks], size[kMaxTensors];
            model_detail::tileExtentsAll(terms, p.numTensors(), ext, all, size);
            i64 stored[kMaxTensors]; // each tensor's words as a buffer holds them
            for (int t = 0; t < p.numTensors(); ++t) {
                const DataSpace& ds = p.tensors[t];
                std::vector<i64> expected; // the live ranks' extents
                i64 words = 1;
                for (int r = 0; r < ds.numRanks; ++r) {
                    i64 e = 1;
                    bool live = false;
                    for (int i = 0; i < ds.ranks[r].numTerms; ++i) {
                        const ProjectionTerm& term = ds.ranks[r].terms[i];
                        e += std::abs(term.coef) * (ext[term.dim] - 1);
                        live = live || p.dims[term.dim].bound > 1;
                    }
                    if (live)
                        expected.push_back(e);
                    words *= e;
                }
                QCOMPARE(size[t], words);
                const double density = ds.density;
                stored[t] = density < 1.0
                                ? std::max<i64>(1, i64(std::ceil(double(words) * density)))
                                : words;
                i64 one[kMaxRanks];
                QCOMPARE(model_detail::tileExtents(terms, t, ext, one), words);
                for (int r = 0; r < W; ++r) {
                    const i64 want = r < int(expected.size()) ? expected[std::size_t(r)] : 1;
                    QCOMPARE(all[t * kMaxRanks + r], want);
                    if (r < terms.lanes[t])
                        QCOMPARE(one[r], want);
                }
            }
            // The capacity count the map space's moves use: the kept tensors'
            // stored words, for every keep mask.
            for (unsigned mask = 0; mask < (1u << p.numTensors()); ++mask) {
                i64 want = 0;
                for (int t = 0; t < p.numTensors(); ++t)
                    want += (mask >> t) & 1u ? stored[t] : 0;
                QCOMPARE(model.tileWords(ext, std::uint8_t(mask)), want);
            }
        }
    }
}

// A loop's displacement in a tensor's lanes, as its definition reads: per
// live rank, the sum of coef x step over the rank's terms in the loop's
// dimension. Where each dimension moves at most one lane of each tensor the
// model computes it as one product masked into that lane; elsewhere (a
// dimension in two ranks of one tensor) per lane. Both ways agree with it.
void TestModelFastPaths::displacementsAgree() {
    using i64 = std::int64_t;
    const std::vector<Dimension> pqrs = pqrsDims();
    const Problem threeTerms = threeTermsProblem();
    // P moves two lanes of I, with different coefficients.
    const Problem twoLanes =
        makeProblem("two_lanes", pqrs,
                    {{"W", {{{"R", 1}}, {{"S", 1}}, {{"C", 1}}}},
                     {"I", {{{"P", 2}, {"R", 1}}, {{"P", 1}, {"Q", 1}}, {{"C", 1}}}},
                     {"O", {{{"P", 1}}, {{"Q", 1}}}, true}});
    const Problem conv = conv2dProblem("conv_s2", 1, 1, 32, 64, 28, 28, 3, 3, 2, 2);
    const Problem gemm = gemmProblem("gemm", 64, 128, 96);
    const Problem mttkrp = mttkrpProblem("mttkrp", 16, 8, 12, 10);
    struct Case {
        const Problem* p;
        bool oneLane;
    };
    for (const Case& c : {Case{&conv, true}, Case{&gemm, true}, Case{&mttkrp, true},
                          Case{&threeTerms, true}, Case{&twoLanes, false}}) {
        const Problem& p = *c.p;
        const model_detail::Terms terms(p);
        QCOMPARE(terms.oneLanePerDim, c.oneLane);
        QVERIFY(terms.narrow());
        constexpr int W = model_detail::Terms::kNarrowLanes;
        for (int t = 0; t < p.numTensors(); ++t) {
            const model_detail::Projection<W> proj(terms, t);
            QCOMPARE(proj.oneLane, c.oneLane);
            const DataSpace& ds = p.tensors[t];
            for (int d = 0; d < p.numDims(); ++d)
                for (const i64 step : {i64(1), i64(3), i64(28), i64(1) << 33}) {
                    i64 want[W] = {};
                    for (int r = 0, lane = 0; r < ds.numRanks; ++r) {
                        bool live = false;
                        for (int i = 0; i < ds.ranks[r].numTerms; ++i) {
                            const ProjectionTerm& term = ds.ranks[r].terms[i];
                            live = live || p.dims[term.dim].bound > 1;
                            if (term.dim == d && p.dims[d].bound > 1)
                                want[lane] += term.coef * step;
                        }
                        lane += live;
                    }
                    const model_detail::Disp<W> got = proj.displacement(d, step);
                    const model_detail::Disp<W> any = proj.anyDisplacement(d, step);
                    for (int r = 0; r < W; ++r) {
                        QCOMPARE(got.r[r], want[r]);
                        QCOMPARE(any.r[r], want[r]);
                    }
                    if (c.oneLane) {
                        const model_detail::Disp<W> one = proj.oneLaneDisplacement(d, step);
                        for (int r = 0; r < W; ++r)
                            QCOMPARE(one.r[r], want[r]);
                    }
                }
        }
    }
}

QTEST_GUILESS_MAIN(TestModelFastPaths)
#include "test_model_fast_paths.moc"
