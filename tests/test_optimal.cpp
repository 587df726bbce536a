// The optimal searcher: each of its pruning rules, alone and all together,
// finds the optimum that plain exhaustive enumeration finds, on spaces small
// enough to enumerate (sliding windows, fan-outs whose link transfers Timeloop
// counts, MACs fed through a fan-out, dummy levels, bandwidth limits, bypass
// choices, constraints; EDP, energy and cycles). Its loop orders are as good
// as every order of real tilings; a budget stops it with a proven gap. (Its
// bound's rules: test_optimal_bound and test_optimal_bound_rules.)
#include "model/order_effects.h"
#include "optimal_support.h"
#include "search/optimal_orders.h"

#include <QtTest>

#include <bit>

using namespace mw;
using namespace mw::optimal_test;

class TestOptimal : public QObject {
    Q_OBJECT
  private slots:
    void eachRuleFindsTheExhaustiveOptimum();
    void orderCandidatesMatchEveryOrder();
    void levelKeepingNothingJoinsTheLevelAbove();
    void mergeRuleKeepsOpenOptima();
    void honoursConstraintsAndProves();
    void budgetStopsWithAProvenGap();
    void sameWalkOnAnyThreads();
    void refusesWhatItCannotProve();
};

void TestOptimal::eachRuleFindsTheExhaustiveOptimum() {
    // Rules: the bound, the temporal-order signatures, the spatial-order
    // equivalence, the merge of a level keeping nothing into the one above;
    // each alone (the others off), then all; each on the walk that decides
    // the fan-outs first, then the sliding dimensions' temporal factors (3),
    // on the one without the sliding step (1), and on the one that decides
    // each level whole (0).
    std::vector<std::array<int, 5>> configs;
    for (int walk : {3, 1, 0})
        for (const auto& rule : std::vector<std::array<int, 4>>{
                 {1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}, {1, 1, 1, 1}})
            configs.push_back({rule[0], rule[1], rule[2], rule[3], walk});
    double merged = 0;        // children the merge rule dropped, over all cases
    double orderedPruned = 0; // orderings the order walk's bound dropped
    for (const Case& c : smallCases()) {
        const MapSpace space(c.problem, c.arch, c.constraints);
        const SearchResult ex = runSearch(space, "exhaustive", unlimited(c.objective));
        QCOMPARE(ex.stopReason, std::string("space exhausted"));
        QVERIFY2(ex.found, c.name);
        for (const auto& rule : configs) {
            SearchSettings s = unlimited(c.objective);
            s.params["bound"] = rule[0];
            s.params["order_rule"] = rule[1];
            s.params["spatial_rule"] = rule[2];
            s.params["merge_rule"] = rule[3];
            s.params["spatial_first"] = rule[4] & 1;
            s.params["sliding_first"] = rule[4] >> 1;
            // No first incumbent from GAMMA (a small space is soon seen whole):
            // the rules alone, checked by the proof they give.
            s.params["primal"] = 0;
            const SearchResult r = runSearch(space, "optimal", s);
            const QString what = QString("%1, rules %2%3%4%10, walk %9: optimal %5 "
                                         "(%6 evaluations), exhaustive %7 (%8)")
                                     .arg(c.name)
                                     .arg(rule[0])
                                     .arg(rule[1])
                                     .arg(rule[2])
                                     .arg(r.bestCost, 0, 'g', 12)
                                     .arg(r.evaluations)
                                     .arg(ex.bestCost, 0, 'g', 12)
                                     .arg(ex.evaluations)
                                     .arg(rule[4])
                                     .arg(rule[3]);
            QVERIFY2(r.found && r.stats.at("proven") == 1.0, qPrintable(what));
            QVERIFY2(relativeDifference(r.bestCost, ex.bestCost) < 1e-12, qPrintable(what));
            Evaluation scratch;
            QVERIFY2(space.isLegal(r.best, scratch), qPrintable(what));
            if (rule[0] == 1 && rule[1] == 1 && rule[2] == 1)
                QVERIFY2(r.evaluations < ex.evaluations, qPrintable(what));
            merged += r.stats.at("pruned_by_merge");
            if (rule[3] == 0)
                QCOMPARE(r.stats.at("pruned_by_merge"), 0.0);
            orderedPruned += r.stats.at("orders_pruned_by_bound");
            if (rule[0] == 0)
                QCOMPARE(r.stats.at("orders_pruned_by_bound"), 0.0);
        }
        // The bound without the order walk's (every ordering of a tiling
        // evaluated): the same optimum.
        SearchSettings s = unlimited(c.objective);
        s.params["primal"] = 0;
        s.params["order_bound"] = 0;
        const SearchResult r = runSearch(space, "optimal", s);
        QVERIFY2(r.found && r.stats.at("proven") == 1.0, c.name);
        QVERIFY2(relativeDifference(r.bestCost, ex.bestCost) < 1e-12, c.name);
        QCOMPARE(r.stats.at("orders_pruned_by_bound"), 0.0);
    }
    QVERIFY(merged > 0);        // the merge rule acted on these spaces
    QVERIFY(orderedPruned > 0); // and the order walk's bound
}

