#include "explore/design_space.h"

#include "common/error.h"
#include "common/json_fields.h"
#include "common/number_text.h"
#include "estimate/estimator.h"
#include "io/json_files.h"
#include "io/onnx_import.h"
#include "io/timeloop/timeloop.h"
#include "mapspace/mapspace.h" // Rng
#include "search/search.h"     // makeSearcher, SearchObjective

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

namespace mw {

using namespace json_fields;

namespace {

const std::vector<std::string>& levelFields() {
    static const std::vector<std::string> f = {
        "capacity_words", "word_bits",       "block_size",
        "banks",          "mesh_x",          "mesh_y",
        "read_bandwidth", "write_bandwidth", "multiple_buffering",
        "component",      "class",           "dram_type"};
    return f;
}

const std::vector<std::string>& computeFields() {
    static const std::vector<std::string> f = {"word_bits", "multiplier_bits", "adder_bits",
                                               "arithmetic"};
    return f;
}

std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v)
        s += (s.empty() ? "" : ", ") + x;
    return s;
}

// A whole number >= 1 (what every counted field takes).
std::int64_t positiveInteger(const std::string& value, const std::string& where) {
    std::size_t used = 0;
    long long v = 0;
    try {
        v = std::stoll(value, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != value.size() || value.empty() || v < 1)
        throw InputError(where, "expected a whole number >= 1");
    return v;
}

// A finite number >= least.
double numberFrom(double least, const std::string& value, const std::string& where) {
    const double v = decimalNumber(value).value_or(least - 1);
    if (!(v >= least))
        throw InputError(where, "expected a number >= " + std::to_string(int(least)));
    return v;
}

double nonNegative(const std::string& value, const std::string& where) {
    return numberFrom(0.0, value, where);
}

int intField(const std::string& value, const std::string& where) {
    const std::int64_t v = positiveInteger(value, where);
    if (v > kMaxArchitectureCount)
        throw InputError(where, "is too large; expected at most 2^24");
    return static_cast<int>(v);
}

void unpinLevel(StorageLevel& s) {
    s.sources = StorageSources{};
}

void unpinCompute(ComputeLevel& c) {
    c.energySource = c.leakSource = c.areaSource = ValueSource::Estimated;
}

// The product's point number k as values, the last axis fastest.
std::vector<std::string> productPoint(const std::vector<SweepAxis>& axes, std::uint64_t k) {
    std::vector<std::string> v(axes.size());
    for (std::size_t a = axes.size(); a-- > 0;) {
        const std::uint64_t n = axes[a].values.size();
        v[a] = axes[a].values[k % n];
        k /= n;
    }
    return v;
}

// More points than any machine searches whole networks for.
constexpr std::uint64_t kMaxSweepPoints = 1'000'000;

std::uint64_t productSize(const std::vector<SweepAxis>& axes) {
    std::uint64_t n = 1;
    for (const auto& a : axes) {
        if (a.values.empty())
            return 0;
        if (n > (std::uint64_t(1) << 40) / a.values.size())
            return std::uint64_t(1) << 40;
        n *= a.values.size();
    }
    return n;
}

std::string valueText(const Json& v, const std::string& where) {
    if (v.is_string())
        return v.get<std::string>();
    if (v.is_number_integer() || v.is_number_unsigned())
        return v.dump();
    if (v.is_number_float()) {
        const double d = v.get<double>();
        return d == std::trunc(d) && std::fabs(d) < 1e15 ? std::to_string(std::int64_t(d))
                                                         : v.dump();
    }
    throw InputError(where, "expected a number or a string, got " + typeName(v));
}

} // namespace

