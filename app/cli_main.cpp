// mapwright-cli: a thin front end over the engine. Every command exits non-zero
// with a one-line reason on bad input.
#include "bench/model_bench.h"
#include "cli_common.h"
#include "cli_interrupt.h"
#include "common/error.h"
#include "io/json_io.h"
#include "io/timeloop/timeloop.h"
#include "mapping/mapping.h"
#include "model/cost_model.h"
#include "workload/presets.h"

#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace cli;

constexpr const char* kUsage =
    "usage: mapwright-cli <command> [options]\n"
    "commands:\n"
    "  evaluate --arch A.json --workload W.json [--layer NAME] --mapping M.json|M.yaml [--json]\n"
    "  import-timeloop FILE.yaml... [--set NAME=VALUE]... --out DIR   (Timeloop v0.4: arch,\n"
    "         problem, mapping, constraints, mapper, ERT, ART as users write them (the\n"
    "         front end's node lists too), input.yaml ERT.yaml [map.yaml], or a Jinja2 top\n"
    "         file such as top.yaml.jinja2 with its parse data in --set)\n"
    "  export-timeloop --arch A.json --workload W.json [--layer NAME] [--mapping M.json|M.yaml]\n"
    "         [--constraints C.json|C.yaml] [--objective O] [--victory N] [--timeout N]\n"
    "         --out DIR\n"
    "  estimate --arch A.json | --reference DIR... [--tolerance 0.3]\n"
    "  import-onnx MODEL.onnx --out NET.json [--batch N]\n"
    "  bench model [--arch A.json] [--runs N] [--seconds S] [--json]\n"
    "  search --list\n"
    "  search --arch A --workload W [--layer L] --searcher NAME [--budget N] [--seconds S]\n"
    "         [--seed K] [--objective edp|energy|cycles|weighted:A,B] [--threads T]\n"
    "         [--param NAME=VALUE ...] [--constraints C.json|C.yaml] [--model-dir DIR]\n"
    "         [--intrinsic matmul:IxJxK|systolic:RxCxK --intrinsic-level LEVEL\n"
    "          [--intrinsic-match K]] --out DIR\n"
    "  intrinsic --workload W [--layer L] --intrinsic matmul:16x16x16\n"
    "  train-surrogate --arch A --workload W [--layer L] [--samples N] [--epochs E]\n"
    "         [--paper-layers [--width-divisor D]] [--threads T] [--seed K]\n"
    "         [--model-dir DIR | --out FILE]\n"
    "  compare --arch A --workload W [--layer L] --searchers a,b,c [--seeds 5] [--budget N]\n"
    "          [--seconds S] [--seed K] [--objective O] [--threads T]\n"
    "          [--constraints C.json|C.yaml]\n"
    "          [--out DIR]\n"
    "  network --arch A --workload W --searcher NAME [--budget N] [--seconds S] [--seed K]\n"
    "          [--warm-start] [--threads T] [--constraints C.json|C.yaml] [--out DIR]\n"
    "  sweep --arch BASE.json --workload NET.json|MODEL.onnx --vary PARAM=V1,V2,... [--vary ...]\n"
    "        [--spec SWEEP.json] [--sample N [--sample-seed K]] --searcher NAME --budget N\n"
    "        [--objective O] [--seed K] [--param K=V]... [--constraints C.json] [--threads T]\n"
    "        --db RESULTS.sqlite [--resume] [--shard I/N]   (also under mpirun, where\n"
    "        [--coordinator-threads N] sets rank 0's own threads; 0: it only hands out points)\n"
    "  sweep report RESULTS.sqlite [--metrics energy,cycles[,area]] [--csv F] [--plot F.png|pdf]\n"
    "  sweep merge OUT.sqlite SHARD.sqlite...\n"
    "  bench search [--arch A.json] [--searchers a,b] [--param K=V]... [--seconds S] [--json]\n"
    "  bench optimal --arch A --workload NET [--constraints C.json|C.yaml] [--searchers a,b]\n"
    "         [--seconds S] [--early S] [--prove-seconds S] [--threads T] [--out OUT.json]\n"
    "         (per distinct layer: the proven optimum, its proof time, each searcher's\n"
    "          distance above it after --early and --seconds)\n"
    "  parity-cases --arch A --workload W [--layer L] [--random N] [--raw N] [--invalid N]\n"
    "         [--searchers a,b --budget N [--constraints C.json|C.yaml] [--model-dir DIR]]\n"
    "         [--seed K] --out DIR   (Timeloop inputs for the differential harness,\n"
    "         tests/parity/regenerate.py)\n"
    "A workload W is our JSON, an ONNX model or a Timeloop problem (.yaml: one layer);\n"
    "constraints C are our JSON or Timeloop's (.yaml, read against each layer; a sweep's: JSON).\n";