void TestOptimal::orderCandidatesMatchEveryOrder() {
    // Tilings of real layers whose every order can be tried: the best of the
    // candidates equals the best of all.
    const std::vector<SampleLayer> cases = {
        {"eyeriss_like", conv2dProblem("conv3", 1, 1, 16, 16, 8, 8, 3, 3)},
        {"eyeriss_like", conv2dProblem("stride2", 1, 1, 8, 16, 7, 7, 3, 3, 2, 2)},
        {"simba_like", conv2dProblem("conv", 1, 1, 16, 16, 6, 6, 3, 3)},
        {"accel_a", conv2dProblem("conv", 1, 1, 8, 16, 6, 6, 3, 3)},
        {"tensor_core_like", gemmProblem("gemm", 32, 16, 16)},
    };
    int tilings = 0, fewer = 0;
    for (const SampleLayer& w : cases) {
        const Architecture a = loadArchitecture(kSamples + "architectures/" + w.arch + ".json");
        const Problem& p = w.problem;
        const MapSpace space(p, a);
        const SearchObjective o = SearchObjective::parse("edp");
        OrderCandidates pruned(space, true, true), every(space, false, false);
        Rng rng(3);
        Evaluation scratch;
        for (int sample = 0; sample < 400 && tilings < 150 * int(&w - cases.data() + 1); ++sample) {
            Mapping m;
            if (!space.sampleLegal(rng, m, scratch, 2000))
                continue;
            // Skip tilings with too many orders to try them all.
            double orders = 1;
            for (int l = 0; l < a.numLevels(); ++l) {
                int real = 0;
                for (int d = 0; d < p.numDims(); ++d)
                    real += m.levels[std::size_t(l)].temporal[d] > 1;
                for (int i = 2; i <= real; ++i)
                    orders *= i;
            }
            if (orders > 3000)
                continue;
            double bestAll = 1e300, bestPruned = 1e300;
            std::int64_t all = 0, candidates = 0;
            every.forEach(m, [&](const Mapping& x) {
                bestAll = std::min(bestAll, o.value(evaluate(p, a, x)));
                ++all;
                return true;
            });
            pruned.forEach(m, [&](const Mapping& x) {
                bestPruned = std::min(bestPruned, o.value(evaluate(p, a, x)));
                ++candidates;
                return true;
            });
            // The translations pruned kept from earlier tilings decide as a
            // fresh searcher's do.
            std::int64_t freshCandidates = 0;
            OrderCandidates(space, true, true).forEach(m, [&](const Mapping&) {
                ++freshCandidates;
                return true;
            });
            QCOMPARE(candidates, freshCandidates);
            QVERIFY2(bestPruned == bestAll,
                     qPrintable(QString("%1 on %2: best of %3 candidates %4, of all %5 orders %6")
                                    .arg(p.name.c_str(), w.arch)
                                    .arg(candidates)
                                    .arg(bestPruned, 0, 'g', 15)
                                    .arg(all)
                                    .arg(bestAll, 0, 'g', 15)));
            ++tilings;
            fewer += candidates < all;
        }
    }
    qInfo("%d tilings, %d with fewer candidates than orders", tilings, fewer);
    QVERIFY(tilings >= 400);
    QVERIFY(fewer > tilings / 2); // the rules do prune
}

namespace {

// Every figure of two evaluations equal (doubles to rounding).
bool sameFigures(const Evaluation& x, const Evaluation& y, int levels, int tensors) {
    auto near = [](double u, double v) { return std::abs(u - v) <= 1e-12 * std::max(u, v); };
    if (!x.valid || !y.valid || x.cycles != y.cycles || !near(x.energy, y.energy))
        return false;
    for (int l = 0; l < levels; ++l)
        for (int t = 0; t < tensors; ++t) {
            const TensorLevelStats &u = x.levels[l].tensors[t], &v = y.levels[l].tensors[t];
            if (u.reads != v.reads || u.fills != v.fills || u.updates != v.updates ||
                !near(u.energy, v.energy))
                return false;
        }
    return true;
}

} // namespace

