// Mind Mappings: its surrogate (trained, saved, shipped, refused and
// retrained), the search that descends it (an answer within its budget,
// chains on threads), and the MLP under it (input gradients, the one-input
// inference kernels against Eigen's).
#include "common/error.h"
#include "learn/mlp.h"
#include "learn/mlp_inference.h"
#include "model/cost_model.h"
#include "search/surrogate.h"
#include "search_support.h"

#include <QtTest>

#include <atomic>
#include <cmath>
#include <cstring>
#include <set>

using namespace mw;
using namespace mw::test;

class TestMindMappings : public QObject {
    Q_OBJECT
  private slots:
    void mindMappingsNeedsSurrogate();
    void mindMappingsAnswersFromTraining();
    void mindMappingsFindsBundledSurrogate();
    void mindMappingsRetrainsRefusedSurrogate();
    void mindMappingsChainsOnThreads();
    void surrogateSavesAndPredicts();
    void mlpInputGradient();
    void mlpInferenceAgreesWithMlp();
};

void TestMindMappings::mindMappingsNeedsSurrogate() {
    const NoBundledSurrogates none;
    const Architecture a = eyeriss();
    const Problem p = conv3x3();
    const MapSpace space(p, a);
    const QTemporaryDir empty;
    SearchSettings s = budget(100);
    s.modelDir = empty.path().toStdString();
    s.params["train"] = 0;
    const SearchResult r = runSearch(space, "mind-mappings", s);
    QVERIFY(!r.found);
    QCOMPARE(r.evaluations, 0LL);
    QVERIFY2(r.stopReason.find("no usable surrogate") != std::string::npos, r.stopReason.c_str());
    QVERIFY(r.stopReason.find(empty.path().toStdString()) != std::string::npos);

    // A budget that ends during training ends with the best of this layer's
    // training mappings, and says so; within a shape of data, not after all
    // of it (these samples take about 7 s to generate on one core). A cancel
    // keeps them too.
    s.params["train"] = 1;
    s.params["samples"] = 500000;
    s.budget = {};
    s.budget.seconds = 0.2;
    const SearchResult late = runSearch(space, "mind-mappings", s);
    QVERIFY2(late.seconds < 3.0, QByteArray::number(late.seconds));
    QVERIFY2(late.stopReason.find("surrogate not ready: best of 500 training evaluations") !=
                 std::string::npos,
             late.stopReason.c_str());
    QVERIFY(late.found && late.bestEvaluation.valid);
    QVERIFY(late.evaluations >= 1 && late.evaluations <= 8);
    std::atomic<bool> cancel{true};
    s.budget.seconds = 0;
    s.budget.evaluations = 100;
    const SearchResult cancelled = runSearch(space, "mind-mappings", s, {}, &cancel);
    QVERIFY(cancelled.cancelled);
    QCOMPARE(cancelled.stopReason, std::string("cancelled"));
    QVERIFY(cancelled.found);
}

// The case: an empty model folder and a 2 s budget, with the
// searcher's own training defaults (far more than 2 s of work), still end
// with a legal mapping: the best this layer's training evaluations found.
void TestMindMappings::mindMappingsAnswersFromTraining() {
    const NoBundledSurrogates none;
    const Architecture a = eyeriss();
    const Problem p = conv3x3();
    const MapSpace space(p, a);
    const QTemporaryDir empty;
    SearchSettings s;
    s.budget.seconds = 2.0;
    s.modelDir = empty.path().toStdString();
    const SearchResult r = runSearch(space, "mind-mappings", s);
    QVERIFY2(r.found, r.stopReason.c_str());
    Evaluation scratch;
    QVERIFY(space.isLegal(r.best, scratch));
    QCOMPARE(r.stats.at("training_answer"), 1.0);
    QVERIFY2(r.stopReason.find("surrogate not ready") != std::string::npos, r.stopReason.c_str());
    // Nothing was saved: the next run trains again rather than use half a surrogate.
    QVERIFY(QDir(empty.path()).entryList({"*.surrogate"}).isEmpty());
}

