#include "io/json_io.h"

#include "common/atomic_file.h"

#include "common/error.h"
#include "common/json_fields.h"
#include "estimate/estimator.h"
#include "io/json_files.h"
#include "io/timeloop/timeloop.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace mw {

using json = Json;

namespace {

using json_fields::arrayMember;
using json_fields::as;
using json_fields::checkFormat;
using json_fields::member;
using json_fields::onlyKeys;
using json_fields::typeName;
using json_fields::withFile;

std::string getString(const json& j, const char* key, const std::string& path) {
    const json& v = member(j, key, path);
    if (!v.is_string())
        throw InputError(path + "." + key, "expected a string, got " + typeName(v));
    return v.get<std::string>();
}

std::string optString(const json& j, const char* key, const std::string& path,
                      const std::string& fallback) {
    if (!j.contains(key))
        return fallback;
    return getString(j, key, path);
}

std::int64_t getPositive(const json& j, const char* key, const std::string& path) {
    const std::int64_t v = as<std::int64_t>(member(j, key, path), path + "." + key);
    if (v <= 0)
        throw InputError(path + "." + key,
                         "is " + std::to_string(v) + "; expected a positive integer");
    return v;
}

std::int64_t optPositive(const json& j, const char* key, const std::string& path,
                         std::int64_t fallback) {
    if (!j.contains(key) || j.at(key).is_null())
        return fallback;
    return getPositive(j, key, path);
}

// A count of an architecture (mesh side, block, word bits, banks, cluster).
int optCount(const json& j, const char* key, const std::string& path, int fallback) {
    const std::int64_t v = optPositive(j, key, path, fallback);
    if (v > kMaxArchitectureCount)
        throw InputError(path + "." + key,
                         "is " + std::to_string(v) + "; expected a whole number up to 2^24");
    return static_cast<int>(v);
}

double optNumber(const json& j, const char* key, const std::string& path, double fallback) {
    if (!j.contains(key) || j.at(key).is_null())
        return fallback;
    const json& v = j.at(key);
    if (!v.is_number())
        throw InputError(path + "." + key, "expected a number, got " + typeName(v));
    return v.get<double>();
}

// The index of the level that lj["level"] names.
int levelOf(const json& lj, const std::string& path, const Architecture& a) {
    const std::string name = getString(lj, "level", path);
    const int l = a.levelIndex(name);
    if (l < 0)
        throw InputError(path + ".level",
                         "'" + name + "' is not a level of architecture '" + a.name + "'");
    return l;
}

} // namespace

// ---------------------------------------------------------------- architecture

json toJson(const Architecture& a) {
    json levels = json::array();
    for (const auto& s : a.levels) {
        json l = {{"name", s.name},
                  {"class", toString(s.cls)},
                  {"word_bits", s.wordBits},
                  {"block_size", s.blockSize},
                  {"mesh_x", s.meshX},
                  {"mesh_y", s.meshY},
                  {"multiple_buffering", s.multipleBuffering}};
        if (s.minUtilization > 0)
            l["min_utilization"] = s.minUtilization;
        if (!s.component.empty())
            l["component"] = s.component;
        if (s.numBanks != 1)
            l["banks"] = s.numBanks;
        if (s.clusterSize != 1)
            l["cluster_size"] = s.clusterSize;
        if (s.technologyNm > 0)
            l["technology_nm"] = s.technologyNm;
        if (s.cls == LevelClass::DRAM)
            l["dram_type"] = s.dramType;
        l["energy_pJ"] = {{"read", s.energy.read},
                          {"write", s.energy.write},
                          {"update", s.energy.update},
                          {"leak", s.energy.leak}};
        l["area_um2"] = s.area;
        l["sources"] = {{"read", toString(s.sources.read)},
                        {"write", toString(s.sources.write)},
                        {"update", toString(s.sources.update)},
                        {"leak", toString(s.sources.leak)},
                        {"area", toString(s.sources.area)}};
        if (!s.unbounded() && s.cls != LevelClass::Dummy)
            l["capacity_words"] = s.capacityWords;
        if (s.readBandwidth > 0)
            l["read_bandwidth"] = s.readBandwidth;
        if (s.writeBandwidth > 0)
            l["write_bandwidth"] = s.writeBandwidth;
        levels.push_back(l);
    }
    json out = {{"format", "mapwright.architecture"},
                {"version", kFormatVersion},
                {"name", a.name},
                {"description", a.description},
                {"technology_nm", a.technologyNm},
                {"levels", levels},
                {"compute",
                 {{"name", a.compute.name},
                  {"mesh_x", a.compute.meshX},
                  {"mesh_y", a.compute.meshY},
                  {"word_bits", a.compute.wordBits},
                  {"arithmetic", toString(a.compute.arithmetic)},
                  {"multiplier_bits", a.compute.multiplierWidth()},
                  {"adder_bits", a.compute.adderWidth()},
                  {"energy_pJ", a.compute.macEnergy},
                  {"leak_pJ", a.compute.leak},
                  {"area_um2", a.compute.area},
                  {"sources",
                   {{"energy", toString(a.compute.energySource)},
                    {"leak", toString(a.compute.leakSource)},
                    {"area", toString(a.compute.areaSource)}}}}}};
    if (a.compute.technologyNm > 0)
        out["compute"]["technology_nm"] = a.compute.technologyNm;
    return out;
}

