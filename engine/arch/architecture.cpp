#include "arch/architecture.h"

#include "common/error.h"

namespace mw {

const char* toString(LevelClass c) {
    switch (c) {
    case LevelClass::DRAM:
        return "DRAM";
    case LevelClass::SRAM:
        return "SRAM";
    case LevelClass::RegFile:
        return "regfile";
    case LevelClass::Dummy:
        return "dummy";
    }
    return "SRAM";
}

bool parseLevelClass(const std::string& s, LevelClass& out) {
    if (s == "DRAM" || s == "dram")
        out = LevelClass::DRAM;
    else if (s == "SRAM" || s == "sram")
        out = LevelClass::SRAM;
    else if (s == "regfile" || s == "RegFile" || s == "register_file")
        out = LevelClass::RegFile;
    else if (s == "dummy")
        out = LevelClass::Dummy;
    else
        return false;
    return true;
}

const char* toString(ValueSource s) {
    switch (s) {
    case ValueSource::Estimated:
        return "estimated";
    case ValueSource::Imported:
        return "imported";
    case ValueSource::Typed:
        return "typed";
    }
    return "estimated";
}

bool parseValueSource(const std::string& s, ValueSource& out) {
    if (s == "estimated")
        out = ValueSource::Estimated;
    else if (s == "imported")
        out = ValueSource::Imported;
    else if (s == "typed")
        out = ValueSource::Typed;
    else
        return false;
    return true;
}

const char* toString(Arithmetic a) {
    switch (a) {
    case Arithmetic::Int:
        return "int";
    case Arithmetic::Float:
        return "fp";
    case Arithmetic::BFloat:
        return "bf";
    }
    return "int";
}

bool parseArithmetic(const std::string& s, Arithmetic& out) {
    if (s == "int")
        out = Arithmetic::Int;
    else if (s == "fp" || s == "float")
        out = Arithmetic::Float;
    else if (s == "bf" || s == "bfloat")
        out = Arithmetic::BFloat;
    else
        return false;
    return true;
}

int Architecture::levelIndex(const std::string& n) const {
    for (int l = 0; l < numLevels(); ++l)
        if (levels[l].name == n)
            return l;
    return -1;
}

void resizePeArray(Architecture& a, int meshX, int meshY) {
    const int oldX = a.compute.meshX, oldY = a.compute.meshY;
    for (StorageLevel& level : a.levels) {
        if (level.meshX == oldX && oldX > 1)
            level.meshX = meshX;
        if (level.meshY == oldY && oldY > 1)
            level.meshY = meshY;
    }
    a.compute.meshX = meshX;
    a.compute.meshY = meshY;
}

void validateArchitecture(const Architecture& a) {
    const std::string where =
        a.name.empty() ? std::string("architecture") : "architecture '" + a.name + "'";
    if (a.levels.empty())
        throw InputError(where + ".levels", "is empty; expected at least one storage level");
    if (a.numLevels() > kMaxLevels)
        throw InputError(where + ".levels", "has " + std::to_string(a.numLevels()) +
                                                " levels; at most " + std::to_string(kMaxLevels) +
                                                " are supported");
    if (a.compute.meshX <= 0 || a.compute.meshY <= 0)
        throw InputError(where + ".compute", "has no compute units; expected a compute level "
                                             "with a positive mesh");
    // (Every reader's bound, the JSON reader's and Timeloop's import alike: a
    // mesh past it could be imported but not read back.)
    auto count = [](int v) { return v >= 1 && v <= kMaxArchitectureCount; };
    if (!count(a.compute.meshX) || !count(a.compute.meshY))
        throw InputError(where + ".compute.mesh", "expected mesh_x and mesh_y from 1 to 2^24");
    // Energies, areas and bandwidths from 0 to a bound no design reaches (a
    // joule an access): NaN and infinity fail too (a read of 1e308 pJ made
    // every energy infinite, and a NaN bandwidth read as unlimited).
    auto sane = [](double v, double most) { return v >= 0.0 && v <= most; };
    constexpr double kMostPj = 1e12, kMostArea = 1e15, kMostBandwidth = 1e12;
    if (!sane(a.compute.macEnergy, kMostPj))
        throw InputError(where + ".compute.energy_pJ", "expected 0 to 1e12 pJ");
    if (!sane(a.compute.leak, kMostPj) || !sane(a.compute.area, kMostArea))
        throw InputError(where + ".compute",
                         "has a leak or area that is negative or not finite; expected >= 0");
    if (a.compute.wordBits <= 0 || a.compute.wordBits > 1024 || a.compute.multiplierBits < 0 ||
        a.compute.multiplierBits > 1024 || a.compute.adderBits < 0 || a.compute.adderBits > 1024)
        throw InputError(where + ".compute",
                         "has a word, multiplier or adder width outside 1 to 1024 bits");
    if (!(a.technologyNm > 0))
        throw InputError(where + ".technology_nm", "expected a positive process node in nm");
    if (a.compute.technologyNm < 0)
        throw InputError(where + ".compute.technology_nm",
                         "expected a positive process node in nm (or none: the architecture's)");
    for (int l = 0; l < a.numLevels(); ++l) {
        const StorageLevel& s = a.levels[l];
        const std::string lw = where + ".levels[" + std::to_string(l) + "]" +
                               (s.name.empty() ? "" : " (" + s.name + ")");
        if (s.name.empty())
            throw InputError(lw + ".name", "is empty; expected a level name");
        for (int m = 0; m < l; ++m)
            if (a.levels[m].name == s.name)
                throw InputError(lw + ".name", "'" + s.name + "' is used by two levels");
        if (s.cls == LevelClass::DRAM && l != 0)
            throw InputError(lw + ".class", "DRAM must be the outermost level");
        if (!s.unbounded() && s.cls != LevelClass::Dummy && s.capacityWords <= 0)
            throw InputError(lw + ".capacity_words", "is " + std::to_string(s.capacityWords) +
                                                         "; expected a positive number of words");
        if (s.wordBits <= 0)
            throw InputError(lw + ".word_bits", "expected a positive number of bits");
        if (s.blockSize <= 0)
            throw InputError(lw + ".block_size", "expected a positive number of words");
        if (s.clusterSize <= 0 || s.clusterSize > s.instances())
            throw InputError(lw + ".cluster_size",
                             "is " + std::to_string(s.clusterSize) +
                                 "; expected a positive number of instances, at most the level's " +
                                 std::to_string(s.instances()));
        if (s.instances() % s.clusterSize != 0)
            throw InputError(lw + ".cluster_size", "is " + std::to_string(s.clusterSize) +
                                                       ", which does not divide the level's " +
                                                       std::to_string(s.instances()) +
                                                       " instances");
        if (s.technologyNm < 0)
            throw InputError(lw + ".technology_nm", "expected a positive process node in nm "
                                                    "(or none: the architecture's)");
        if (!count(s.meshX) || !count(s.meshY))
            throw InputError(lw + ".mesh", "expected mesh_x and mesh_y from 1 to 2^24");
        if (!count(s.wordBits) || !count(s.blockSize) || !count(s.numBanks))
            throw InputError(lw, "has a word width, block size or bank count outside 1 to 2^24");
        if (!sane(s.readBandwidth, kMostBandwidth) || !sane(s.writeBandwidth, kMostBandwidth))
            throw InputError(lw + ".bandwidth",
                             "is negative or not finite; expected >= 0 (0 = unlimited)");
        if (!(s.multipleBuffering >= 1.0 && s.multipleBuffering <= 1e6))
            throw InputError(lw + ".multiple_buffering", "expected a value from 1 to 1e6");
        if (!(s.minUtilization >= 0.0 && s.minUtilization <= 1.0))
            throw InputError(lw + ".min_utilization", "expected a share from 0 to 1");
        if (!sane(s.energy.read, kMostPj) || !sane(s.energy.write, kMostPj) ||
            !sane(s.energy.update, kMostPj) || !sane(s.energy.leak, kMostPj))
            throw InputError(lw + ".energy_pJ",
                             "has an energy that is negative or beyond 1e12 pJ; expected 0 to "
                             "1e12 pJ an access");
        if (!sane(s.area, kMostArea))
            throw InputError(lw + ".area_um2", "is negative or not finite; expected >= 0");
        if (s.numBanks <= 0)
            throw InputError(lw + ".banks", "expected a positive number of banks");
        const int childX = (l + 1 < a.numLevels()) ? a.levels[l + 1].meshX : a.compute.meshX;
        const int childY = (l + 1 < a.numLevels()) ? a.levels[l + 1].meshY : a.compute.meshY;
        const std::string child = (l + 1 < a.numLevels()) ? a.levels[l + 1].name : a.compute.name;
        if (childX % s.meshX != 0 || childY % s.meshY != 0 || childX < s.meshX || childY < s.meshY)
            throw InputError(lw + ".mesh", std::to_string(s.meshX) + "x" + std::to_string(s.meshY) +
                                               " does not divide the mesh of its child '" + child +
                                               "' (" + std::to_string(childX) + "x" +
                                               std::to_string(childY) + ")");
    }
}

} // namespace mw