// The surrogates shipped for the sample networks on the default session's
// architecture load from a fresh checkout: every layer's family has one, and
// none is stale (a change to the cost model that changes costs fails here:
// rerun resources/surrogates/make.sh). A run then searches at once.
void TestMindMappings::mindMappingsFindsBundledSurrogate() {
    const Architecture a = eyeriss();
    std::set<std::string> checked;
    for (const char* net : {"resnet50", "mobilenet_v3", "transformer_block", "vgg16", "resnet18",
                            "mindmappings_cnn"}) {
        for (const LayerSpec& layer : loadNetwork(kSamples + "networks/" + net + ".json").layers) {
            const Problem p = buildProblem(layer);
            const std::string path = Surrogate::bundledPath(p, a);
            if (!checked.insert(path).second)
                continue;
            try {
                Surrogate::load(path, p, a);
            } catch (const InputError& e) {
                QFAIL(qPrintable(QString("%1 %2: %3").arg(net, layer.name.c_str(), e.what())));
            }
        }
    }
    QCOMPARE(checked.size(), std::size_t(4)); // stride 1 and 2 convolutions, GEMM, batched GEMM

    const QTemporaryDir empty;
    SearchSettings s = budget(200);
    s.modelDir = empty.path().toStdString();
    const Problem p = conv3x3(); // the space keeps a reference
    const MapSpace space(p, a);
    const SearchResult r = runSearch(space, "mind-mappings", s);
    QVERIFY2(r.found, r.stopReason.c_str());
    QCOMPARE(r.stats.at("surrogate_bundled"), 1.0);
    QVERIFY(!r.stats.count("surrogate_trained_seconds"));
    QVERIFY(r.stats.at("surrogate_steps") > 0);
    QCOMPARE(r.evaluations, 200LL);
}

// A file where the surrogate should be that cannot serve (another family's,
// or made with another cost model) is refused with one line naming it, and
// a new one is trained in its place.
void TestMindMappings::mindMappingsRetrainsRefusedSurrogate() {
    const NoBundledSurrogates none;
    const Architecture a = eyeriss();
    const Problem conv = conv3x3();
    const MapSpace space(conv, a);
    const QTemporaryDir dir;
    const std::string path = Surrogate::cachePath(dir.path().toStdString(), conv, a);
    SurrogateOptions o;
    o.samples = 1000;
    o.epochs = 1;
    SurrogateReport report;
    Surrogate::train(gemmProblem("g", 64, 64, 64), a, o, report).save(path);
    SearchSettings s = budget(50);
    s.modelDir = dir.path().toStdString();
    // Only the parameters Mind Mappings reads (the others are noted as unread).
    s.params = {{"samples", 2000}, {"epochs", 2}};
    const SearchResult r = runSearch(space, "mind-mappings", s);
    QVERIFY2(r.found, r.stopReason.c_str());
    QCOMPARE(r.notes.size(), std::size_t(1));
    QVERIFY2(r.notes[0].find(path) != std::string::npos &&
                 r.notes[0].find("another architecture or problem family") != std::string::npos &&
                 r.notes[0].find('\n') == std::string::npos,
             r.notes[0].c_str());
    QVERIFY(r.stats.count("surrogate_trained_seconds"));
    Surrogate::load(path, conv, a); // retrained for this family, in its place
    const SearchResult again = runSearch(space, "mind-mappings", s);
    QVERIFY(!again.stats.count("surrogate_trained_seconds"));
    // Loaded, not trained: the training parameters were not read, and said so.
    QCOMPARE(again.notes.size(), std::size_t(2));
    for (const std::string& note : again.notes)
        QVERIFY2(note.find("was not read by this run") != std::string::npos, note.c_str());
}