namespace {

// A value's source: sources.<key> when given; else typed when the file gives
// the value (files written before sources existed pin what they hold), else
// estimated.
ValueSource sourceOf(const json& obj, const char* key, bool valueGiven, const std::string& path) {
    if (obj.contains("sources") && obj.at("sources").is_object() &&
        obj.at("sources").contains(key)) {
        const std::string sp = path + ".sources." + key;
        const std::string v = as<std::string>(obj.at("sources").at(key), sp);
        ValueSource out;
        if (!parseValueSource(v, out))
            throw InputError(sp, "is '" + v + "'; expected estimated, imported or typed");
        return out;
    }
    if (obj.contains("sources") && !obj.at("sources").is_object())
        throw InputError(path + ".sources",
                         "expected an object, got " + typeName(obj.at("sources")));
    return valueGiven ? ValueSource::Typed : ValueSource::Estimated;
}

} // namespace

Architecture architectureFromJson(const json& j) {
    const std::string root = "$";
    checkFormat(j, "mapwright.architecture", root);
    // Every key is checked: a misspelt one ("capacity_word") would otherwise
    // leave its default in silence.
    onlyKeys(j, root,
             {"format", "version", "name", "description", "technology_nm", "levels", "compute"});
    Architecture a;
    a.name = optString(j, "name", root, "");
    a.description = optString(j, "description", root, "");
    a.technologyNm = optNumber(j, "technology_nm", root, 45.0);
    const json& levels = arrayMember(j, "levels", root);
    for (std::size_t i = 0; i < levels.size(); ++i) {
        const std::string path = root + ".levels[" + std::to_string(i) + "]";
        const json& lj = levels[i];
        onlyKeys(lj, path,
                 {"name", "class", "capacity_words", "word_bits", "block_size", "mesh_x", "mesh_y",
                  "read_bandwidth", "write_bandwidth", "multiple_buffering", "min_utilization",
                  "component", "banks", "cluster_size", "technology_nm", "dram_type", "energy_pJ",
                  "area_um2", "sources"});
        if (lj.contains("sources"))
            onlyKeys(lj.at("sources"), path + ".sources",
                     {"read", "write", "update", "leak", "area"});
        StorageLevel s;
        s.name = getString(lj, "name", path);
        const std::string cls = optString(lj, "class", path, "SRAM");
        if (!parseLevelClass(cls, s.cls))
            throw InputError(path + ".class",
                             "is '" + cls + "'; expected DRAM, SRAM, regfile or dummy");
        if (s.cls == LevelClass::DRAM)
            s.capacityWords = 0;
        else if (s.cls == LevelClass::Dummy)
            s.capacityWords = 0;
        else
            s.capacityWords = getPositive(lj, "capacity_words", path);
        s.wordBits = optCount(lj, "word_bits", path, 16);
        s.blockSize = optCount(lj, "block_size", path, 1);
        s.meshX = optCount(lj, "mesh_x", path, 1);
        s.meshY = optCount(lj, "mesh_y", path, 1);
        s.readBandwidth = optNumber(lj, "read_bandwidth", path, 0.0);
        s.writeBandwidth = optNumber(lj, "write_bandwidth", path, 0.0);
        s.multipleBuffering = optNumber(lj, "multiple_buffering", path, 1.0);
        s.minUtilization = optNumber(lj, "min_utilization", path, 0.0);
        s.component = optString(lj, "component", path, "");
        s.numBanks = optCount(lj, "banks", path, 1);
        s.clusterSize = optCount(lj, "cluster_size", path, 1);
        s.technologyNm = optNumber(lj, "technology_nm", path, 0.0);
        s.dramType = optString(lj, "dram_type", path, "LPDDR4");
        bool given[4] = {false, false, false, false};
        if (lj.contains("energy_pJ")) {
            const json& e = lj.at("energy_pJ");
            const std::string ep = path + ".energy_pJ";
            if (!e.is_object())
                throw InputError(ep, "expected an object with read, write, update, leak");
            onlyKeys(e, ep, {"read", "write", "update", "leak"});
            s.energy.read = optNumber(e, "read", ep, 0.0);
            s.energy.write = optNumber(e, "write", ep, s.energy.read);
            s.energy.update = optNumber(e, "update", ep, s.energy.write);
            s.energy.leak = optNumber(e, "leak", ep, 0.0);
            // A write or update left out takes the value before it, as typed.
            given[0] = e.contains("read");
            given[1] = given[0] || e.contains("write");
            given[2] = given[1] || e.contains("update");
            given[3] = e.contains("leak");
        }
        s.area = optNumber(lj, "area_um2", path, 0.0);
        s.sources.read = sourceOf(lj, "read", given[0], path);
        s.sources.write = sourceOf(lj, "write", given[1], path);
        s.sources.update = sourceOf(lj, "update", given[2], path);
        s.sources.leak = sourceOf(lj, "leak", given[3], path);
        s.sources.area = sourceOf(lj, "area", lj.contains("area_um2"), path);
        a.levels.push_back(s);
    }
    if (!j.contains("compute") || j.at("compute").is_null())
        throw InputError(root + ".compute",
                         "missing: the architecture has no compute level; expected an object "
                         "with name, mesh_x, mesh_y, energy_pJ");
    const json& c = j.at("compute");
    const std::string cp = root + ".compute";
    if (!c.is_object())
        throw InputError(cp, "expected an object, got " + typeName(c));
    onlyKeys(c, cp,
             {"name", "mesh_x", "mesh_y", "word_bits", "arithmetic", "multiplier_bits",
              "adder_bits", "energy_pJ", "leak_pJ", "area_um2", "sources", "technology_nm"});
    if (c.contains("sources"))
        onlyKeys(c.at("sources"), cp + ".sources", {"energy", "leak", "area"});
    a.compute.name = optString(c, "name", cp, "MAC");
    a.compute.meshX = optCount(c, "mesh_x", cp, 1);
    a.compute.meshY = optCount(c, "mesh_y", cp, 1);
    a.compute.wordBits = optCount(c, "word_bits", cp, 16);
    const std::string arith = optString(c, "arithmetic", cp, "int");
    if (!parseArithmetic(arith, a.compute.arithmetic))
        throw InputError(cp + ".arithmetic", "is '" + arith + "'; expected int, fp or bf");
    a.compute.multiplierBits = optCount(c, "multiplier_bits", cp, a.compute.wordBits);
    a.compute.adderBits = optCount(c, "adder_bits", cp, a.compute.wordBits);
    a.compute.macEnergy = optNumber(c, "energy_pJ", cp, 0.0);
    a.compute.leak = optNumber(c, "leak_pJ", cp, 0.0);
    a.compute.area = optNumber(c, "area_um2", cp, 0.0);
    a.compute.energySource = sourceOf(c, "energy", c.contains("energy_pJ"), cp);
    a.compute.leakSource = sourceOf(c, "leak", c.contains("leak_pJ"), cp);
    a.compute.areaSource = sourceOf(c, "area", c.contains("area_um2"), cp);
    a.compute.technologyNm = optNumber(c, "technology_nm", cp, 0.0);
    validateArchitecture(a);
    applyEstimates(a);
    return a;
}

