// The map space: moves keep factor products exact, repair yields legal
// mappings, parallelism grows and ages, the quick legality check answers as
// the model does (also when judged from a parent), equal mappings hash equally (also when hashed
// from a parent over the levels a move changed), and the space's size is counted right.
// Single-threaded: the sanitizer stage for races leaves it out.
#include "model/cost_model.h"
#include "search_support.h"
#include "workload/presets.h"

#include <QtTest>

#include <cmath>

using namespace mw;
using namespace mw::test;

namespace {

// The moves a searcher makes from a mapping, by kind: a factor between
// levels, parallelism, a bypass, an order swap, several moves at once, a
// move then a repair.
constexpr int kMoveKinds = 6;
void moveOfKind(const MapSpace& space, Mapping& m, Rng& rng, int kind, Evaluation& scratch) {
    switch (kind) {
    case 0:
        space.moveTileFactor(m, rng);
        break;
    case 1:
        space.moveParallelism(m, rng);
        break;
    case 2:
        space.toggleBypass(m, rng);
        break;
    case 3:
        space.swapLoops(m, rng);
        break;
    case 4:
        for (int k = 0; k < 4; ++k)
            space.randomMove(m, rng);
        break;
    default:
        space.randomMove(m, rng);
        space.repairFit(m, rng, scratch);
    }
}

} // namespace

class TestMapSpace : public QObject {
    Q_OBJECT
  private slots:
    void movesKeepProductsExact();
    void repairMakesLegal();
    void parallelismGrowthAndAging();
    void quickLegalityMatchesModel();
    void quickLegalityFromParent();
    void canonicalHash();
    void hashFromParent();
    void levelComparisons();
    void spaceSize();
};

void TestMapSpace::movesKeepProductsExact() {
    const Architecture a = eyeriss();
    const Problem p = conv3x3();
    const MapSpace space(p, a);
    Rng rng(5);
    Evaluation e;
    Mapping m;
    QVERIFY(space.sampleLegal(rng, m, e));
    for (int i = 0; i < 2000; ++i) {
        space.randomMove(m, rng);
        evaluate(p, a, m, e);
        for (int k = 0; k < e.numViolations; ++k) {
            const auto kind = e.violations[k].kind;
            QVERIFY2(kind == ViolationKind::Capacity || kind == ViolationKind::FanoutX ||
                         kind == ViolationKind::FanoutY,
                     describe(e.violations[k], p, a).c_str());
        }
    }
}

void TestMapSpace::repairMakesLegal() {
    const Architecture a = eyeriss();
    const Problem p = conv3x3();
    const MapSpace space(p, a);
    Rng rng(11);
    Evaluation e;
    int repaired = 0;
    for (int i = 0; i < 200; ++i) {
        Mapping m = space.sample(rng);
        if (i % 3 == 0) // break a product too
            m.levels[0].temporal[p.dimIndex("C")] *= 2;
        if (space.repair(m, rng, e)) {
            ++repaired;
            QVERIFY(evaluate(p, a, m).valid);
        }
    }
    QVERIFY2(repaired >= 190, qPrintable(QString::number(repaired)));
}

// GAMMA's growth fills an unused fan-out axis; aging folds a level's fan-out
// back into time. Both keep every dimension's product exact.
void TestMapSpace::parallelismGrowthAndAging() {
    const Architecture a = eyeriss();
    const Problem p = conv3x3();
    const MapSpace space(p, a);
    Rng rng(3);
    auto spatialProduct = [&](const Mapping& m) {
        std::int64_t used = 1;
        for (int l = 0; l < m.numLevels; ++l)
            for (int d = 0; d < p.numDims(); ++d)
                used *= std::int64_t(m.levels[l].spatialX[d]) * m.levels[l].spatialY[d];
        return used;
    };
    auto productsExact = [&](const Mapping& m) {
        for (int d = 0; d < p.numDims(); ++d) {
            std::int64_t prod = 1;
            for (int l = 0; l < m.numLevels; ++l)
                prod *= std::int64_t(m.levels[l].temporal[d]) * m.levels[l].spatialX[d] *
                        m.levels[l].spatialY[d];
            if (prod != p.dims[d].bound)
                return false;
        }
        return true;
    };
    int grown = 0, aged = 0;
    for (int i = 0; i < 200; ++i) {
        Mapping m = space.sample(rng);
        const std::int64_t before = spatialProduct(m);
        if (space.dropParallelism(m, rng)) { // frees an axis for growth
            ++aged;
            QVERIFY(spatialProduct(m) < before);
            QVERIFY(productsExact(m));
        }
        const std::int64_t after = spatialProduct(m);
        if (space.growParallelism(m, rng)) {
            ++grown;
            QVERIFY(spatialProduct(m) > after);
            QVERIFY(productsExact(m));
        }
    }
    QVERIFY2(grown > 50 && aged > 50,
             qPrintable(QString("%1 grown, %2 aged").arg(grown).arg(aged)));
    // A mapping with no parallelism cannot age; one with every axis in use cannot grow.
    Mapping serial = space.sample(rng);
    for (int l = 0; l < serial.numLevels; ++l)
        while (space.dropParallelism(serial, rng)) {
        }
    QCOMPARE(spatialProduct(serial), std::int64_t(1));
    QVERIFY(productsExact(serial));
}

