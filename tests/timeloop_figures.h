#pragma once
// Timeloop's figures for one mapping (as tests/parity/regenerate.py's
// parse_stats keeps them from timeloop-model's stats) against the model's:
// shared by the parity corpus and the exercises' oracle pairs.
#include "io/json_io.h"
#include "mapping/mapping.h"
#include "model/cost_model.h"

#include <cmath>
#include <set>
#include <sstream>
#include <string>

namespace mw::test {

namespace figures_detail {

inline bool close(double ours, double theirs) {
    // Timeloop prints energies to 0.01 pJ.
    return std::abs(ours - theirs) <= std::max(0.005 * std::abs(theirs), 0.011);
}

inline std::string num(double v) {
    std::ostringstream s;
    s.precision(10);
    s << v;
    return s.str();
}

inline bool isFanout(mw::ViolationKind k) {
    return k == mw::ViolationKind::FanoutX || k == mw::ViolationKind::FanoutY ||
           k == mw::ViolationKind::NoFanout || k == mw::ViolationKind::SplitAxes;
}

} // namespace figures_detail

// The first disagreement between the model and Timeloop's answer, or "".
inline std::string compareCase(const mw::Problem& p, const mw::Architecture& a, const mw::Json& c) {
    using namespace figures_detail;
    using json = mw::Json;
    const mw::Mapping m = mw::mappingFromJson(c.at("mapping"), p, a);
    const mw::Evaluation e = mw::evaluate(p, a, m);
    const json& tl = c.at("timeloop");
    if (!tl.at("valid").get<bool>()) {
        if (e.valid)
            return "Timeloop refuses it (" + tl.at("error").get<std::string>() +
                   "); the model accepts it";
        const std::string cls = tl.at("error_class").get<std::string>();
        const std::string level =
            tl.at("error_level").is_string() ? tl.at("error_level").get<std::string>() : "";
        for (int i = 0; i < e.numViolations; ++i) {
            const mw::Violation& v = e.violations[i];
            if (cls == "fanout" && isFanout(v.kind))
                return "";
            if (cls == "capacity" && v.kind == mw::ViolationKind::Capacity && v.level >= 0 &&
                a.levels[v.level].name == level)
                return "";
        }
        std::string ours;
        for (const auto& d : mw::describeViolations(e, p, a))
            ours += d + "; ";
        return "Timeloop: " + tl.at("error").get<std::string>() + "; the model: " + ours;
    }
    if (!e.valid) {
        std::string ours;
        for (const auto& d : mw::describeViolations(e, p, a))
            ours += d + "; ";
        return "Timeloop accepts it; the model refuses it: " + ours;
    }
    if (e.cycles != tl.at("cycles").get<std::int64_t>())
        return "cycles: ours " + num(double(e.cycles)) + ", Timeloop " +
               num(tl.at("cycles").get<double>());
    for (const auto& [name, lv] : tl.at("levels").items()) {
        const int l = a.levelIndex(name);
        if (l < 0)
            return "level " + name + " unknown";
        const mw::LevelStats& ls = e.levels[l];
        std::set<std::string> theirs;
        for (const auto& [tname, tv] : lv.at("tensors").items()) {
            theirs.insert(tname);
            const int t = p.tensorIndex(tname);
            if (t < 0)
                return "tensor " + tname + " unknown";
            const mw::TensorLevelStats& ts = ls.tensors[t];
            const std::string where = name + "/" + tname + " ";
            if (!ts.kept)
                return where + "kept in Timeloop, not in the model";
            const std::int64_t ours[] = {ts.reads, ts.fills, ts.updates, ts.tile,
                                         ls.utilizedInstances};
            const char* what[] = {"reads", "fills", "updates", "utilized capacity",
                                  "utilized instances"};
            for (int k = 0; k < 5; ++k)
                if (ours[k] != tv.at(k).get<std::int64_t>())
                    return where + what[k] + ": ours " + num(double(ours[k])) + ", Timeloop " +
                           num(tv.at(k).get<double>());
            if (!close(ts.energy, tv.at(5).get<double>()))
                return where + "energy: ours " + num(ts.energy) + " pJ, Timeloop " +
                       num(tv.at(5).get<double>());
        }
        for (int t = 0; t < p.numTensors(); ++t)
            if (ls.tensors[t].kept && !theirs.count(p.tensors[t].name))
                return name + "/" + p.tensors[t].name + " kept in the model, not in Timeloop";
        if (!close(ls.leakEnergy, lv.at("leak_pJ").get<double>()))
            return name + " leakage: ours " + num(ls.leakEnergy) + " pJ, Timeloop " +
                   num(lv.at("leak_pJ").get<double>());
    }
    const json& mac = tl.at("mac");
    if (e.utilizedMacs != mac.at("utilized_instances").get<std::int64_t>())
        return "utilized MACs: ours " + num(double(e.utilizedMacs)) + ", Timeloop " +
               num(mac.at("utilized_instances").get<double>());
    if (!close(e.computeEnergy, mac.at("energy_pJ").get<double>()))
        return "MAC energy: ours " + num(e.computeEnergy) + ", Timeloop " +
               num(mac.at("energy_pJ").get<double>());
    const double energy = tl.at("energy_pJ").get<double>();
    if (std::abs(e.energy - energy) > 0.005 * energy)
        return "energy: ours " + num(e.energy) + " pJ, Timeloop " + num(energy);
    return "";
}

} // namespace mw::test
