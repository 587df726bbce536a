// The cost model's violations, each named as Timeloop would reject the
// mapping: factor products, fan-outs (checked as Timeloop checks them),
// one axis per dimension and level, capacities, the outermost level's keeps,
// malformed factors and orders, an architecture without MACs, densities.
#include "common/error.h"
#include "io/json_io.h"
#include "io/timeloop/timeloop.h"
#include "mapspace/mapspace.h"
#include "model_support.h"

#include <QtTest>

using namespace mw;
using namespace mw::model_test;

class TestModelLegality : public QObject {
    Q_OBJECT
  private slots:
    void factorProductViolation();
    void fanoutViolation();
    void fanoutCheckedAsTimeloopChecksIt();
    void oneAxisPerDimensionAndLevel();
    void mapSpaceStaysOnOneAxis();
    void capacityViolation();
    void outermostMustKeep();
    void zeroFactorAndBadPermutation();
    void architectureWithoutCompute();
    void badDensities();
};

void TestModelLegality::factorProductViolation() {
    const Architecture a = twoLevelArray(1);
    const Problem p = conv1dK(16, 8, 3);
    Mapping m = makeTrivialMapping(p, a);
    m.levels[0].temporal[p.dimIndex("K")] = 8; // 8 != 16
    m.levels[0].temporal[p.dimIndex("P")] = 8;
    m.levels[1].temporal[p.dimIndex("R")] = 3;
    const Evaluation e = evaluate(p, a, m);
    QVERIFY(!e.valid);
    QVERIFY(hasViolation(e, ViolationKind::FactorProduct));
    const std::string msg = joined(e, p, a);
    QVERIFY2(msg.find("dimension K: factors multiply to 8 but the bound is 16") !=
                 std::string::npos,
             msg.c_str());
}

void TestModelLegality::fanoutViolation() {
    const Architecture a = twoLevelArray(4);
    const Problem p = conv1dK(8, 8, 3);
    Mapping m = makeTrivialMapping(p, a);
    m.levels[0].spatialX[p.dimIndex("K")] = 8; // only 4 PEs
    m.levels[0].temporal[p.dimIndex("P")] = 8;
    m.levels[1].temporal[p.dimIndex("R")] = 3;
    const Evaluation e = evaluate(p, a, m);
    QVERIFY(!e.valid);
    QVERIFY(hasViolation(e, ViolationKind::FanoutX));
    const std::string msg = joined(e, p, a);
    QVERIFY2(msg.find("level 'Buffer': spatial factors on X above it multiply to 8 but its mesh "
                      "has 4 instances on X") != std::string::npos,
             msg.c_str());
    QVERIFY2(msg.find("compute level 'MAC': spatial factors on X above it multiply to 8") !=
                 std::string::npos,
             msg.c_str());
}

// The figures in the tests below are timeloop-model 0fc43fb's for the same
// mappings (exported with export-timeloop); where the model once counted
// otherwise, the comment says what it counted.

// Timeloop checks fan-outs cumulatively: at every level, the spatial factors
// of the levels above multiply to at most its mesh. GLB fans out 4 ways, but
// with DRAM's 2-way fan-out unused, K = 8 at GLB fits the 8 Buffers (the model
// once refused it); its mapper keeps each level within its own fan-out, and so
// does the map space. Spatial factors at a level without fan-out are refused.
void TestModelLegality::fanoutCheckedAsTimeloopChecksIt() {
    const Architecture a = threeLevelArray(2, 8);
    const Problem p = conv1dK(8, 16, 3);
    const int K = p.dimIndex("K");
    Mapping m = makeTrivialMapping(p, a);
    m.levels[0].temporal[p.dimIndex("P")] = 16;
    m.levels[1].spatialX[K] = 8;
    m.levels[2].temporal[p.dimIndex("R")] = 3;
    Evaluation e = evaluate(p, a, m);
    QVERIFY2(e.valid, joined(e, p, a).c_str());
    QCOMPARE(e.levels[2].utilizedInstances, 8);
    QCOMPARE(e.levels[0].tensors[p.tensorIndex("Weights")].reads, 24);
    QCOMPARE(e.levels[2].tensors[p.tensorIndex("Inputs")].fills, 18);
    const MapSpace space(p, a);
    QVERIFY(!space.isLegal(m, e));
    // 4 on X above GLB's 2 instances.
    m.levels[1].spatialX[K] = 2;
    m.levels[0].spatialX[K] = 4;
    e = evaluate(p, a, m);
    QVERIFY(!e.valid);
    QVERIFY2(joined(e, p, a).find("level 'GLB': spatial factors on X above it multiply to 4 but "
                                  "its mesh has 2 instances on X") != std::string::npos,
             joined(e, p, a).c_str());
    // Buffer does not fan out (8 MACs under 8 Buffers).
    m.levels[0].spatialX[K] = 1;
    m.levels[1].spatialX[K] = 4;
    m.levels[2].spatialX[K] = 2;
    e = evaluate(p, a, m);
    QVERIFY(hasViolation(e, ViolationKind::NoFanout));
}