struct Loaded {
    mw::Architecture arch;
    mw::Problem problem;
    mw::Mapping mapping;
};

Loaded loadCase(const Args& args) {
    Loaded c;
    c.arch = mw::loadArchitecture(args.get("arch"));
    c.problem = loadProblem(args);
    std::vector<std::string> notes;
    c.mapping = mw::loadMapping(args.get("mapping"), c.problem, c.arch, &notes);
    for (const std::string& n : notes)
        std::cerr << "note: " << n << "\n";
    return c;
}

std::string fmt(double v, int precision = 2) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(precision) << v;
    return s.str();
}

int cmdEvaluate(const Args& args) {
    const Loaded c = loadCase(args);
    const mw::Evaluation e = mw::evaluate(c.problem, c.arch, c.mapping);
    if (args.flag("json")) {
        std::cout << mw::toJson(e, c.problem, c.arch).dump(1) << "\n";
        return e.valid ? 0 : 1;
    }
    std::vector<std::vector<std::int64_t>> tiles;
    if (e.valid)
        for (int l = 0; l < e.numLevels; ++l) {
            tiles.emplace_back();
            for (int t = 0; t < e.numTensors; ++t)
                tiles.back().push_back(e.levels[l].tensors[t].tile);
        }
    std::cout << mw::renderLoopNest(c.problem, c.arch, c.mapping, tiles) << "\n";
    if (!e.valid) {
        std::cout << "INVALID mapping:\n";
        for (const auto& v : mw::describeViolations(e, c.problem, c.arch))
            std::cout << "  - " << v << "\n";
        return 1;
    }
    std::cout << std::left << std::setw(18) << "level" << std::setw(10) << "tensor" << std::right
              << std::setw(12) << "tile" << std::setw(16) << "reads" << std::setw(14) << "fills"
              << std::setw(16) << "updates" << std::setw(18) << "energy (pJ)"
              << "\n";
    for (int l = 0; l < e.numLevels; ++l) {
        const auto& ls = e.levels[l];
        for (int t = 0; t < e.numTensors; ++t) {
            const auto& ts = ls.tensors[t];
            if (!ts.kept)
                continue;
            std::cout << std::left << std::setw(18) << c.arch.levels[l].name << std::setw(10)
                      << c.problem.tensors[t].name << std::right << std::setw(12) << ts.tile
                      << std::setw(16) << ts.reads << std::setw(14) << ts.fills << std::setw(16)
                      << ts.updates << std::setw(18) << fmt(ts.energy) << "\n";
        }
        if (ls.leakEnergy > 0)
            std::cout << std::left << std::setw(18) << c.arch.levels[l].name << std::setw(10)
                      << "(leak)" << std::right << std::setw(76) << fmt(ls.leakEnergy) << "\n";
    }
    std::cout << std::left << std::setw(18) << c.arch.compute.name << std::setw(10) << "(MACs)"
              << std::right << std::setw(76) << fmt(e.computeEnergy) << "\n\n";
    std::cout << "computes     " << e.computes << "\n"
              << "cycles       " << e.cycles << "\n"
              << "utilization  " << fmt(100.0 * e.utilization) << " %\n"
              << "energy       " << fmt(e.energy * 1e-6, 4) << " uJ\n"
              << "EDP          " << std::scientific << std::setprecision(4) << e.edp
              << " J*cycle\n";
    return 0;
}

