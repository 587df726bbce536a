// bench optimal: per distinct layer of a network, the optimum the optimal
// searcher proves and how long the proof takes, and how far other searchers'
// best mappings after 1 s and after --seconds lie above it (the README's
// table of searchers' distances from optimal).
#include "cli_common.h"
#include "cli_interrupt.h"
#include "search/network_search.h"
#include "search/search.h"

#include <cmath>
#include <iostream>

namespace cli {

namespace {

// The best a run had found by `seconds` (its trace records every improvement).
double bestBy(const mw::SearchResult& r, double seconds) {
    double best = mw::SearchContext::kInfinity;
    for (const mw::TracePoint& p : r.trace)
        if (p.seconds <= seconds)
            best = std::min(best, p.best);
    return best;
}

std::string percentAbove(double cost, double reference) {
    if (!(cost < mw::SearchContext::kInfinity) || reference <= 0)
        return "-";
    return fixedText(100.0 * (cost / reference - 1.0), 1) + "%";
}

} // namespace

int cmdBenchOptimal(const Args& args) {
    if (args.has("out"))
        outputFile(args); // (written at the end: checked now)
    const mw::Architecture arch = mw::loadArchitecture(args.get("arch"));
    const mw::Network net = loadWorkload(args);
    std::vector<std::string> others = {"gamma", "annealing", "cosa", "random-pruned"};
    if (args.has("searchers")) {
        others.clear();
        std::stringstream ss(args.get("searchers"));
        for (std::string name; std::getline(ss, name, ',');)
            if (!name.empty()) {
                mw::makeSearcher(name); // throws on an unknown name
                others.push_back(name);
            }
    }
    const double seconds = number(args, "seconds", 10.0);
    const double early = std::min(seconds, number(args, "early", 1.0));
    const double prove = number(args, "prove-seconds", 60.0);
    const int threads = int(wholeNumber(args, "threads", 1, 1, mw::kMaxSearchThreads));
    if (seconds <= 0 || prove <= 0)
        throw InputError("bench optimal", "--seconds and --prove-seconds must be positive");
    mw::SearchSettings base;
    base.objective = mw::SearchObjective::parse(args.opt("objective", "edp"));
    base.seed = std::uint64_t(wholeNumber(args, "seed", 1, 0, kMaxWholeOption));
    base.threads = threads;
    const auto constraintsOf = constraintsPerLayer(args, net, arch);

    std::cout << std::left << std::setw(22) << "layer" << std::right << std::setw(13) << "optimum"
              << std::setw(13) << "proof s";
    auto after = [](const std::string& name, double s) {
        return name + " " + fixedText(s, s < 1 ? 1 : 0) + "s";
    };
    for (const auto& name : others)
        std::cout << std::setw(19) << after(name, early) << std::setw(19) << after(name, seconds);
    std::cout << "\n";
    json rows = json::array();
    std::vector<mw::Problem> done;
    for (const mw::LayerSpec& layer : net.layers) {
        if (interrupted())
            break;
        const mw::Problem p = mw::buildProblem(layer);
        if (std::any_of(done.begin(), done.end(),
                        [&](const mw::Problem& q) { return mw::sameShape(p, q); }))
            continue;
        done.push_back(p);
        const mw::MapSpace space(p, arch,
                                 constraintsOf ? constraintsOf(p) : mw::MapSpaceConstraints{});
        mw::SearchSettings s = base;
        s.budget.seconds = prove;
        const mw::SearchResult opt = mw::runSearch(space, "optimal", s, {}, interruptFlag());
        const double optimum = mw::provenOptimum(opt);
        // Unproven: distances from its best, a floor of the truth (marked ~).
        const double reference = optimum > 0 ? optimum : opt.found ? opt.bestCost : 0.0;
        json row = {{"layer", layer.name},
                    {"proven", optimum > 0},
                    {"optimum", optimum > 0 ? json(optimum) : json(nullptr)},
                    {"best", opt.found ? json(opt.bestCost) : json(nullptr)},
                    {"gap", opt.stats.count("gap") ? opt.stats.at("gap") : 0.0},
                    {"seconds", opt.seconds},
                    {"evaluations", opt.evaluations},
                    {"stats", opt.stats}};
        std::cout << std::left << std::setw(22) << layer.name.substr(0, 21) << std::right
                  << std::setw(13) << (reference > 0 ? sci(reference) : std::string("-"))
                  << std::setw(13)
                  << (optimum > 0 ? fixedText(opt.seconds, 2)
                                  : std::string(">").append(fixedText(prove, 0)) + " (" +
                                        fixedText(100.0 * opt.stats.at("gap"), 0) + "%)");
        json searched = json::object();
        for (const auto& name : others) {
            if (interrupted())
                break;
            mw::SearchSettings o = base;
            o.budget.seconds = seconds;
            o.params["victory"] = 0; // time, not convergence, ends the run
            o.params["timeout"] = 0;
            const mw::SearchResult r = mw::runSearch(space, name, o, {}, interruptFlag());
            const double atEarly = bestBy(r, early),
                         atEnd = r.found ? r.bestCost : bestBy(r, 1e300);
            std::cout << std::setw(19) << percentAbove(atEarly, reference) << std::setw(19)
                      << percentAbove(atEnd, reference) << std::flush;
            searched[name] = {{"best_early", atEarly < mw::SearchContext::kInfinity
                                                 ? json(atEarly)
                                                 : json(nullptr)},
                              {"best", r.found ? json(r.bestCost) : json(nullptr)},
                              {"evaluations", r.evaluations}};
            if (optimum > 0 && r.found && r.bestCost < optimum * (1 - 1e-9))
                throw std::runtime_error(name + " found " + sci(r.bestCost) +
                                         ", below the proven optimum of " + layer.name);
        }
        std::cout << (optimum > 0 ? "" : "  (not proven: distances from its best)") << "\n";
        row["searchers"] = searched;
        rows.push_back(row);
    }
    if (args.has("out"))
        mw::writeTextFile(args.get("out"), json{{"format", "mapwright.bench-optimal"},
                                                {"version", mw::kFormatVersion},
                                                {"architecture", arch.name},
                                                {"objective", base.objective.name()},
                                                {"seconds", seconds},
                                                {"early_seconds", early},
                                                {"prove_seconds", prove},
                                                {"threads", threads},
                                                {"layers", rows}}
                                                   .dump(1) +
                                               "\n");
    return interrupted() ? kExitInterrupted : 0;
}

} // namespace cli