// accel_a's L2 fans out 16 x 16 to L1. Q = 28 spread as 14 on X and 2 on Y
// is not a Timeloop mapping (one spatial factor per dimension and level, X or
// Y by the split): the model refuses it naming level and dimension, and
// export-timeloop refuses to write it (it once merged it into Q = 28 on X,
// which Timeloop rejects); with Q = 14 on X and C = 2 on Y it is legal.
void TestModelLegality::oneAxisPerDimensionAndLevel() {
    const Architecture a =
        loadArchitecture(std::string(MAPWRIGHT_SOURCE_DIR) + "/samples/architectures/accel_a.json");
    const Problem p = conv2dProblem("conv", 1, 1, 64, 64, 28, 28, 3, 3);
    Mapping m = makeTrivialMapping(p, a); // everything at DRAM but the fan-out below
    const int l2 = a.levelIndex("L2"), q = p.dimIndex("Q"), c = p.dimIndex("C");
    for (int d = 0; d < p.numDims(); ++d)
        m.levels[0].temporal[d] = static_cast<std::uint32_t>(p.dims[d].bound);
    m.levels[0].temporal[q] /= 28;
    m.levels[l2].spatialX[q] = 14;
    m.levels[l2].spatialY[q] = 2;
    const Evaluation e = evaluate(p, a, m);
    QVERIFY(hasViolation(e, ViolationKind::SplitAxes));
    const std::string msg = joined(e, p, a);
    QVERIFY2(msg.find("level 'L2': dimension Q fans out on both X (14) and Y (2)") !=
                 std::string::npos,
             msg.c_str());
    QVERIFY_THROWS_EXCEPTION(InputError, timeloopMappingYaml(p, a, m));
    m.levels[l2].spatialY[q] = 1;
    m.levels[0].temporal[q] *= 2;
    m.levels[0].temporal[c] /= 2;
    m.levels[l2].spatialY[c] = 2;
    QVERIFY(evaluate(p, a, m).valid);
    const std::string yaml = timeloopMappingYaml(p, a, m);
    QVERIFY2(yaml.find("Q=14") != std::string::npos && yaml.find("split: 1") != std::string::npos,
             yaml.c_str());
}

// Sampling, every move and the repairs stay in Timeloop's space: no dimension
// ever fans out on both axes of one level.
void TestModelLegality::mapSpaceStaysOnOneAxis() {
    const Architecture a =
        loadArchitecture(std::string(MAPWRIGHT_SOURCE_DIR) + "/samples/architectures/accel_a.json");
    const Problem p = conv2dProblem("conv", 1, 1, 64, 64, 28, 28, 3, 3);
    MapSpace space(p, a);
    Rng rng(5);
    Evaluation scratch;
    int split = 0, legal = 0;
    auto splits = [&](const Mapping& m) {
        for (int l = 0; l < a.numLevels(); ++l)
            for (int d = 0; d < p.numDims(); ++d)
                if (m.levels[l].spatialX[d] > 1 && m.levels[l].spatialY[d] > 1)
                    return true;
        return false;
    };
    for (int i = 0; i < 2000; ++i) {
        Mapping m;
        QVERIFY(space.sampleLegal(rng, m, scratch));
        split += splits(m);
        for (int k = 0; k < 5; ++k) {
            Mapping n = m;
            space.randomMove(n, rng);
            space.growParallelism(n, rng);
            if (space.isLegalQuick(n)) {
                split += splits(n);
                QVERIFY(evaluate(p, a, n).valid);
            }
            if (space.fitThenCheck(n, rng)) {
                split += splits(n);
                ++legal;
            }
            if (space.repair(n, rng, scratch))
                split += splits(n);
        }
    }
    QCOMPARE(split, 0);
    QVERIFY(legal > 0);
}

void TestModelLegality::capacityViolation() {
    const Architecture a = twoLevelArray(1, 16);
    const Problem p = conv1dK(8, 32, 3);
    Mapping m = makeTrivialMapping(p, a);
    m.levels[1].temporal[p.dimIndex("P")] = 32; // Inputs tile 34 > 16
    m.levels[1].temporal[p.dimIndex("R")] = 3;
    m.levels[0].temporal[p.dimIndex("K")] = 8;
    const Evaluation e = evaluate(p, a, m);
    QVERIFY(!e.valid);
    QVERIFY(hasViolation(e, ViolationKind::Capacity));
    const std::string msg = joined(e, p, a);
    QVERIFY2(msg.find("level 'Buffer': tile of Inputs needs 34 words but the level holds 16") !=
                 std::string::npos,
             msg.c_str());
    // Each tile fits alone but not together: one combined violation.
    Mapping m2 = makeTrivialMapping(p, a);
    m2.levels[1].temporal[p.dimIndex("P")] = 8; // W 3, I 10, O 8 -> 21 > 16
    m2.levels[1].temporal[p.dimIndex("R")] = 3;
    m2.levels[0].temporal[p.dimIndex("P")] = 4;
    m2.levels[0].temporal[p.dimIndex("K")] = 8;
    const Evaluation e2 = evaluate(p, a, m2);
    QVERIFY(!e2.valid);
    const std::string msg2 = joined(e2, p, a);
    QVERIFY2(msg2.find("kept tiles together need 21 words but the level holds 16") !=
                 std::string::npos,
             msg2.c_str());
}

