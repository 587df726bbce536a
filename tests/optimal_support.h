#pragma once
// What the optimal searcher's tests share (test_optimal: the searcher;
// test_optimal_bound and test_optimal_bound_rules: its bound): small
// architectures and layers whose spaces plain exhaustive enumeration
// covers, the sample layers near whose good mappings link transfers act,
// and the walk's nodes as the bound sees them.
#include "io/json_io.h"
#include "model/cost_model.h"
#include "search/optimal_bound.h"
#include "search/search.h"
#include "test_support.h"

#include <QtTest>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace mw::optimal_test {

inline const std::string kSamples = std::string(MAPWRIGHT_SOURCE_DIR) + "/samples/";

inline SearchSettings unlimited(const std::string& objective = "edp") {
    SearchSettings s;
    s.budget.evaluations = std::int64_t(1) << 50; // every search ends by itself
    s.objective = SearchObjective::parse(objective);
    return s;
}

inline StorageLevel withEnergy(StorageLevel s, double read, double write, double update) {
    s.energy = {read, write, update, 0.0};
    return s;
}

// DRAM, a global buffer, and four register files in a row fed by the buffer's
// X fan-out, one MAC each: a 1-D convolution slides its window over them.
inline Architecture slidingRow() {
    Architecture a;
    a.name = "sliding-row";
    a.levels = {withEnergy(test::level("DRAM", LevelClass::DRAM, 0), 200, 200, 200),
                withEnergy(test::level("GLB", LevelClass::SRAM, 96), 6, 7, 8),
                withEnergy(test::level("RF", LevelClass::RegFile, 12, 4, 1), 1, 1.5, 1.2)};
    a.levels[0].readBandwidth = 4;
    a.levels[2].energy.leak = 0.01;
    a.compute.meshX = 4;
    a.compute.macEnergy = 1.0;
    validateArchitecture(a);
    return a;
}

inline Problem conv1d() {
    return conv2dProblem("conv1d", 1, 1, 1, 2, 4, 1, 3, 1); // M 2, P 4, R 3
}

// One register file feeding a 2 x 2 array of MACs (operands cross MAC links),
// under a buffer with a narrow read port.
inline Architecture macArray() {
    Architecture a;
    a.name = "mac-array";
    a.levels = {withEnergy(test::level("DRAM", LevelClass::DRAM, 0), 100, 100, 100),
                withEnergy(test::level("Buffer", LevelClass::SRAM, 24), 5, 6, 6),
                withEnergy(test::level("RF", LevelClass::RegFile, 4), 1, 1, 1)};
    a.levels[1].readBandwidth = 2;
    a.compute.meshX = 2;
    a.compute.meshY = 2;
    validateArchitecture(a);
    return a;
}

inline MapSpaceConstraints rfKeepsAll(const Problem& p, const Architecture& a) {
    MapSpaceConstraints c;
    c.levels.resize(std::size_t(a.numLevels()));
    c.levels[2].keepFixed = c.levels[2].keepValue = std::uint8_t((1u << p.numTensors()) - 1);
    return c;
}

// Eyeriss in miniature: columns and rows as dummy fan-out levels, a
// scratchpad per tensor in each of 2 x 2 PEs, with the row-stationary
// constraints' shape (tests the collapse of bypassed levels and the diagonal
// links between PEs).
inline Architecture tinyEyeriss() {
    Architecture a;
    a.name = "tiny-eyeriss";
    a.levels = {withEnergy(test::level("DRAM", LevelClass::DRAM, 0), 200, 200, 200),
                withEnergy(test::level("GLB", LevelClass::SRAM, 256), 6, 6, 6),
                test::level("cols", LevelClass::Dummy, 0, 1, 1, 0.0),
                test::level("rows", LevelClass::Dummy, 0, 2, 1, 0.0),
                withEnergy(test::level("ifmap", LevelClass::RegFile, 4, 2, 2), 1, 1, 1),
                withEnergy(test::level("weights", LevelClass::RegFile, 8, 2, 2), 1.5, 1.5, 1.5),
                withEnergy(test::level("psum", LevelClass::RegFile, 4, 2, 2), 1.2, 1.2, 1.2)};
    a.levels[1].readBandwidth = 3;
    a.levels[1].writeBandwidth = 3;
    a.compute.meshX = 2;
    a.compute.meshY = 2;
    validateArchitecture(a);
    return a;
}

inline Problem tinyConv() {
    return conv2dProblem("tiny", 1, 1, 2, 2, 2, 2, 2, 1); // C M P Q R 2, S 1
}

