// Search commands: search, compare, network and bench search.
#include "bench/model_bench.h"
#include "cli_common.h"
#include "cli_interrupt.h"
#include "cli_progress.h"
#include "common/atomic_file.h"
#include "io/session_io.h"
#include "io/timeloop/timeloop.h"
#include "mapspace/intrinsic.h"
#include "model/cost_model.h"
#include "search/network_search.h"
#include "search/search.h"
#include "search/surrogate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

namespace cli {

namespace {

// A note of reading the constraints file `path`, the file named once (most
// notes of a Timeloop import name it already).
void sayConstraintsNote(const std::string& path, const std::string& note) {
    std::cerr << "note: " << (note.rfind(path, 0) == 0 ? note : path + ": " + note) << "\n";
}

// The map space of a problem under the --constraints read for it: constraints
// the space finds contradictory, or proves empty, are said so, naming the file.
mw::MapSpace constrainedSpace(const Args& args, const mw::Problem& p, const mw::Architecture& a,
                              const mw::MapSpaceConstraints& c) {
    mw::MapSpace space = [&] {
        try {
            return mw::MapSpace(p, a, c);
        } catch (const InputError& e) {
            if (!args.has("constraints") || e.where() != "constraints")
                throw;
            throw InputError(args.get("constraints"), "contradictory constraints: " + e.detail());
        }
    }();
    if (args.has("constraints")) {
        const mw::EmptySpace empty = mw::whyNoLegalMapping(space, 0);
        if (empty.proven)
            throw InputError(args.get("constraints"), "contradictory constraints: " + empty.reason);
    }
    return space;
}

} // namespace

mw::Json constraintsJsonFor(const Args& args, const mw::Problem& p, const mw::Architecture& a) {
    if (!args.has("constraints"))
        return nullptr;
    std::vector<std::string> notes;
    mw::Json c = mw::readConstraintsFile(args.get("constraints"), p, a, notes);
    for (const auto& n : notes)
        sayConstraintsNote(args.get("constraints"), n);
    return c;
}

mw::MapSpaceConstraints constraintsFor(const Args& args, const mw::Problem& p,
                                       const mw::Architecture& a) {
    const mw::Json c = constraintsJsonFor(args, p, a);
    return c.is_null() ? mw::MapSpaceConstraints{} : mw::constraintsFromJson(c, p, a);
}

std::function<mw::MapSpaceConstraints(const mw::Problem&)>
constraintsPerLayer(const Args& args, const mw::Network& net, const mw::Architecture& a) {
    if (!args.has("constraints"))
        return {};
    const std::string path = args.get("constraints");
    // What is wrong with the file itself (unreadable, not JSON) is said of
    // the file, before any layer.
    if (mw::isTimeloopFileName(path))
        mw::readTextFile(path);
    else
        mw::readJsonFile(path);
    // Read against every distinct layer before any search: constraints a
    // layer contradicts stop the command at once, naming the layer, not after
    // the layers before it were searched.
    using Read = std::vector<std::pair<mw::Problem, mw::MapSpaceConstraints>>;
    auto read = std::make_shared<Read>();
    std::set<std::string> said;
    for (const mw::LayerSpec& layer : net.layers) {
        const mw::Problem p = mw::buildProblem(layer);
        if (std::any_of(read->begin(), read->end(),
                        [&](const auto& r) { return mw::sameShape(r.first, p); }))
            continue;
        std::vector<std::string> notes;
        try {
            mw::MapSpaceConstraints c = mw::loadConstraints(path, p, a, &notes);
            constrainedSpace(args, p, a, c);
            read->emplace_back(p, std::move(c));
        } catch (const InputError& e) {
            throw InputError(e.where(), e.detail() + " (for layer " + layer.name + ")");
        }
        for (const auto& n : notes)
            if (said.insert(n).second)
                sayConstraintsNote(path, n);
    }
    return [read](const mw::Problem& p) {
        for (const auto& [q, c] : *read)
            if (mw::sameShape(p, q))
                return c;
        throw InputError("--constraints", "no constraints read for a layer of shape '" + p.name +
                                              "' (a layer of another network?)");
    };
}

void addParams(const Args& args, std::map<std::string, double>& params) {
    std::set<std::string> given; // on this command line (a spec's params may be overridden)
    for (const auto& kv : args.all("param")) {
        const auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0)
            throw InputError("--param", "'" + kv + "': expected NAME=VALUE");
        const std::optional<double> value = mw::decimalNumber(kv.substr(eq + 1));
        if (!value)
            throw InputError("--param", "'" + kv + "': expected a finite decimal number");
        const std::string name = kv.substr(0, eq);
        // (Given twice, the last once held in silence.)
        if (!given.insert(name).second && params.at(name) != *value)
            throw InputError("--param", "'" + name + "' is given twice, with " + kv.substr(eq + 1) +
                                            " the second time; expected one value");
        params[name] = *value;
    }
}

