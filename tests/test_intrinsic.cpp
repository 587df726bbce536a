// AMOS-style intrinsic mapping: the paper's counts of legal software-to-intrinsic
// mappings (Table 6), padding and utilization, bad intrinsics, and the plan
// that pins a match onto an architecture level for any searcher.
#include "common/error.h"
#include "mapspace/intrinsic.h"
#include "mapspace/mapspace.h"
#include "test_support.h"
#include "workload/presets.h"

#include <QtTest>

#include <algorithm>

using namespace mw;

namespace {

// Outputs[N,K,P] += Inputs[N,C,P+R] * Weights[K,C,R]
Problem conv1d() {
    return makeProblem("conv1d", {{"N", 4}, {"K", 32}, {"P", 28}, {"C", 16}, {"R", 3}},
                       {{"Inputs", {{{"N", 1}}, {{"C", 1}}, {{"P", 1}, {"R", 1}}}},
                        {"Weights", {{{"K", 1}}, {{"C", 1}}, {{"R", 1}}}},
                        {"Outputs", {{{"N", 1}}, {{"K", 1}}, {{"P", 1}}}, true}});
}

// Outputs[N,K,D,P,Q] += Inputs[N,C,D+T,P+R,Q+S] * Weights[K,C,T,R,S]
Problem conv3d() {
    return makeProblem(
        "conv3d",
        {{"N", 2},
         {"K", 32},
         {"D", 8},
         {"P", 14},
         {"Q", 14},
         {"C", 16},
         {"T", 3},
         {"R", 3},
         {"S", 3}},
        {{"Inputs",
          {{{"N", 1}},
           {{"C", 1}},
           {{"D", 1}, {"T", 1}},
           {{"P", 1}, {"R", 1}},
           {{"Q", 1}, {"S", 1}}}},
         {"Weights", {{{"K", 1}}, {{"C", 1}}, {{"T", 1}}, {{"R", 1}}, {{"S", 1}}}},
         {"Outputs", {{{"N", 1}}, {{"K", 1}}, {{"D", 1}}, {{"P", 1}}, {{"Q", 1}}}, true}});
}

Problem conv2d(std::int64_t N = 16, std::int64_t P = 56) {
    return conv2dProblem("conv2d", N, 1, 64, 64, P, P, 3, 3);
}

using test::level;

// DRAM -> GlobalBuffer -(16 x 16)-> PE buffers -(lanes x 1)-> MACs.
Architecture tensorArray(int lanes = 16) {
    Architecture a;
    a.name = "tensor-array";
    a.levels.push_back(level("DRAM", LevelClass::DRAM, 0, 1, 1));
    a.levels.push_back(level("GlobalBuffer", LevelClass::SRAM, 1 << 20, 1, 1));
    a.levels.push_back(level("PEBuffer", LevelClass::RegFile, 1 << 12, 16, 16));
    a.compute.meshX = 16 * lanes;
    a.compute.meshY = 16;
    validateArchitecture(a);
    return a;
}

std::vector<std::string> names(const Problem& p, const std::vector<int>& dims) {
    std::vector<std::string> n;
    for (int d : dims)
        n.push_back(p.dims[d].name);
    return n;
}

bool hasMatch(const Problem& p, const Intrinsic& in, const std::vector<IntrinsicMatch>& ms,
              const std::string& text) {
    return std::any_of(ms.begin(), ms.end(),
                       [&](const IntrinsicMatch& m) { return describeMatch(p, in, m) == text; });
}

template <typename F> QString inputErrorOf(F&& f) {
    try {
        f();
    } catch (const InputError& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

} // namespace

class TestIntrinsic : public QObject {
    Q_OBJECT
  private slots:
    void conv2dHas35();
    void conv1dHas6();
    void conv3dHas180();
    void gemmHas1();
    void anyBindingAddsTransposes();
    void accessMatricesRejectMixedFusion();
    void largeGemmFullyUtilized();
    void gemmM20IsPadded();
    void deterministic();
    void badIntrinsic();
    void planPinsFanout();
    void planSplitsFusedDims();
    void planSystolicTemporal();
    void planFanoutTooSmall();
    void planHonouredByMapSpace();
};

// Table 6: C2D 35. Weights bind to A[i,k], Inputs to B[k,j].
void TestIntrinsic::conv2dHas35() {
    const Problem p = conv2d();
    const Intrinsic in = matmulIntrinsic(16, 16, 16);
    const auto ms = enumerateIntrinsicMatches(p, in);
    QCOMPARE(int(ms.size()), 35);
    for (const auto& m : ms) {
        QVERIFY(accessCompatible(p, in, m));
        QCOMPARE(names(p, m.fused[0]), std::vector<std::string>{"M"}); // G never maps
    }
    // im2col (Fig. 3, Table 5 C9) and fuse_hw (UNIT, Table 5 C5) are among them.
    QVERIFY(hasMatch(p, in, ms, "i <- M, j <- N*P*Q, k <- C*R*S (A=Weights, B=Inputs, C=Outputs)"));
    QVERIFY(hasMatch(p, in, ms, "i <- M, j <- P*Q, k <- C (A=Weights, B=Inputs, C=Outputs)"));
    // Table 5 C3: q with s is a union of (q, c) and (n, s).
    QVERIFY(hasMatch(p, in, ms, "i <- M, j <- N*P*Q, k <- C*S (A=Weights, B=Inputs, C=Outputs)"));
    // P alone with R alone is no match point (Inputs[P+R] would read i+k).
    QVERIFY(!hasMatch(p, in, ms, "i <- M, j <- P, k <- R (A=Weights, B=Inputs, C=Outputs)"));
}

void TestIntrinsic::conv1dHas6() {
    const Problem p = conv1d();
    const Intrinsic in = matmulIntrinsic(16, 16, 16);
    const auto ms = enumerateIntrinsicMatches(p, in);
    QCOMPARE(int(ms.size()), 6);
    QVERIFY(hasMatch(p, in, ms, "i <- N*P, j <- K, k <- C*R (A=Inputs, B=Weights, C=Outputs)"));
}

void TestIntrinsic::conv3dHas180() {
    const Problem p = conv3d();
    const auto ms = enumerateIntrinsicMatches(p, matmulIntrinsic(16, 16, 16));
    QCOMPARE(int(ms.size()), 180);
}

void TestIntrinsic::gemmHas1() {
    const Problem p = gemmProblem("gemm", 256, 256, 256);
    const Intrinsic in = matmulIntrinsic(16, 16, 16);
    const auto ms = enumerateIntrinsicMatches(p, in);
    QCOMPARE(int(ms.size()), 1);
    QCOMPARE(describeMatch(p, in, ms[0]), std::string("i <- M, j <- N, k <- K (A=A, B=B, C=Z)"));
}

// Every binding: each InOrder match also appears transposed (i and j swap).
void TestIntrinsic::anyBindingAddsTransposes() {
    const Intrinsic in = matmulIntrinsic(16, 16, 16);
    const IntrinsicMatchOptions any{OperandBinding::Any};
    QCOMPARE(int(enumerateIntrinsicMatches(conv2d(), in, any).size()), 70);
    const Problem g = gemmProblem("gemm", 64, 64, 64);
    const auto ms = enumerateIntrinsicMatches(g, in, any);
    QCOMPARE(int(ms.size()), 2);
    QCOMPARE(describeMatch(g, in, ms[1]), std::string("i <- N, j <- M, k <- K (A=B, B=A, C=Z)"));
    // MTTKRP has three inputs, the matmul two sources: nothing fits.
    QVERIFY(enumerateIntrinsicMatches(mttkrpProblem("m", 8, 8, 8, 8), in, any).empty());
}

// The paper's invalid example: n and k fused onto i1 (Algorithm 1 fails).
void TestIntrinsic::accessMatricesRejectMixedFusion() {
    const Problem p = conv2d();
    const Intrinsic in = matmulIntrinsic(16, 16, 16);
    IntrinsicMatch m = enumerateIntrinsicMatches(p, in).front();
    QVERIFY(accessCompatible(p, in, m));
    m.fused[0] = {p.dimIndex("N"), p.dimIndex("M")};
    QVERIFY(!accessCompatible(p, in, m));
    m = enumerateIntrinsicMatches(p, in).front();
    m.fused[2] = {p.dimIndex("C"), p.dimIndex("P")}; // a spatial dim onto the reduction
    QVERIFY(!accessCompatible(p, in, m));
    m = enumerateIntrinsicMatches(p, in).front();
    std::swap(m.operandTensor[0], m.operandTensor[1]);
    QVERIFY(!accessCompatible(p, in, m));
}

void TestIntrinsic::largeGemmFullyUtilized() {
    const Problem p = gemmProblem("gemm", 1024, 1024, 1024);
    const auto ms = enumerateIntrinsicMatches(p, matmulIntrinsic(16, 16, 16));
    QCOMPARE(int(ms.size()), 1);
    QVERIFY(!ms[0].padded);
    QVERIFY(ms[0].utilization >= 0.9);
    QCOMPARE(ms[0].utilization, 1.0);
    QCOMPARE(ms[0].folds, (std::vector<std::int64_t>{64, 64, 64}));
}

// M = 20 on a 16-wide i: two folds of 16, 12 of the second padded: 20/32.
void TestIntrinsic::gemmM20IsPadded() {
    const Problem p = gemmProblem("gemm", 20, 1024, 1024);
    const Intrinsic in = matmulIntrinsic(16, 16, 16);
    const auto ms = enumerateIntrinsicMatches(p, in);
    QCOMPARE(int(ms.size()), 1);
    QVERIFY(ms[0].padded);
    QCOMPARE(ms[0].extent[0], std::int64_t(20));
    QCOMPARE(ms[0].folds[0], std::int64_t(2));
    QCOMPARE(ms[0].utilization, 0.625);

    const IntrinsicPlan plan = planIntrinsic(p, tensorArray(), in, ms[0], 1);
    QCOMPARE(plan.problem.dims[p.dimIndex("M")].bound, std::int64_t(32));
    QCOMPARE(plan.problem.dims[p.dimIndex("N")].bound, std::int64_t(1024));
    QCOMPARE(plan.utilization, 0.625);
    QCOMPARE(double(p.computes()) / double(plan.problem.computes()), 0.625);

    // Fused wrap-around beats per-dim padding: N=1, P=Q=7 on j is 49 of 4 x 16
    // (each single dim alone would use 7 of 16); im2col fills i and k exactly.
    const Problem c = conv2d(1, 7);
    int seen = 0;
    for (const auto& m : enumerateIntrinsicMatches(c, in)) {
        if (names(c, m.fused[1]) != std::vector<std::string>{"N", "P", "Q"})
            continue;
        ++seen;
        QCOMPARE(m.extent[1], std::int64_t(49));
        QCOMPARE(m.folds[1], std::int64_t(4));
        if (names(c, m.fused[2]) == std::vector<std::string>{"C", "R", "S"})
            QCOMPARE(m.utilization, 49.0 / 64.0);
    }
    QCOMPARE(seen, 5); // k: C, C*R, C*S, R*S, C*R*S (R alone strands P, S alone Q)
}

void TestIntrinsic::deterministic() {
    const Problem p = conv3d();
    const Intrinsic in = matmulIntrinsic(16, 8, 16);
    const IntrinsicMatchOptions any{OperandBinding::Any};
    const auto a = enumerateIntrinsicMatches(p, in, any);
    const auto b = enumerateIntrinsicMatches(p, in, any);
    QCOMPARE(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        QCOMPARE(a[i].fused, b[i].fused);
        QCOMPARE(a[i].operandTensor, b[i].operandTensor);
        QCOMPARE(a[i].utilization, b[i].utilization);
        QCOMPARE(describeMatch(p, in, a[i]), describeMatch(p, in, b[i]));
    }
}

void TestIntrinsic::badIntrinsic() {
    const Problem p = gemmProblem("gemm", 64, 64, 64);
    Intrinsic zero = matmulIntrinsic(16, 16, 16);
    zero.dims[1].size = 0;
    QString msg = inputErrorOf([&] { enumerateIntrinsicMatches(p, zero); });
    QVERIFY2(msg.contains("matmul16x16x16") && msg.contains("dimensions.j") &&
                 msg.contains("size is 0"),
             qPrintable(msg));

    Intrinsic unknown = matmulIntrinsic(16, 16, 16);
    unknown.operands[1].dims = {"k", "z"};
    msg = inputErrorOf([&] { enumerateIntrinsicMatches(p, unknown); });
    QVERIFY2(msg.contains("operands.B") && msg.contains("unknown dimension 'z'"), qPrintable(msg));

    Intrinsic twoOutputs = matmulIntrinsic(16, 16, 16);
    twoOutputs.operands[0].output = true;
    msg = inputErrorOf([&] { validateIntrinsic(twoOutputs); });
    QVERIFY2(msg.contains("exactly one output"), qPrintable(msg));

    Intrinsic unused = matmulIntrinsic(16, 16, 16);
    unused.dims.push_back({"l", 4, IntrinsicAxis::Y, 1});
    msg = inputErrorOf([&] { validateIntrinsic(unused); });
    QVERIFY2(msg.contains("dimensions.l") && msg.contains("used by no operand"), qPrintable(msg));

    const IntrinsicMatch m = enumerateIntrinsicMatches(p, matmulIntrinsic(16, 16, 16)).front();
    QVERIFY(!inputErrorOf([&] { planIntrinsic(p, tensorArray(), zero, m, 1); }).isEmpty());
}

// Tensor core: i on X and j on Y of the global buffer's 16 x 16 fan-out, k on
// the PE's 16 lanes; nothing else fans out at those levels.
void TestIntrinsic::planPinsFanout() {
    const Problem p = gemmProblem("gemm", 64, 128, 256);
    const Architecture a = tensorArray();
    const Intrinsic in = matmulIntrinsic(16, 16, 16);
    const IntrinsicPlan plan = planIntrinsic(p, a, in, enumerateIntrinsicMatches(p, in)[0], 1);
    const int M = p.dimIndex("M"), N = p.dimIndex("N"), K = p.dimIndex("K");
    QCOMPARE(int(plan.constraints.levels.size()), a.numLevels());
    QCOMPARE(plan.problem.computes(), p.computes());
    QCOMPARE(plan.utilization, 1.0);
    const LevelConstraint& gb = plan.constraints.levels[1];
    QCOMPARE(gb.spatialX[M], std::int64_t(16));
    QCOMPARE(gb.spatialY[N], std::int64_t(16));
    QCOMPARE(gb.spatialY[M], std::int64_t(1));
    QCOMPARE(gb.spatialX[N], std::int64_t(1));
    QCOMPARE(gb.spatialX[K], std::int64_t(1));
    QCOMPARE(gb.spatialY[K], std::int64_t(1));
    QCOMPARE(gb.spatialAllowedX, (1u << M) | (1u << N));
    QCOMPARE(gb.spatialAllowedY, (1u << M) | (1u << N));
    const LevelConstraint& pe = plan.constraints.levels[2];
    QCOMPARE(pe.spatialX[K], std::int64_t(16));
    QCOMPARE(pe.spatialAllowedX, 1u << K);
    const LevelConstraint& dram = plan.constraints.levels[0];
    QCOMPARE(dram.spatialAllowedX, ~0u);
    for (int d = 0; d < p.numDims(); ++d) {
        QCOMPARE(dram.spatialX[d], std::int64_t(0));
        QCOMPARE(gb.temporal[d], std::int64_t(0)); // tiling stays free
    }
}

// j <- N*P*Q with N=1, P=Q=7: 16 split as 1*2*8 over N, P, Q (minimal padded
// volume 64), P and Q padded to 8; C*R*S = 576 takes 16 exactly as C=16.
void TestIntrinsic::planSplitsFusedDims() {
    const Problem p = conv2d(1, 7);
    const Intrinsic in = matmulIntrinsic(16, 16, 16);
    const auto ms = enumerateIntrinsicMatches(p, in);
    const auto it = std::find_if(ms.begin(), ms.end(), [&](const IntrinsicMatch& m) {
        return describeMatch(p, in, m) ==
               "i <- M, j <- N*P*Q, k <- C*R*S (A=Weights, B=Inputs, C=Outputs)";
    });
    QVERIFY(it != ms.end());
    const IntrinsicPlan plan = planIntrinsic(p, tensorArray(), in, *it, 1);
    const int N = p.dimIndex("N"), P = p.dimIndex("P"), Q = p.dimIndex("Q"), C = p.dimIndex("C");
    QCOMPARE(plan.factor[N], std::int64_t(1));
    QCOMPARE(plan.factor[P], std::int64_t(2));
    QCOMPARE(plan.factor[Q], std::int64_t(8));
    QCOMPARE(plan.problem.dims[P].bound, std::int64_t(8));
    QCOMPARE(plan.problem.dims[Q].bound, std::int64_t(8));
    QCOMPARE(plan.constraints.levels[1].spatialY[P], std::int64_t(2));
    QCOMPARE(plan.constraints.levels[1].spatialY[Q], std::int64_t(8));
    QCOMPARE(plan.factor[C] * plan.factor[p.dimIndex("R")] * plan.factor[p.dimIndex("S")],
             std::int64_t(16));
    QCOMPARE(plan.utilization, 49.0 / 64.0);
    for (int d = 0; d < p.numDims(); ++d)
        QCOMPARE(plan.problem.dims[d].bound % plan.factor[d], std::int64_t(0));
}

// Systolic: k is a temporal factor of the PE level, which keeps its fan-out free.
void TestIntrinsic::planSystolicTemporal() {
    const Problem p = gemmProblem("gemm", 64, 64, 64);
    const Intrinsic in = systolicIntrinsic(16, 16, 16);
    const IntrinsicPlan plan =
        planIntrinsic(p, tensorArray(), in, enumerateIntrinsicMatches(p, in)[0], 1);
    const LevelConstraint& pe = plan.constraints.levels[2];
    QCOMPARE(pe.temporal[p.dimIndex("K")], std::int64_t(16));
    QCOMPARE(pe.spatialX[p.dimIndex("K")], std::int64_t(0));
    QCOMPARE(pe.spatialAllowedX, ~0u);
}

void TestIntrinsic::planFanoutTooSmall() {
    const Problem p = gemmProblem("gemm", 64, 64, 64);
    const Intrinsic in = matmulIntrinsic(16, 16, 16);
    const IntrinsicMatch m = enumerateIntrinsicMatches(p, in)[0];
    QString msg = inputErrorOf([&] { planIntrinsic(p, tensorArray(4), in, m, 1); });
    QVERIFY2(msg.contains("levels.PEBuffer") && msg.contains("fan-out X is 4") &&
                 msg.contains("needs 16"),
             qPrintable(msg));
    msg = inputErrorOf([&] { planIntrinsic(p, tensorArray(), in, m, 0); }); // DRAM fans out 1
    QVERIFY2(msg.contains("levels.DRAM") && msg.contains("fan-out X is 1"), qPrintable(msg));
    msg = inputErrorOf([&] { planIntrinsic(p, tensorArray(), in, m, 2); }); // no level below
    QVERIFY2(msg.contains("dimension 'k'") && msg.contains("only 3 levels"), qPrintable(msg));
}

// The MapSpace keeps the pinned factors in every sample and repair.
void TestIntrinsic::planHonouredByMapSpace() {
    const Problem p = gemmProblem("gemm", 20, 64, 64);
    const Architecture a = tensorArray();
    const Intrinsic in = matmulIntrinsic(16, 16, 16);
    const IntrinsicPlan plan = planIntrinsic(p, a, in, enumerateIntrinsicMatches(p, in)[0], 1);
    const MapSpace space(plan.problem, a, plan.constraints);
    Rng rng(7);
    Evaluation scratch;
    const int M = p.dimIndex("M"), N = p.dimIndex("N"), K = p.dimIndex("K");
    for (int i = 0; i < 50; ++i) {
        Mapping m = space.sample(rng);
        QVERIFY(space.meetsConstraints(m));
        QCOMPARE(m.levels[1].spatialX[M], 16u);
        QCOMPARE(m.levels[1].spatialY[N], 16u);
        QCOMPARE(m.levels[2].spatialX[K], 16u);
        for (int j = 0; j < 5; ++j)
            space.randomMove(m, rng);
        space.repair(m, rng, scratch);
        QVERIFY(space.meetsConstraints(m));
        QCOMPARE(m.levels[1].spatialX[M], 16u);
    }
}

QTEST_APPLESS_MAIN(TestIntrinsic)
#include "test_intrinsic.moc"