void applySweepParameter(Architecture& a, const std::string& parameter, const std::string& value) {
    const std::string where = parameter + "=" + value;
    if (parameter == "pe_mesh") {
        const auto x = value.find_first_of("xX");
        if (x == std::string::npos)
            throw InputError(where, "expected X x Y, as 16x16");
        resizePeArray(a, intField(value.substr(0, x), where), intField(value.substr(x + 1), where));
        return;
    }
    if (parameter == "technology_nm") {
        a.technologyNm = nonNegative(value, where);
        for (auto& s : a.levels)
            unpinLevel(s);
        unpinCompute(a.compute);
        return;
    }
    const auto dot = parameter.rfind('.');
    if (dot == std::string::npos || dot == 0)
        throw InputError(parameter, "is not a sweep parameter; expected LEVEL.field, "
                                    "compute.field, pe_mesh or technology_nm");
    const std::string owner = parameter.substr(0, dot), field = parameter.substr(dot + 1);
    if (owner == "compute" || owner == a.compute.name) {
        ComputeLevel& c = a.compute;
        if (field == "word_bits")
            c.wordBits = intField(value, where);
        else if (field == "multiplier_bits")
            c.multiplierBits = intField(value, where);
        else if (field == "adder_bits")
            c.adderBits = intField(value, where);
        else if (field == "arithmetic") {
            if (!parseArithmetic(value, c.arithmetic))
                throw InputError(where, "expected int, fp or bf");
        } else
            throw InputError(parameter, "is not a field a sweep varies" +
                                            didYouMean(field, computeFields()) +
                                            "; expected one of " + joined(computeFields()));
        unpinCompute(c);
        return;
    }
    const int l = a.levelIndex(owner);
    if (l < 0) {
        std::vector<std::string> names;
        for (const auto& s : a.levels)
            names.push_back(s.name);
        throw InputError(parameter, "'" + owner + "' is not a level of " + a.name +
                                        "; expected one of " + joined(names) + ", compute");
    }
    StorageLevel& s = a.levels[std::size_t(l)];
    if (field == "capacity_words")
        s.capacityWords = positiveInteger(value, where);
    else if (field == "word_bits")
        s.wordBits = intField(value, where);
    else if (field == "block_size")
        s.blockSize = intField(value, where);
    else if (field == "banks")
        s.numBanks = intField(value, where);
    else if (field == "mesh_x")
        s.meshX = intField(value, where);
    else if (field == "mesh_y")
        s.meshY = intField(value, where);
    else if (field == "read_bandwidth")
        s.readBandwidth = nonNegative(value, where);
    else if (field == "write_bandwidth")
        s.writeBandwidth = nonNegative(value, where);
    else if (field == "multiple_buffering")
        s.multipleBuffering = numberFrom(1.0, value, where); // (1: single-buffered)
    else if (field == "component")
        s.component = value;
    else if (field == "dram_type" && s.cls != LevelClass::DRAM)
        // (It would be stored and change nothing: only DRAM is priced by its type.)
        throw InputError(parameter,
                         "'" + owner + "' is not a DRAM level; expected a DRAM level's dram_type");
    else if (field == "dram_type" || (field == "class" && s.cls == LevelClass::DRAM)) {
        // A DRAM's class is its type (LPDDR4, HBM2...), as the sweeps name it.
        const auto types = Estimator::builtIn().dramTypes();
        if (std::find(types.begin(), types.end(), value) == types.end())
            throw InputError(where, "expected a DRAM type: " + joined(types));
        s.dramType = value;
    } else if (field == "class") {
        LevelClass c;
        if (!parseLevelClass(value, c) || c == LevelClass::DRAM)
            throw InputError(where, "expected SRAM, regfile or dummy");
        s.cls = c;
        s.component.clear(); // priced by its new class
    } else
        throw InputError(parameter, "is not a field a sweep varies" +
                                        didYouMean(field, levelFields()) + "; expected one of " +
                                        joined(levelFields()));
    unpinLevel(s);
}

SweepAxis parseSweepAxis(const std::string& text) {
    const auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
        throw InputError("--vary " + text, "expected PARAMETER=V1,V2,...");
    SweepAxis axis;
    axis.parameter = text.substr(0, eq);
    std::string rest = text.substr(eq + 1);
    std::size_t from = 0;
    for (;;) {
        const auto comma = rest.find(',', from);
        const std::string v = rest.substr(from, comma - from);
        if (v.empty())
            throw InputError("--vary " + text, "has an empty value; expected PARAMETER=V1,V2,...");
        axis.values.push_back(v);
        if (comma == std::string::npos)
            break;
        from = comma + 1;
    }
    return axis;
}

namespace {

// One axis of checkSweep: named once, with values, each valid on the base.
// One value of a parameter, applied to the base design alone.
void checkValue(const SweepSpec& s, const std::string& parameter, const std::string& v) {
    Architecture a = s.base;
    applySweepParameter(a, parameter, v);
    try {
        validateArchitecture(a);
        applyEstimates(a);
    } catch (const InputError& e) {
        throw InputError(parameter + "=" + v,
                         "makes the base architecture invalid (" + std::string(e.what()) + ")");
    }
}

void checkAxis(const SweepSpec& s, const SweepAxis& axis, std::set<std::string>& seen) {
    if (!seen.insert(axis.parameter).second)
        throw InputError(axis.parameter, "is varied twice; expected each parameter once");
    if (axis.values.empty())
        throw InputError(axis.parameter, "has no values; expected at least one");
    std::set<std::string> values;
    for (const auto& v : axis.values) {
        if (!values.insert(v).second)
            throw InputError(axis.parameter + "=" + v, "is given twice");
        checkValue(s, axis.parameter, v);
    }
}

} // namespace