// -------------------------------------------------------------------- problems

json toJson(const Problem& p) {
    json dims = json::array();
    for (const auto& d : p.dims)
        dims.push_back({{"name", d.name}, {"bound", d.bound}});
    json tensors = json::array();
    for (const auto& ds : p.tensors) {
        json ranks = json::array();
        for (int r = 0; r < ds.numRanks; ++r) {
            json terms = json::array();
            for (int i = 0; i < ds.ranks[r].numTerms; ++i)
                terms.push_back({{"dim", p.dims[ds.ranks[r].terms[i].dim].name},
                                 {"coef", ds.ranks[r].terms[i].coef}});
            ranks.push_back(terms);
        }
        tensors.push_back({{"name", ds.name}, {"ranks", ranks}, {"read_write", ds.readWrite}});
    }
    json j = {{"dimensions", dims}, {"tensors", tensors}};
    if (!p.coefficients.empty()) {
        json c = json::object();
        for (const auto& [k, v] : p.coefficients)
            c[k] = v;
        j["coefficients"] = c;
    }
    return j;
}

Problem problemFromJson(const json& j, const std::string& where) {
    std::vector<Dimension> dims;
    const json& dj = arrayMember(j, "dimensions", where);
    for (std::size_t i = 0; i < dj.size(); ++i) {
        const std::string path = where + ".dimensions[" + std::to_string(i) + "]";
        onlyKeys(dj[i], path, {"name", "bound"});
        Dimension d;
        d.name = getString(dj[i], "name", path);
        d.bound = getPositive(dj[i], "bound", path);
        dims.push_back(d);
    }
    std::vector<TensorSpec> specs;
    const json& tj = arrayMember(j, "tensors", where);
    for (std::size_t i = 0; i < tj.size(); ++i) {
        const std::string path = where + ".tensors[" + std::to_string(i) + "]";
        onlyKeys(tj[i], path, {"name", "read_write", "ranks"});
        TensorSpec spec;
        spec.name = getString(tj[i], "name", path);
        if (tj[i].contains("read_write")) {
            if (!tj[i].at("read_write").is_boolean())
                throw InputError(path + ".read_write", "expected true or false");
            spec.readWrite = tj[i].at("read_write").get<bool>();
        }
        const json& rj = arrayMember(tj[i], "ranks", path);
        for (std::size_t r = 0; r < rj.size(); ++r) {
            const std::string rp = path + ".ranks[" + std::to_string(r) + "]";
            if (!rj[r].is_array())
                throw InputError(rp, "expected an array of {dim, coef} terms");
            std::vector<std::pair<std::string, std::int64_t>> terms;
            for (std::size_t k = 0; k < rj[r].size(); ++k) {
                const std::string kp = rp + "[" + std::to_string(k) + "]";
                onlyKeys(rj[r][k], kp, {"dim", "coef"});
                const std::string dim = getString(rj[r][k], "dim", kp);
                if (std::find_if(dims.begin(), dims.end(),
                                 [&](const Dimension& d) { return d.name == dim; }) == dims.end())
                    throw InputError(kp + ".dim", "unknown dimension '" + dim + "'");
                std::int64_t coef = 1;
                if (rj[r][k].contains("coef"))
                    coef = as<std::int64_t>(rj[r][k].at("coef"), kp + ".coef");
                terms.emplace_back(dim, coef);
            }
            spec.ranks.push_back(terms);
        }
        specs.push_back(spec);
    }
    std::vector<std::pair<std::string, std::int64_t>> coefs;
    if (j.contains("coefficients") && !j.at("coefficients").is_object())
        throw InputError(where + ".coefficients", "expected an object of name: integer, got " +
                                                      typeName(j.at("coefficients")));
    if (j.contains("coefficients"))
        for (const auto& [k, v] : j.at("coefficients").items())
            coefs.emplace_back(k, as<std::int64_t>(v, where + ".coefficients." + k));
    try {
        return makeProblem(optString(j, "name", where, ""), dims, specs, coefs);
    } catch (const InputError& e) {
        throw e.within(where);
    }
}

