#pragma once
// What the cost model's tests share (test_model: its rules; test_model_legality:
// its violations): small hierarchies, a 1-D convolution with output
// channels, and loop orders and violations by name.
#include "arch/architecture.h"
#include "io/json_io.h"
#include "mapping/mapping.h"
#include "model/cost_model.h"
#include "test_support.h"
#include "workload/problem.h"

#include <algorithm>
#include <string>
#include <vector>

namespace mw::model_test {

using test::level;

// DRAM -> Buffer (per PE) -> PEs on a 4-wide X mesh.
// samples/architectures/NAME.json.
inline Architecture sampleArchitecture(const std::string& name) {
    return loadArchitecture(std::string(MAPWRIGHT_SOURCE_DIR) + "/samples/architectures/" + name +
                            ".json");
}

inline Architecture twoLevelArray(int pes = 4, std::int64_t bufferWords = 64) {
    Architecture a;
    a.name = "test-array";
    a.levels.push_back(level("DRAM", LevelClass::DRAM, 0, 1, 1, 100.0));
    a.levels.push_back(level("Buffer", LevelClass::RegFile, bufferWords, pes, 1, 1.0));
    a.compute.meshX = pes;
    a.compute.macEnergy = 0.5;
    validateArchitecture(a);
    return a;
}

// Any hierarchy of uniform-energy levels over a cx x cy MAC mesh.
inline Architecture hierarchy(std::vector<StorageLevel> levels, int cx, int cy = 1) {
    Architecture a;
    a.name = "test-hierarchy";
    a.levels = std::move(levels);
    a.compute.meshX = cx;
    a.compute.meshY = cy;
    a.compute.macEnergy = 0.5;
    validateArchitecture(a);
    return a;
}

// DRAM -> GLB (glbMesh wide) -> Buffer (bufferMesh wide) -> MACs (one per Buffer).
inline Architecture threeLevelArray(int glbMesh, int bufferMesh) {
    return hierarchy({level("DRAM", LevelClass::DRAM, 0, 1, 1, 100.0),
                      level("GLB", LevelClass::SRAM, 4096, glbMesh, 1, 10.0),
                      level("Buffer", LevelClass::RegFile, 64, bufferMesh, 1, 1.0)},
                     bufferMesh);
}

// Outputs[K,P] += Weights[K,R] * Inputs[P+R]
inline Problem conv1dK(std::int64_t K, std::int64_t P, std::int64_t R) {
    return makeProblem("conv1d", {{"K", K}, {"P", P}, {"R", R}},
                       {{"Weights", {{{"K", 1}}, {{"R", 1}}}},
                        {"Inputs", {{{"P", 1}, {"R", 1}}}},
                        {"Outputs", {{{"K", 1}}, {{"P", 1}}}, true}});
}

inline void setOrder(LevelMapping& lm, const Problem& p,
                     const std::vector<std::string>& outerToInner) {
    std::vector<int> order;
    for (const auto& n : outerToInner)
        order.push_back(p.dimIndex(n));
    for (int d = 0; d < p.numDims(); ++d)
        if (std::find(order.begin(), order.end(), d) == order.end())
            order.push_back(d);
    for (int i = 0; i < p.numDims(); ++i)
        lm.order[i] = static_cast<std::uint8_t>(order[i]);
}

inline bool hasViolation(const Evaluation& e, ViolationKind k) {
    for (int i = 0; i < e.numViolations; ++i)
        if (e.violations[i].kind == k)
            return true;
    return false;
}

inline std::string joined(const Evaluation& e, const Problem& p, const Architecture& a) {
    std::string s;
    for (const auto& v : describeViolations(e, p, a))
        s += v + "\n";
    return s;
}

} // namespace mw::model_test