void checkSweep(const SweepSpec& s) {
    if (s.axes.empty())
        throw InputError("sweep", "varies nothing; expected at least one --vary PARAMETER=V1,...");
    std::set<std::string> seen;
    for (std::size_t i = 0; i < s.axes.size(); ++i)
        try {
            checkAxis(s, s.axes[i], seen);
        } catch (const InputError& e) {
            if (i >= s.specAxes)
                throw;
            throw e.within(s.specFile + ": $.vary[" + std::to_string(i) + "]");
        }
    // A spec's points: each value checked as a --vary value is (a bad one
    // made an invalid point), and none given twice (it was searched twice).
    std::map<std::vector<std::string>, std::size_t> distinct;
    for (std::size_t i = 0; i < s.points.size(); ++i) {
        const std::string at = s.specFile + ": $.points[" + std::to_string(i) + "]";
        if (s.points[i].size() != s.axes.size())
            throw InputError(at, "gives " + std::to_string(s.points[i].size()) +
                                     " values; expected one per axis (" +
                                     std::to_string(s.axes.size()) + ")");
        if (const auto [it, added] = distinct.emplace(s.points[i], i); !added)
            throw InputError(at, "is points[" + std::to_string(it->second) +
                                     "] again; expected each point once");
        for (std::size_t k = 0; k < s.axes.size(); ++k)
            try {
                checkValue(s, s.axes[k].parameter, s.points[i][k]);
            } catch (const InputError& e) {
                throw e.within(at);
            }
    }
    if (s.network.layers.empty())
        throw InputError("sweep", "has no layers to search; expected a network");
    // An objective of a tensor's densities needs the tensor in every layer
    // (else every point was invalid).
    const std::string tensor = SearchObjective::parse(s.objective).densityTensor;
    for (const auto& layer : s.network.layers)
        if (!tensor.empty() && buildProblem(layer).tensorIndex(tensor) < 0)
            throw InputError("objective", "'" + tensor + "' is not a tensor of layer " +
                                              layer.name + "; expected one of every layer's");
    if (s.budget < 1 || s.budget > kMaxSweepBudget)
        throw InputError("budget", "is " + std::to_string(s.budget) +
                                       "; expected evaluations per layer from 1 to 1e9");
    planSweep(s); // no points is an error
}

std::vector<DesignPoint> planSweep(const SweepSpec& s) {
    std::vector<std::vector<std::string>> values;
    if (!s.points.empty()) {
        values = s.points;
    } else {
        const std::uint64_t n = productSize(s.axes);
        const std::uint64_t wanted = s.sample > 0 ? std::min<std::uint64_t>(n, s.sample) : n;
        if (wanted > kMaxSweepPoints)
            throw InputError("sweep", "has " + std::to_string(wanted) +
                                          " points; expected at most 1,000,000 (sample the "
                                          "product, or vary fewer values)");
        if (s.sample > 0 && std::uint64_t(s.sample) < n) {
            // A sample, in product order so that chains still follow the first axis.
            Rng rng(s.sampleSeed);
            std::set<std::uint64_t> drawn;
            while (drawn.size() < std::size_t(s.sample))
                drawn.insert(rng.below(n));
            for (std::uint64_t k : drawn)
                values.push_back(productPoint(s.axes, k));
        } else {
            for (std::uint64_t k = 0; k < n; ++k)
                values.push_back(productPoint(s.axes, k));
        }
    }
    if (values.size() > kMaxSweepPoints)
        throw InputError("sweep", "lists " + std::to_string(values.size()) +
                                      " points; expected at most 1,000,000");
    if (values.empty())
        throw InputError("sweep", "has no points (an axis without values, or an empty list); "
                                  "expected at least one");
    std::vector<DesignPoint> points(values.size());
    std::map<std::vector<std::string>, int> lastOfChain; // by the values of the other axes
    int chains = 0;
    for (std::size_t i = 0; i < values.size(); ++i) {
        DesignPoint& p = points[i];
        p.index = static_cast<int>(i);
        p.values = values[i];
        const std::vector<std::string> rest(values[i].begin() + (values[i].empty() ? 0 : 1),
                                            values[i].end());
        const auto it = lastOfChain.find(rest);
        p.predecessor = it == lastOfChain.end() ? -1 : it->second;
        p.chain = p.predecessor < 0 ? chains++ : points[std::size_t(p.predecessor)].chain;
        lastOfChain[rest] = p.index;
    }
    return points;
}