// -------------------------------------------------------------------- networks

json toJson(const Network& n) {
    json layers = json::array();
    for (const auto& l : n.layers) {
        json lj = {{"name", l.name}, {"kind", l.kind}};
        if (!l.source.empty())
            lj["source"] = l.source;
        if (l.kind == "custom") {
            json pj = toJson(l.custom);
            lj["dimensions"] = pj["dimensions"];
            lj["tensors"] = pj["tensors"];
            if (pj.contains("coefficients"))
                lj["coefficients"] = pj["coefficients"];
        } else {
            for (const auto& [k, v] : l.params)
                lj[k] = v;
        }
        if (!l.densities.empty()) {
            json d = json::object();
            for (const auto& [t, v] : l.densities)
                d[t] = v;
            lj["densities"] = d;
        }
        layers.push_back(lj);
    }
    return {{"format", "mapwright.workload"},
            {"version", kFormatVersion},
            {"name", n.name},
            {"description", n.description},
            {"layers", layers}};
}

Network networkFromJson(const json& j) {
    const std::string root = "$";
    checkFormat(j, "mapwright.workload", root);
    // ("note": free text some shared files carry; read by no one.)
    onlyKeys(j, root,
             {"format", "version", "name", "network", "description", "source", "note", "layers"});
    Network n;
    n.name = optString(j, "name", root, optString(j, "network", root, ""));
    n.description = optString(j, "description", root, optString(j, "source", root, ""));
    const json& layers = arrayMember(j, "layers", root);
    if (layers.empty())
        throw InputError(root + ".layers", "is empty; expected at least one layer");
    std::vector<bool> named; // per layer, whether the file names it (else "layer<i>")
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const std::string path = root + ".layers[" + std::to_string(i) + "]";
        const json& lj = layers[i];
        LayerSpec l;
        l.name = optString(lj, "name", path, "layer" + std::to_string(i));
        if (isBlankLayerName(l.name))
            throw InputError(path + ".name", "is blank; expected a layer's name (or no name: "
                                             "layer" +
                                                 std::to_string(i) + ")");
        l.kind = getString(lj, "kind", path);
        l.source = optString(lj, "source", path, "");
        if (lj.contains("densities")) {
            const json& dj = lj.at("densities");
            if (!dj.is_object())
                throw InputError(path + ".densities",
                                 "expected an object of tensor: density, e.g. {\"Inputs\": 0.5}");
            for (const auto& [tensor, v] : dj.items()) {
                if (!v.is_number())
                    throw InputError(path + ".densities." + tensor, "expected a number in (0, 1]");
                l.densities.emplace_back(tensor, v.get<double>());
            }
        }
        if (l.kind == "custom") {
            onlyKeys(
                lj, path,
                {"name", "kind", "source", "densities", "dimensions", "tensors", "coefficients"});
            l.custom = problemFromJson(lj, path);
            l.custom.name = l.name;
        } else {
            const PresetInfo* info = findPreset(l.kind);
            if (!info)
                throw InputError(path + ".kind", "is '" + l.kind +
                                                     "'; expected conv2d, depthwise, gemm, "
                                                     "bgemm, mttkrp or custom");
            for (const auto& [key, value] : lj.items()) {
                if (key == "name" || key == "kind" || key == "densities" || key == "source")
                    continue;
                bool known = false;
                for (const auto& pr : info->params)
                    known = known || pr.first == key;
                if (!known)
                    throw InputError(path + "." + key, "is not a parameter of " + l.kind);
            }
            for (const auto& [key, fallback] : info->params) {
                // A shape parameter must be given: only those whose default
                // is 1 (batch, groups, strides, dilations) may be left out
                // (a file missing C took the editor's default, 64, in silence).
                if (!lj.contains(key) && fallback != 1)
                    throw InputError(path, "has no '" + key + "'; expected the " + l.kind +
                                               " layer's " + key +
                                               " (only parameters of 1 "
                                               "may be left out)");
                if (!lj.contains(key))
                    continue;
                const std::int64_t v = as<std::int64_t>(lj.at(key), path + "." + key);
                if (v <= 0)
                    throw InputError(path + "." + key,
                                     "is " + std::to_string(v) + "; expected a positive integer");
                l.params.emplace_back(key, v);
            }
        }
        // Runs, --layer, sweeps and the network view name a layer by its
        // name: a second of one name would take the first one's results.
        if (const int earlier = n.layerIndex(l.name); earlier >= 0)
            throw InputError(lj.contains("name") ? path + ".name" : path,
                             (lj.contains("name")
                                  ? "'" + l.name + "'"
                                  : "has no name, and its default '" + l.name + "'") +
                                 " is already the name of layers[" + std::to_string(earlier) + "]" +
                                 (named[std::size_t(earlier)] ? "" : " (its default)") +
                                 "; expected a name unique within the network");
        named.push_back(lj.contains("name"));
        n.layers.push_back(std::move(l));
    }
    for (const auto& l : n.layers) // surface bad shapes at load time
        buildProblem(l);
    return n;
}

