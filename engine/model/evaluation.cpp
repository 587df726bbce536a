#include "model/evaluation.h"

#include "arch/architecture.h"
#include "workload/problem.h"

namespace mw {

namespace {
std::string levelName(const Architecture& a, int l) {
    if (l >= 0 && l < a.numLevels())
        return "level '" + a.levels[l].name + "'";
    if (l == a.numLevels())
        return "compute level '" + a.compute.name + "'";
    return "level " + std::to_string(l);
}
std::string dimName(const Problem& p, int d) {
    return (d >= 0 && d < p.numDims()) ? p.dims[d].name : "#" + std::to_string(d);
}
std::string tensorName(const Problem& p, int t) {
    return (t >= 0 && t < p.numTensors()) ? p.tensors[t].name : "#" + std::to_string(t);
}
} // namespace

std::string describe(const Violation& v, const Problem& p, const Architecture& a) {
    const std::string need = std::to_string(v.needed);
    const std::string have = std::to_string(v.available);
    switch (v.kind) {
    case ViolationKind::LevelCount:
        return "mapping has " + have + " levels but the architecture has " + need;
    case ViolationKind::ZeroFactor:
        return levelName(a, v.level) + ": factor of dimension " + dimName(p, v.dim) +
               " is 0; expected a positive integer";
    case ViolationKind::FactorProduct:
        return "dimension " + dimName(p, v.dim) + ": factors multiply to " + have +
               " but the bound is " + need;
    case ViolationKind::BadPermutation:
        return levelName(a, v.level) +
               ": loop order is not a permutation of the problem's dimensions";
    case ViolationKind::FanoutX:
        return levelName(a, v.level) + ": spatial factors on X above it multiply to " + need +
               " but its mesh has " + have + " instances on X";
    case ViolationKind::FanoutY:
        return levelName(a, v.level) + ": spatial factors on Y above it multiply to " + need +
               " but its mesh has " + have + " instances on Y";
    case ViolationKind::NoFanout:
        return levelName(a, v.level) + ": spatial factor " + need +
               " but the level does not fan out (its children are as many as its instances)";
    case ViolationKind::SplitAxes:
        return levelName(a, v.level) + ": dimension " + dimName(p, v.dim) +
               " fans out on both X (" + need + ") and Y (" + have +
               "); a Timeloop mapping gives each dimension one spatial factor per level";
    case ViolationKind::Capacity:
        if (v.tensor >= 0)
            return levelName(a, v.level) + ": tile of " + tensorName(p, v.tensor) + " needs " +
                   need + " words but the level holds " + have;
        return levelName(a, v.level) + ": kept tiles together need " + need +
               " words but the level holds " + have;
    case ViolationKind::MinUtilization:
        return levelName(a, v.level) + ": kept tiles together fill " + need +
               " words but its minimum utilization asks for " + have;
    case ViolationKind::OutermostMustKeep:
        return levelName(a, v.level) + ": the outermost level must keep " + tensorName(p, v.tensor);
    }
    return "unknown violation";
}

std::vector<std::string> describeViolations(const Evaluation& e, const Problem& p,
                                            const Architecture& a) {
    std::vector<std::string> out;
    for (int i = 0; i < e.numViolations; ++i)
        out.push_back(describe(e.violations[i], p, a));
    if (e.violationsTruncated)
        out.push_back("(more violations not listed)");
    return out;
}

} // namespace mw