namespace {

mw::SearchSettings settingsFrom(const Args& args) {
    mw::SearchSettings s;
    const double seconds = number(args, "seconds", 0.0);
    if (seconds < 0)
        throw InputError("--seconds", "expected a positive number of seconds");
    s.budget.evaluations = wholeNumber(args, "budget", 0, 0, kMaxWholeOption);
    s.budget.seconds = seconds;
    if (s.budget.evaluations == 0 && s.budget.seconds == 0)
        throw InputError("--budget", "give --budget N (evaluations), --seconds S, or both");
    s.seed = std::uint64_t(wholeNumber(args, "seed", 1, 0, kMaxWholeOption));
    s.objective = mw::SearchObjective::parse(args.opt("objective", "edp"));
    s.threads = int(wholeNumber(args, "threads", 1, 1, mw::kMaxSearchThreads));
    s.modelDir = args.opt("model-dir", "");
    addParams(args, s.params);
    return s;
}

// The "stopped" field of every result file: whether Ctrl-C cut the work short.
const char* stoppedBy() {
    return interrupted() ? "interrupted" : "finished";
}

// Seconds until the best came within 5 % of the final best.
double timeToWithin(const mw::SearchResult& r, double fraction) {
    if (!r.found)
        return NAN;
    for (const auto& t : r.trace)
        if (t.best <= r.bestCost * (1.0 + fraction))
            return t.seconds;
    return r.seconds;
}

json resultJson(const mw::SearchResult& r, const mw::SearchSettings& s, const mw::LowerBound& lb,
                const mw::Problem& p, const mw::Architecture& a) {
    json j = {{"format", "mapwright.search-result"},
              {"version", mw::kFormatVersion},
              {"searcher", r.searcher},
              {"seed", s.seed},
              {"objective", s.objective.name()},
              {"budget_evaluations", s.budget.evaluations},
              {"budget_seconds", s.budget.seconds},
              {"threads", s.threads},
              {"found", r.found},
              {"best_objective", r.found ? r.bestCost : 0.0},
              {"lower_bound_objective", lb.objective},
              {"objective_over_lower_bound", r.found ? r.bestCost / lb.objective : 0.0},
              {"edp_over_lower_bound", r.found ? r.bestEvaluation.edp / lb.edp : 0.0},
              {"evaluations", r.evaluations},
              {"illegal", r.illegal},
              {"duplicates", r.duplicates},
              {"seconds", r.seconds},
              {"evaluations_per_second", r.seconds > 0 ? double(r.evaluations) / r.seconds : 0.0},
              {"cancelled", r.cancelled},
              {"stop_reason", r.stopReason},
              {"stopped", stoppedBy()},
              {"stats", r.stats},
              {"notes", r.notes}};
    if (r.found) {
        j["energy_pJ"] = r.bestEvaluation.energy;
        j["cycles"] = r.bestEvaluation.cycles;
        j["edp"] = r.bestEvaluation.edp;
        j["mapping"] = mw::toJson(r.best, p, a);
    }
    return j;
}

mw::MapSpace spaceFor(const Args& args, const mw::Problem& problem, const mw::Architecture& arch) {
    return mw::MapSpace(problem, arch, constraintsFor(args, problem, arch));
}

// --intrinsic matmul:IxJxK | systolic:RxCxK
mw::Intrinsic intrinsicFrom(const std::string& spec) {
    const auto colon = spec.find(':');
    const std::string kind = spec.substr(0, colon);
    std::vector<std::int64_t> sizes;
    if (colon != std::string::npos) {
        std::stringstream ss(spec.substr(colon + 1));
        std::string part;
        while (std::getline(ss, part, 'x')) {
            try {
                sizes.push_back(std::stoll(part));
            } catch (const std::exception&) {
                sizes.clear();
                break;
            }
        }
    }
    if (sizes.size() != 3 || (kind != "matmul" && kind != "systolic"))
        throw InputError("--intrinsic", "is '" + spec +
                                            "'; expected matmul:IxJxK or systolic:RxCxK, e.g. "
                                            "matmul:16x16x16");
    return kind == "matmul" ? mw::matmulIntrinsic(sizes[0], sizes[1], sizes[2])
                            : mw::systolicIntrinsic(sizes[0], sizes[1], sizes[2]);
}

// The problem and map-space constraints a search runs on: as given, or, with
// --intrinsic, AMOS-style: the chosen match (--intrinsic-match K, default the
// best plan utilization) pinned at --intrinsic-level, the rest left free.
struct SearchTarget {
    mw::Problem problem;
    mw::MapSpaceConstraints constraints;
    std::string note;
};

SearchTarget targetFor(const Args& args, const mw::Problem& problem, const mw::Architecture& arch) {
    SearchTarget t{problem, {}, ""};
    // (Without --intrinsic they would change nothing, in silence.)
    for (const char* alone : {"intrinsic-level", "intrinsic-match"})
        if (args.has(alone) && !args.has("intrinsic"))
            throw InputError(std::string("--") + alone,
                             "applies only with --intrinsic matmul:IxJxK|systolic:RxCxK");
    if (!args.has("intrinsic")) {
        t.constraints = constraintsFor(args, problem, arch);
        return t;
    }
    if (args.has("constraints"))
        throw InputError("--constraints", "cannot be combined with --intrinsic");
    const mw::Intrinsic in = intrinsicFrom(args.get("intrinsic"));
    const std::string levelName = args.get("intrinsic-level");
    const int level = arch.levelIndex(levelName);
    if (level < 0)
        throw InputError("--intrinsic-level", "'" + levelName + "' is not a level of " + arch.name);
    const auto matches = mw::enumerateIntrinsicMatches(problem, in);
    if (matches.empty())
        throw InputError("--intrinsic", "no loop of " + problem.name + " maps onto " + in.name);
    std::vector<mw::IntrinsicPlan> plans;
    for (const auto& m : matches)
        plans.push_back(mw::planIntrinsic(problem, arch, in, m, level));
    std::size_t pick = 0;
    if (args.has("intrinsic-match")) {
        const double k = number(args, "intrinsic-match", 0);
        if (k < 0 || k >= double(matches.size()) || k != std::floor(k))
            throw InputError("--intrinsic-match",
                             "expected 0.." + std::to_string(matches.size() - 1));
        pick = std::size_t(k);
    } else {
        for (std::size_t i = 1; i < plans.size(); ++i)
            if (plans[i].utilization > plans[pick].utilization)
                pick = i;
    }
    t.problem = plans[pick].problem;
    t.constraints = plans[pick].constraints;
    std::ostringstream note;
    note << "intrinsic    " << in.name << " match " << pick << " of " << matches.size() << ": "
         << mw::describeMatch(problem, in, matches[pick]) << ", utilization " << std::fixed
         << std::setprecision(3) << plans[pick].utilization << "\n";
    t.note = note.str();
    return t;
}

double median(std::vector<double> v) {
    if (v.empty())
        return NAN;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

} // namespace

int cmdSearch(const Args& args) {
    if (args.flag("list")) {
        for (const auto& n : mw::searcherNames())
            std::cout << n << "\n";
        return 0;
    }
    const mw::Architecture arch = mw::loadArchitecture(args.get("arch"));
    const SearchTarget target = targetFor(args, loadProblem(args), arch);
    const mw::Problem& problem = target.problem;
    const std::string searcher = args.get("searcher");
    mw::makeSearcher(searcher); // unknown names fail before any work
    const mw::SearchSettings settings = settingsFrom(args);
    const std::string out = outputFolder(args);
    const mw::MapSpace space = constrainedSpace(args, problem, arch, target.constraints);
    std::cout << target.note;
    const auto lb = mw::lowerBound(problem, arch, settings.objective);
    ProgressLine progressLine;
    const mw::SearchResult r = mw::runSearch(
        space, searcher, settings, [&](const mw::SearchProgress& p) { progressLine.show(p); },
        interruptFlag());
    progressLine.clear();
    // The run's files replace an earlier run's together, or not at all: a
    // failed write left a new result beside an old best mapping, and a run
    // that found none left the old one there.
    const std::filesystem::path dir(out);
    mw::FileSet files;
    files.stage((dir / "trace.csv").string(), mw::traceCsv(r));
    files.stage((dir / "result.json").string(),
                resultJson(r, settings, lb, problem, arch).dump(1) + "\n");
    const char* const kBestFiles[] = {"best_mapping.json", "best_mapping.yaml", "evaluation.json"};
    if (r.found) {
        files.stage((dir / kBestFiles[0]).string(),
                    mw::toJson(r.best, problem, arch).dump(1) + "\n");
        files.stage((dir / kBestFiles[1]).string(), mw::timeloopMappingYaml(problem, arch, r.best));
        files.stage((dir / kBestFiles[2]).string(),
                    mw::toJson(r.bestEvaluation, problem, arch).dump(1) + "\n");
    } else {
        for (const char* name : kBestFiles)
            files.removeOnCommit((dir / name).string());
    }
    files.commit();
    std::cout << "searcher     " << searcher << " (seed " << settings.seed << ", "
              << settings.objective.name() << ")\n"
              << "stopped      " << (interrupted() ? std::string("interrupted") : r.stopReason)
              << "\n"
              << "evaluations  " << r.evaluations << " (" << r.illegal << " illegal, "
              << r.duplicates << " duplicates not charged) in " << std::fixed
              << std::setprecision(2) << r.seconds << " s\n";
    for (const auto& [name, value] : r.stats)
        std::cout << "stat         " << name << " = " << value << "\n";
    for (const std::string& line : r.notes)
        std::cout << "note         " << line << "\n";
    if (!r.found) {
        std::cout << "no legal mapping found\n";
        if (interrupted()) {
            std::cout << "interrupted  wrote " << out << "/{trace.csv,result.json}\n";
            return kExitInterrupted;
        }
        return 1;
    }
    std::cout << "best         " << sci(r.bestCost) << " (" << settings.objective.name() << "), "
              << std::setprecision(2) << r.bestCost / lb.objective << "x the lower bound\n"
              << "energy       " << std::setprecision(3) << r.bestEvaluation.energy * 1e-6
              << " uJ, cycles " << r.bestEvaluation.cycles << ", EDP " << sci(r.bestEvaluation.edp)
              << " J*cycle\n"
              << (interrupted() ? "interrupted  wrote " : "wrote        ") << out
              << "/{best_mapping.json,best_mapping.yaml,evaluation.json,"
              << "trace.csv,result.json}\n";
    return interrupted() ? kExitInterrupted : 0;
}

// --searchers a,b,c: known searcher names, at least one.
std::vector<std::string> searcherList(const Args& args) {
    std::vector<std::string> searchers;
    std::stringstream ss(args.get("searchers"));
    std::string name;
    while (std::getline(ss, name, ','))
        if (!name.empty()) {
            mw::makeSearcher(name); // throws on an unknown name
            searchers.push_back(name);
        }
    if (searchers.empty())
        throw InputError("--searchers", "expected a comma-separated list of searchers");
    return searchers;
}

int cmdCompare(const Args& args) {
    const mw::Architecture arch = mw::loadArchitecture(args.get("arch"));
    const mw::Problem problem = loadProblem(args);
    std::vector<std::string> searchers = searcherList(args);
    const int seeds = int(wholeNumber(args, "seeds", 5, 1, 100000));
    mw::SearchSettings base = settingsFrom(args);
    const std::string out = args.has("out") ? outputFolder(args) : std::string();
    const mw::MapSpace space = spaceFor(args, problem, arch);
    const auto lb = mw::lowerBound(problem, arch, base.objective);
    // The optimal searcher first, and once (it draws nothing at random): the
    // optimum it proves gives every other searcher's distance from it.
    std::stable_partition(searchers.begin(), searchers.end(),
                          [](const std::string& n) { return n == "optimal"; });
    double optimum = 0.0;
    std::string optimumNote;
    std::cout << std::left << std::setw(15) << "searcher" << std::right << std::setw(13) << "median"
              << std::setw(25) << "spread (min..max)" << std::setw(11) << "median/LB"
              << std::setw(11) << "vs optimum" << std::setw(12) << "evals/s" << std::setw(12)
              << "t(5%) s" << std::setw(10) << "found"
              << "\n";
    json summary = json::array();
    for (const auto& name : searchers) {
        if (interrupted())
            break;
        std::vector<double> finals, rates, t5, evals;
        int found = 0;
        const int runs = name == "optimal" ? 1 : int(seeds);
        for (int k = 0; k < runs; ++k) {
            mw::SearchSettings s = base;
            s.seed = base.seed + static_cast<std::uint64_t>(k);
            if (interrupted())
                break;
            const mw::SearchResult r = mw::runSearch(space, name, s, {}, interruptFlag());
            if (r.found) {
                ++found;
                finals.push_back(r.bestCost);
                t5.push_back(timeToWithin(r, 0.05));
            }
            rates.push_back(r.seconds > 0 ? double(r.evaluations) / r.seconds : 0.0);
            evals.push_back(double(r.evaluations));
            if (name == "optimal") {
                optimum = mw::provenOptimum(r);
                std::ostringstream note;
                if (optimum > 0)
                    note << "optimum      " << sci(optimum) << " (proven in " << std::fixed
                         << std::setprecision(2) << r.seconds << " s)";
                else
                    note << "optimal      not proven: " << r.stopReason;
                optimumNote = note.str();
            }
            if (!out.empty()) {
                const std::string stem = out + "/" + name + "_seed" + std::to_string(s.seed);
                mw::FileSet files; // (a run's trace and result together)
                files.stage(stem + ".csv", mw::traceCsv(r));
                files.stage(stem + ".json", resultJson(r, s, lb, problem, arch).dump(1) + "\n");
                files.commit();
            }
        }
        const double med = median(finals);
        const auto [mn, mx] =
            finals.empty()
                ? std::pair<double, double>{NAN, NAN}
                : std::pair<double, double>{*std::min_element(finals.begin(), finals.end()),
                                            *std::max_element(finals.begin(), finals.end())};
        std::ostringstream gap; // the median's distance above the proven optimum
        if (optimum > 0 && !finals.empty())
            gap << std::fixed << std::setprecision(1) << 100.0 * (med / optimum - 1.0) << "%";
        else
            gap << "-";
        std::cout << std::left << std::setw(15) << name << std::right << std::setw(13) << sci(med)
                  << std::setw(25) << (sci(mn) + ".." + sci(mx)) << std::setw(11) << std::fixed
                  << std::setprecision(2) << med / lb.objective << std::setw(11) << gap.str()
                  << std::setw(12) << std::setprecision(0) << median(rates) << std::setw(12)
                  << std::setprecision(3) << median(t5) << std::setw(7) << found << "/" << runs
                  << "\n";
        json row = {{"searcher", name},
                    {"median", med},
                    {"min", mn},
                    {"max", mx},
                    {"median_over_lower_bound", med / lb.objective},
                    {"evaluations_per_second", median(rates)},
                    {"median_evaluations", median(evals)},
                    {"seconds_to_within_5_percent", median(t5)},
                    {"found", found},
                    {"seeds", runs}};
        if (optimum > 0 && !finals.empty())
            row["median_over_optimum"] = med / optimum;
        summary.push_back(row);
    }
    std::cout << "lower bound  " << sci(lb.objective) << " (" << base.objective.name() << ")\n";
    if (!optimumNote.empty())
        std::cout << optimumNote << "\n";
    if (!out.empty())
        mw::writeTextFile(out + "/summary.json", json{{"format", "mapwright.compare-summary"},
                                                      {"version", mw::kFormatVersion},
                                                      {"stopped", stoppedBy()},
                                                      {"searchers", summary}}
                                                         .dump(1) +
                                                     "\n");
    if (interrupted()) {
        std::cout << "interrupted  the runs above are those finished (the last one cut short)"
                  << (out.empty() ? std::string() : "; wrote them to " + out) << "\n";
        return kExitInterrupted;
    }
    return 0;
}

int cmdNetwork(const Args& args) {
    const mw::Architecture arch = mw::loadArchitecture(args.get("arch"));
    const mw::Network net = loadWorkload(args);
    mw::NetworkSearchOptions o;
    o.searcher = args.opt("searcher", "gamma");
    mw::makeSearcher(o.searcher);
    o.settings = settingsFrom(args);
    o.warmStart = args.flag("warm-start");
    o.constraints = constraintsPerLayer(args, net, arch);
    const std::string out = args.has("out") ? outputFolder(args) : std::string();
    const mw::NetworkOutcome r = mw::searchNetwork(net, arch, o, {}, interruptFlag());
    // Seconds per searched layer: a one-shot searcher (CoSA) is judged by its
    // time per layer, and its other figures go to network.json.
    std::cout << std::left << std::setw(36) << "layer" << std::right << std::setw(10) << "evals"
              << std::setw(9) << "seconds" << std::setw(14) << "energy uJ" << std::setw(14)
              << "cycles" << std::setw(13) << "EDP" << std::setw(10) << "EDP/LB"
              << "  note\n";
    json layers = json::array();
    for (std::size_t i = 0; i < r.layers.size(); ++i) {
        const auto& l = r.layers[i];
        const auto& e = l.result.bestEvaluation;
        std::string note = mw::layerNote(r, i);
        if (!l.result.found)
            note += " (no legal mapping)";
        const bool searched = l.sameAs < 0;
        std::cout << std::left << std::setw(36) << l.name.substr(0, 35) << std::right
                  << std::setw(10) << (searched ? l.result.evaluations : 0) << std::setw(9)
                  << std::fixed << std::setprecision(2) << (searched ? l.result.seconds : 0.0)
                  << std::setw(14) << std::setprecision(3) << e.energy * 1e-6 << std::setw(14)
                  << e.cycles << std::setw(13) << sci(e.edp) << std::setw(10)
                  << std::setprecision(2) << (l.result.found ? e.edp / l.bound.edp : 0.0) << "  "
                  << note << "\n";
        json lj = {{"name", l.name},
                   {"source", net.layers[i].source},
                   {"same_as", l.sameAs},
                   {"warm_from", l.warmFrom},
                   {"found", l.result.found},
                   {"evaluations", searched ? l.result.evaluations : 0},
                   {"seconds", searched ? l.result.seconds : 0.0}};
        if (searched && !l.result.stats.empty())
            lj["stats"] = l.result.stats; // the searcher's own figures (see search --out)
        if (l.result.found) {
            lj["energy_pJ"] = e.energy;
            lj["cycles"] = e.cycles;
            lj["edp"] = e.edp;
            lj["edp_over_lower_bound"] = e.edp / l.bound.edp;
        }
        layers.push_back(lj);
    }
    // Totals over the layers that found a mapping only: said, not passed off
    // as the network's (they read 0 when none did).
    const auto unmapped = std::count_if(r.layers.begin(), r.layers.end(),
                                        [](const auto& l) { return !l.result.found; });
    std::cout << "network      " << r.layers.size() << " layers (" << r.uniqueLayers << " unique), "
              << r.evaluations << " evaluations in " << std::setprecision(2) << r.seconds << " s\n"
              << "totals       energy " << std::setprecision(3) << r.energy * 1e-6 << " uJ, cycles "
              << std::setprecision(0) << r.cycles << ", EDP " << sci(r.edp) << " J*cycle"
              << (unmapped > 0
                      ? " (incomplete: " + std::to_string(unmapped) + " of " +
                            std::to_string(r.layers.size()) + " layers have no legal mapping)"
                      : std::string())
              << "\n";
    if (!out.empty()) {
        mw::writeTextFile(out + "/network.json", json{{"format", "mapwright.network-result"},
                                                      {"version", mw::kFormatVersion},
                                                      {"searcher", o.searcher},
                                                      {"warm_start", o.warmStart},
                                                      {"stopped", stoppedBy()},
                                                      {"layers_without_mapping", unmapped},
                                                      {"energy_pJ", r.energy},
                                                      {"cycles", r.cycles},
                                                      {"edp", r.edp},
                                                      {"evaluations", r.evaluations},
                                                      {"seconds", r.seconds},
                                                      {"layers", layers}}
                                                         .dump(1) +
                                                     "\n");
    }
    if (interrupted()) {
        std::cout << "interrupted  layers without a mapping above were not searched"
                  << (args.has("out") ? "; wrote the others to " + args.get("out") + "/network.json"
                                      : std::string())
                  << "\n";
        return kExitInterrupted;
    }
    return unmapped > 0 ? 1 : 0; // as search's "no legal mapping found"
}

int cmdIntrinsic(const Args& args) {
    const mw::Problem problem = loadProblem(args);
    const mw::Intrinsic in = intrinsicFrom(args.get("intrinsic"));
    const auto matches = mw::enumerateIntrinsicMatches(problem, in);
    std::cout << matches.size() << " ways to map " << problem.name << " onto " << in.name << "\n";
    for (std::size_t i = 0; i < matches.size(); ++i)
        std::cout << std::setw(4) << i << "  " << mw::describeMatch(problem, in, matches[i])
                  << "  utilization " << std::fixed << std::setprecision(3)
                  << matches[i].utilization << "\n";
    return 0;
}

int cmdTrainSurrogate(const Args& args) {
    const mw::Architecture arch = mw::loadArchitecture(args.get("arch"));
    const mw::Problem problem = loadProblem(args);
    mw::SurrogateOptions o;
    o.samples = int(wholeNumber(args, "samples", o.samples, 100, 100000000));
    o.epochs = int(wholeNumber(args, "epochs", o.epochs, 1, 100000));
    o.widthDivisor = int(wholeNumber(args, "width-divisor", o.widthDivisor, 1, 1024));
    o.paperLayers = args.flag("paper-layers");
    const int hardware = int(std::max(1u, std::thread::hardware_concurrency()));
    o.threads = int(wholeNumber(args, "threads", std::min(hardware, mw::kMaxSearchThreads), 1,
                                mw::kMaxSearchThreads));
    o.seed = std::uint64_t(wholeNumber(args, "seed", 1, 0, kMaxWholeOption));
    mw::SurrogateReport report;
    double shown = -1;
    ProgressLine progressLine(false);
    const auto trainStart = std::chrono::steady_clock::now();
    std::optional<mw::Surrogate> trained;
    try {
        trained =
            mw::Surrogate::train(problem, arch, o, report, [&](const std::string& phase, double f) {
                if (f - shown >= 0.01) {
                    shown = f;
                    mw::SearchProgress p;
                    p.seconds =
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - trainStart)
                            .count();
                    p.phase = phase;
                    p.phaseFraction = f;
                    p.phaseSecondsLeft = mw::secondsLeftAtPace(p.seconds, f);
                    progressLine.show(p);
                }
                return !interrupted();
            });
        progressLine.clear();
    } catch (const std::runtime_error&) {
        if (!interrupted())
            throw;
    }
    if (interrupted() || !trained) {
        std::cout << "interrupted  the surrogate was not complete; nothing written\n";
        return kExitInterrupted;
    }
    const mw::Surrogate& s = *trained;
    const std::string path =
        args.opt("out", mw::Surrogate::cachePath(args.opt("model-dir", ""), problem, arch));
    s.save(path);
    std::cout << "samples      " << report.samples << " (generated in " << std::fixed
              << std::setprecision(1) << report.generateSeconds << " s)\n"
              << "trained      " << report.parameters << " parameters, " << o.epochs
              << " epochs in " << report.trainSeconds << " s\n"
              << "held out     Huber loss " << std::setprecision(4) << report.testLoss
              << ", rank correlation of predicted vs true EDP " << std::setprecision(3)
              << report.rankCorrelation << "\n"
              << "wrote        " << path << "\n";
    return 0;
}