Architecture pointArchitecture(const SweepSpec& s, const DesignPoint& p) {
    Architecture a = s.base;
    for (std::size_t i = 0; i < s.axes.size(); ++i)
        applySweepParameter(a, s.axes[i].parameter, p.values[i]);
    validateArchitecture(a);
    applyEstimates(a);
    return a;
}

SweepShard parseSweepShard(const std::string& text) {
    const auto slash = text.find('/');
    SweepShard shard;
    try {
        if (slash == std::string::npos)
            throw std::invalid_argument(text);
        std::size_t used = 0;
        shard.index = std::stoi(text.substr(0, slash), &used);
        if (used != slash)
            throw std::invalid_argument(text);
        shard.count = std::stoi(text.substr(slash + 1), &used);
        if (used != text.size() - slash - 1)
            throw std::invalid_argument(text);
    } catch (const std::exception&) {
        throw InputError("--shard", "is '" + text + "'; expected I/N, as 0/4");
    }
    if (shard.count < 1 || shard.index < 0 || shard.index >= shard.count)
        throw InputError("--shard", "is '" + text + "'; expected I/N with 0 <= I < N");
    return shard;
}

Json toJson(const SweepSpec& s) {
    Json axes = Json::array();
    for (const auto& a : s.axes)
        axes.push_back({{"parameter", a.parameter}, {"values", a.values}});
    Json j = {{"format", "mapwright.sweep"},
              {"version", kFormatVersion},
              {"architecture", toJson(s.base)},
              {"workload", toJson(s.network)},
              {"vary", axes}};
    if (!s.points.empty())
        j["points"] = s.points;
    if (s.sample > 0)
        j["sample"] = {{"count", s.sample}, {"seed", s.sampleSeed}};
    j["searcher"] = s.searcher;
    j["budget"] = s.budget;
    j["objective"] = s.objective;
    j["seed"] = s.seed;
    if (!s.params.empty())
        j["params"] = s.params;
    if (!s.constraints.is_null())
        j["constraints"] = s.constraints;
    return j;
}

Json readSweepConstraints(const std::string& path) {
    if (isTimeloopFileName(path))
        throw InputError(path, "expected mapwright.constraints JSON: a sweep keeps its "
                               "constraints in its database, and Timeloop's name one "
                               "layer's factors (search and network read them)");
    return readJsonFile(path);
}

