#pragma once
// Helpers shared by the CLI's commands: options, bundled samples, loading.
#include "common/error.h"
#include "io/json_io.h"
#include "io/onnx_import.h"
#include "workload/presets.h"

#include <algorithm>
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

inline Args parseArgs(int argc, char** argv, int first, const std::vector<std::string>& flagNames,
                      const std::vector<std::string>& repeatable = {}) {
    Args a;
    for (int i = first; i < argc; ++i) {
        std::string s = argv[i];
        if (s.rfind("--", 0) == 0) {
            const std::string key = s.substr(2);
            if (std::find(flagNames.begin(), flagNames.end(), key) != flagNames.end()) {
                a.flags.push_back(key);
                continue;
            }
            if (i + 1 >= argc)
                throw InputError(s, "expects a value");
            if (std::find(repeatable.begin(), repeatable.end(), key) != repeatable.end())
                a.repeated[key].push_back(argv[++i]);
            else
                a.options[key] = argv[++i];
        } else {
            a.positional.push_back(s);
        }
    }
    return a;
}

// A number option, with the option named in the error.
inline double number(const Args& a, const std::string& key, double fallback) {
    if (!a.has(key))
        return fallback;
    const std::string v = a.get(key);
    try {
        std::size_t used = 0;
        const double d = std::stod(v, &used);
        if (used != v.size())
            throw std::invalid_argument(v);
        return d;
    } catch (const std::exception&) {
        throw InputError("--" + key, "is '" + v + "'; expected a number");
    }
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