inline MapSpaceConstraints rowStationaryShape(const Problem& p, const Architecture& a) {
    MapSpaceConstraints c;
    c.levels.resize(std::size_t(a.numLevels()));
    const auto dim = [&](const char* n) { return p.dimIndex(n); };
    const auto bit = [&](const char* n) { return std::uint8_t(1u << p.tensorIndex(n)); };
    const std::uint8_t all = std::uint8_t((1u << p.numTensors()) - 1);
    // DRAM's order fixed (outer to inner), so the glb's is the free one.
    OrderConstraint& dram = c.levels[0].order;
    for (const char* n : {"N", "G", "C", "M", "P", "Q", "R", "S"})
        dram.outer[dram.numOuter++] = std::uint8_t(dim(n));
    c.levels[1].keepFixed = all;
    c.levels[1].keepValue = std::uint8_t(bit("Inputs") | bit("Outputs"));
    c.levels[2].allowSpatial((1u << dim("Q")) | (1u << dim("M")));
    c.levels[3].allowSpatial((1u << dim("C")) | (1u << dim("M")) | (1u << dim("S")));
    const char* keeps[] = {"Inputs", "Weights", "Outputs"};
    for (int l = 4; l < 7; ++l) {
        c.levels[std::size_t(l)].keepFixed = all;
        c.levels[std::size_t(l)].keepValue = bit(keeps[l - 4]);
        for (int d = 0; d < p.numDims(); ++d)
            c.levels[std::size_t(l)].temporal[std::size_t(d)] = 1;
    }
    c.levels[5].temporal[std::size_t(dim("C"))] = 0; // weights: C and R free
    c.levels[5].temporal[std::size_t(dim("R"))] = 0;
    c.levels[6].temporal[std::size_t(dim("M"))] = 0; // psum: M free
    return c;
}

struct Case {
    const char* name;
    Problem problem;
    Architecture arch;
    MapSpaceConstraints constraints;
    std::string objective;
};

inline std::vector<Case> smallCases() {
    std::vector<Case> cases;
    const Architecture row = slidingRow();
    cases.push_back({"sliding row, edp", conv1d(), row, {}, "edp"});
    cases.push_back({"sliding row, energy", conv1d(), row, {}, "energy"});
    cases.push_back({"sliding row, cycles", conv1d(), row, {}, "cycles"});
    const Architecture macs = macArray();
    const Problem gemm = gemmProblem("gemm", 2, 2, 3);
    cases.push_back({"mac array, edp", gemm, macs, rfKeepsAll(gemm, macs), "edp"});
    const Architecture eye = tinyEyeriss();
    const Problem conv = tinyConv();
    cases.push_back({"tiny eyeriss, edp", conv, eye, rowStationaryShape(conv, eye), "edp"});
    return cases;
}

// A layer on one of the sample architectures (samples/architectures/ARCH.json).
struct SampleLayer {
    const char* arch;
    Problem problem;
};

inline double relativeDifference(double a, double b) {
    return std::abs(a - b) / std::max(std::abs(a), std::abs(b));
}

// The node above m whose levels from k are decided: the levels above hold
// their fixed factors, and m's spatial factors where spatialKept has their
// bit, and m's temporal factors of the dimensions in temporalKept (a walk
// placing those dimensions first).
inline Mapping nodeAbove(const MapSpace& space, const Mapping& m, int k, std::int64_t* remaining,
                         std::uint32_t spatialKept = 0, std::uint32_t temporalKept = 0) {
    const Problem& p = space.problem();
    Mapping base = makeTrivialMapping(p, space.arch());
    space.applyFixed(base);
    Mapping node = m;
    for (int l = 0; l < k; ++l) {
        LevelMapping& lm = node.levels[std::size_t(l)];
        const std::uint8_t keep = lm.keepMask;
        const auto x = lm.spatialX, y = lm.spatialY;
        lm = base.levels[std::size_t(l)];
        lm.keepMask = keep;
        if ((spatialKept >> l) & 1u) {
            lm.spatialX = x;
            lm.spatialY = y;
        }
        for (int d = 0; d < p.numDims(); ++d)
            if ((temporalKept >> d) & 1u)
                lm.temporal[d] = m.levels[std::size_t(l)].temporal[d];
    }
    for (int d = 0; d < p.numDims(); ++d) {
        std::int64_t held = 1, kept = 1;
        for (int l = 0; l < k; ++l) {
            const LevelMapping& lm = m.levels[std::size_t(l)];
            const LevelMapping& nm = node.levels[std::size_t(l)];
            held *= std::int64_t(lm.temporal[d]) * lm.spatialX[d] * lm.spatialY[d];
            kept *= std::int64_t(nm.temporal[d]) * nm.spatialX[d] * nm.spatialY[d];
        }
        remaining[d] = held / kept;
    }
    return node;
}