// -------------------------------------------------------------------- mappings

json toJson(const Mapping& m, const Problem& p, const Architecture& a) {
    json levels = json::array();
    for (int l = 0; l < m.numLevels && l < a.numLevels(); ++l) {
        const LevelMapping& lm = m.levels[l];
        json temporal = json::array(), spatial = json::array(), keep = json::array();
        for (int i = 0; i < p.numDims(); ++i) { // loops of factor 1 are left out
            const int d = lm.order[i];
            if (lm.temporal[d] != 1)
                temporal.push_back({{"dim", p.dims[d].name}, {"factor", lm.temporal[d]}});
        }
        for (int i = 0; i < p.numDims(); ++i) {
            const int d = lm.spatialOrder[i];
            if (lm.spatialX[d] > 1)
                spatial.push_back(
                    {{"dim", p.dims[d].name}, {"factor", lm.spatialX[d]}, {"axis", "X"}});
            if (lm.spatialY[d] > 1)
                spatial.push_back(
                    {{"dim", p.dims[d].name}, {"factor", lm.spatialY[d]}, {"axis", "Y"}});
        }
        for (int t = 0; t < p.numTensors(); ++t)
            if (lm.keeps(t))
                keep.push_back(p.tensors[t].name);
        json level = {{"level", a.levels[l].name}, {"temporal", temporal}, {"spatial", spatial}};
        if (spatial.size() > 1) { // the order of spatial loops matters only among several
            json spatialOrder = json::array();
            for (int i = 0; i < p.numDims(); ++i)
                spatialOrder.push_back(p.dims[lm.spatialOrder[i]].name);
            level["spatial_order"] = spatialOrder;
        }
        level["keep"] = keep;
        levels.push_back(level);
    }
    return {{"format", "mapwright.mapping"},
            {"version", kFormatVersion},
            {"problem", p.name},
            {"architecture", a.name},
            {"levels", levels}};
}

