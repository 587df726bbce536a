// sweep, sweep report, sweep merge.
#include "cli_sweep.h"

#include "cli_interrupt.h"
#include "common/atomic_file.h"
#include "common/text_case.h"
#include "explore/design_space.h"
#include "search/search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <thread>

namespace cli {

namespace {

// The sweep from --spec (a mapwright.sweep file) and the options, which
// override or add to it.
mw::SweepSpec sweepFrom(const Args& args) {
    mw::SweepSpec s;
    bool haveArch = false, haveWorkload = false;
    if (args.has("spec")) {
        const std::string path = args.get("spec");
        s = mw::sweepSpecFromJson(mw::readJsonFile(path), path,
                                  std::filesystem::path(path).parent_path().string(), false);
        for (const auto& n : s.notes)
            std::cerr << "note: " << n << "\n";
        haveArch = haveWorkload = true;
    }
    if (args.has("arch")) {
        s.base = mw::loadArchitecture(args.get("arch"));
        haveArch = true;
    }
    if (args.has("workload")) {
        s.network = loadWorkload(args);
        haveWorkload = true;
    }
    if (!haveArch)
        throw InputError("--arch", "is required (or a --spec file naming the architecture)");
    if (!haveWorkload)
        throw InputError("--workload", "is required (a network JSON or an ONNX model)");
    const auto vary = args.all("vary");
    if (!vary.empty() && !s.points.empty())
        throw InputError("--vary", "cannot add axes to a --spec that lists its points");
    for (const auto& v : vary)
        s.axes.push_back(mw::parseSweepAxis(v));
    if (args.has("sample")) {
        if (!s.points.empty())
            throw InputError("--sample", "cannot draw from a --spec that lists its points; "
                                         "expected one or the other");
        s.sample = int(wholeNumber(args, "sample", 0, 1, 1000000000));
        s.sampleSeed = std::uint64_t(wholeNumber(args, "sample-seed", 1, 0, kMaxWholeOption));
    } else if (args.has("sample-seed")) {
        // (It draws a spec's sample again; with nothing to draw it would do nothing.)
        if (s.sample == 0)
            throw InputError("--sample-seed",
                             "is given without a sample to draw; expected --sample N with it");
        s.sampleSeed =
            std::uint64_t(wholeNumber(args, "sample-seed", s.sampleSeed, 0, kMaxWholeOption));
    }
    s.searcher = args.opt("searcher", s.searcher);
    if (args.has("seconds"))
        throw InputError("--seconds", "a sweep's budget is evaluations (--budget N per layer), so "
                                      "that its results do not depend on the machine's speed");
    if (args.has("budget"))
        s.budget = wholeNumber(args, "budget", 0, 1, mw::kMaxSweepBudget);
    s.objective = args.opt("objective", s.objective);
    if (args.has("seed"))
        s.seed = std::uint64_t(wholeNumber(args, "seed", 1, 0, kMaxWholeOption));
    addParams(args, s.params);
    if (args.has("constraints"))
        s.constraints = mw::readSweepConstraints(args.get("constraints"));
    // Everything checked before any work: searcher, objective, axes, values,
    // constraints against each distinct layer of the base design.
    // The searcher, objective and budget where they were given: the option,
    // else the spec's field (an option overrides a spec's value).
    mw::checkSweepSettings(s, [&args](const std::string& field) {
        return args.has(field) || !args.has("spec") ? "--" + field
                                                    : args.get("spec") + ": $." + field;
    });
    mw::checkSweep(s);
    if (s.sample > 0 && s.points.empty()) {
        const std::size_t all = mw::planSweep(s).size();
        if (all < std::size_t(s.sample))
            std::cerr << "note: the sweep has " << all << (all == 1 ? " point" : " points")
                      << ", fewer than the sample of " << s.sample << "; all are run\n";
    }
    if (!s.constraints.is_null()) {
        const std::string where = args.opt("constraints", "constraints");
        for (const auto& layer : s.network.layers)
            try {
                mw::constraintsFromJson(s.constraints, mw::buildProblem(layer), s.base);
            } catch (const InputError& e) {
                throw e.within(where);
            }
    }
    // A parameter the searcher refuses would make every point invalid:
    // refused before the database.
    const auto given = args.all("param");
    mw::checkSweepParams(s, [&](const std::string& name) {
        const bool onCommandLine = std::any_of(given.begin(), given.end(), [&](const auto& kv) {
            return kv.rfind(name + "=", 0) == 0;
        });
        return onCommandLine || !args.has("spec") ? "--param " + name
                                                  : args.get("spec") + ": $.params." + name;
    });
    return s;
}

std::string valuesText(const mw::SweepSpec& spec, const std::vector<std::string>& values) {
    std::string t;
    for (std::size_t a = 0; a < values.size() && a < spec.axes.size(); ++a)
        t += (t.empty() ? "" : " ") + spec.axes[a].parameter + "=" + values[a];
    return t;
}

// The points of the front as a table.
void printFront(const mw::SweepSpec& spec, const std::vector<mw::PointRecord>& points,
                const std::vector<mw::SweepMetric>& metrics) {
    const auto front = mw::paretoFront(points, metrics);
    std::cout << "pareto front (";
    for (std::size_t i = 0; i < metrics.size(); ++i)
        std::cout << (i ? ", " : "") << mw::toString(metrics[i]);
    std::cout << "): " << front.size() << " of " << points.size() << " points\n"
              << std::setw(6) << "point" << std::setw(13) << "energy mJ" << std::setw(14)
              << "cycles" << std::setw(13) << "EDP" << std::setw(11) << "area mm2"
              << "  design\n";
    for (std::size_t i : front) {
        const mw::PointRecord& r = points[i];
        std::cout << std::setw(6) << r.index << std::setw(13) << fixedText(r.energy * 1e-9, 4)
                  << std::setw(14) << fixedText(r.cycles, 0) << std::setw(13) << sci(r.edp)
                  << std::setw(11) << fixedText(r.area * 1e-6, 3) << "  "
                  << valuesText(spec, r.values) << "\n";
    }
}

std::string csvField(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos)
        return s;
    std::string q = "\"";
    for (char c : s)
        q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

int cmdSweepReport(const Args& args) {
    if (args.positional.size() != 2)
        throw InputError("sweep report", "expected RESULTS.sqlite [--metrics energy,cycles[,area]] "
                                         "[--csv FILE] [--plot FILE.png|FILE.pdf]");
    const std::string path = args.positional[1];
    // The outputs checked before the report: an empty one named nothing in
    // its error, the plot over the CSV kept the plot only, and another
    // extension got PNG bytes under its name.
    for (const char* option : {"csv", "plot"})
        if (args.has(option) && args.get(option).empty())
            throw InputError(std::string("--") + option, "is empty; expected a file to write");
    if (args.has("csv") && args.has("plot")) {
        std::error_code ec;
        if (std::filesystem::weakly_canonical(args.get("csv"), ec) ==
            std::filesystem::weakly_canonical(args.get("plot"), ec))
            throw InputError("--plot", "'" + args.get("plot") +
                                           "' is --csv's file too; expected another file");
    }
    if (args.has("plot")) {
        const std::string ext =
            mw::lowercase(std::filesystem::path(args.get("plot")).extension().string());
        if (ext != ".png" && ext != ".pdf")
            throw InputError("--plot", "'" + args.get("plot") + "': expected a .png or .pdf file");
    }
    const mw::SweepDatabase db = mw::SweepDatabase::open(path);
    const mw::SweepSpec spec = mw::sweepSpecFromJson(db.spec(), path + ": sweep.spec", "", false);
    const auto metrics = mw::parseSweepMetrics(args.opt("metrics", "energy,cycles"), "--metrics");
    std::vector<mw::PointRecord> points;
    for (auto& [index, r] : db.points())
        points.push_back(r);
    const int total = static_cast<int>(mw::planSweep(spec).size());
    int invalid = 0;
    for (const auto& r : points)
        invalid += r.valid ? 0 : 1;
    std::cout << path << ": " << points.size() << " of " << total << " points"
              << (db.shard().empty() ? "" : " (shard " + db.shard() + ")") << ", " << invalid
              << " invalid; " << spec.searcher << ", " << spec.budget << " evaluations per layer, "
              << spec.network.name << " on " << spec.base.name << "\n";
    printFront(spec, points, metrics);
    for (const auto& r : points)
        if (!r.valid)
            std::cout << "invalid " << r.index << "  " << valuesText(spec, r.values) << ": "
                      << r.reason << "\n";
    if (args.has("csv")) {
        const auto front = mw::paretoFront(points, metrics);
        std::ostringstream csv;
        csv << "point";
        for (const auto& a : spec.axes)
            csv << "," << csvField(a.parameter);
        csv << ",valid,energy_mJ,cycles,edp,area_mm2,evaluations,seconds,pareto,reason\n";
        for (std::size_t i = 0; i < points.size(); ++i) {
            const auto& r = points[i];
            csv << r.index;
            for (const auto& v : r.values)
                csv << "," << csvField(v);
            csv << "," << (r.valid ? 1 : 0) << "," << std::setprecision(17) << r.energy * 1e-9
                << "," << r.cycles << "," << r.edp << "," << r.area * 1e-6 << "," << r.evaluations
                << "," << r.seconds << ","
                << (std::find(front.begin(), front.end(), i) != front.end() ? 1 : 0) << ","
                << csvField(r.reason) << "\n";
        }
        mw::writeTextFile(args.get("csv"), csv.str());
        std::cout << "wrote " << args.get("csv") << "\n";
    }
    if (args.has("plot")) {
        if (!sweepPlotAvailable())
            throw InputError("--plot", "this build has no Qt (MAPWRIGHT_BUILD_GUI=OFF); write "
                                       "--csv and plot it elsewhere");
        writeSweepPlot(args.get("plot"), spec, points, metrics);
        std::cout << "wrote " << args.get("plot") << "\n";
    }
    return 0;
}

int cmdSweepMerge(const Args& args) {
    if (args.positional.size() < 3)
        throw InputError("sweep merge", "expected OUT.sqlite SHARD.sqlite...");
    const std::vector<std::string> inputs(args.positional.begin() + 2, args.positional.end());
    const int added = mw::mergeSweepDatabases(args.positional[1], inputs);
    const mw::SweepDatabase out = mw::SweepDatabase::open(args.positional[1]);
    const mw::SweepSpec spec = mw::sweepSpecFromJson(out.spec(), args.positional[1], "", false);
    std::cout << "merged " << inputs.size() << " databases into " << args.positional[1] << ": "
              << added << " points added, " << out.points().size() << " of "
              << mw::planSweep(spec).size() << " points\n";
    return 0;
}

} // namespace

void printPoint(const mw::SweepSpec& spec, const mw::PointRecord& r, int done, int total,
                std::set<std::string>& noted) {
    std::cout << "point " << std::setw(4) << r.index << "  " << std::setw(4) << done << "/" << total
              << "  " << valuesText(spec, r.values) << "  ";
    if (r.valid)
        std::cout << "energy " << fixedText(r.energy * 1e-9, 4) << " mJ  cycles "
                  << fixedText(r.cycles, 0) << "  EDP " << sci(r.edp) << "  area "
                  << fixedText(r.area * 1e-6, 3) << " mm2";
    else
        std::cout << "invalid: " << r.reason;
    std::cout << "  (" << fixedText(r.seconds, 2) << " s)\n" << std::flush;
    for (const std::string& name : r.unreadParams)
        if (noted.insert(name).second)
            std::cerr << "note: parameter '" << name << "' was not read by " << spec.searcher
                      << " (misspelt, or another searcher's); it changed nothing\n";
}

int finishSweep(const SweepRun& run, const mw::SweepDatabase& db, double seconds, bool complete) {
    std::vector<mw::PointRecord> points;
    for (auto& [index, r] : db.points())
        points.push_back(r);
    int invalid = 0;
    for (const auto& r : points)
        invalid += r.valid ? 0 : 1;
    std::cout << "sweep        " << points.size() << " points in " << db.path() << " (" << invalid
              << " invalid), " << fixedText(seconds, 1) << " s\n";
    printFront(run.spec, points, {mw::SweepMetric::Energy, mw::SweepMetric::Cycles});
    if (!complete) {
        std::cout << "interrupted  the points above are saved; --resume continues the sweep\n";
        return kExitInterrupted;
    }
    return 0;
}

int cmdSweep(const Args& args) {
    if (!args.positional.empty() && args.positional[0] == "report")
        return cmdSweepReport(args);
    if (!args.positional.empty() && args.positional[0] == "merge")
        return cmdSweepMerge(args);
    if (!args.positional.empty())
        throw InputError("sweep", "unknown subcommand '" + args.positional[0] +
                                      "'; expected sweep [options], sweep report or sweep merge");
    SweepRun run;
    run.spec = sweepFrom(args);
    run.db = args.get("db");
    if (run.db.empty())
        throw InputError("--db", "is empty; expected the results database's path");
    run.resume = args.flag("resume");
    if (args.has("shard")) {
        run.shardText = args.get("shard");
        run.shard = mw::parseSweepShard(run.shardText);
    }
    // Each process's share of the machine: under mpirun, ranks on one node split it.
    int hardware = std::max(1, int(std::thread::hardware_concurrency()));
    if (const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE"))
        hardware = std::max(1, hardware / std::max(1, std::atoi(local)));
    run.threads = int(wholeNumber(args, "threads", std::min(hardware, mw::kMaxSearchThreads), 1,
                                  mw::kMaxSearchThreads));
    if (args.has("coordinator-threads")) {
        if (!launchedByMpi())
            throw InputError("--coordinator-threads",
                             "sets rank 0's threads under mpirun; without mpirun, --threads "
                             "sets this process's");
        run.coordinatorThreads =
            int(wholeNumber(args, "coordinator-threads", run.threads, 0, mw::kMaxSearchThreads));
    }
    if (launchedByMpi())
        return runSweepMpi(run);

    const auto t0 = std::chrono::steady_clock::now();
    mw::SweepDatabase db =
        mw::SweepDatabase::create(run.db, mw::toJson(run.spec), run.shardText, run.resume);
    std::map<int, mw::PointRecord> finished = db.points();
    const int total =
        static_cast<int>(mw::pendingPoints(run.spec, run.shard, {}).size()); // this shard's
    int done = static_cast<int>(finished.size());
    std::cout << "sweep        " << total << " points"
              << (run.shardText.empty() ? "" : " in shard " + run.shardText) << " (" << done
              << " done before), " << run.spec.network.layers.size() << " layers each, "
              << run.spec.searcher << " at " << run.spec.budget << " evaluations per layer, "
              << threadCount(run.threads) << ", into " << run.db << "\n";
    mw::SweepRunOptions options;
    options.threads = run.threads;
    options.shard = run.shard;
    std::set<std::string> noted; // unread params, said once
    const bool complete = mw::runSweep(
        run.spec, finished, options,
        [&](const mw::PointRecord& r) {
            db.write(r);
            printPoint(run.spec, r, ++done, total, noted);
        },
        interruptFlag());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return finishSweep(run, db, seconds, complete && !interrupted());
}

} // namespace cli