// Mind Mappings descends two chains at once by default, the second on its
// own RNG stream and the other objective: the first is the one-chain search
// step for step (its checks, in order, are among the pair's), and the pair
// is the same run on one thread or two.
void TestMindMappings::mindMappingsChainsOnThreads() {
    const Architecture a = eyeriss();
    const Problem p = conv3x3();
    const MapSpace space(p, a);
    const QTemporaryDir empty;
    SearchSettings one = budget(150);
    one.modelDir = empty.path().toStdString();
    one.deduplicate = false; // every check charged and traced
    SearchSettings two = one;
    one.params["chains"] = 1;
    two.budget.evaluations = 300;
    two.threads = 2;
    const SearchResult alone = runSearch(space, "mind-mappings", one);
    const SearchResult pair = runSearch(space, "mind-mappings", two);
    two.threads = 1;
    const SearchResult again = runSearch(space, "mind-mappings", two);
    QVERIFY2(alone.found && pair.found, pair.stopReason.c_str());
    QCOMPARE(alone.stats.at("chains"), 1.0);
    QCOMPARE(pair.stats.at("chains"), 2.0);
    QCOMPARE(alone.trace.size(), std::size_t(150));
    QCOMPARE(pair.trace.size(), std::size_t(300));
    std::size_t matched = 0;
    for (const TracePoint& t : pair.trace)
        if (matched < alone.trace.size() && t.cost == alone.trace[matched].cost)
            ++matched;
    QCOMPARE(matched, alone.trace.size());
    QVERIFY(pair.bestCost <= alone.bestCost);
    QCOMPARE(again.bestCost, pair.bestCost);
    QCOMPARE(space.hash(again.best), space.hash(pair.best));
    QCOMPARE(again.stats.at("surrogate_steps"), pair.stats.at("surrogate_steps"));
}

void TestMindMappings::surrogateSavesAndPredicts() {
    const Architecture a = eyeriss();
    const Problem p = conv3x3();
    SurrogateOptions o;
    o.samples = 3000;
    o.epochs = 3;
    SurrogateReport report;
    Surrogate s = Surrogate::train(p, a, o, report);
    QCOMPARE(report.samples, 3000);
    QVERIFY(report.rankCorrelation > -1.0 && report.rankCorrelation <= 1.0);
    const QTemporaryDir dir;
    const std::string path = dir.filePath("s.surrogate").toStdString();
    s.save(path);
    Surrogate again = Surrogate::load(path, p, a);
    // Same prediction and gradient after the round trip.
    const MapSpace space(p, a);
    Rng rng(5);
    Evaluation e;
    Mapping m;
    QVERIFY(space.sampleLegal(rng, m, e));
    std::vector<float> x(std::size_t(s.codec().features()));
    s.codec().encodeProblem(p, x.data());
    s.codec().encode(m, x.data() + s.codec().problemFeatures());
    std::vector<float> g1(x.size()), g2(x.size());
    QCOMPARE(s.predict(x.data(), g1.data()), again.predict(x.data(), g2.data()));
    QVERIFY(g1 == g2);
    // Each descent's gradient is that of its own objective: central
    // differences along the mapping features agree (the network is piecewise
    // linear: a step across a kink may miss, rarely at this step), and the two
    // differ.
    std::vector<std::vector<float>> gradients;
    for (const SurrogateDescent d : {SurrogateDescent::LogEdp, SurrogateDescent::OutputSum}) {
        std::vector<float> g(x.size());
        s.predict(x.data(), g.data(), d);
        int agree = 0, checked = 0;
        constexpr float h = 1e-3f;
        for (std::size_t i = std::size_t(s.codec().problemFeatures()); i < x.size(); ++i) {
            std::vector<float> up = x, down = x;
            up[i] += h;
            down[i] -= h;
            const double difference =
                (s.descentObjective(up.data(), d) - s.descentObjective(down.data(), d)) / (2.0 * h);
            ++checked;
            agree += std::abs(difference - g[i]) <= 1e-2 * (1.0 + std::abs(g[i]));
        }
        QVERIFY2(agree * 10 >= checked * 9,
                 qPrintable(QString("%1 of %2 agree").arg(agree).arg(checked)));
        gradients.push_back(g);
    }
    QVERIFY(gradients[0] != gradients[1]);
    // Projection of an encoded legal mapping gives a legal mapping.
    Mapping back;
    QVERIFY(s.codec().project(x.data(), space, back, rng, e));
    QVERIFY(evaluate(p, a, back).valid);
    // Another family or a broken file is refused with the file named.
    const Problem gemm = gemmProblem("g", 64, 64, 64);
    try {
        Surrogate::load(path, gemm, a);
        QFAIL("a conv surrogate loaded for a GEMM");
    } catch (const InputError& err) {
        QVERIFY(std::string(err.what()).find(path) != std::string::npos);
    }
    QVERIFY_THROWS_EXCEPTION(InputError, Surrogate::load(dir.filePath("none").toStdString(), p, a));
    // One made with another cost model (its fingerprint, after the layout
    // signature, differs) is stale.
    std::string bytes = readTextFile(path);
    std::uint32_t n = 0;
    std::memcpy(&n, bytes.data() + 4, sizeof n);
    bytes[8 + n] = char(bytes[8 + n] ^ 0x5a);
    const std::string stale = dir.filePath("stale.surrogate").toStdString();
    writeTextFile(stale, bytes);
    try {
        Surrogate::load(stale, p, a);
        QFAIL("a surrogate of another cost model loaded");
    } catch (const InputError& err) {
        QVERIFY2(std::string(err.what()).find("stale") != std::string::npos, err.what());
    }
}