Mapping mappingFromJson(const json& j, const Problem& p, const Architecture& a) {
    const std::string root = "$";
    checkFormat(j, "mapwright.mapping", root);
    onlyKeys(j, root, {"format", "version", "problem", "architecture", "levels"});
    Mapping m = makeTrivialMapping(p, a);
    const json& levels = arrayMember(j, "levels", root);
    std::vector<bool> seen(static_cast<std::size_t>(a.numLevels()), false);
    for (std::size_t i = 0; i < levels.size(); ++i) {
        const std::string path = root + ".levels[" + std::to_string(i) + "]";
        const json& lj = levels[i];
        // (A misspelt "temporl" would leave the level's loops at 1.)
        onlyKeys(lj, path, {"level", "temporal", "spatial", "spatial_order", "keep"});
        const int l = levelOf(lj, path, a);
        if (seen[static_cast<std::size_t>(l)])
            throw InputError(path + ".level", "level '" + a.levels[l].name + "' appears twice");
        seen[static_cast<std::size_t>(l)] = true;
        LevelMapping& lm = m.levels[l];
        auto dimOf = [&](const json& e, const std::string& ep) {
            const std::string dn = getString(e, "dim", ep);
            const int d = p.dimIndex(dn);
            if (d < 0)
                throw InputError(ep + ".dim",
                                 "unknown dimension '" + dn + "' (problem '" + p.name + "')");
            return d;
        };
        auto factorOf = [&](const json& e, const std::string& ep, int d) {
            const std::int64_t f = getPositive(e, "factor", ep);
            if (f > p.dims[d].bound)
                throw InputError(ep + ".factor", "is " + std::to_string(f) + "; dimension " +
                                                     p.dims[d].name + " is only " +
                                                     std::to_string(p.dims[d].bound));
            return static_cast<std::uint32_t>(f);
        };
        if (lj.contains("temporal")) {
            const json& tj = arrayMember(lj, "temporal", path);
            std::vector<int> order;
            for (std::size_t k = 0; k < tj.size(); ++k) {
                const std::string ep = path + ".temporal[" + std::to_string(k) + "]";
                onlyKeys(tj[k], ep, {"dim", "factor"});
                const int d = dimOf(tj[k], ep);
                if (std::find(order.begin(), order.end(), d) != order.end())
                    throw InputError(ep + ".dim", "dimension '" + p.dims[d].name +
                                                      "' has two temporal loops at one level");
                order.push_back(d);
                lm.temporal[d] = factorOf(tj[k], ep, d);
            }
            // Dimensions not listed have factor 1 and go innermost.
            for (int d = 0; d < p.numDims(); ++d)
                if (std::find(order.begin(), order.end(), d) == order.end())
                    order.push_back(d);
            for (int k = 0; k < p.numDims(); ++k)
                lm.order[k] = static_cast<std::uint8_t>(order[k]);
        }
        if (lj.contains("spatial")) {
            const json& sj = arrayMember(lj, "spatial", path);
            std::vector<int> order;
            for (std::size_t k = 0; k < sj.size(); ++k) {
                const std::string ep = path + ".spatial[" + std::to_string(k) + "]";
                onlyKeys(sj[k], ep, {"dim", "factor", "axis"});
                const int d = dimOf(sj[k], ep);
                const auto f = factorOf(sj[k], ep, d);
                const std::string axis = optString(sj[k], "axis", ep, "X");
                if (axis == "X")
                    lm.spatialX[d] = f;
                else if (axis == "Y")
                    lm.spatialY[d] = f;
                else
                    throw InputError(ep + ".axis", "is '" + axis + "'; expected X or Y");
                if (std::find(order.begin(), order.end(), d) == order.end())
                    order.push_back(d);
            }
            if (lj.contains("spatial_order")) {
                order.clear();
                for (const auto& e : arrayMember(lj, "spatial_order", path)) {
                    const int d = e.is_string() ? p.dimIndex(e.get<std::string>()) : -1;
                    if (d < 0)
                        throw InputError(path + ".spatial_order",
                                         "expected dimension names of the problem");
                    order.push_back(d);
                }
            }
            for (int d = 0; d < p.numDims(); ++d)
                if (std::find(order.begin(), order.end(), d) == order.end())
                    order.push_back(d);
            for (int k = 0; k < p.numDims(); ++k)
                lm.spatialOrder[k] = static_cast<std::uint8_t>(order[k]);
        }
        if (lj.contains("keep")) {
            lm.keepMask = 0;
            for (const auto& e : arrayMember(lj, "keep", path)) {
                const int t = e.is_string() ? p.tensorIndex(e.get<std::string>()) : -1;
                if (t < 0)
                    throw InputError(path + ".keep",
                                     "'" + (e.is_string() ? e.get<std::string>() : e.dump()) +
                                         "' is not a tensor of problem '" + p.name + "'");
                lm.setKeep(t, true);
            }
        }
    }
    return m;
}

