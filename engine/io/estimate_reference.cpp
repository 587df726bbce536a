#include "io/estimate_reference.h"

#include "common/error.h"
#include "estimate/estimator.h"

#include <cmath>
#include <limits>

namespace mw {

double EstimateComparison::ratio() const {
    if (theirs == 0.0)
        return ours == 0.0 ? 1.0 : std::numeric_limits<double>::infinity();
    return ours / theirs;
}

std::vector<EstimateComparison> compareWithTables(const std::vector<TimeloopText>& files) {
    const TimeloopCase withTables = importTimeloopTexts(files);
    // The same case with every value estimated: the tables' values unpinned.
    Architecture estimated = withTables.arch;
    for (StorageLevel& s : estimated.levels)
        s.sources = StorageSources{};
    estimated.compute.energySource = estimated.compute.leakSource = estimated.compute.areaSource =
        ValueSource::Estimated;
    applyEstimates(estimated);
    const ArchitectureEstimate basis = estimateArchitecture(estimated);

    std::vector<EstimateComparison> out;
    for (std::size_t l = 0; l < withTables.arch.levels.size(); ++l) {
        const StorageLevel& t = withTables.arch.levels[l];
        const StorageLevel& o = estimated.levels[l];
        if (t.cls == LevelClass::Dummy)
            continue;
        auto add = [&](const char* action, ValueSource src, double theirs, double ours) {
            if (src == ValueSource::Imported)
                out.push_back({t.name, action, ours, theirs, basis.levels[l].basis});
        };
        add("read", t.sources.read, t.energy.read, o.energy.read);
        add("write", t.sources.write, t.energy.write, o.energy.write);
        add("update", t.sources.update, t.energy.update, o.energy.update);
        add("leak", t.sources.leak, t.energy.leak, o.energy.leak);
        add("area", t.sources.area, t.area, o.area);
    }
    const ComputeLevel& tc = withTables.arch.compute;
    const ComputeLevel& oc = estimated.compute;
    auto addCompute = [&](const char* action, ValueSource src, double theirs, double ours) {
        if (src == ValueSource::Imported)
            out.push_back({tc.name, action, ours, theirs, basis.compute.basis});
    };
    addCompute("compute", tc.energySource, tc.macEnergy, oc.macEnergy);
    addCompute("leak", tc.leakSource, tc.leak, oc.leak);
    addCompute("area", tc.areaSource, tc.area, oc.area);
    if (out.empty())
        throw InputError(files.empty() ? std::string("Timeloop input") : files.front().name,
                         "gives no ERT or ART values to compare; expected an ERT.yaml or ART.yaml");
    return out;
}

} // namespace mw
