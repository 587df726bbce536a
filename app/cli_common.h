#pragma once
// Helpers shared by the CLI's commands: options, bundled samples, loading.
#include "common/error.h"
#include "common/number_text.h"
#include "io/json_io.h"
#include "io/onnx_import.h"
#include "workload/presets.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#ifndef MAPWRIGHT_SOURCE_DIR
#define MAPWRIGHT_SOURCE_DIR "."
#endif

namespace cli {

using mw::InputError;
using json = mw::Json;

// Options of the form --key value and bare --flag; everything else is positional.
// Keys listed as repeatable collect every value.
struct Args {
    std::vector<std::string> positional;
    std::map<std::string, std::string> options;
    std::map<std::string, std::vector<std::string>> repeated;
    std::vector<std::string> flags;

    bool flag(const std::string& f) const {
        return std::find(flags.begin(), flags.end(), f) != flags.end();
    }
    bool has(const std::string& key) const { return options.count(key) > 0; }
    std::string get(const std::string& key) const {
        auto it = options.find(key);
        if (it == options.end())
            throw InputError("--" + key, "is required");
        return it->second;
    }
    std::string opt(const std::string& key, const std::string& fallback = "") const {
        auto it = options.find(key);
        return it == options.end() ? fallback : it->second;
    }
    std::vector<std::string> all(const std::string& key) const {
        auto it = repeated.find(key);
        return it == repeated.end() ? std::vector<std::string>{} : it->second;
    }
};

// The options a command takes: flags (no value), options taking a value once,
// and options taking one each time they are given.
struct CommandOptions {
    std::string command;
    std::vector<std::string> flags, values, repeatable;
};

// Options given as --name value or --name=value; a name the command does
// not take is refused (a misspelt --constraint would otherwise search the
// whole space in silence), and so are a value that is the next option and
// two different values of an option that takes one.
inline Args parseArgs(int argc, char** argv, int first, const CommandOptions& known) {
    auto has = [](const std::vector<std::string>& names, const std::string& key) {
        return std::find(names.begin(), names.end(), key) != names.end();
    };
    Args a;
    for (int i = first; i < argc; ++i) {
        std::string s = argv[i];
        if (s.rfind("--", 0) != 0 || s.size() == 2) {
            a.positional.push_back(s);
            continue;
        }
        std::string key = s.substr(2);
        std::optional<std::string> value;
        if (const auto eq = key.find('='); eq != std::string::npos) {
            value = key.substr(eq + 1);
            key.resize(eq);
        }
        if (has(known.flags, key)) {
            if (value)
                throw InputError("--" + key, "takes no value");
            a.flags.push_back(key);
            continue;
        }
        if (!has(known.values, key) && !has(known.repeatable, key)) {
            std::vector<std::string> all = known.flags;
            all.insert(all.end(), known.values.begin(), known.values.end());
            all.insert(all.end(), known.repeatable.begin(), known.repeatable.end());
            const std::string near = mw::nearestName(key, all);
            throw InputError("--" + key,
                             "is not an option of '" + known.command + "'" +
                                 (near.empty() ? "" : " (did you mean --" + near + "?)") +
                                 "; see mapwright-cli --help");
        }
        if (!value) {
            if (i + 1 >= argc || std::string(argv[i + 1]).rfind("--", 0) == 0)
                throw InputError("--" + key, "expects a value");
            value = argv[++i];
        }
        if (has(known.repeatable, key)) {
            a.repeated[key].push_back(*value);
            continue;
        }
        // (The last of two once held in silence.)
        if (const auto it = a.options.find(key); it != a.options.end() && it->second != *value)
            throw InputError("--" + key, "is given twice ('" + it->second + "', then '" + *value +
                                             "'); expected it once");
        a.options[key] = *value;
    }
    return a;
}

// A number option, with the option named in the error (decimalNumber: "nan",
// "inf" and "0x10" are refused).
inline double number(const Args& a, const std::string& key, double fallback) {
    if (!a.has(key))
        return fallback;
    const std::string v = a.get(key);
    const std::optional<double> d = mw::decimalNumber(v);
    if (!d)
        throw InputError("--" + key, "is '" + v + "'; expected a finite decimal number");
    return *d;
}

// A whole-number option from `least` to `most` ("1e6" is a million), with the
// option named in the error: counts, seeds and thread numbers, which a cast
// would otherwise wrap.
// The largest seed and evaluation budget an option takes: 2^53, the last
// whole number a double holds exactly.
inline constexpr std::int64_t kMaxWholeOption = std::int64_t(1) << 53;

inline std::int64_t wholeNumber(const Args& a, const std::string& key, std::int64_t fallback,
                                std::int64_t least, std::int64_t most) {
    if (!a.has(key))
        return fallback;
    const double v = number(a, key, 0.0);
    if (!(v >= double(least) && v <= double(most)) || v != std::floor(v))
        throw InputError("--" + key, "is '" + a.get(key) + "'; expected a whole number from " +
                                         std::to_string(least) + " to " +
                                         (most == kMaxWholeOption ? "2^53" : std::to_string(most)));
    return static_cast<std::int64_t>(v);
}

// Numbers as the commands print them: fixed digits, or four significant in
// scientific notation.
inline std::string fixedText(double v, int digits) {
    std::ostringstream o;
    o << std::fixed << std::setprecision(digits) << v;
    return o.str();
}
inline std::string sci(double v) {
    std::ostringstream o;
    o << std::scientific << std::setprecision(4) << v;
    return o.str();
}

// --out as a folder, made (with its parents) before any work is done, so that
// a path that cannot be one fails at once, naming the option, rather than
// after a network's layers have been searched.
inline std::string outputFolder(const Args& a) {
    const std::string out = a.get("out");
    std::error_code ec;
    if (out.empty())
        throw InputError("--out", "is empty; expected a folder");
    std::filesystem::create_directories(out, ec);
    if (ec || !std::filesystem::is_directory(out))
        throw InputError("--out", "'" + out + "' cannot be made a folder (" +
                                      (ec ? ec.message() : std::string("a file is there")) + ")");
    return out;
}

// --out as a file, checked before any work: its folder exists and it is not
// a folder itself (the file is written when the work is done).
inline std::string outputFile(const Args& a) {
    const std::string out = a.get("out");
    std::error_code ec;
    const std::filesystem::path parent = std::filesystem::path(out).parent_path();
    if (out.empty() || std::filesystem::is_directory(out, ec))
        throw InputError("--out", "'" + out + "': expected a file to write, not a folder");
    if (!parent.empty() && !std::filesystem::is_directory(parent, ec))
        throw InputError("--out",
                         "'" + out + "': its folder '" + parent.string() + "' does not exist");
    return out;
}

inline std::string findSample(const std::string& relative) {
    const std::vector<std::filesystem::path> roots = {
        std::filesystem::path(MAPWRIGHT_SOURCE_DIR) / "samples", "samples", "../samples",
        "/usr/share/mapwright/samples"};
    for (const auto& r : roots)
        if (std::filesystem::exists(r / relative))
            return (r / relative).string();
    throw InputError(relative,
                     "bundled sample not found (looked in the source tree and ./samples)");
}

// --batch N for ONNX models whose batch is dynamic.
mw::OnnxImportOptions onnxOptions(const Args& args);
// --workload (our JSON, an ONNX model, a Timeloop problem), what an import
// noted said on stderr.
mw::Network loadWorkload(const Args& args);

// The --layer of --workload (its only layer when not given).
inline mw::Problem loadProblem(const Args& args) {
    const std::string path = args.get("workload");
    const mw::Network net = loadWorkload(args);
    try {
        return mw::buildProblem(mw::selectLayer(net, args.opt("layer")));
    } catch (const InputError& e) {
        throw e.within(path);
    }
}

// --constraints for one problem as a mapwright.constraints JSON (null when
// not given): ours, or Timeloop's YAML read against the problem, what its
// import dropped or doubts said on stderr.
mw::Json constraintsJsonFor(const Args& args, const mw::Problem& p, const mw::Architecture& a);
// The same, read.
mw::MapSpaceConstraints constraintsFor(const Args& args, const mw::Problem& p,
                                       const mw::Architecture& a);
// --constraints read against each distinct layer of a network, all before
// any search (an error names the layer), each note said once; then the
// constraints of a layer's problem. An empty function when not given.
std::function<mw::MapSpaceConstraints(const mw::Problem&)>
constraintsPerLayer(const Args& args, const mw::Network& net, const mw::Architecture& a);
// --param NAME=VALUE (repeatable): searcher hyperparameters.
void addParams(const Args& args, std::map<std::string, double>& params);

int cmdImportTimeloop(const Args& args);
int cmdExportTimeloop(const Args& args);
int cmdEstimate(const Args& args);
int cmdImportOnnx(const Args& args);
int cmdSearch(const Args& args);
int cmdCompare(const Args& args);
int cmdNetwork(const Args& args);
int cmdBenchSearch(const Args& args);
int cmdBenchOptimal(const Args& args);
int cmdIntrinsic(const Args& args);
int cmdTrainSurrogate(const Args& args);
int cmdParityCases(const Args& args);
int cmdSweep(const Args& args);

} // namespace cli
