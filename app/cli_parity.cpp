// mapwright-cli parity-cases: mappings of one layer on one architecture, each
// written as Timeloop input, for the differential harness (tests/parity/):
// random legal ones, raw samples (often invalid), deliberately invalid ones
// (a buffer overflow, a fan-out overflow, a spatial factor above its own
// level's fan-out), and the best mapping of each named searcher.
#include "cli_common.h"
#include "common/error.h"
#include "io/json_io.h"
#include "io/timeloop/timeloop.h"
#include "mapspace/mapspace.h"
#include "model/cost_model.h"
#include "search/search.h"

#include <filesystem>
#include <iostream>
#include <sstream>

namespace cli {

namespace {

namespace fs = std::filesystem;

// A legal mapping with one buffer made to overflow: every temporal factor of
// one dimension above a bounded level moves into that level's own loop.
bool makeOverflow(const mw::MapSpace& space, mw::Rng& rng, mw::Mapping& m) {
    const mw::Architecture& a = space.arch();
    const mw::Problem& p = space.problem();
    std::vector<int> levels;
    for (int l = 1; l < a.numLevels(); ++l)
        if (!a.levels[l].unbounded() && space.levelHasTemporal(l) && m.levels[l].keepMask != 0)
            levels.push_back(l);
    if (levels.empty())
        return false;
    const int l = levels[rng.below(levels.size())];
    std::vector<int> dims;
    for (int d = 0; d < p.numDims(); ++d)
        for (int k = 0; k < l; ++k)
            if (m.levels[k].temporal[d] > 1) {
                dims.push_back(d);
                break;
            }
    if (dims.empty())
        return false;
    const int d = dims[rng.below(dims.size())];
    for (int k = 0; k < l; ++k) {
        m.levels[l].temporal[d] *= m.levels[k].temporal[d];
        m.levels[k].temporal[d] = 1;
    }
    return true;
}

// A spatial factor above what one axis of a level allows: temporal primes of
// one dimension move into the axis until its product exceeds the fan-out.
// With `ownOnly`, the level's own fan-out is exceeded while the product over
// the levels above and this one stays within the instances below (the case
// where a check of the level's own fan-out and a cumulative check disagree).
bool makeFanoutOverflow(const mw::MapSpace& space, mw::Rng& rng, mw::Mapping& m, bool ownOnly) {
    const mw::Architecture& a = space.arch();
    const mw::Problem& p = space.problem();
    const int L = a.numLevels();
    struct Choice {
        int level, axis, dim;
    };
    std::vector<Choice> choices;
    for (int l = 0; l < L; ++l)
        for (int axis = 1; axis <= 2; ++axis) {
            const bool inner = l + 1 < L;
            const int childMesh = axis == 1 ? (inner ? a.levels[l + 1].meshX : a.compute.meshX)
                                            : (inner ? a.levels[l + 1].meshY : a.compute.meshY);
            // Timeloop refuses any spatial loop at a level that does not fan
            // out; the interesting case is an axis whose own fan-out is below
            // the instances under it (levels above could have used the rest).
            const int own = axis == 1 ? a.fanoutX(l) : a.fanoutY(l);
            if (ownOnly && (a.fanoutX(l) * a.fanoutY(l) == 1 || own >= childMesh))
                continue;
            for (int d = 0; d < p.numDims(); ++d) {
                const auto& other = axis == 1 ? m.levels[l].spatialY : m.levels[l].spatialX;
                if (other[d] == 1 && p.dims[d].bound > 1)
                    choices.push_back({l, axis, d});
            }
        }
    rng.shuffle(choices.begin(), choices.end());
    for (const Choice& c : choices) {
        mw::Mapping t = m;
        auto& factors = c.axis == 1 ? t.levels[c.level].spatialX : t.levels[c.level].spatialY;
        const int fan = c.axis == 1 ? a.fanoutX(c.level) : a.fanoutY(c.level);
        // The instances below this level on the axis, and what the levels
        // above already spread over them.
        const bool inner = c.level + 1 < L;
        const std::int64_t below = c.axis == 1
                                       ? (inner ? a.levels[c.level + 1].meshX : a.compute.meshX)
                                       : (inner ? a.levels[c.level + 1].meshY : a.compute.meshY);
        std::int64_t above = 1;
        for (int k = 0; k <= c.level; ++k)
            for (int d = 0; d < p.numDims(); ++d)
                above *= c.axis == 1 ? t.levels[k].spatialX[d] : t.levels[k].spatialY[d];
        std::int64_t used = 1;
        for (int d = 0; d < p.numDims(); ++d)
            used *= factors[d];
        bool moved = true;
        while (used <= fan && moved) {
            moved = false;
            for (int k = c.level; k >= 0 && !moved; --k) {
                auto& tf = t.levels[k].temporal[c.dim];
                if (tf == 1)
                    continue;
                std::uint32_t prime = 2;
                while (tf % prime != 0)
                    ++prime;
                if (ownOnly && above * prime > below)
                    return false;
                tf /= prime;
                factors[c.dim] *= prime;
                used *= prime;
                above *= prime;
                moved = true;
            }
        }
        if (used > fan) {
            m = t;
            return true;
        }
    }
    return false;
}

} // namespace

int cmdParityCases(const Args& args) {
    const mw::Architecture arch = mw::loadArchitecture(args.get("arch"));
    const mw::Problem problem = loadProblem(args);
    const std::string out = outputFolder(args);
    const auto count = [&](const char* key) { return int(wholeNumber(args, key, 0, 0, 1000000)); };
    const int random = count("random"), raw = count("raw"), invalid = count("invalid");
    const auto seed = std::uint64_t(wholeNumber(args, "seed", 1, 0, kMaxWholeOption));
    // Constraints narrow the searchers' space (row-stationary Eyeriss, say);
    // random and invalid cases are drawn from the whole space as before.
    const mw::MapSpace space(problem, arch);
    const mw::MapSpace searchSpace(problem, arch, constraintsFor(args, problem, arch));
    mw::Rng rng(seed);
    mw::Evaluation scratch;

    struct Case {
        std::string kind;
        mw::Mapping mapping;
    };
    std::vector<Case> cases;
    const auto legal = [&](mw::Mapping& m) { return space.sampleLegal(rng, m, scratch, 20000); };
    for (int i = 0; i < random; ++i) {
        mw::Mapping m;
        if (legal(m))
            cases.push_back({"random", m});
    }
    for (int i = 0, tries = 0; i < raw && tries < 100 * raw; ++tries) {
        const mw::Mapping m = space.sample(rng);
        mw::evaluate(problem, arch, m, scratch);
        bool split = false; // outside Timeloop's space: it cannot be written for it
        for (int v = 0; v < scratch.numViolations; ++v)
            split = split || scratch.violations[v].kind == mw::ViolationKind::SplitAxes;
        // Timeloop analyses every spatial instance before it checks the
        // fan-outs: a sample spread over far more instances than there are
        // takes it minutes, and says nothing a smaller overflow does not.
        std::int64_t spread = 1;
        for (int l = 0; l < arch.numLevels(); ++l)
            for (int d = 0; d < problem.numDims(); ++d)
                spread *= std::int64_t(m.levels[l].spatialX[d]) * m.levels[l].spatialY[d];
        if (!split && spread <= 4 * arch.compute.instances()) {
            cases.push_back({"raw", m});
            ++i;
        }
    }
    for (int i = 0, tries = 0; i < invalid && tries < 20 * invalid; ++tries) {
        mw::Mapping m;
        if (!legal(m))
            break;
        const int which = i % 3;
        const bool made = which == 0   ? makeOverflow(space, rng, m)
                          : which == 1 ? makeFanoutOverflow(space, rng, m, false)
                                       : makeFanoutOverflow(space, rng, m, true);
        if (made) {
            cases.push_back({which == 0 ? "overflow" : which == 1 ? "fanout" : "own-fanout", m});
            ++i;
        }
    }
    if (args.has("searchers")) {
        mw::SearchSettings settings;
        settings.budget.evaluations = wholeNumber(args, "budget", 2000, 1, kMaxWholeOption);
        settings.seed = seed;
        settings.threads = int(wholeNumber(args, "threads", 1, 1, mw::kMaxSearchThreads));
        if (args.has("model-dir"))
            settings.modelDir = args.get("model-dir");
        std::stringstream names(args.get("searchers"));
        for (std::string name; std::getline(names, name, ',');) {
            const mw::SearchResult r = mw::runSearch(searchSpace, name, settings);
            if (r.found)
                cases.push_back({"searcher:" + name, r.best});
            else
                std::cerr << "note: " << name << " found no mapping (" << r.stopReason << ")\n";
        }
    }

    mw::Json list = mw::Json::array();
    int written = 0;
    for (std::size_t i = 0; i < cases.size(); ++i) {
        char id[24]; // room for any size_t
        std::snprintf(id, sizeof id, "%04zu", i);
        mw::exportTimeloop(problem, arch, &cases[i].mapping, (fs::path(out) / id).string());
        list.push_back({{"id", id},
                        {"kind", cases[i].kind},
                        {"mapping", mw::toJson(cases[i].mapping, problem, arch)}});
        ++written;
    }
    const mw::Json doc = {{"format", "mapwright.parity-cases"},
                          {"architecture", mw::toJson(arch)},
                          {"problem", mw::toJson(problem)},
                          {"cases", list}};
    mw::writeTextFile((fs::path(out) / "cases.json").string(), doc.dump(1) + "\n");
    std::cout << "wrote " << written << " cases to " << out << "\n";
    return 0;
}

} // namespace cli