// ----------------------------------------------------------------- evaluations

json toJson(const Evaluation& e, const Problem& p, const Architecture& a) {
    json levels = json::array();
    if (e.valid || e.numLevels > 0)
        for (int l = 0; l < e.numLevels && l < a.numLevels(); ++l) {
            const LevelStats& ls = e.levels[l];
            json tensors = json::object();
            for (int t = 0; t < e.numTensors && t < p.numTensors(); ++t) {
                const TensorLevelStats& ts = ls.tensors[t];
                if (!ts.kept)
                    continue;
                tensors[p.tensors[t].name] = {{"reads", ts.reads},
                                              {"fills", ts.fills},
                                              {"updates", ts.updates},
                                              {"utilized_capacity", ts.tile},
                                              {"first_touches", ts.firstTouches},
                                              {"shared_by", ts.sharedBy},
                                              {"energy_pJ", ts.energy},
                                              {"read_energy_pJ", ts.readEnergy},
                                              {"fill_energy_pJ", ts.fillEnergy},
                                              {"update_energy_pJ", ts.updateEnergy}};
            }
            levels.push_back({{"name", a.levels[l].name},
                              {"cycles", ls.cycles},
                              {"energy_pJ", ls.energy},
                              {"access_energy_pJ", ls.accessEnergy},
                              {"leak_energy_pJ", ls.leakEnergy},
                              {"utilized_instances", ls.utilizedInstances},
                              {"capacity_used", ls.capacityUsed},
                              {"tensors", tensors}});
        }
    return {{"format", "mapwright.evaluation"},
            {"version", kFormatVersion},
            {"valid", e.valid},
            {"violations", describeViolations(e, p, a)},
            {"cycles", e.cycles},
            {"compute_cycles", e.computeCycles},
            {"energy_pJ", e.energy},
            {"compute_energy_pJ", e.computeEnergy},
            {"utilization", e.utilization},
            {"edp", e.edp},
            {"computes", e.computes},
            {"utilized_macs", e.utilizedMacs},
            {"levels", levels}};
}

Evaluation evaluationFromJson(const json& j, const Problem& p, const Architecture& a) {
    const std::string root = "$";
    checkFormat(j, "mapwright.evaluation", root);
    Evaluation e;
    e.valid = member(j, "valid", root).get<bool>();
    e.cycles = as<std::int64_t>(member(j, "cycles", root), root + ".cycles");
    e.computeCycles =
        j.contains("compute_cycles") ? as<std::int64_t>(j.at("compute_cycles"), root) : e.cycles;
    e.energy = optNumber(j, "energy_pJ", root, 0.0);
    e.computeEnergy = optNumber(j, "compute_energy_pJ", root, 0.0);
    e.utilization = optNumber(j, "utilization", root, 0.0);
    e.edp = optNumber(j, "edp", root, 0.0);
    e.computes = as<std::int64_t>(member(j, "computes", root), root + ".computes");
    e.utilizedMacs =
        j.contains("utilized_macs") ? as<std::int64_t>(j.at("utilized_macs"), root) : 0;
    e.numTensors = p.numTensors();
    const json& levels = arrayMember(j, "levels", root);
    e.numLevels = static_cast<int>(levels.size());
    if (e.numLevels > kMaxLevels)
        throw InputError(root + ".levels", "has too many levels");
    for (std::size_t i = 0; i < levels.size(); ++i) {
        const std::string path = root + ".levels[" + std::to_string(i) + "]";
        const json& lj = levels[i];
        const std::string name = getString(lj, "name", path);
        if (a.levelIndex(name) != static_cast<int>(i))
            throw InputError(path + ".name", "'" + name + "' does not match level " +
                                                 std::to_string(i) + " of the architecture");
        LevelStats& ls = e.levels[i];
        ls.cycles = as<std::int64_t>(member(lj, "cycles", path), path + ".cycles");
        ls.energy = optNumber(lj, "energy_pJ", path, 0.0);
        ls.accessEnergy = optNumber(lj, "access_energy_pJ", path, 0.0);
        ls.leakEnergy = optNumber(lj, "leak_energy_pJ", path, 0.0);
        ls.utilizedInstances = lj.contains("utilized_instances")
                                   ? as<std::int64_t>(lj.at("utilized_instances"), path)
                                   : 0;
        ls.capacityUsed =
            lj.contains("capacity_used") ? as<std::int64_t>(lj.at("capacity_used"), path) : 0;
        const json& tj = member(lj, "tensors", path);
        for (const auto& [tname, tv] : tj.items()) {
            const int t = p.tensorIndex(tname);
            if (t < 0)
                throw InputError(path + ".tensors." + tname, "is not a tensor of the problem");
            const std::string tp = path + ".tensors." + tname;
            TensorLevelStats& ts = ls.tensors[t];
            ts.kept = true;
            ts.reads = as<std::int64_t>(member(tv, "reads", tp), tp + ".reads");
            ts.fills = as<std::int64_t>(member(tv, "fills", tp), tp + ".fills");
            ts.updates = as<std::int64_t>(member(tv, "updates", tp), tp + ".updates");
            ts.tile =
                as<std::int64_t>(member(tv, "utilized_capacity", tp), tp + ".utilized_capacity");
            ts.firstTouches =
                tv.contains("first_touches") ? as<std::int64_t>(tv.at("first_touches"), tp) : 0;
            ts.sharedBy = tv.contains("shared_by") ? as<std::int64_t>(tv.at("shared_by"), tp) : 1;
            ts.energy = optNumber(tv, "energy_pJ", tp, 0.0);
            ts.readEnergy = optNumber(tv, "read_energy_pJ", tp, 0.0);
            ts.fillEnergy = optNumber(tv, "fill_energy_pJ", tp, 0.0);
            ts.updateEnergy = optNumber(tv, "update_energy_pJ", tp, 0.0);
        }
    }
    return e;
}