// The optimal searcher's root: every level at its fixed factors (and keeps);
// remaining receives each dimension's free part.
inline Mapping rootNode(const MapSpace& space, std::int64_t* remaining) {
    const Problem& p = space.problem();
    Mapping root = makeTrivialMapping(p, space.arch());
    space.applyFixed(root);
    for (int d = 0; d < p.numDims(); ++d) {
        remaining[d] = 1;
        for (const std::uint32_t prime : space.freePrimes(d))
            remaining[d] *= prime;
    }
    return root;
}

// A node's fan-outs as the walk hands them to the bound: the node's own from
// describedFrom on; below, a description that claims neither sharing nor
// links, which the bound must not read (the walk leaves other branches'
// there). It keeps the node it last described, to bound it.
class WalkFanouts {
  public:
    WalkFanouts(const PartialBound& bound, int levels) : bound_(bound), fanouts_(levels) {
        for (const auto& f : fanouts_)
            described_.push_back(&f);
    }
    void describe(const Mapping& node, int k, const std::int64_t* remaining,
                  std::uint32_t spatialDecided) {
        node_ = node;
        k_ = k;
        std::copy_n(remaining, kMaxDims, remaining_.begin());
        spatialDecided_ = spatialDecided;
        const int from = bound_.describedFrom(k, remaining, spatialDecided);
        for (int l = 0; l < int(fanouts_.size()); ++l) {
            PartialBound::Fanout& f = fanouts_[std::size_t(l)];
            if (l >= from) {
                bound_.describeFanout(node, l, f);
            } else {
                f = PartialBound::Fanout{};
                f.distinct.fill(1);
            }
        }
    }
    // The bound of the node last described.
    PartialBound::Value bound(double cutoff = std::numeric_limits<double>::infinity()) const {
        return bound_.at(node_, k_, remaining_.data(), described_.data(), cutoff, spatialDecided_);
    }
    // The node last described (complete: k = 0) with the orders of its levels
    // above fixedAbove, and the innermost `suffix` real loops there, decided.
    PartialBound::Value withOrdersAbove(int fixedAbove, int suffix, const Evaluation& completion,
                                        double cutoff = std::numeric_limits<double>::infinity(),
                                        bool* suffixMatters = nullptr) const {
        return bound_.withOrdersAbove(node_, described_.data(), fixedAbove, suffix, completion,
                                      cutoff, suffixMatters);
    }

  private:
    const PartialBound& bound_;
    std::vector<PartialBound::Fanout> fanouts_;
    std::vector<const PartialBound::Fanout*> described_;
    Mapping node_;
    int k_ = 0;
    std::array<std::int64_t, kMaxDims> remaining_{};
    std::uint32_t spatialDecided_ = 0;
};

// Walks of moves from GAMMA's best on each case's space (near good mappings,
// where link transfers act): calls fn(space, mapping, evaluation, the model's
// deliveries per tensor and level) for each legal one.
template <class Fn> void nearBestMappings(const std::vector<SampleLayer>& cases, Fn&& fn) {
    for (const SampleLayer& w : cases) {
        const Architecture a = loadArchitecture(kSamples + "architectures/" + w.arch + ".json");
        const Problem& p = w.problem;
        const MapSpace space(p, a);
        SearchSettings s;
        s.budget.evaluations = 3000;
        const SearchResult best = runSearch(space, "gamma", s);
        QVERIFY(best.found);
        const CostModel model(p, a);
        Rng rng(3);
        Mapping m = best.best;
        for (int step = 0; step < 1500; ++step) {
            Mapping next = m;
            if (step > 0 && !space.randomMove(next, rng))
                continue;
            // A fresh cache holds next's deliveries in its second entry.
            auto cache = std::make_unique<EvaluationCache>();
            Evaluation e;
            model.evaluate(next, e, *cache);
            if (!e.valid)
                continue;
            if (step % 50 == 0 || e.edp < 1.5 * best.bestCost)
                m = next; // stay near the good mappings
            fn(space, next, e, cache->entries[1].deliveries);
        }
    }
}

inline const std::vector<SampleLayer>& linkCases() {
    static const std::vector<SampleLayer> cases = {
        {"eyeriss_like", conv2dProblem("conv3", 1, 1, 64, 64, 14, 14, 3, 3)},
        {"eyeriss_like", conv2dProblem("stride2", 1, 1, 32, 64, 7, 7, 3, 3, 2, 2)},
        {"simba_like", conv2dProblem("conv3", 1, 1, 32, 32, 14, 14, 3, 3)},
        {"accel_b", conv2dProblem("conv", 1, 1, 16, 32, 8, 8, 3, 3)},
        {"tensor_core_like", gemmProblem("gemm", 64, 32, 48)},
    };
    return cases;
}

} // namespace mw::optimal_test
