// Writing Timeloop v0.4 YAML: the files timeloop-model reads (architecture,
// problem, mapping, ERT, ART) and those timeloop-mapper adds (constraints,
// mapper), from our architecture, problem, mappings and constraints.
#include "common/error.h"
#include "io/timeloop/timeloop.h"
#include "mapspace/mapspace.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <sstream>

namespace mw {

namespace {

std::string instanceName(const std::string& name, std::int64_t instances) {
    return name + "[1.." + std::to_string(instances) + "]";
}

std::string technologyText(double nm) {
    std::ostringstream os;
    os << nm << "nm";
    return os.str();
}

// Dimension names as Timeloop strings: letters run together when every name
// is one letter ("MPCQRSN"), else apart ("C1 M8").
std::string dimsText(const Problem& p, const std::vector<int>& dims) {
    bool single = true;
    for (const auto& d : p.dims)
        single = single && d.name.size() == 1;
    std::string s;
    for (int d : dims) {
        if (!single && !s.empty())
            s += ' ';
        s += p.dims[d].name;
    }
    return s;
}

const char* storageClass(const StorageLevel& s) {
    if (!s.component.empty())
        return s.component.c_str();
    switch (s.cls) {
    case LevelClass::DRAM:
        return "DRAM";
    case LevelClass::Dummy:
        return "dummy_storage";
    case LevelClass::RegFile:
        return "regfile";
    case LevelClass::SRAM:
        break;
    }
    return "SRAM";
}

} // namespace

std::string timeloopArchitectureYaml(const Architecture& a) {
    YAML::Emitter out;
    out << YAML::BeginMap << YAML::Key << "architecture" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "version" << YAML::Value << YAML::SingleQuoted << "0.4";
    out << YAML::Key << "subtree" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << "system";
    out << YAML::Key << "attributes" << YAML::Value << YAML::BeginMap << YAML::Key << "version"
        << YAML::Value << YAML::SingleQuoted << "0.4" << YAML::Key << "technology" << YAML::Value
        << technologyText(a.technologyNm) << YAML::EndMap;
    out << YAML::Key << "local" << YAML::Value << YAML::BeginSeq;
    for (const auto& s : a.levels) {
        out << YAML::BeginMap;
        out << YAML::Key << "name" << YAML::Value << instanceName(s.name, s.instances());
        out << YAML::Key << "class" << YAML::Value << storageClass(s);
        out << YAML::Key << "attributes" << YAML::Value << YAML::BeginMap;
        if (s.cls == LevelClass::Dummy) {
            out << YAML::Key << "width" << YAML::Value << 1 << YAML::Key << "depth" << YAML::Value
                << 1 << YAML::Key << "datawidth" << YAML::Value << 1;
        } else {
            out << YAML::Key << "width" << YAML::Value << s.wordBits * s.blockSize * s.clusterSize;
            out << YAML::Key << "datawidth" << YAML::Value << s.wordBits;
            out << YAML::Key << "block_size" << YAML::Value << s.blockSize;
            if (s.clusterSize != 1)
                out << YAML::Key << "cluster_size" << YAML::Value << s.clusterSize;
            if (!s.unbounded())
                out << YAML::Key << "depth" << YAML::Value << s.capacityWords / s.blockSize;
            if (s.cls == LevelClass::DRAM)
                out << YAML::Key << "type" << YAML::Value << s.dramType;
            if (s.numBanks != 1)
                out << YAML::Key << "n_banks" << YAML::Value << s.numBanks;
        }
        if (s.technologyNm > 0) // its own node (the design's is the tree's)
            out << YAML::Key << "technology" << YAML::Value << technologyText(s.technologyNm);
        if (s.readBandwidth > 0)
            out << YAML::Key << "read_bandwidth" << YAML::Value << s.readBandwidth;
        if (s.writeBandwidth > 0)
            out << YAML::Key << "write_bandwidth" << YAML::Value << s.writeBandwidth;
        out << YAML::Key << "multiple_buffering" << YAML::Value << s.multipleBuffering;
        if (s.minUtilization > 0)
            out << YAML::Key << "min_utilization" << YAML::Value << s.minUtilization;
        out << YAML::Key << "meshX" << YAML::Value << s.meshX;
        out << YAML::Key << "meshY" << YAML::Value << s.meshY;
        out << YAML::EndMap << YAML::EndMap;
    }
    const ComputeLevel& c = a.compute;
    out << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << instanceName(c.name, c.instances());
    out << YAML::Key << "class" << YAML::Value
        << (c.arithmetic == Arithmetic::Int ? "intmac" : "fpmac");
    out << YAML::Key << "attributes" << YAML::Value << YAML::BeginMap << YAML::Key << "datawidth"
        << YAML::Value << c.wordBits << YAML::Key << "multiplier_width" << YAML::Value
        << c.multiplierWidth() << YAML::Key << "adder_width" << YAML::Value << c.adderWidth()
        << YAML::Key << "meshX" << YAML::Value << c.meshX << YAML::Key << "meshY" << YAML::Value
        << c.meshY;
    if (c.technologyNm > 0)
        out << YAML::Key << "technology" << YAML::Value << technologyText(c.technologyNm);
    out << YAML::EndMap;
    out << YAML::EndMap;
    out << YAML::EndSeq << YAML::EndMap << YAML::EndSeq << YAML::EndMap << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

std::string timeloopProblemYaml(const Problem& p) {
    YAML::Emitter out;
    out << YAML::BeginMap << YAML::Key << "problem" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "version" << YAML::Value << YAML::SingleQuoted << "0.4";
    out << YAML::Key << "shape" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << (p.name.empty() ? "problem" : p.name);
    out << YAML::Key << "dimensions" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const auto& d : p.dims)
        out << d.name;
    out << YAML::EndSeq;
    // Coefficients other than 1 become named coefficients of the shape.
    std::vector<std::pair<std::string, std::int64_t>> coefs;
    auto coefName = [&](std::int64_t value) {
        for (const auto& [n, v] : coefs)
            if (v == value)
                return n;
        coefs.emplace_back("c" + std::to_string(value), value);
        return coefs.back().first;
    };
    out << YAML::Key << "data_spaces" << YAML::Value << YAML::BeginSeq;
    for (const auto& ds : p.tensors) {
        out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << ds.name;
        out << YAML::Key << "projection" << YAML::Value << YAML::BeginSeq;
        for (int r = 0; r < ds.numRanks; ++r) {
            out << YAML::Flow << YAML::BeginSeq;
            for (int i = 0; i < ds.ranks[r].numTerms; ++i) {
                const auto& term = ds.ranks[r].terms[i];
                out << YAML::Flow << YAML::BeginSeq << p.dims[term.dim].name;
                if (term.coef != 1)
                    out << coefName(term.coef);
                out << YAML::EndSeq;
            }
            out << YAML::EndSeq;
        }
        out << YAML::EndSeq;
        if (ds.readWrite)
            out << YAML::Key << "read_write" << YAML::Value << true;
        out << YAML::EndMap;
    }
    out << YAML::EndSeq;
    if (!coefs.empty()) {
        out << YAML::Key << "coefficients" << YAML::Value << YAML::BeginSeq;
        for (const auto& [n, v] : coefs)
            out << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << n
                << YAML::Key << "default" << YAML::Value << v << YAML::EndMap;
        out << YAML::EndSeq;
    }
    out << YAML::EndMap;
    out << YAML::Key << "instance" << YAML::Value << YAML::BeginMap;
    for (const auto& d : p.dims)
        out << YAML::Key << d.name << YAML::Value << d.bound;
    out << YAML::EndMap << YAML::EndMap << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

std::string timeloopMappingYaml(const Problem& p, const Architecture& a, const Mapping& m) {
    YAML::Emitter out;
    out << YAML::BeginMap << YAML::Key << "mapping" << YAML::Value << YAML::BeginSeq;
    const int D = p.numDims();
    for (int l = a.numLevels() - 1; l >= 0; --l) {
        const LevelMapping& lm = m.levels[l];
        const std::string& target = a.levels[l].name;
        std::vector<int> keep, bypass;
        for (int t = 0; t < p.numTensors(); ++t)
            (lm.keeps(t) ? keep : bypass).push_back(t);
        out << YAML::BeginMap << YAML::Key << "target" << YAML::Value << target;
        out << YAML::Key << "type" << YAML::Value << "datatype";
        out << YAML::Key << "keep" << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (int t : keep)
            out << p.tensors[t].name;
        out << YAML::EndSeq << YAML::Key << "bypass" << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (int t : bypass)
            out << p.tensors[t].name;
        out << YAML::EndSeq << YAML::EndMap;

        std::vector<int> innerFirst;
        for (int i = D - 1; i >= 0; --i)
            innerFirst.push_back(lm.order[i]);
        std::string factors;
        for (int d = 0; d < D; ++d)
            factors += (d ? " " : "") + p.dims[d].name + "=" + std::to_string(lm.temporal[d]);
        out << YAML::BeginMap << YAML::Key << "target" << YAML::Value << target;
        out << YAML::Key << "type" << YAML::Value << "temporal";
        out << YAML::Key << "factors" << YAML::Value << factors;
        out << YAML::Key << "permutation" << YAML::Value << dimsText(p, innerFirst);
        out << YAML::EndMap;

        bool anySpatial = false;
        for (int d = 0; d < D; ++d) {
            anySpatial = anySpatial || lm.spatialX[d] > 1 || lm.spatialY[d] > 1;
            if (lm.spatialX[d] > 1 && lm.spatialY[d] > 1)
                throw InputError("mapping", "level " + target + ": dimension " + p.dims[d].name +
                                                " fans out on both X (" +
                                                std::to_string(lm.spatialX[d]) + ") and Y (" +
                                                std::to_string(lm.spatialY[d]) +
                                                "); Timeloop gives each dimension one spatial "
                                                "factor per level, on X or Y");
        }
        if (!anySpatial)
            continue;
        // X loops first (innermost first), then Y loops, then unit dimensions;
        // split counts the X loops.
        std::vector<int> xs, ys, unit;
        for (int i = D - 1; i >= 0; --i) {
            const int d = lm.spatialOrder[i];
            if (lm.spatialX[d] > 1)
                xs.push_back(d);
            else if (lm.spatialY[d] > 1)
                ys.push_back(d);
            else
                unit.push_back(d);
        }
        std::string sf;
        for (int d = 0; d < D; ++d)
            sf += (d ? " " : "") + p.dims[d].name + "=" +
                  std::to_string(lm.spatialX[d] * lm.spatialY[d]);
        std::vector<int> perm = xs;
        perm.insert(perm.end(), ys.begin(), ys.end());
        perm.insert(perm.end(), unit.begin(), unit.end());
        out << YAML::BeginMap << YAML::Key << "target" << YAML::Value << target;
        out << YAML::Key << "type" << YAML::Value << "spatial";
        out << YAML::Key << "factors" << YAML::Value << sf;
        out << YAML::Key << "permutation" << YAML::Value << dimsText(p, perm);
        out << YAML::Key << "split" << YAML::Value << xs.size();
        out << YAML::EndMap;
    }
    out << YAML::EndSeq << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

std::string timeloopErtYaml(const Architecture& a) {
    YAML::Emitter out;
    out << YAML::BeginMap << YAML::Key << "ERT" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "version" << YAML::Value << YAML::SingleQuoted << "0.4";
    out << YAML::Key << "tables" << YAML::Value << YAML::BeginSeq;
    auto action = [&](const char* name, double e) {
        out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << name << YAML::Key
            << "arguments" << YAML::Value << YAML::Null << YAML::Key << "energy" << YAML::Value << e
            << YAML::EndMap;
    };
    for (const auto& s : a.levels) {
        if (s.cls == LevelClass::Dummy)
            continue;
        out << YAML::BeginMap << YAML::Key << "name" << YAML::Value
            << "system." + instanceName(s.name, s.instances());
        out << YAML::Key << "actions" << YAML::Value << YAML::BeginSeq;
        action("read", s.energy.read);
        action("write", s.energy.write);
        action("update", s.energy.update);
        action("leak", s.energy.leak);
        out << YAML::EndSeq << YAML::EndMap;
    }
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value
        << "system." + instanceName(a.compute.name, a.compute.instances());
    out << YAML::Key << "actions" << YAML::Value << YAML::BeginSeq;
    action("compute", a.compute.macEnergy);
    action("leak", a.compute.leak);
    out << YAML::EndSeq << YAML::EndMap;
    out << YAML::EndSeq << YAML::EndMap << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

std::string timeloopArtYaml(const Architecture& a) {
    YAML::Emitter out;
    out << YAML::BeginMap << YAML::Key << "ART" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "version" << YAML::Value << YAML::SingleQuoted << "0.4";
    out << YAML::Key << "tables" << YAML::Value << YAML::BeginSeq;
    for (const auto& s : a.levels)
        out << YAML::BeginMap << YAML::Key << "name" << YAML::Value
            << "system." + instanceName(s.name, s.instances()) << YAML::Key << "area" << YAML::Value
            << s.area << YAML::EndMap;
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value
        << "system." + instanceName(a.compute.name, a.compute.instances()) << YAML::Key << "area"
        << YAML::Value << a.compute.area << YAML::EndMap;
    out << YAML::EndSeq << YAML::EndMap << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

std::string timeloopConstraintsYaml(const Json& constraints, const Problem& p,
                                    const Architecture& a) {
    const MapSpaceConstraints c = constraintsFromJson(constraints, p, a);
    const int D = p.numDims();
    YAML::Emitter out;
    out << YAML::BeginMap << YAML::Key << "architecture_constraints" << YAML::Value
        << YAML::BeginMap << YAML::Key << "targets" << YAML::Value << YAML::BeginSeq;
    // Our orders run outer to inner; Timeloop's permutations list the inner
    // dims innermost first, then "_" and the outer ones (the last outermost).
    auto permutation = [&](const OrderConstraint& oc) {
        std::vector<int> inner, outer;
        for (int i = oc.numInner - 1; i >= 0; --i)
            inner.push_back(oc.inner[i]);
        for (int i = oc.numOuter - 1; i >= 0; --i)
            outer.push_back(oc.outer[i]);
        if (oc.fixes(D)) { // one list: everything is placed
            inner.insert(inner.end(), outer.begin(), outer.end());
            return dimsText(p, inner);
        }
        std::string s = dimsText(p, inner);
        if (!outer.empty())
            s += " _ " + dimsText(p, outer);
        return s;
    };
    int entries = 0;
    for (int l = 0; l < a.numLevels(); ++l) {
        const LevelConstraint& lc = c.levels[static_cast<std::size_t>(l)];
        const std::string& target = a.levels[l].name;
        if (a.levels[l].cls == LevelClass::Dummy) {
            // Our dummy levels keep nothing and loop over nothing; Timeloop's
            // mapper has to be told.
            std::string ones, all;
            for (int d = 0; d < D; ++d)
                ones += (d ? " " : "") + p.dims[d].name + "=1";
            out << YAML::BeginMap << YAML::Key << "target" << YAML::Value << target;
            out << YAML::Key << "type" << YAML::Value << "bypass" << YAML::Key << "bypass"
                << YAML::Value << YAML::Flow << YAML::BeginSeq;
            for (const auto& t : p.tensors)
                out << t.name;
            out << YAML::EndSeq << YAML::EndMap;
            out << YAML::BeginMap << YAML::Key << "target" << YAML::Value << target;
            out << YAML::Key << "type" << YAML::Value << "temporal" << YAML::Key << "factors"
                << YAML::Value << ones << YAML::EndMap;
            entries += 2;
        } else if (lc.keepFixed != 0 && l > 0) {
            out << YAML::BeginMap << YAML::Key << "target" << YAML::Value << target;
            out << YAML::Key << "type" << YAML::Value << "bypass";
            for (const bool keep : {true, false}) {
                out << YAML::Key << (keep ? "keep" : "bypass") << YAML::Value << YAML::Flow
                    << YAML::BeginSeq;
                for (int t = 0; t < p.numTensors(); ++t)
                    if (((lc.keepFixed >> t) & 1u) && (((lc.keepValue >> t) & 1u) != 0) == keep)
                        out << p.tensors[t].name;
                out << YAML::EndSeq;
            }
            out << YAML::EndMap;
            ++entries;
        }
        std::string factors;
        for (int d = 0; d < D; ++d)
            if (lc.temporal[d] > 0)
                factors += (factors.empty() ? "" : " ") + p.dims[d].name + "=" +
                           std::to_string(lc.temporal[d]);
        if (a.levels[l].cls != LevelClass::Dummy && (!factors.empty() || lc.order.constrains())) {
            out << YAML::BeginMap << YAML::Key << "target" << YAML::Value << target;
            out << YAML::Key << "type" << YAML::Value << "temporal";
            if (!factors.empty())
                out << YAML::Key << "factors" << YAML::Value << factors;
            if (lc.order.constrains())
                out << YAML::Key << "permutation" << YAML::Value << permutation(lc.order);
            out << YAML::EndMap;
            ++entries;
        }
        const int fanX = a.fanoutX(l), fanY = a.fanoutY(l);
        if (fanX * fanY <= 1)
            continue;
        // Each dimension's axis: 0 X, 1 Y, 2 none (factor 1), -1 either.
        std::vector<int> axis(static_cast<std::size_t>(D), -1);
        std::string spatialFactors;
        bool anyConstraint = lc.spatialOrder.constrains();
        for (int d = 0; d < D; ++d) {
            const bool okX = ((lc.spatialAllowedX >> d) & 1u) && fanX > 1 && lc.spatialX[d] != 1;
            const bool okY = ((lc.spatialAllowedY >> d) & 1u) && fanY > 1 && lc.spatialY[d] != 1;
            std::int64_t fixed = 0;
            if (lc.spatialX[d] > 1) {
                axis[static_cast<std::size_t>(d)] = 0;
                fixed = lc.spatialX[d];
            } else if (lc.spatialY[d] > 1) {
                axis[static_cast<std::size_t>(d)] = 1;
                fixed = lc.spatialY[d];
            } else if (!okX && !okY) {
                axis[static_cast<std::size_t>(d)] = 2;
                fixed = 1;
            } else if (okX != okY) {
                axis[static_cast<std::size_t>(d)] = okX ? 0 : 1;
            }
            if (fixed > 0)
                spatialFactors += (spatialFactors.empty() ? "" : " ") + p.dims[d].name + "=" +
                                  std::to_string(fixed);
            if (fixed > 0 || okX != okY)
                anyConstraint = true;
        }
        if (!anyConstraint)
            continue;
        bool resolved = true;
        for (int d = 0; d < D; ++d)
            resolved = resolved && axis[static_cast<std::size_t>(d)] >= 0;
        out << YAML::BeginMap << YAML::Key << "target" << YAML::Value << target;
        out << YAML::Key << "type" << YAML::Value << "spatial";
        if (!spatialFactors.empty())
            out << YAML::Key << "factors" << YAML::Value << spatialFactors;
        if (resolved && fanX > 1 && fanY > 1) {
            // X dims, then Y dims, then the unit ones, each innermost first.
            std::array<std::uint8_t, kMaxDims> order{};
            for (int d = 0; d < D; ++d)
                order[d] = static_cast<std::uint8_t>(d);
            lc.spatialOrder.apply(order, D);
            std::vector<int> perm;
            int xCount = 0;
            for (const int want : {0, 1, 2})
                for (int i = D - 1; i >= 0; --i)
                    if (axis[static_cast<std::size_t>(order[i])] == want) {
                        perm.push_back(order[i]);
                        xCount += want == 0;
                    }
            out << YAML::Key << "permutation" << YAML::Value << dimsText(p, perm);
            out << YAML::Key << "split" << YAML::Value << xCount;
        } else if (lc.spatialOrder.constrains()) {
            if (fanX > 1 && fanY > 1)
                throw InputError("constraints", "the spatial order at '" + target +
                                                    "' fans out on both axes with dimensions "
                                                    "free to take either; Timeloop cannot say "
                                                    "both at once");
            out << YAML::Key << "permutation" << YAML::Value << permutation(lc.spatialOrder);
        }
        out << YAML::EndMap;
        ++entries;
    }
    if (c.minSpatialUtilization > 0) {
        out << YAML::BeginMap << YAML::Key << "target" << YAML::Value
            << a.levels[static_cast<std::size_t>(a.numLevels() - 1)].name;
        out << YAML::Key << "type" << YAML::Value << "utilization";
        out << YAML::Key << "min" << YAML::Value << c.minSpatialUtilization << YAML::EndMap;
        ++entries;
    }
    out << YAML::EndSeq << YAML::EndMap << YAML::EndMap;
    return entries == 0 ? std::string() : std::string(out.c_str()) + "\n";
}

std::string timeloopMapperYaml(const TimeloopMapper& m) {
    YAML::Emitter out;
    out << YAML::BeginMap << YAML::Key << "mapper" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "version" << YAML::Value << YAML::SingleQuoted << "0.4";
    out << YAML::Key << "algorithm" << YAML::Value << m.algorithm;
    out << YAML::Key << "optimization_metrics" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    if (m.objective == "energy")
        out << "energy";
    else if (m.objective == "cycles")
        out << "delay";
    else
        out << "edp";
    out << YAML::EndSeq;
    out << YAML::Key << "victory_condition" << YAML::Value << m.victoryCondition;
    out << YAML::Key << "timeout" << YAML::Value << m.timeout;
    out << YAML::Key << "max_permutations_per_if_visit" << YAML::Value << m.maxPermutations;
    if (m.searchSize > 0)
        out << YAML::Key << "search_size" << YAML::Value << m.searchSize;
    if (m.threads > 0)
        out << YAML::Key << "num_threads" << YAML::Value << m.threads;
    out << YAML::Key << "live_status" << YAML::Value << false;
    out << YAML::EndMap << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

} // namespace mw