namespace {

SweepSpec sweepSpecFromJsonAt(const Json& j, const std::string& file, const std::string& baseDir,
                              bool checkSettings) {
    const std::string where = "$";
    checkFormat(j, "mapwright.sweep", where);
    json_fields::onlyKeys(j, where,
                          {"format", "version", "description", "architecture", "workload", "vary",
                           "points", "sample", "searcher", "budget", "objective", "seed", "params",
                           "constraints"});
    SweepSpec s;
    auto resolve = [&](const std::string& p) {
        const std::filesystem::path path(p);
        return path.is_absolute() || baseDir.empty()
                   ? p
                   : (std::filesystem::path(baseDir) / p).string();
    };
    // A field's file, or its embedded object, read with errors placed at the
    // field ("sweep.json: $.architecture: eyeriss.json: ...").
    auto within = [](const std::string& at, auto read) {
        try {
            return read();
        } catch (const InputError& e) {
            throw e.within(at);
        }
    };
    const Json& arch = member(j, "architecture", where);
    s.base = within(where + ".architecture", [&] {
        return arch.is_string() ? loadArchitecture(resolve(arch.get<std::string>()))
                                : architectureFromJson(arch);
    });
    const Json& work = member(j, "workload", where);
    s.network = within(where + ".workload", [&] {
        return work.is_string() ? loadNetworkFile(resolve(work.get<std::string>()), {}, &s.notes)
                                : networkFromJson(work);
    });
    const Json& vary = arrayMember(j, "vary", where);
    for (std::size_t i = 0; i < vary.size(); ++i) {
        const std::string at = where + ".vary[" + std::to_string(i) + "]";
        SweepAxis axis;
        json_fields::onlyKeys(vary[i], at, {"parameter", "values"});
        axis.parameter = required<std::string>(vary[i], "parameter", at);
        const Json& values = arrayMember(vary[i], "values", at);
        for (std::size_t k = 0; k < values.size(); ++k)
            axis.values.push_back(valueText(values[k], at + ".values[" + std::to_string(k) + "]"));
        s.axes.push_back(axis);
    }
    s.specFile = file;
    s.specAxes = s.axes.size();
    if (j.contains("points")) {
        const Json& pts = arrayMember(j, "points", where);
        if (pts.empty())
            throw InputError(where + ".points",
                             "is empty; expected at least one point (or no \"points\", for "
                             "every combination of the values varied)");
        for (std::size_t i = 0; i < pts.size(); ++i) {
            const std::string at = where + ".points[" + std::to_string(i) + "]";
            std::vector<std::string> values;
            if (pts[i].is_object()) { // {"parameter": value, ...}
                for (const auto& axis : s.axes) {
                    if (!pts[i].contains(axis.parameter))
                        throw InputError(at, "has no value for " + axis.parameter);
                    values.push_back(
                        valueText(pts[i].at(axis.parameter), at + "." + axis.parameter));
                }
                if (pts[i].size() != s.axes.size())
                    throw InputError(at, "names a parameter the sweep does not vary");
            } else if (pts[i].is_array()) {
                for (std::size_t k = 0; k < pts[i].size(); ++k)
                    values.push_back(valueText(pts[i][k], at + "[" + std::to_string(k) + "]"));
            } else {
                throw InputError(at, "expected an object {parameter: value} or an array of values");
            }
            if (values.size() != s.axes.size())
                throw InputError(at, "gives " + std::to_string(values.size()) +
                                         " values; expected one per axis of vary (" +
                                         std::to_string(s.axes.size()) + ")");
            s.points.push_back(values);
        }
    }
    if (j.contains("sample")) {
        if (!s.points.empty())
            throw InputError(where + ".sample", "cannot draw from a sweep that lists its points; "
                                                "expected points or sample, not both");
        const Json& sm = j.at("sample");
        json_fields::onlyKeys(sm, where + ".sample", {"count", "seed"});
        s.sample = required<int>(sm, "count", where + ".sample");
        if (s.sample < 1)
            throw InputError(where + ".sample.count", "expected a count >= 1");
        s.sampleSeed = optional<std::uint64_t>(sm, "seed", where + ".sample", 1);
    }
    // Checked at their paths: the command line's checks would name its options.
    s.searcher = optional<std::string>(j, "searcher", where, s.searcher);
    s.budget = optional<std::int64_t>(j, "budget", where, s.budget);
    s.objective = optional<std::string>(j, "objective", where, s.objective);
    if (checkSettings)
        checkSweepSettings(s, [&where](const std::string& field) { return where + "." + field; });
    s.seed = optional<std::uint64_t>(j, "seed", where, s.seed);
    if (j.contains("params")) {
        const Json& p = j.at("params");
        if (!p.is_object())
            throw InputError(where + ".params", "expected an object {name: number}");
        for (const auto& [k, v] : p.items())
            s.params[k] = as<double>(v, where + ".params." + k);
    }
    if (j.contains("constraints") && !j.at("constraints").is_null()) {
        const Json& c = j.at("constraints");
        s.constraints =
            c.is_string()
                ? within(where + ".constraints",
                         [&] { return readSweepConstraints(resolve(c.get<std::string>())); })
                : c;
    }
    return s;
}

} // namespace

void checkSweepSettings(const SweepSpec& s,
                        const std::function<std::string(const std::string&)>& whereOf) {
    auto checkedAt = [&whereOf](const std::string& field, auto check) {
        try {
            check();
        } catch (const InputError& e) {
            throw InputError(whereOf(field), e.detail());
        }
    };
    checkedAt("searcher", [&] { makeSearcher(s.searcher); });
    if (s.budget < 1 || s.budget > kMaxSweepBudget)
        throw InputError(whereOf("budget"), "is " + std::to_string(s.budget) +
                                                "; expected evaluations per layer from 1 to 1e9");
    checkedAt("objective", [&] { SearchObjective::parse(s.objective); });
}

SweepSpec sweepSpecFromJson(const Json& j, const std::string& where, const std::string& baseDir,
                            bool checkSettings) {
    try {
        return sweepSpecFromJsonAt(j, where, baseDir, checkSettings);
    } catch (const InputError& e) {
        throw e.within(where);
    }
}

} // namespace mw