int cmdBench(const Args& args) {
    if (!args.positional.empty() && args.positional[0] == "search")
        return cmdBenchSearch(args);
    if (!args.positional.empty() && args.positional[0] == "optimal")
        return cmdBenchOptimal(args);
    if (args.positional.empty() || args.positional[0] != "model")
        throw InputError("bench", "expected 'bench model', 'bench search' or 'bench optimal'");
    const std::string archPath = args.opt("arch", findSample("architectures/eyeriss_like.json"));
    const mw::Architecture arch = mw::loadArchitecture(archPath);
    const int runs = int(wholeNumber(args, "runs", 7, 1, 1000));
    const double seconds = number(args, "seconds", 0.4);
    if (seconds <= 0)
        throw InputError("--seconds",
                         "is '" + args.get("seconds") + "'; expected a positive number");
    const auto r = mw::benchModel(arch, runs, seconds, interruptFlag());
    if (r.runs == 0) {
        std::cout << "interrupted  before a run finished; nothing measured\n";
        return kExitInterrupted;
    }
    if (args.flag("json")) {
        std::cout << json{{"benchmark", "model"},
                          {"architecture", arch.name},
                          {"threads", 1},
                          {"evaluations_per_second", r.evaluationsPerSecond},
                          {"min_per_second", r.minPerSecond},
                          {"max_per_second", r.maxPerSecond},
                          {"repeated_set_evaluations_per_second", r.repeatedSetPerSecond},
                          {"runs", r.runs},
                          {"evaluations_per_run", r.evaluationsPerRun},
                          {"layers", r.layers},
                          {"mappings_per_layer", r.mappingsPerLayer}}
                         .dump(1)
                  << "\n";
    } else {
        std::cout << "cost model on '" << arch.name << "', 1 thread, " << r.layers
                  << " conv layers x " << r.mappingsPerLayer
                  << " distinct legal mappings, each evaluated once per pass, median of " << r.runs
                  << " runs\n"
                  << "evaluations_per_second " << std::fixed << std::setprecision(0)
                  << r.evaluationsPerSecond << "\n"
                  << "(min " << r.minPerSecond << ", max " << r.maxPerSecond << ")\n"
                  << "repeated set: " << r.repeatedSetPerSecond << " evaluations per second over "
                  << mw::ModelBench::kRepeatedPerLayer
                  << " mappings per layer evaluated again and again (the branch predictor "
                     "learns them; no search repeats a mapping)\n";
    }
    if (interrupted()) {
        std::cout << "interrupted  after " << r.runs << " runs\n";
        return kExitInterrupted;
    }
    return 0;
}

// Each command (and subcommand: bench's, sweep's) and the options it takes
// (a workload may be an ONNX model: --batch).
struct Command {
    const char* name;
    const char* sub; // its first word, or none (sweep: the sweep itself)
    int (*run)(const Args&);
    CommandOptions options;
};