void TestOptimal::levelKeepingNothingJoinsTheLevelAbove() {
    // The merge rule's premise (loopsJoinLevelAbove): where it holds of
    // level l - 1, level l's temporal loops cost exactly the same moved into
    // l - 1 as its innermost loops (a loop of a dimension both loop over
    // alone joining l - 1's). Sampled mappings, l made to keep nothing.
    // Where it fails only because l - 1 has spatial loops, the move does
    // change costs for some mapping (the rule must not act there).
    const std::vector<SampleLayer> cases = {
        {"eyeriss_like", conv2dProblem("conv3", 1, 1, 16, 16, 8, 8, 3, 3)},
        {"eyeriss_like", conv2dProblem("stride2", 1, 1, 8, 16, 7, 7, 3, 3, 2, 2)},
        {"simba_like", conv2dProblem("conv", 1, 1, 16, 16, 6, 6, 3, 3)},
        {"tensor_core_like", gemmProblem("gemm", 32, 16, 16)},
    };
    int same = 0, sameDimension = 0, underFanout = 0, changedUnderFanout = 0;
    for (const SampleLayer& w : cases) {
        const Architecture a = loadArchitecture(kSamples + "architectures/" + w.arch + ".json");
        const Problem& p = w.problem;
        const MapSpace space(p, a);
        const int L = a.numLevels(), D = p.numDims();
        Rng rng(5);
        Evaluation scratch;
        for (int sample = 0; sample < 150; ++sample) {
            Mapping m;
            if (!space.sampleLegal(rng, m, scratch, 2000))
                continue;
            for (int l = 1; l < L; ++l) {
                Mapping before = m;
                before.levels[std::size_t(l)].keepMask = 0;
                const Evaluation e0 = evaluate(p, a, before);
                const LevelMapping &inner = before.levels[std::size_t(l)],
                                   &outer = before.levels[std::size_t(l - 1)];
                std::uint32_t innerLoops = 0, outerLoops = 0;
                for (int d = 0; d < D; ++d) {
                    innerLoops |= std::uint32_t(inner.temporal[d] > 1) << d;
                    outerLoops |= std::uint32_t(outer.temporal[d] > 1) << d;
                }
                // The moves one order can hold: different dimensions, or
                // one and the same alone (two adjacent loops of it).
                const bool movable = (innerLoops & outerLoops) == 0 ||
                                     (innerLoops == outerLoops && std::popcount(innerLoops) == 1);
                const bool joins = loopsJoinLevelAbove(before, l - 1, D);
                QVERIFY2(movable || !joins, "joined levels whose loops no one order holds");
                if (!e0.valid || innerLoops == 0 || !movable)
                    continue;
                Mapping after = before;
                LevelMapping& moved = after.levels[std::size_t(l - 1)];
                int n = 0; // the order, outer to inner: l - 1's loops, then l's others
                for (const LevelMapping* from : {&outer, &inner})
                    for (int i = 0; i < D; ++i) {
                        const std::uint8_t d = from->order[std::size_t(i)];
                        if (from->temporal[d] > 1 && (from == &outer || !((outerLoops >> d) & 1u)))
                            moved.order[std::size_t(n++)] = d;
                    }
                for (int d = 0; d < D; ++d) {
                    if (!(((innerLoops | outerLoops) >> d) & 1u))
                        moved.order[std::size_t(n++)] = std::uint8_t(d);
                    moved.temporal[d] *= inner.temporal[d];
                    after.levels[std::size_t(l)].temporal[d] = 1;
                }
                const bool equal = sameFigures(e0, evaluate(p, a, after), L, p.numTensors());
                if (!joins) { // spatial loops at l - 1
                    underFanout += 1;
                    changedUnderFanout += !equal;
                    continue;
                }
                QVERIFY2(equal, qPrintable(QString("%1 on %2, level %3 moved into %4")
                                               .arg(p.name.c_str(), w.arch)
                                               .arg(a.levels[std::size_t(l)].name.c_str())
                                               .arg(a.levels[std::size_t(l - 1)].name.c_str())));
                same += 1;
                sameDimension += (innerLoops & outerLoops) != 0;
            }
        }
    }
    qInfo("%d moves cost the same (%d joining a loop of one dimension); %d of %d under a "
          "fan-out changed costs",
          same, sameDimension, changedUnderFanout, underFanout);
    QVERIFY(same >= 500);
    QVERIFY(sameDimension >= 10);
    QVERIFY(changedUnderFanout > 0);
}

