#pragma once
// The result of evaluating one mapping: either precise violations, or per level
// and tensor the tile, scalar reads/fills/updates and energy, plus cycles,
// utilization, energy and EDP. Fixed-size so that evaluation never allocates.
#include "common/limits.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace mw {

struct Problem;
struct Architecture;

enum class ViolationKind : std::uint8_t {
    LevelCount,        // the mapping has a different number of levels than the architecture
    ZeroFactor,        // a loop factor of 0
    FactorProduct,     // factors of a dimension do not multiply to its bound
    BadPermutation,    // a level's loop order is not a permutation of the dimensions
    FanoutX,           // spatial factors on X above a level exceed its mesh
    FanoutY,           // spatial factors on Y above a level exceed its mesh
    NoFanout,          // spatial factors at a level that does not fan out
    SplitAxes,         // one dimension fans out on both X and Y of one level (not Timeloop's)
    Capacity,          // kept tiles overflow the level (needed vs available words)
    OutermostMustKeep, // the outermost level must keep every tensor
    MinUtilization     // kept tiles fill less than the level's min_utilization asks
};

// `level` indexes Architecture::levels; for fan-outs it is the level whose
// mesh is exceeded, and numLevels() stands for the compute level.
struct Violation {
    ViolationKind kind = ViolationKind::FactorProduct;
    std::int8_t level = -1;
    std::int8_t tensor = -1;
    std::int8_t dim = -1;
    std::int64_t needed = 0;
    std::int64_t available = 0;
};

// Per level and tensor; counts are scalar (word) accesses per instance of the level.
struct TensorLevelStats {
    bool kept = false;
    std::int64_t tile = 0; // utilized capacity in words
    std::int64_t reads = 0;
    std::int64_t fills = 0;
    std::int64_t updates = 0;
    std::int64_t firstTouches = 0; // read-write tensors: distinct words one instance holds
    // Children (inner keeper or MACs) that share each word this level sends
    // down: multicast for inputs, spatial reduction for partial results.
    std::int64_t sharedBy = 1;
    double energy = 0.0; // pJ over all utilized instances: the three actions below
    double readEnergy = 0.0;
    double fillEnergy = 0.0;
    double updateEnergy = 0.0;
};

struct LevelStats {
    std::array<TensorLevelStats, kMaxTensors> tensors{};
    std::int64_t utilizedInstances = 0;
    std::int64_t capacityUsed = 0; // words per instance, all kept tiles
    std::int64_t cycles = 0;       // cycles this level needs, bandwidth included
    double accessEnergy = 0.0;     // pJ
    double leakEnergy = 0.0;       // pJ
    double energy = 0.0;           // access + leak, pJ
};

struct Evaluation {
    bool valid = false;
    int numViolations = 0;
    bool violationsTruncated = false;
    std::array<Violation, kMaxViolations> violations{};

    int numLevels = 0;
    int numTensors = 0;
    std::array<LevelStats, kMaxLevels> levels{};

    std::int64_t computes = 0;      // MACs of the problem
    std::int64_t utilizedMacs = 0;  // compute instances in use
    std::int64_t computeCycles = 0; // temporal iterations
    std::int64_t cycles = 0;        // including bandwidth throttling
    double computeEnergy = 0.0;     // pJ
    double energy = 0.0;            // pJ, all levels and compute
    double utilization = 0.0;       // computes / (cycles * MAC instances)
    double edp = 0.0;               // J x cycles, as Timeloop reports it

    void addViolation(const Violation& v);
};

// A one-line message for a violation, naming level, tensor or dimension.
std::string describe(const Violation& v, const Problem& p, const Architecture& a);
std::vector<std::string> describeViolations(const Evaluation& e, const Problem& p,
                                            const Architecture& a);

} // namespace mw
