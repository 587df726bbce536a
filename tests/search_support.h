#pragma once
// What the search tests share (test_mapspace, test_search, test_searchers,
// test_mind_mappings): the sample architectures and layers they run on, and
// settings sized for a test rather than for a good search.
#include "io/json_io.h"
#include "io/timeloop/timeloop.h"
#include "search/search.h"

#include <QTemporaryDir>

#include <string>

namespace mw::test {

inline const std::string kSamples = std::string(MAPWRIGHT_SOURCE_DIR) + "/samples/";
inline const std::string kCases = std::string(MAPWRIGHT_TEST_DATA) + "/timeloop-tutorial/";

// Hides the surrogates shipped in resources/surrogates for one test, which
// checks what happens where none fits.
struct NoBundledSurrogates {
    NoBundledSurrogates() { qputenv("MAPWRIGHT_BUNDLED_MODELS", "/nonexistent/surrogates"); }
    ~NoBundledSurrogates() { qunsetenv("MAPWRIGHT_BUNDLED_MODELS"); }
};

inline Architecture eyeriss() {
    return loadArchitecture(kSamples + "architectures/eyeriss_like.json");
}

inline Problem conv3x3() {
    return conv2dProblem("conv3_x", 1, 1, 128, 128, 28, 28, 3, 3);
}

// The conv1d + output channels case on the tutorial's 3-level architecture.
inline TimeloopCase smallCase() {
    const std::string d = kCases + "03-model-conv1d+oc-3level-no-bypass/";
    return importTimeloop({d + "input.yaml", d + "ERT.yaml"});
}

inline bool sameTrace(const SearchResult& a, const SearchResult& b) {
    if (a.trace.size() != b.trace.size() || a.evaluations != b.evaluations)
        return false;
    for (std::size_t i = 0; i < a.trace.size(); ++i)
        if (a.trace[i].evaluation != b.trace[i].evaluation || a.trace[i].cost != b.trace[i].cost ||
            a.trace[i].best != b.trace[i].best)
            return false;
    return true;
}

// Mind Mappings trains its surrogate once per test program into this
// directory, small enough for a test (the searcher's own defaults take about
// a minute): the tests check what it does with a surrogate, not how good the
// surrogate is.
inline const QTemporaryDir& modelDir() {
    static const QTemporaryDir dir;
    return dir;
}

inline SearchSettings budget(std::int64_t evaluations, std::uint64_t seed = 1, int threads = 1) {
    SearchSettings s;
    s.budget.evaluations = evaluations;
    s.seed = seed;
    s.threads = threads;
    s.params["victory"] = 0; // let the budget end random-pruned too
    s.modelDir = modelDir().path().toStdString();
    s.params["samples"] = 2000;
    s.params["epochs"] = 2;
    // CoSA: the node limit alone ends each solve, so its schedule does not
    // depend on the machine's speed. The time limit only guards against a
    // hang: under AddressSanitizer CBC runs some 14 times slower (a 400-node
    // solve took 50 s in CI; 3.5 s in release), and a whole run's solves
    // outlasted the 20 s this limit used to be.
    s.params["max_nodes"] = 50;
    s.params["time_limit"] = 900;
    // Where keeps are free, one chain of one round of tiling and keeps: the
    // tests check what the driver does with CoSA, not how good its keeps are
    // (three rounds took CoSA's driver tests from 10 s to 140 s in release).
    s.params["keep_rounds"] = 1;
    s.params["keep_chains"] = 1;
    // ... and no keep screening (test_searchers' cosaScreensSpecialisedKeeps
    // tests it): six more solves per run.
    s.params["keep_screen"] = 0;
    return s;
}

// CoSA solves one MIP and evaluates its schedule: it neither spends a budget
// nor depends on the seed (see cosaSchedules for its own checks).
inline bool oneShot(const std::string& searcher) {
    return searcher == "cosa";
}

// Searchers whose evaluation costs far more than the model's (Mind Mappings'
// surrogate steps, REINFORCE's policy updates): a few hundred evaluations
// already take them through many rounds of their moves, and the sanitizer
// builds run their arithmetic ten to twenty times slower.
inline bool costlyPerEvaluation(const std::string& searcher) {
    return searcher == "mind-mappings" || searcher == "reinforce";
}

// Searchers that enumerate: no randomness, and an evaluation budget that also
// counts the optimal searcher's bounds.
inline bool enumerates(const std::string& searcher) {
    return searcher == "exhaustive" || searcher == "optimal";
}

} // namespace mw::test