void TestModelLegality::outermostMustKeep() {
    const Architecture a = twoLevelArray(1);
    const Problem p = conv1dK(2, 4, 3);
    Mapping m = makeTrivialMapping(p, a);
    m.levels[0].temporal[p.dimIndex("K")] = 2;
    m.levels[0].temporal[p.dimIndex("P")] = 4;
    m.levels[1].temporal[p.dimIndex("R")] = 3;
    m.levels[0].setKeep(p.tensorIndex("Inputs"), false);
    const Evaluation e = evaluate(p, a, m);
    QVERIFY(!e.valid);
    QVERIFY(joined(e, p, a).find("the outermost level must keep Inputs") != std::string::npos);
}

void TestModelLegality::zeroFactorAndBadPermutation() {
    const Architecture a = twoLevelArray(1);
    const Problem p = conv1dK(2, 4, 3);
    Mapping m = makeTrivialMapping(p, a);
    m.levels[0].temporal[p.dimIndex("K")] = 0;
    m.levels[1].order[0] = m.levels[1].order[1]; // a dimension twice
    const Evaluation e = evaluate(p, a, m);
    QVERIFY(!e.valid);
    QVERIFY(hasViolation(e, ViolationKind::ZeroFactor));
    QVERIFY(hasViolation(e, ViolationKind::BadPermutation));
    Mapping shortMapping = m;
    shortMapping.numLevels = 1;
    const Evaluation e2 = evaluate(p, a, shortMapping);
    QVERIFY(hasViolation(e2, ViolationKind::LevelCount));
    // An order byte that names no dimension, in either order, whatever its
    // value (a file's or a binding's mapping may hold anything there).
    Mapping legal = makeTrivialMapping(p, a);
    legal.levels[0].temporal[p.dimIndex("K")] = 2;
    legal.levels[0].temporal[p.dimIndex("P")] = 4;
    legal.levels[1].temporal[p.dimIndex("R")] = 3;
    QVERIFY(evaluate(p, a, legal).valid);
    for (const int byte : {3, 9, 10, 15, 16, 31, 32, 200, 255})
        for (const bool spatial : {false, true}) {
            Mapping bad = legal;
            (spatial ? bad.levels[1].spatialOrder : bad.levels[1].order)[2] = std::uint8_t(byte);
            const Evaluation e3 = evaluate(p, a, bad);
            QVERIFY(!e3.valid);
            QCOMPARE(e3.numViolations, 1);
            QVERIFY(hasViolation(e3, ViolationKind::BadPermutation));
        }
}

void TestModelLegality::architectureWithoutCompute() {
    Architecture a = twoLevelArray(1);
    a.compute.meshX = 0;
    try {
        validateArchitecture(a);
        QFAIL("an architecture without compute units must be rejected");
    } catch (const InputError& e) {
        QVERIFY2(std::string(e.what()).find("no compute units") != std::string::npos, e.what());
    }
    Architecture b = twoLevelArray(1);
    b.levels.clear();
    QVERIFY_THROWS_EXCEPTION(InputError, validateArchitecture(b));
}

void TestModelLegality::badDensities() {
    LayerSpec l = presetLayer("conv2d", "c");
    l.densities = {{"Inputs", 0.0}};
    QVERIFY_THROWS_EXCEPTION(InputError, buildProblem(l));
    l.densities = {{"Inputs", 1.5}};
    QVERIFY_THROWS_EXCEPTION(InputError, buildProblem(l));
    l.densities = {{"Activations", 0.5}};
    try {
        buildProblem(l);
        QFAIL("an unknown tensor's density was accepted");
    } catch (const InputError& e) {
        QVERIFY(std::string(e.what()).find("Activations") != std::string::npos);
    }
    const Json bad = Json::parse(R"({"format": "mapwright.workload", "version": 1,
        "layers": [{"name": "x", "kind": "gemm", "M": 4, "N": 4, "K": 4,
                    "densities": {"A": "half"}}]})");
    try {
        networkFromJson(bad);
        QFAIL("a non-numeric density was accepted");
    } catch (const InputError& e) {
        QVERIFY(std::string(e.what()).find("densities.A") != std::string::npos);
    }
    // A good one round-trips through JSON.
    const Json good = Json::parse(R"({"format": "mapwright.workload", "version": 1,
        "layers": [{"name": "x", "kind": "gemm", "M": 4, "N": 4, "K": 4,
                    "densities": {"A": 0.25}}]})");
    const Network n = networkFromJson(good);
    QCOMPARE(buildProblem(n.layers[0]).tensors[0].density, 0.25);
    QCOMPARE(networkFromJson(toJson(n)).layers[0].densities.size(), std::size_t(1));
}

QTEST_GUILESS_MAIN(TestModelLegality)
#include "test_model_legality.moc"
