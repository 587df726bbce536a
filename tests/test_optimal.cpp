// The optimal searcher: each of its pruning rules, alone and all together,
// finds the optimum that plain exhaustive enumeration finds, on spaces small
// enough to enumerate (sliding windows, fan-outs whose link transfers Timeloop
// counts, MACs fed through a fan-out, dummy levels, bandwidth limits, bypass
// choices, constraints; EDP, energy and cycles). Its loop orders are as good
// as every order of real tilings; a budget stops it with a proven gap. (Its
// bound's rules: test_optimal_bound.)
#include "model/order_effects.h"
#include "optimal_support.h"
#include "search/optimal_orders.h"

#include <QtTest>

using namespace mw;
using namespace mw::optimal_test;

class TestOptimal : public QObject {
    Q_OBJECT
  private slots:
    void eachRuleFindsTheExhaustiveOptimum();
    void orderCandidatesMatchEveryOrder();
    void honoursConstraintsAndProves();
    void budgetStopsWithAProvenGap();
    void sameWalkOnAnyThreads();
    void refusesWhatItCannotProve();
};

void TestOptimal::eachRuleFindsTheExhaustiveOptimum() {
    // Rules: the bound, the temporal-order signatures, the spatial-order
    // equivalence; each alone (the others off), then all; each on the walk
    // that decides the fan-outs first, then the sliding dimensions' temporal
    // factors (3), on the one without the sliding step (1), and on the one
    // that decides each level whole (0).
    std::vector<std::array<int, 4>> configs;
    for (int walk : {3, 1, 0})
        for (const auto& rule :
             std::vector<std::array<int, 3>>{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}})
            configs.push_back({rule[0], rule[1], rule[2], walk});
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
            s.params["spatial_first"] = rule[3] & 1;
            s.params["sliding_first"] = rule[3] >> 1;
            // No first incumbent from GAMMA (a small space is soon seen whole):
            // the rules alone, checked by the proof they give.
            s.params["primal"] = 0;
            const SearchResult r = runSearch(space, "optimal", s);
            const QString what = QString("%1, rules %2%3%4, walk %9: optimal %5 "
                                         "(%6 evaluations), exhaustive %7 (%8)")
                                     .arg(c.name)
                                     .arg(rule[0])
                                     .arg(rule[1])
                                     .arg(rule[2])
                                     .arg(r.bestCost, 0, 'g', 12)
                                     .arg(r.evaluations)
                                     .arg(ex.bestCost, 0, 'g', 12)
                                     .arg(ex.evaluations)
                                     .arg(rule[3]);
            QVERIFY2(r.found && r.stats.at("proven") == 1.0, qPrintable(what));
            QVERIFY2(relativeDifference(r.bestCost, ex.bestCost) < 1e-12, qPrintable(what));
            Evaluation scratch;
            QVERIFY2(space.isLegal(r.best, scratch), qPrintable(what));
            if (rule[0] == 1 && rule[1] == 1 && rule[2] == 1)
                QVERIFY2(r.evaluations < ex.evaluations, qPrintable(what));
        }
    }
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
