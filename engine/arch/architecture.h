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

struct StorageLevel {
    std::string name;
    LevelClass cls = LevelClass::SRAM;
    std::int64_t capacityWords = 0; // per instance; ignored (unbounded) for DRAM
    int wordBits = 16;
    int blockSize = 1; // words per vector access
    int meshX = 1;
    int meshY = 1;
    double readBandwidth = 0.0;  // words per cycle per instance; 0 = unlimited
    double writeBandwidth = 0.0; // words per cycle per instance; 0 = unlimited
    double multipleBuffering = 1.0;
    ActionEnergies energy;

    std::int64_t instances() const { return std::int64_t(meshX) * meshY; }
    bool unbounded() const { return cls == LevelClass::DRAM; }
};

struct ComputeLevel {
    std::string name = "MAC";
    int meshX = 1;
    int meshY = 1;
    int wordBits = 16;
    double macEnergy = 1.0; // pJ per MAC

    std::int64_t instances() const { return std::int64_t(meshX) * meshY; }
};

struct Architecture {
    std::string name;
    std::string description;
    std::vector<StorageLevel> levels; // outermost first
    ComputeLevel compute;

    int numLevels() const { return static_cast<int>(levels.size()); }
    int levelIndex(const std::string& name) const; // -1 when unknown
    // Fan-out from level l to its children (level l+1, or the compute level).
    int fanoutX(int l) const;
    int fanoutY(int l) const;
};

// Checks the hierarchy (sizes, meshes that divide, a compute level present);
// throws InputError naming the level and field.
void validateArchitecture(const Architecture& arch);

} // namespace mw
