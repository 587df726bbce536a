#pragma once
// An accelerator: storage levels ordered from DRAM (outermost) inwards, then the
// compute level. Each level's instances form a meshX x meshY grid; the fan-out of
// a level is the ratio of its child's mesh to its own, per axis.
#include "common/limits.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mw {

enum class LevelClass { DRAM, SRAM, RegFile, Dummy };
const char* toString(LevelClass c);
bool parseLevelClass(const std::string& s, LevelClass& out);

// Energies in pJ. read/write/update are per vector access of blockSize words
// (as Timeloop's ERT gives them); leak is per instance per cycle.
struct ActionEnergies {
    double read = 0.0;
    double write = 0.0;  // a fill from the parent level
    double update = 0.0; // a partial result written back by the child
    double leak = 0.0;
};

// Where a per-action energy or an area came from. Estimates follow every edit
// of the attributes they depend on; imported and typed values stay pinned
// until the user unpins them (estimate/estimator.h).
enum class ValueSource : std::uint8_t { Estimated, Imported, Typed };
const char* toString(ValueSource s);
bool parseValueSource(const std::string& s, ValueSource& out);

// The sources of read, write, update, leak and area, in that order.
struct StorageSources {
    ValueSource read = ValueSource::Estimated;
    ValueSource write = ValueSource::Estimated;
    ValueSource update = ValueSource::Estimated;
    ValueSource leak = ValueSource::Estimated;
    ValueSource area = ValueSource::Estimated;
};

// The largest mesh side, block, word width, bank or cluster count an
// architecture file may give (they are ints: a larger number would wrap).
inline constexpr int kMaxArchitectureCount = 1 << 24;

struct StorageLevel {
    std::string name;
    LevelClass cls = LevelClass::SRAM;
    // The circuit the estimator prices (Timeloop/Accelergy class names: SRAM,
    // smartbuffer_SRAM, regfile, smartbuffer_RF, DRAM); empty = by cls.
    std::string component;
    int numBanks = 1;
    std::string dramType = "LPDDR4"; // DRAM only: LPDDR4, LPDDR, DDR3, DDR4, GDDR5, HBM2
    std::int64_t capacityWords = 0;  // per instance; ignored (unbounded) for DRAM
    int wordBits = 16;
    int blockSize = 1; // words per vector access
    // Timeloop's cluster_size: instances that share one access of
    // blockSize x clusterSize words (a wide register row feeding several
    // MACs). Each utilized cluster pays the access once: energy is charged
    // over min(utilized instances, instances / clusterSize).
    int clusterSize = 1;
    int meshX = 1;
    int meshY = 1;
    double readBandwidth = 0.0;  // words per cycle per instance; 0 = unlimited
    double writeBandwidth = 0.0; // words per cycle per instance; 0 = unlimited
    double multipleBuffering = 1.0;
    // Timeloop's min_utilization: kept tiles must fill at least this share
    // of the words left by multiple buffering (0: no floor; 1: full).
    double minUtilization = 0.0;
    ActionEnergies energy;
    double area = 0.0; // um^2 per instance
    StorageSources sources;
    // The process node this level is estimated at; 0: the architecture's.
    double technologyNm = 0.0;

    std::int64_t instances() const { return std::int64_t(meshX) * meshY; }
    bool unbounded() const { return cls == LevelClass::DRAM; }
};

enum class Arithmetic : std::uint8_t { Int, Float, BFloat };
const char* toString(Arithmetic a);
bool parseArithmetic(const std::string& s, Arithmetic& out);

struct ComputeLevel {
    std::string name = "MAC";
    int meshX = 1;
    int meshY = 1;
    int wordBits = 16;
    Arithmetic arithmetic = Arithmetic::Int; // with the widths: int8, fp16, bf16, fp32...
    // Operand widths the estimator prices; 0 = wordBits (an fp16 multiplier
    // accumulating in fp32 has multiplierBits 16, adderBits 32).
    int multiplierBits = 0;
    int adderBits = 0;
    double macEnergy = 1.0; // pJ per MAC
    double leak = 0.0;      // pJ per instance per cycle (reported, not in the model's energy)
    double area = 0.0;      // um^2 per instance
    ValueSource energySource = ValueSource::Estimated;
    ValueSource leakSource = ValueSource::Estimated;
    ValueSource areaSource = ValueSource::Estimated;
    double technologyNm = 0.0; // the process node it is estimated at; 0: the architecture's

    std::int64_t instances() const { return std::int64_t(meshX) * meshY; }
    int multiplierWidth() const { return multiplierBits > 0 ? multiplierBits : wordBits; }
    int adderWidth() const { return adderBits > 0 ? adderBits : wordBits; }
};

struct Architecture {
    std::string name;
    std::string description;
    double technologyNm = 45.0;       // the process node the estimator prices
    std::vector<StorageLevel> levels; // outermost first
    ComputeLevel compute;

    int numLevels() const { return static_cast<int>(levels.size()); }
    int levelIndex(const std::string& name) const; // -1 when unknown
    // The node a level (or the MACs) is estimated at: its own, else the design's.
    double nodeOf(const StorageLevel& s) const {
        return s.technologyNm > 0 ? s.technologyNm : technologyNm;
    }
    double nodeOf(const ComputeLevel& c) const {
        return c.technologyNm > 0 ? c.technologyNm : technologyNm;
    }
    // Fan-out from level l to its children (level l+1, or the compute level).
    // (Inline: the cost model asks at every level that fans out.)
    int fanoutX(int l) const {
        const int child = (l + 1 < numLevels()) ? levels[l + 1].meshX : compute.meshX;
        return child / levels[l].meshX;
    }
    int fanoutY(int l) const {
        const int child = (l + 1 < numLevels()) ? levels[l + 1].meshY : compute.meshY;
        return child / levels[l].meshY;
    }
};

// The PE array resized to meshX x meshY in one step: the compute level and
// every level spread over the array on an axis (a mesh side equal to the
// array's, above 1) follow it; levels shared by the array stay.
void resizePeArray(Architecture& a, int meshX, int meshY);

// Checks the hierarchy (sizes, meshes that divide, a compute level present);
// throws InputError naming the level and field.
void validateArchitecture(const Architecture& arch);

} // namespace mw