// ------------------------------------------------------------------------ files

std::string readTextFile(const std::string& path, std::size_t maxBytes) {
    // Bounded (a session with its traces is tens of MiB): given /dev/zero,
    // reading grew until the system killed the program.
    std::error_code ec;
    if (path.empty())
        throw InputError("file", "has an empty path; expected a file to read");
    if (std::filesystem::is_directory(path, ec))
        throw InputError(path, "is a folder; expected a file");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InputError(path, "cannot be opened for reading");
    std::string text;
    const auto size = std::filesystem::file_size(path, ec);
    const auto tooLarge = [&] {
        return InputError(path, "is larger than " + std::to_string(maxBytes >> 20) +
                                    " MiB; expected a smaller file");
    };
    if (!ec && size > maxBytes) // a regular file: refused before reading it (3 GB took 34 s)
        throw tooLarge();
    if (!ec)
        text.reserve(std::size_t(size)); // (no doubling as it is read)
    char chunk[1 << 16];
    while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
        text.append(chunk, std::size_t(in.gcount()));
        if (text.size() > maxBytes) // (a device or a pipe, or a file that grew)
            throw tooLarge();
    }
    return text;
}

void writeTextFile(const std::string& path, const std::string& text) {
    writeFileAtomically(path, text);
}

json readJsonFile(const std::string& path) {
    const std::string text = readTextFile(path);
    try {
        return parseJsonText(text, path);
    } catch (const InputError&) {
        if (!isTimeloopFileName(path))
            throw;
        throw InputError(path, "is not JSON (Timeloop YAML?); expected Mapwright JSON here: "
                               "mapwright-cli import-timeloop FILES... --out DIR converts "
                               "Timeloop files to it");
    }
}

Architecture loadArchitecture(const std::string& path) {
    return withFile(path, [](const json& j) { return architectureFromJson(j); });
}

Network loadNetwork(const std::string& path) {
    return withFile(path, [](const json& j) { return networkFromJson(j); });
}

Mapping loadMapping(const std::string& path, const Problem& p, const Architecture& a,
                    std::vector<std::string>* notes) {
    if (isTimeloopFileName(path))
        return importTimeloopMapping(path, p, a, notes);
    return withFile(path, [&](const json& j) { return mappingFromJson(j, p, a); });
}

const LayerSpec& selectLayer(const Network& n, const std::string& name) {
    if (name.empty()) {
        if (n.layers.size() == 1)
            return n.layers.front();
        throw InputError("--layer", "the workload '" + n.name + "' has " +
                                        std::to_string(n.layers.size()) +
                                        " layers; name one with --layer");
    }
    const int i = n.findLayer(name);
    if (i < 0)
        throw InputError("--layer", "no layer named (or imported as) '" + name + "' in workload '" +
                                        n.name + "'");
    return n.layers[static_cast<std::size_t>(i)];
}

} // namespace mw