const std::vector<Command>& commands() {
    auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
        a.insert(a.end(), b.begin(), b.end());
        return a;
    };
    const std::vector<std::string> workload = {"workload", "layer", "batch"};
    const std::vector<std::string> settings = {"budget",  "seconds",   "seed",        "objective",
                                               "threads", "model-dir", "constraints", "out"};
    static const std::vector<Command> table = {
        {"evaluate",
         nullptr,
         cmdEvaluate,
         {"evaluate", {"json"}, with({"arch", "mapping"}, workload), {}}},
        {"import-timeloop", nullptr, cmdImportTimeloop, {"import-timeloop", {}, {"out"}, {"set"}}},
        {"export-timeloop",
         nullptr,
         cmdExportTimeloop,
         {"export-timeloop",
          {},
          with({"arch", "mapping", "constraints", "objective", "victory", "timeout", "threads",
                "out"},
               workload),
          {}}},
        {"import-onnx", nullptr, cmdImportOnnx, {"import-onnx", {}, {"out", "batch"}, {}}},
        {"estimate", nullptr, cmdEstimate, {"estimate", {}, {"arch", "tolerance"}, {"reference"}}},
        {"bench", "model", cmdBench, {"bench model", {"json"}, {"arch", "runs", "seconds"}, {}}},
        {"bench",
         "search",
         cmdBench,
         {"bench search", {"json"}, {"arch", "searchers", "seconds"}, {"param"}}},
        {"bench",
         "optimal",
         cmdBench,
         {"bench optimal",
          {},
          {"arch", "workload", "batch", "constraints", "searchers", "seconds", "early",
           "prove-seconds", "threads", "objective", "seed", "out"},
          {}}},
        {"bench", nullptr, cmdBench, {"bench", {}, {}, {}}}, // (says what it expects)
        {"search",
         nullptr,
         cmdSearch,
         {"search",
          {"list"},
          with(with({"arch", "searcher", "intrinsic", "intrinsic-level", "intrinsic-match"},
                    settings),
               workload),
          {"param"}}},
        {"intrinsic", nullptr, cmdIntrinsic, {"intrinsic", {}, with({"intrinsic"}, workload), {}}},
        {"train-surrogate",
         nullptr,
         cmdTrainSurrogate,
         {"train-surrogate",
          {"paper-layers"},
          with(
              {"arch", "samples", "epochs", "width-divisor", "threads", "seed", "model-dir", "out"},
              workload),
          {}}},
        {"compare",
         nullptr,
         cmdCompare,
         {"compare",
          {},
          with(with({"arch", "searchers", "seeds"}, settings), workload),
          {"param"}}},
        {"sweep", "report", cmdSweep, {"sweep report", {}, {"metrics", "csv", "plot"}, {}}},
        {"sweep", "merge", cmdSweep, {"sweep merge", {}, {}, {}}},
        {"sweep",
         nullptr,
         cmdSweep,
         {"sweep",
          {"resume"},
          {"spec", "arch", "workload", "batch", "sample", "sample-seed", "searcher", "seconds",
           "budget", "objective", "seed", "constraints", "db", "shard", "threads",
           "coordinator-threads"},
          {"param", "vary"}}},
        {"network",
         nullptr,
         cmdNetwork,
         {"network",
          {"warm-start"},
          with({"arch", "workload", "batch", "searcher"}, settings),
          {"param"}}},
        {"parity-cases",
         nullptr,
         cmdParityCases,
         {"parity-cases",
          {},
          with({"arch", "random", "raw", "invalid", "searchers", "budget", "constraints",
                "model-dir", "seed", "threads", "out"},
               workload),
          {}}},
    };
    return table;
}

// An output that names one of the command's inputs would replace it (sweep
// report R.sqlite --plot R.sqlite once wrote a PNG over the results): refused
// before anything runs. Outputs are --out, --csv and --plot; inputs, every
// other option's value and the positional files. (--db is both, by design.)
void refuseOutputsOverInputs(const Args& args) {
    namespace fs = std::filesystem;
    std::vector<std::string> inputs = args.positional;
    for (const auto& [key, value] : args.options)
        if (key != "out" && key != "csv" && key != "plot" && key != "db")
            inputs.push_back(value);
    for (const auto& [key, values] : args.repeated)
        inputs.insert(inputs.end(), values.begin(), values.end());
    for (const char* output : {"out", "csv", "plot"}) {
        if (!args.has(output))
            continue;
        const std::string out = args.get(output);
        std::error_code ec;
        for (const std::string& in : inputs)
            if (fs::is_regular_file(in, ec) && fs::exists(out, ec) && fs::equivalent(in, out, ec))
                throw InputError("--" + std::string(output),
                                 "'" + out + "' is the input '" + in +
                                     "'; expected another path (writing would replace it)");
    }
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
        std::cout << kUsage;
        return argc < 2 ? 2 : 0;
    }
    const std::string cmd = argv[1];
    cli::installInterruptHandler();
    try {
        // (A subcommand's entry first, then the command's own.)
        const std::string first = argc > 2 ? argv[2] : "";
        for (const Command& c : commands())
            if (cmd == c.name && (!c.sub || first == c.sub)) {
                const Args args = parseArgs(argc, argv, 2, c.options);
                refuseOutputsOverInputs(args);
                return c.run(args);
            }
        std::string names;
        for (const Command& c : commands())
            if (!c.sub)
                names += (names.empty() ? "" : ", ") + std::string(c.name);
        std::cerr << "error: unknown command '" << cmd << "'; expected one of " << names
                  << " (see --help)\n";
        return 2;
    } catch (const InputError& e) {
        std::cerr << "error: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << "\n";
        return 2;
    }
}