// The search loops trust isLegalQuick instead of the model: on every mapping
// the space's sampling and moves produce, both must give the same answer --
// across architectures, a constrained space, a sparse tensor (compressed tiles)
// and double buffering.
void TestMapSpace::quickLegalityMatchesModel() {
    struct Case {
        std::string name;
        Architecture arch;
        Problem problem;
        bool constrained;
    };
    std::vector<Case> cases;
    for (const char* file : {"eyeriss_like", "simba_like", "accel_b", "tensor_core_like"})
        cases.push_back({file, loadArchitecture(kSamples + "architectures/" + file + ".json"),
                         conv3x3(), false});
    cases.push_back({"constrained", eyeriss(), conv3x3(), true});
    {
        Problem sparse = conv3x3();
        sparse.tensors[std::size_t(sparse.tensorIndex("Inputs"))].density = 0.3;
        cases.push_back({"sparse", eyeriss(), sparse, false});
    }
    {
        Architecture doubled = eyeriss();
        for (auto& level : doubled.levels)
            level.multipleBuffering = 2.0;
        cases.push_back({"double-buffered", doubled, conv3x3(), false});
    }
    for (const Case& c : cases) {
        MapSpaceConstraints k;
        if (c.constrained) {
            k.levels.resize(std::size_t(c.arch.numLevels()));
            k.levels[c.arch.levelIndex("inter_PE_column_spatial")].allowSpatial(
                1u << c.problem.dimIndex("Q"));
            k.levels[c.arch.levelIndex("shared_glb")].keepFixed =
                1u << c.problem.tensorIndex("Weights");
            k.minSpatialUtilization = 0.25;
        }
        const MapSpace space(c.problem, c.arch, k);
        Rng rng(23);
        Evaluation e;
        int legal = 0, illegal = 0, fittedToLegal = 0, fittedAllToLegal = 0;
        for (int i = 0; i < 3000; ++i) {
            // Raw samples, and neighbours of repaired (legal) ones.
            Mapping m = space.sample(rng);
            if (i % 2 == 1) {
                QVERIFY2(space.repair(m, rng, e),
                         (c.name + " repair " + std::to_string(i)).c_str());
                QVERIFY2(space.isLegalQuick(m) && space.isLegal(m, e), c.name.c_str());
            }
            for (int step = 0; step < i % 4 / 2; ++step)
                space.randomMove(m, rng);
            const bool quick = space.isLegalQuick(m);
            QVERIFY2(quick == space.isLegal(m, e),
                     (c.name + " mapping " + std::to_string(i)).c_str());
            (quick ? legal : illegal) += 1;
            // Fitting the fan-outs keeps every product, makes the fan-outs
            // fit, and then answers as the model does.
            Mapping fitted = m;
            const bool fits = space.fixFanoutsThenCheck(fitted, rng);
            QVERIFY2(fits == space.isLegal(fitted, e),
                     (c.name + " fitted " + std::to_string(i)).c_str());
            mw::isLegal(c.problem, c.arch, fitted, e); // the model's view, constraints aside
            for (int v = 0; v < e.numViolations; ++v)
                QVERIFY(e.violations[v].kind != ViolationKind::FanoutX &&
                        e.violations[v].kind != ViolationKind::FanoutY);
            auto sameProducts = [&](const Mapping& x, const Mapping& y) {
                for (int d = 0; d < c.problem.numDims(); ++d) {
                    std::int64_t before = 1, after = 1;
                    for (int l = 0; l < c.arch.numLevels(); ++l) {
                        const LevelMapping &a = x.levels[l], &b = y.levels[l];
                        before *= std::int64_t(a.temporal[d]) * a.spatialX[d] * a.spatialY[d];
                        after *= std::int64_t(b.temporal[d]) * b.spatialX[d] * b.spatialY[d];
                    }
                    if (after != before)
                        return false;
                }
                return true;
            };
            QVERIFY(sameProducts(m, fitted));
            fittedToLegal += fits && !quick;
            // Fitting the buffers too keeps every product and answers as the
            // model does, and it fails no mapping that fitting fan-outs made legal.
            Mapping fittedAll = m;
            const bool fitsAll = space.fitThenCheck(fittedAll, rng);
            QVERIFY2(fitsAll == space.isLegal(fittedAll, e),
                     (c.name + " fitted all " + std::to_string(i)).c_str());
            QVERIFY(sameProducts(m, fittedAll));
            if (fits && !c.constrained) // (fitting buffers may lower utilization)
                QVERIFY(fitsAll);
            fittedAllToLegal += fitsAll && !fits;
        }
        // Some mappings were illegal only for their fan-outs, some fit only
        // with their buffers fitted too.
        QVERIFY2(fittedToLegal > 0, c.name.c_str());
        QVERIFY2(fittedAllToLegal > 0, c.name.c_str());
        // Both answers occur, so the comparison means something.
        QVERIFY2(legal > 20 && illegal > 20,
                 (c.name + ": " + std::to_string(legal) + " legal").c_str());
    }
}