int cmdBenchSearch(const Args& args) {
    const std::string archPath = args.opt("arch", findSample("architectures/eyeriss_like.json"));
    const mw::Architecture arch = mw::loadArchitecture(archPath);
    const mw::Problem problem = mw::conv2dProblem("conv3_x", 1, 1, 128, 128, 28, 28, 3, 3);
    const mw::MapSpace space(problem, arch);
    const double seconds = number(args, "seconds", 2.0);
    const int all = std::clamp(int(std::thread::hardware_concurrency()), 1, mw::kMaxSearchThreads);
    json rows = json::array();
    const bool asJson = args.flag("json"); // then only the JSON, as bench model does
    if (!asJson)
        std::cout << std::left << std::setw(15) << "searcher" << std::right << std::setw(16)
                  << "1 thread /s" << std::setw(10) << "of model" << std::setw(16)
                  << (std::to_string(all) + " threads /s") << std::setw(10) << "scaling"
                  << "\n";
    std::vector<std::string> names = mw::searcherNames();
    if (args.has("searchers"))
        names = searcherList(args);
    mw::ModelBench modelBench(arch, mw::ModelBench::kMappingsPerLayer, interruptFlag());
    for (const auto& name : names) {
        if (interrupted())
            break;
        std::string idle;               // why a run made no evaluation
        double charged[2] = {0.0, 0.0}; // evaluations, one thread and all
        auto runFor = [&](int threads, double budgetSeconds) {
            mw::SearchSettings s;
            s.budget.seconds = budgetSeconds;
            s.seed = 1;
            s.threads = threads;
            s.params["victory"] = 0; // time, not convergence, ends the run
            s.params["timeout"] = 0;
            addParams(args, s.params);
            const auto r = mw::runSearch(space, name, s, {}, interruptFlag());
            charged[threads == 1 ? 0 : 1] += double(r.evaluations);
            if (r.evaluations == 0)
                idle = r.stopReason;
            return r;
        };
        // Four slices of a quarter of the time each, every slice one run on one
        // thread and one on all (each from the same seed, so each repeats the
        // search's start), the one-thread run between two timings of the cost
        // model's own rate (bench model). Each ratio is taken within its slice,
        // where both sides see the same machine speed: this machine's speed
        // drifts within seconds by more than the targets' margins. The share
        // and the scaling reported are the medians over the slices.
        constexpr int kSlices = 4;
        std::vector<double> shares, scalings, modelRates;
        double elapsed[2] = {0.0, 0.0};
        for (int i = 0; i < kSlices && !interrupted(); ++i) {
            const double before = modelBench.rate(0.15);
            const auto one = runFor(1, seconds / kSlices);
            const double after = modelBench.rate(0.15);
            const auto many = runFor(all, seconds / kSlices);
            elapsed[0] += one.seconds;
            elapsed[1] += many.seconds;
            const double oneRate = one.seconds > 0 ? double(one.evaluations) / one.seconds : 0.0;
            const double manyRate =
                many.seconds > 0 ? double(many.evaluations) / many.seconds : 0.0;
            modelRates.push_back(0.5 * (before + after));
            shares.push_back(oneRate / modelRates.back());
            scalings.push_back(oneRate > 0 ? manyRate / oneRate : 0.0);
        }
        auto median = [](std::vector<double> v) {
            std::sort(v.begin(), v.end());
            return 0.5 * (v[(v.size() - 1) / 2] + v[v.size() / 2]);
        };
        if (shares.empty())
            break; // interrupted before a slice finished
        if (charged[0] > 0 && charged[1] > 0)
            idle.clear(); // only a searcher that never evaluated is reported idle
        const double share = median(shares);
        const double scaling = median(scalings);
        const double modelRate = median(modelRates);
        const double rate[2] = {elapsed[0] > 0 ? charged[0] / elapsed[0] : 0.0,
                                elapsed[1] > 0 ? charged[1] / elapsed[1] : 0.0};
        if (!asJson)
            std::cout << std::left << std::setw(15) << name << std::right << std::fixed
                      << std::setprecision(0) << std::setw(16) << rate[0] << std::setw(8)
                      << 100.0 * share << " %" << std::setw(16) << rate[1] << std::setw(10)
                      << std::setprecision(2) << scaling
                      << (idle.empty() ? "" : "  (no evaluations: " + idle + ")") << "\n";
        json row = {{"searcher", name},
                    {"evaluations_per_second_1_thread", rate[0]},
                    {"evaluations_per_second_all_threads", rate[1]},
                    {"model_evaluations_per_second", modelRate},
                    {"share_of_model_rate", share},
                    {"share_of_model_rate_per_slice", shares},
                    {"scaling", scaling},
                    {"scaling_per_slice", scalings},
                    {"threads", all}};
        if (!idle.empty())
            row["no_evaluations_because"] = idle;
        mw::SearchSettings given; // the hyperparameters set with --param, as run
        addParams(args, given.params);
        row["params"] = given.params;
        rows.push_back(row);
    }
    if (asJson)
        std::cout << rows.dump(1) << "\n";
    if (interrupted()) {
        std::cout << "interrupted  the rows above are the searchers measured\n";
        return kExitInterrupted;
    }
    return 0;
}

} // namespace cli