void TestMindMappings::mlpInputGradient() {
    Rng rng(3);
    Mlp net({5, 8, 8, 3}, rng);
    Eigen::MatrixXf x(5, 1);
    x << 0.3f, -1.2f, 0.7f, 2.0f, -0.4f;
    Eigen::MatrixXf dy(3, 1);
    dy << 1.0f, -0.5f, 0.25f;
    const Eigen::MatrixXf y0 = net.forward(x);
    const Eigen::MatrixXf dx = net.backward(dy);
    // What backward() returns matches finite differences of dy . output.
    for (int i = 0; i < 5; ++i) {
        Eigen::MatrixXf xp = x, xm = x;
        xp(i, 0) += 1e-2f;
        xm(i, 0) -= 1e-2f;
        const float up = (dy.transpose() * net.forward(xp))(0, 0);
        const float down = (dy.transpose() * net.forward(xm))(0, 0);
        QVERIFY(std::abs((up - down) / 2e-2f - dx(i, 0)) < 1e-2f * (1.0f + std::abs(dx(i, 0))));
    }
    // It accumulated the parameters' gradients: a step changes the output.
    net.step(1.0f, 0.0f);
    QVERIFY(net.forward(x) != y0);
}

// The one-input kernels give Eigen's forward and input gradient (to rounding:
// they add in another order), and the same bits with or without AVX2. Widths
// that are not multiples of 8 take the kernels' tails; the input's zeros
// and the ReLUs' take the skipped columns.
void TestMindMappings::mlpInferenceAgreesWithMlp() {
    Rng rng(11);
    Mlp net({37, 64, 29, 5}, rng);
    MlpInference best(net), portable(net, MlpInference::Kernels::Portable);
    QCOMPARE(best.inputs(), 37);
    QCOMPARE(best.outputs(), 5);
    for (int trial = 0; trial < 20; ++trial) {
        Eigen::MatrixXf x(37, 1), dy(5, 1);
        for (int i = 0; i < 37; ++i)
            x(i, 0) = rng.uniform() < 0.3 ? 0.0f : float(rng.uniform() * 4.0 - 2.0);
        for (int i = 0; i < 5; ++i)
            dy(i, 0) = trial % 2 == 0 ? 1.0f : float(rng.uniform() - 0.5);
        const Eigen::MatrixXf y = net.forward(x);
        const Eigen::MatrixXf dx = net.backward(dy); // (the weights stay as they are)
        const float* yBest = best.forward(x.data());
        const float* yPortable = portable.forward(x.data());
        std::vector<float> dxBest(37), dxPortable(37);
        best.inputGradient(dy.data(), dxBest.data());
        portable.inputGradient(dy.data(), dxPortable.data());
        for (int i = 0; i < 5; ++i) {
            QVERIFY(yBest[i] == yPortable[i]); // QCOMPARE would be fuzzy
            QVERIFY2(
                std::abs(yBest[i] - y(i, 0)) <= 1e-4f * (1.0f + std::abs(y(i, 0))),
                qPrintable(QString("output %1: %2 against %3").arg(i).arg(yBest[i]).arg(y(i, 0))));
        }
        for (int i = 0; i < 37; ++i) {
            QVERIFY(dxBest[std::size_t(i)] == dxPortable[std::size_t(i)]);
            QVERIFY2(std::abs(dxBest[std::size_t(i)] - dx(i, 0)) <=
                         1e-4f * (1.0f + std::abs(dx(i, 0))),
                     qPrintable(QString("gradient %1: %2 against %3")
                                    .arg(i)
                                    .arg(dxBest[std::size_t(i)])
                                    .arg(dx(i, 0))));
        }
    }
}

QTEST_GUILESS_MAIN(TestMindMappings)
#include "test_mind_mappings.moc"