void TestMapSpace::quickLegalityFromParent() {
    // A walk from legal mapping to legal mapping: every neighbour, legal or
    // not, is judged from its parent exactly as on its own, for each kind
    // of move.
    const Architecture a = eyeriss();
    for (const Problem& p : {conv3x3(), gemmProblem("gemm", 64, 96, 48)}) {
        const MapSpace space(p, a);
        Rng rng(13);
        Evaluation scratch;
        Mapping parent;
        QVERIFY(space.sampleLegal(rng, parent, scratch));
        QVERIFY(space.isLegalQuick(parent));
        int legal = 0, illegal = 0;
        for (int step = 0; step < 4000; ++step) {
            Mapping m = parent;
            moveOfKind(space, m, rng, step % kMoveKinds, scratch);
            const bool quick = space.isLegalQuick(m);
            QCOMPARE(space.isLegalQuickFrom(parent, m), quick);
            (quick ? legal : illegal) += 1;
            if (quick)
                parent = m;
        }
        QVERIFY(legal > 500 && illegal > 500);
    }
}

void TestMapSpace::canonicalHash() {
    const Architecture a = eyeriss();
    const Problem p = conv3x3();
    const MapSpace space(p, a);
    Rng rng(2);
    const Mapping m = space.sample(rng);
    // Moving a unit loop in the order changes nothing.
    Mapping n = m;
    auto& order = n.levels[0].order;
    int unitPos = -1, realPos = -1;
    for (int i = 0; i < p.numDims(); ++i)
        (n.levels[0].temporal[order[i]] == 1 ? unitPos : realPos) = i;
    if (unitPos >= 0 && realPos >= 0) {
        std::swap(order[unitPos], order[realPos]);
        QCOMPARE(space.hash(n), space.hash(m));
    }
    // A real change changes the hash.
    Mapping k = m;
    QVERIFY(space.toggleBypass(k, rng));
    QVERIFY(space.hash(k) != space.hash(m));
}