void TestOptimal::mergeRuleKeepsOpenOptima() {
    // Open spaces of a real architecture (Eyeriss-like: dummy fan-out levels,
    // three scratchpads per PE, any of which may keep nothing), too large to
    // enumerate: the walk proves the same optimum with the merge rule as
    // without, through fewer nodes.
    const Architecture a = loadArchitecture(kSamples + "architectures/eyeriss_like.json");
    for (const Problem& p : {conv2dProblem("conv3", 1, 1, 8, 8, 7, 7, 3, 3),
                             conv2dProblem("stride2", 1, 1, 16, 8, 4, 4, 3, 3, 2, 2)}) {
        const MapSpace space(p, a);
        SearchResult r[2];
        for (int rule = 0; rule < 2; ++rule) {
            SearchSettings s = unlimited();
            s.params["merge_rule"] = rule;
            r[rule] = runSearch(space, "optimal", s);
            QVERIFY2(r[rule].found && r[rule].stats.at("proven") == 1.0, p.name.c_str());
        }
        QCOMPARE(r[1].bestCost, r[0].bestCost);
        QVERIFY(r[1].stats.at("pruned_by_merge") > 0);
        QVERIFY(r[1].stats.at("nodes") < r[0].stats.at("nodes"));
    }
}

void TestOptimal::honoursConstraintsAndProves() {
    const Architecture a = loadArchitecture(kSamples + "architectures/eyeriss_like.json");
    const Problem p = conv2dProblem("small", 1, 1, 16, 16, 7, 7, 3, 3);
    const MapSpace space(
        p, a, loadConstraints(kSamples + "constraints/eyeriss_row_stationary.json", p, a));
    const SearchResult r = runSearch(space, "optimal", unlimited());
    QVERIFY(r.found);
    QCOMPARE(r.stopReason, std::string("proven optimal"));
    QCOMPARE(r.stats.at("proven"), 1.0);
    QVERIFY(space.meetsConstraints(r.best));
    QVERIFY(evaluate(p, a, r.best).valid);
    // No other searcher beats it.
    for (const char* name : {"gamma", "annealing", "random-pruned"}) {
        SearchSettings s = unlimited();
        s.budget.evaluations = 5000;
        const SearchResult other = runSearch(space, name, s);
        QVERIFY2(other.bestCost >= r.bestCost * (1 - 1e-12), name);
    }
}

void TestOptimal::budgetStopsWithAProvenGap() {
    const Architecture a = loadArchitecture(kSamples + "architectures/eyeriss_like.json");
    const Problem p = conv2dProblem("conv3", 1, 1, 128, 128, 28, 28, 3, 3);
    const MapSpace space(p, a); // unconstrained: far beyond 20,000 evaluations
    SearchSettings s = unlimited();
    s.budget.evaluations = 20000;
    const SearchResult r = runSearch(space, "optimal", s);
    QVERIFY(r.found);
    QVERIFY(r.evaluations <= 20000);
    QCOMPARE(r.stats.at("proven"), 0.0);
    const double gap = r.stats.at("gap");
    QVERIFY2(gap > 0 && std::isfinite(gap), qPrintable(QString::number(gap)));
    QVERIFY2(r.stopReason.find("evaluation budget spent before the proof") == 0,
             r.stopReason.c_str());
    QVERIFY(r.stats.at("bound") <= r.bestCost);
}

void TestOptimal::sameWalkOnAnyThreads() {
    // The bounds of a node's children are computed on every thread of the
    // run: the walk, its figures and its answer must not depend on how many.
    const Architecture a = loadArchitecture(kSamples + "architectures/simba_like.json");
    const Problem p = conv2dProblem("conv", 1, 1, 64, 64, 14, 14, 3, 3);
    const MapSpace space(p, a, loadConstraints(kSamples + "constraints/simba_like.json", p, a));
    std::vector<SearchResult> runs;
    for (int threads : {1, 2}) {
        SearchSettings s = unlimited();
        s.budget.evaluations = 300000; // bounds and evaluations: stops mid-walk
        s.threads = threads;
        runs.push_back(runSearch(space, "optimal", s));
    }
    QVERIFY(runs[0].found);
    QVERIFY(runs[0].stats.at("bounds") > 10000); // nodes of many children ran in parallel
    for (const char* stat : {"bounds", "nodes", "tilings", "pruned_by_bound", "proven", "gap"})
        QVERIFY2(runs[0].stats.at(stat) == runs[1].stats.at(stat), stat);
    QCOMPARE(runs[0].bestCost, runs[1].bestCost);
    QCOMPARE(runs[0].evaluations, runs[1].evaluations);
}

void TestOptimal::refusesWhatItCannotProve() {
    const Architecture a = slidingRow();
    const Problem p = conv1d();
    const MapSpace space(p, a);
    SearchSettings s = unlimited("edp@Inputs");
    const SearchResult r = runSearch(space, "optimal", s);
    QVERIFY(!r.found);
    QVERIFY2(r.stopReason.find("dense") != std::string::npos, r.stopReason.c_str());
}

QTEST_MAIN(TestOptimal)
#include "test_optimal.moc"