void TestMapSpace::hashFromParent() {
    const Architecture a = eyeriss();
    const Problem p = conv3x3();
    const MapSpace space(p, a);
    Rng rng(7);
    Evaluation scratch;
    Mapping current;
    QVERIFY(space.sampleLegal(rng, current, scratch));
    MappingHash currentHash;
    space.hashLevels(current, currentHash);
    QCOMPARE(currentHash.value, space.hash(current));
    // A walk of moves, each neighbour hashed from its parent's hash only:
    // the result is the full hash, step after step (no drift), and a move
    // that changes the canonical form changes it.
    int changed = 0;
    for (int step = 0; step < 3000; ++step) {
        Mapping next = current;
        moveOfKind(space, next, rng, step % kMoveKinds, scratch);
        MappingHash nextHash;
        space.rehash(current, currentHash, next, nextHash);
        MappingHash full;
        space.hashLevels(next, full);
        QCOMPARE(nextHash.value, full.value);
        QCOMPARE(nextHash.value, space.hash(next));
        for (int l = 0; l < next.numLevels; ++l)
            QCOMPARE(nextHash.levels[std::size_t(l)], full.levels[std::size_t(l)]);
        const bool sameCanonical = [&] {
            const Mapping x = space.canonical(next), y = space.canonical(current);
            for (int l = 0; l < x.numLevels; ++l)
                if (!sameLevel(x.levels[l], y.levels[l]))
                    return false;
            return true;
        }();
        QCOMPARE(nextHash.value == currentHash.value, sameCanonical);
        changed += !sameCanonical;
        current = next;
        currentHash = nextHash;
    }
    QVERIFY(changed > 1000);
    // The same content one level down is another mapping: two levels'
    // contents swapped change the hash.
    Mapping m;
    QVERIFY(space.sampleLegal(rng, m, scratch));
    int x = -1, y = -1;
    for (int l = 0; l < m.numLevels && y < 0; ++l)
        for (int k = l + 1; k < m.numLevels && y < 0; ++k)
            if (space.levelHasTemporal(l) && space.levelHasTemporal(k) &&
                !sameLevel(m.levels[l], m.levels[k]))
                x = l, y = k;
    QVERIFY(y >= 0);
    Mapping swapped = m;
    std::swap(swapped.levels[x], swapped.levels[y]);
    QVERIFY(space.hash(swapped) != space.hash(m));
}

void TestMapSpace::levelComparisons() {
    // Each field of a level changed alone, in every slot (the last factor
    // and order slots too: the comparisons read whole words): sameFactors
    // sees exactly the factors, sameOrders exactly the orders, sameLevel all.
    LevelMapping base;
    for (int d = 0; d < kMaxDims; ++d) {
        base.temporal[std::size_t(d)] = base.spatialX[std::size_t(d)] =
            base.spatialY[std::size_t(d)] = std::uint32_t(d + 1);
        base.order[std::size_t(d)] = base.spatialOrder[std::size_t(d)] = std::uint8_t(d);
    }
    base.keepMask = 5;
    auto expect = [&](const LevelMapping& changed, bool factors, bool orders) {
        QCOMPARE(sameFactors(base, changed), !factors);
        QCOMPARE(sameOrders(base, changed), !orders);
        QCOMPARE(sameLevel(base, changed), false);
        QVERIFY(sameFactors(base, base) && sameOrders(base, base) && sameLevel(base, base));
    };
    for (int d = 0; d < kMaxDims; ++d) {
        const auto i = std::size_t(d);
        for (auto field :
             {&LevelMapping::temporal, &LevelMapping::spatialX, &LevelMapping::spatialY}) {
            LevelMapping c = base;
            (c.*field)[i] += 1u << 31; // (its top byte: a comparison short of it misses it)
            expect(c, true, false);
        }
        for (auto field : {&LevelMapping::order, &LevelMapping::spatialOrder}) {
            LevelMapping c = base;
            (c.*field)[i] ^= 0x80;
            expect(c, false, true);
        }
    }
    LevelMapping keeps = base;
    keeps.setKeep(1, true);
    expect(keeps, false, false);
}

void TestMapSpace::spaceSize() {
    const auto c = smallCase();
    const MapSpace space(c.problem, c.arch);
    const MapSpaceSize s = space.size();
    // K=32 over 3 temporal slots: C(7,2)=21; P=16: C(6,2)=15; R=3: 3.
    QVERIFY(std::abs(s.tiling - std::log10(21.0 * 15 * 3)) < 1e-9);
    QCOMPARE(s.parallelism, 0.0); // no fan-out
    QVERIFY(std::abs(s.order - 3 * std::log10(6.0)) < 1e-9);
    QVERIFY(std::abs(s.bypass - 6 * std::log10(2.0)) < 1e-9);
}

QTEST_GUILESS_MAIN(TestMapSpace)
#include "test_mapspace.moc"
