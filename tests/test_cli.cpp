// mapwright-cli as scripts use it: the documented command forms, the JSON
// fields other tools read, a one-line error with a non-zero exit on bad
// input, and Ctrl-C keeping what is finished. (Sweeps: test_cli_sweep.)
#include "bench/model_bench.h"
#include "cli_interrupt.h"
#include "cli_support.h"

#include <QElapsedTimer>
#include <QRegularExpression>

#include <csignal>
#include <filesystem>
#include <random>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace mw::cli_test;

namespace {

// Starts the CLI, sends SIGINT after `delayMs` (and again after `againMs`, if
// given), and waits for it to end.
Run interrupt(const QStringList& args, int delayMs, int againMs = -1) {
    QProcess p;
    p.start(kCli, args);
    if (!p.waitForStarted(10000))
        return {-1, "", "did not start"};
    std::this_thread::sleep_for(std::chrono::milliseconds(delayMs));
    ::kill(static_cast<pid_t>(p.processId()), SIGINT);
    if (againMs >= 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(againMs));
        ::kill(static_cast<pid_t>(p.processId()), SIGINT);
    }
    if (!p.waitForFinished(60000))
        return {-1, "", "did not stop"};
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2,
            QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

} // namespace

class TestCli : public QObject {
    Q_OBJECT
  private slots:
    void evaluateJson();
    void evaluateText();
    void evaluateInvalidMapping();
    void importAndExportTimeloop();
    void importUserFilesForTheMapper();
    void timeloopFilesWhereJsonIsRead();
    void estimateAgainstAccelergy();
    void benchModel();
    void benchSearch();
    void benchSearchTakesParams();
    void benchSearchPrintsOnce();
    void searchList();
    void mindMappingsShowsItsTraining();
    void searchWritesResults();
    void compareTable();
    void distancesFromTheOptimum();
    void networkTotals();
    void importOnnxThenSearch();
    void searchBadInput();
    void badInput();
    void intrinsicMatches();
    void interruptsKeepWhatIsFinished();
    void secondInterruptExitsAtOnce();
};

void TestCli::evaluateJson() {
    const Run r = run(QStringList{"evaluate"} + eyerissArgs() + QStringList{"--json"});
    QCOMPARE(r.exitCode, 0);
    const mw::Json j = mw::Json::parse(r.out.toStdString());
    QCOMPARE(j.at("valid").get<bool>(), true);
    QVERIFY(j.at("violations").is_array() && j.at("violations").empty());
    QCOMPARE(j.at("cycles").get<std::int64_t>(), 5505024LL);
    QCOMPARE(j.at("computes").get<std::int64_t>(), 924844032LL);
    QVERIFY(std::abs(j.at("energy_pJ").get<double>() - 2764.38e6) < 0.005 * 2764.38e6);
    QCOMPARE(j.at("utilization").get<double>(), 1.0);
    QVERIFY(j.at("edp").get<double>() > 0.0);
    const auto& levels = j.at("levels");
    QCOMPARE(levels.at(0).at("name").get<std::string>(), std::string("DRAM")); // outermost first
    const auto& w = levels.at(0).at("tensors").at("Weights");
    for (const char* key : {"reads", "fills", "updates", "utilized_capacity", "energy_pJ"})
        QVERIFY2(w.contains(key), key);
    QCOMPARE(w.at("reads").get<std::int64_t>(), 8257536LL);
    QVERIFY(levels.at(1).contains("cycles") && levels.at(1).contains("energy_pJ"));
}

void TestCli::evaluateText() {
    const Run r = run(QStringList{"evaluate"} + eyerissArgs());
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.contains("| for Q in [0:4)"));
    QVERIFY(r.out.contains("for Q in [0:14) (Spatial-X)"));
    QVERIFY(r.out.contains("<< Compute >>"));
    QVERIFY(r.out.contains("cycles       5505024"));
}

void TestCli::evaluateInvalidMapping() {
    QTemporaryDir tmp;
    mw::Json m = mw::readJsonFile(kSamples + "mappings/eyeriss_tutorial_conv_timeloop.json");
    m["levels"][0]["temporal"][0]["factor"] = 8; // Q: 8 * 14 != 56
    const std::string path = tmp.path().toStdString() + "/bad.json";
    mw::writeTextFile(path, m.dump());
    QStringList args = eyerissArgs();
    args[5] = q(path);
    const Run r = run(QStringList{"evaluate"} + args + QStringList{"--json"});
    QCOMPARE(r.exitCode, 1);
    const mw::Json j = mw::Json::parse(r.out.toStdString());
    QCOMPARE(j.at("valid").get<bool>(), false);
    QVERIFY(j.at("violations").at(0).get<std::string>().find("dimension Q") != std::string::npos);
}

void TestCli::importAndExportTimeloop() {
    QTemporaryDir tmp;
    const std::string d = kCases + "06-mapper-convlayer-eyeriss/";
    const QString out = tmp.path() + "/imported";
    Run r = run({"import-timeloop", q(d + "input.yaml"), q(d + "ERT.yaml"), q(d + "map.yaml"),
                 "--out", out});
    QCOMPARE(r.exitCode, 0);
    for (const char* f : {"arch.json", "workload.json", "mapping.json"})
        QVERIFY(fs::exists(fs::path(out.toStdString()) / f));
    const QString exported = tmp.path() + "/exported";
    r = run({"export-timeloop", "--arch", out + "/arch.json", "--workload", out + "/workload.json",
             "--mapping", out + "/mapping.json", "--out", exported});
    QCOMPARE(r.exitCode, 0);
    for (const char* f : {"arch.yaml", "problem.yaml", "mapping.yaml", "ERT.yaml"})
        QVERIFY(fs::exists(fs::path(exported.toStdString()) / f));
    r = run({"evaluate", "--arch", out + "/arch.json", "--workload", out + "/workload.json",
             "--mapping", out + "/mapping.json", "--json"});
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(mw::Json::parse(r.out.toStdString()).at("cycles").get<std::int64_t>(), 5505024LL);
}

// Timeloop files as a user writes them, without tables: estimated energies,
// the constraints as a constraints file, the mapper's search as a session
// run; exported back with everything timeloop-mapper needs.
void TestCli::importUserFilesForTheMapper() {
    QTemporaryDir tmp;
    const std::string u =
        std::string(MAPWRIGHT_TEST_DATA) + "/timeloop-user/06-mapper-convlayer-eyeriss/";
    const QString out = tmp.path() + "/imported";
    Run r = run({"import-timeloop", q(u + "arch.yaml"), q(u + "problem.yaml"),
                 q(u + "constraints.yaml"), q(u + "mapper.yaml"), "--out", out});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("estimated at 32 nm"), qPrintable(r.out));
    QVERIFY2(r.out.contains("--searcher random-pruned --objective cycles"), qPrintable(r.out));
    for (const char* f : {"arch.json", "workload.json", "constraints.json", "session.json"})
        QVERIFY2(fs::exists(fs::path(out.toStdString()) / f), f);
    const mw::Json session = mw::readJsonFile(out.toStdString() + "/session.json");
    QCOMPARE(session.at("runs").size(), std::size_t(1));
    QCOMPARE(session.at("runs")[0].at("searcher").get<std::string>(), std::string("random-pruned"));
    QVERIFY(session.contains("constraints"));
    const QString exported = tmp.path() + "/exported";
    r = run({"export-timeloop", "--arch", out + "/arch.json", "--workload", out + "/workload.json",
             "--constraints", out + "/constraints.json", "--out", exported});
    QCOMPARE(r.exitCode, 0);
    for (const char* f :
         {"arch.yaml", "problem.yaml", "ERT.yaml", "ART.yaml", "constraints.yaml", "mapper.yaml"})
        QVERIFY2(fs::exists(fs::path(exported.toStdString()) / f), f);
    QVERIFY(!fs::exists(fs::path(exported.toStdString()) / "mapping.yaml")); // none given
    // A constraints file naming a level the architecture lacks: one line, the file named.
    const std::string bad = tmp.path().toStdString() + "/bad.json";
    mw::Json c = mw::readJsonFile(out.toStdString() + "/constraints.json");
    c["levels"][0]["level"] = "L9";
    mw::writeTextFile(bad, c.dump());
    expectOneLineError(run({"export-timeloop", "--arch", out + "/arch.json", "--workload",
                            out + "/workload.json", "--constraints", q(bad), "--out", exported}),
                       "'L9' is not a level");
}

// Timeloop's constraints YAML where a command reads constraints for its
// layers: the same search as import-timeloop's JSON gives; a Timeloop
// problem (and an ONNX model) as a workload. Where only our JSON is read, a
// Timeloop file gets one line saying how to convert it.
void TestCli::timeloopFilesWhereJsonIsRead() {
    QTemporaryDir tmp;
    const std::string u =
        std::string(MAPWRIGHT_TEST_DATA) + "/timeloop-user/06-mapper-convlayer-eyeriss/";
    const QString in = tmp.path() + "/imported";
    QCOMPARE(run({"import-timeloop", q(u + "arch.yaml"), q(u + "problem.yaml"),
                  q(u + "constraints.yaml"), "--out", in})
                 .exitCode,
             0);
    const QStringList design{"--arch", in + "/arch.json", "--workload", in + "/workload.json"};
    auto best = [&](const QString& constraints) {
        const QString out = tmp.path() + "/search";
        const Run r = run(QStringList{"search"} + design +
                          QStringList{"--searcher", "random-pruned", "--budget", "300", "--seed",
                                      "1", "--constraints", constraints, "--out", out});
        if (r.exitCode != 0)
            return QString("failed: ") + r.err;
        return QString::number(
            mw::readJsonFile(out.toStdString() + "/result.json").at("best_objective").get<double>(),
            'g', 17);
    };
    const QString fromJson = best(in + "/constraints.json");
    QVERIFY2(!fromJson.startsWith("failed"), qPrintable(fromJson));
    QCOMPARE(best(q(u + "constraints.yaml")), fromJson);
    // A network under them: the totals the JSON gives.
    auto totals = [&](const QString& constraints) {
        const Run n = run(QStringList{"network"} + design +
                          QStringList{"--searcher", "random-pruned", "--budget", "300",
                                      "--constraints", constraints});
        return n.exitCode == 0 ? n.out.section("totals", 1) : "failed: " + n.err;
    };
    QVERIFY(totals(q(u + "constraints.yaml")).contains("cycles"));
    QCOMPARE(totals(q(u + "constraints.yaml")), totals(in + "/constraints.json"));
    Run r;
    r = run(QStringList{"export-timeloop"} + design +
            QStringList{"--constraints", q(u + "constraints.yaml"), "--out", tmp.path() + "/tl"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY(fs::exists(tmp.path().toStdString() + "/tl/constraints.yaml"));
    // A v0.4 node design's constraints, in its architecture file, read
    // against the layer (the front end's rewriting for its unit loops, and,
    // for a GEMM, the convolution's names dropped with a note): the
    // constraints import-timeloop gives with the layer.
    const std::string ex = std::string(MAPWRIGHT_TEST_DATA) + "/timeloop-exercises/";
    const std::string nodes = ex + "example_designs/simple_weight_stationary/arch.yaml";
    for (const char* layer : {"alexnet/1.yaml", "MM/ResNet50_repr/M512-K128-N1024.yaml"}) {
        const QString at = tmp.path() + "/" + QString(layer).section('/', 0, 0);
        QCOMPARE(
            run({"import-timeloop", q(nodes), q(ex + "layer_shapes/" + layer), "--out", at + "/in"})
                .exitCode,
            0);
        const QStringList d{"--arch", at + "/in/arch.json", "--workload", at + "/in/workload.json"};
        QCOMPARE(
            run(QStringList{"export-timeloop"} + d +
                QStringList{"--constraints", at + "/in/constraints.json", "--out", at + "/json"})
                .exitCode,
            0);
        r = run(QStringList{"export-timeloop"} + d +
                QStringList{"--constraints", q(nodes), "--out", at + "/yaml"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(mw::readTextFile((at + "/yaml/constraints.yaml").toStdString()),
                 mw::readTextFile((at + "/json/constraints.yaml").toStdString()));
        QCOMPARE(r.err.contains("name 'Outputs', which the problem does not have"),
                 QString(layer).startsWith("MM"));
    }
    // A Timeloop problem (a layer-shape template) and an ONNX model as the
    // workload of a layer's commands; what the import noted, on stderr (this
    // layer's HStride is not the shape's Hstride: evaluated unstrided, as
    // Timeloop does).
    const QStringList eyeriss{"--arch", q(kSamples + "architectures/eyeriss_like.json")};
    r = run(QStringList{"search"} + eyeriss +
            QStringList{"--workload", q(ex + "layer_shapes/mobilenet_v3/04.yaml"), "--searcher",
                        "random-pruned", "--budget", "200", "--out", tmp.path() + "/shape"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains("note: ") && r.err.contains("HStride"), qPrintable(r.err));
    const mw::Json shape = mw::readJsonFile(tmp.path().toStdString() + "/shape/result.json");
    QVERIFY(shape.at("found").get<bool>());
    r = run(QStringList{"search"} + eyeriss +
            QStringList{"--workload", q(std::string(MAPWRIGHT_TEST_DATA) + "/onnx/resnet18.onnx"),
                        "--layer", "layer2.0.conv2", "--searcher", "random-pruned", "--budget",
                        "200", "--out", tmp.path() + "/onnx"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    // The mapper's map.yaml as the mapping to evaluate: what import-timeloop's
    // mapping.json evaluates to, figure for figure.
    const std::string tutorial =
        std::string(MAPWRIGHT_TEST_DATA) + "/timeloop-tutorial/06-mapper-convlayer-eyeriss/";
    QCOMPARE(run({"import-timeloop", q(u + "arch.yaml"), q(u + "problem.yaml"),
                  q(tutorial + "map.yaml"), "--out", tmp.path() + "/mapped"})
                 .exitCode,
             0);
    const QStringList mapped{"evaluate",
                             "--arch",
                             tmp.path() + "/mapped/arch.json",
                             "--workload",
                             tmp.path() + "/mapped/workload.json",
                             "--json",
                             "--mapping"};
    const Run fromYaml = run(mapped + QStringList{q(tutorial + "map.yaml")});
    QVERIFY2(fromYaml.exitCode == 0, qPrintable(fromYaml.err));
    QVERIFY(fromYaml.out.contains("\"cycles\": 5505024"));
    QCOMPARE(fromYaml.out, run(mapped + QStringList{tmp.path() + "/mapped/mapping.json"}).out);
    expectOneLineError(run(mapped + QStringList{q(u + "problem.yaml")}),
                       q(u + "problem.yaml: holds no mapping"));
    // An error in a file a template includes names that file, not the template.
    const std::string inc = tmp.path().toStdString() + "/inc.yaml";
    mw::writeTextFile(inc, "problem:\n  shape: {name: x, dimensions: [A], data_spaces: 7}\n"
                           "  instance: {A: 4}\n");
    mw::writeTextFile(tmp.path().toStdString() + "/top.j2",
                      "problem: {{include('inc.yaml', 'problem')}}\n");
    const Run included = run(QStringList{"search"} + eyeriss +
                             QStringList{"--workload", tmp.path() + "/top.j2", "--searcher",
                                         "random", "--budget", "10", "--out", tmp.path() + "/x"});
    expectOneLineError(included, q(inc + ":2: problem.shape.data_spaces"));
    QVERIFY2(!included.err.contains("top.j2"), qPrintable(included.err));
    // A file with no constraints in it, given as constraints: said so.
    expectOneLineError(run(QStringList{"search"} + design +
                           QStringList{"--searcher", "random", "--budget", "10", "--constraints",
                                       q(u + "problem.yaml"), "--out", tmp.path() + "/x"}),
                       q(u + "problem.yaml: constrains nothing"));
    // Where our JSON is read: how to convert, naming the file.
    expectOneLineError(
        run({"search", "--arch", q(u + "arch.yaml"), "--workload", in + "/workload.json",
             "--searcher", "random", "--budget", "10", "--out", tmp.path() + "/x"}),
        q(u + "arch.yaml: is not JSON (Timeloop YAML?); expected Mapwright JSON "
              "here: mapwright-cli import-timeloop"));
    expectOneLineError(
        run({"sweep", "--arch", in + "/arch.json", "--workload", in + "/workload.json", "--vary",
             "glb_kib=32,64", "--searcher", "random", "--budget", "10", "--constraints",
             q(u + "constraints.yaml"), "--db", tmp.path() + "/s.sqlite"}),
        q(u + "constraints.yaml: expected mapwright.constraints JSON"));
}

// The estimator against the tutorial's ERTs and ARTs (Accelergy's figures).
void TestCli::estimateAgainstAccelergy() {
    QStringList args{"estimate"};
    for (const auto& e : fs::directory_iterator(kCases))
        args << "--reference" << q(e.path().string());
    const Run r = run(args);
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("254 of 258 within 30 %"), qPrintable(r.out.right(300)));
    const Run one = run({"estimate", "--arch", q(kSamples + "architectures/eyeriss_like.json")});
    QCOMPARE(one.exitCode, 0);
    QVERIFY2(one.out.contains("on-chip area"), qPrintable(one.out));
}

void TestCli::benchModel() {
    const Run r = run({"bench", "model", "--runs", "1", "--seconds", "0.05", "--json"});
    QCOMPARE(r.exitCode, 0);
    const mw::Json j = mw::Json::parse(r.out.toStdString());
    QVERIFY(j.at("evaluations_per_second").get<double>() > 1000.0);
    QVERIFY(j.at("repeated_set_evaluations_per_second").get<double>() > 1000.0);
    QCOMPARE(j.at("mappings_per_layer").get<int>(), mw::ModelBench::kMappingsPerLayer);
    QCOMPARE(j.at("threads").get<int>(), 1);
}

void TestCli::benchSearch() {
    // (Quarters of a second: long enough that a busy machine still evaluates in each.)
    const Run r = run({"bench", "search", "--searchers", "gamma", "--seconds", "1", "--json"});
    QCOMPARE(r.exitCode, 0);
    const mw::Json rows = mw::Json::parse(r.out.toStdString()); // JSON only, no table
    QCOMPARE(rows.size(), std::size_t(1));
    const mw::Json& row = rows[0];
    QCOMPARE(row.at("searcher").get<std::string>(), std::string("gamma"));
    const double rate = row.at("evaluations_per_second_1_thread").get<double>();
    const double model = row.at("model_evaluations_per_second").get<double>();
    QVERIFY(rate > 1000.0);
    QVERIFY(model > 1000.0);
    // The share is the median over slices of the searcher's rate over the
    // model's, both timed in this run.
    std::vector<double> slices = row.at("share_of_model_rate_per_slice").get<std::vector<double>>();
    QCOMPARE(slices.size(), std::size_t(4));
    std::sort(slices.begin(), slices.end());
    QCOMPARE(row.at("share_of_model_rate").get<double>(), 0.5 * (slices[1] + slices[2]));
    // The scaling too: all threads against one, slice by slice.
    std::vector<double> scalings = row.at("scaling_per_slice").get<std::vector<double>>();
    QCOMPARE(scalings.size(), std::size_t(4));
    std::sort(scalings.begin(), scalings.end());
    QCOMPARE(row.at("scaling").get<double>(), 0.5 * (scalings[1] + scalings[2]));
    QVERIFY(scalings[0] > 0.0);
    QVERIFY(!row.contains("no_evaluations_because"));
    QVERIFY(row.at("params").empty());
}

void TestCli::benchSearchTakesParams() {
    // --param reaches the searchers (it was once dropped without a word).
    const Run r = run({"bench", "search", "--searchers", "gamma", "--seconds", "0.4", "--param",
                       "population=20", "--param", "injection=0", "--json"});
    QCOMPARE(r.exitCode, 0);
    const mw::Json row = mw::Json::parse(r.out.toStdString()).at(0);
    QCOMPARE(row.at("params").at("population").get<double>(), 20.0);
    QCOMPARE(row.at("params").at("injection").get<double>(), 0.0);
    expectOneLineError(run({"bench", "search", "--searchers", "gamma", "--param", "population"}),
                       "--param: 'population': expected NAME=VALUE");
}

void TestCli::benchSearchPrintsOnce() {
    // CoSA solves in a forked child: rows printed before it must not be
    // written again by the child (they were, once per solve).
    const Run r = run({"bench", "search", "--searchers", "random,cosa", "--seconds", "0.2"});
    QCOMPARE(r.exitCode, 0);
    const QStringList lines = r.out.split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 3);
    QVERIFY(lines[0].startsWith("searcher"));
    QVERIFY(lines[1].startsWith("random"));
    QVERIFY(lines[2].startsWith("cosa"));
}

void TestCli::searchList() {
    const Run r = run({"search", "--list"});
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(r.out.split('\n', Qt::SkipEmptyParts),
             QStringList({"random", "random-pruned", "exhaustive", "annealing", "genetic", "gamma",
                          "cosa", "mind-mappings", "reinforce", "optimal"}));
}

// Mind Mappings with no surrogate anywhere and a short budget: the progress
// shows its training (the output is a pipe: a line per phase and second), and
// the run ends with a mapping from its training evaluations, saying so.
void TestCli::mindMappingsShowsItsTraining() {
    QTemporaryDir tmp;
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("MAPWRIGHT_MODEL_DIR", tmp.path() + "/models");
    env.insert("MAPWRIGHT_BUNDLED_MODELS", tmp.path() + "/none");
    p.setProcessEnvironment(env);
    p.start(kCli,
            {"search", "--arch", q(kSamples + "architectures/eyeriss_like.json"), "--workload",
             q(kSamples + "networks/resnet50.json"), "--layer", "layer2.1.conv2", "--searcher",
             "mind-mappings", "--seconds", "1", "--out", tmp.path() + "/run"});
    QVERIFY(p.waitForFinished(60000));
    const QString out = QString::fromUtf8(p.readAllStandardOutput());
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QCOMPARE(p.exitCode(), 0);
    QVERIFY2(err.contains("training data"), qPrintable(err));
    QVERIFY2(out.contains("surrogate not ready: best of 500 training evaluations"),
             qPrintable(out));
    QVERIFY(QFile::exists(tmp.path() + "/run/best_mapping.json"));
    QVERIFY(!err.contains('\r')); // not a terminal: whole lines only
}

void TestCli::searchWritesResults() {
    QTemporaryDir tmp;
    const QString out = tmp.path() + "/run";
    const QStringList args{"search",
                           "--arch",
                           q(kSamples + "architectures/eyeriss_like.json"),
                           "--workload",
                           q(kSamples + "workloads/resnet_conv3x3.json"),
                           "--constraints",
                           q(kSamples + "constraints/eyeriss_row_stationary.json"),
                           "--searcher",
                           "gamma",
                           "--budget",
                           "600",
                           "--seed",
                           "4",
                           "--objective",
                           "edp",
                           "--out",
                           out};
    const Run r = run(args);
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    for (const char* f :
         {"best_mapping.json", "best_mapping.yaml", "evaluation.json", "trace.csv", "result.json"})
        QVERIFY2(fs::exists(fs::path(out.toStdString()) / f), f);
    const mw::Json result = mw::readJsonFile(out.toStdString() + "/result.json");
    QCOMPARE(result.at("evaluations").get<std::int64_t>(), 600LL);
    QVERIFY(result.at("edp_over_lower_bound").get<double>() > 0.0);
    const std::string trace = mw::readTextFile(out.toStdString() + "/trace.csv");
    QVERIFY(trace.rfind("evaluation,seconds,cost,best\n", 0) == 0);
    // The best mapping evaluates to the reported result, and respects the constraints.
    const Run e = run({"evaluate", "--arch", q(kSamples + "architectures/eyeriss_like.json"),
                       "--workload", q(kSamples + "workloads/resnet_conv3x3.json"), "--mapping",
                       out + "/best_mapping.json", "--json"});
    QCOMPARE(e.exitCode, 0);
    const mw::Json ev = mw::Json::parse(e.out.toStdString());
    QCOMPARE(ev.at("edp").get<double>(), result.at("edp").get<double>());
    QVERIFY(!ev.at("levels").at(1).at("tensors").contains("Weights")); // glb bypasses weights
    // Same seed, same result.
    const Run again = run(args);
    QCOMPARE(again.exitCode, 0);
    QCOMPARE(
        mw::readJsonFile(out.toStdString() + "/result.json").at("best_objective").get<double>(),
        result.at("best_objective").get<double>());
    // A searcher's own figures are printed and kept in result.json.
    const Run rl = run({"search", "--arch", q(kSamples + "architectures/eyeriss_like.json"),
                        "--workload", q(kSamples + "workloads/resnet_conv3x3.json"), "--searcher",
                        "reinforce", "--budget", "300", "--out", out});
    QVERIFY2(rl.exitCode == 0, qPrintable(rl.err));
    QVERIFY(rl.out.contains(QRegularExpression("stat +episodes = [1-9]")));
    const mw::Json stats = mw::readJsonFile(out.toStdString() + "/result.json").at("stats");
    QVERIFY(stats.at("episodes").get<double>() > 0);
}

void TestCli::compareTable() {
    QTemporaryDir tmp;
    const Run r =
        run({"compare", "--arch", q(kSamples + "architectures/accel_b.json"), "--workload",
             q(kSamples + "networks/resnet50.json"), "--layer", "layer1.0.conv2", "--searchers",
             "random,gamma", "--seeds", "2", "--budget", "500", "--out", tmp.path()});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY(r.out.contains("median"));
    QVERIFY(r.out.contains("t(5%)"));
    const QStringList lines = r.out.split('\n');
    QVERIFY(std::any_of(lines.begin(), lines.end(), [](const QString& l) {
        return l.startsWith("gamma") && l.contains("2/2");
    }));
    for (const char* f :
         {"/random_seed1.csv", "/random_seed2.csv", "/gamma_seed1.csv", "/summary.json"})
        QVERIFY2(fs::exists(tmp.path().toStdString() + f), f);
}

void TestCli::distancesFromTheOptimum() {
    // The fully connected layer under the row-stationary constraints: the
    // optimal searcher proves its optimum in a fraction of a second.
    QTemporaryDir tmp;
    const QStringList where = {"--arch", q(kSamples + "architectures/eyeriss_like.json"),
                               "--constraints",
                               q(kSamples + "constraints/eyeriss_row_stationary.json")};
    const Run r = run(QStringList{"compare", "--workload", q(kSamples + "networks/resnet50.json"),
                                  "--layer", "_outputs_3356", "--searchers", "random,optimal",
                                  "--seeds", "2", "--budget", "400000", "--out", tmp.path()} +
                      where);
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("vs optimum") && r.out.contains("optimum      ") &&
                 r.out.contains("(proven in"),
             qPrintable(r.out));
    const QStringList lines = r.out.split('\n');
    QVERIFY(lines.size() > 2 && lines[1].startsWith("optimal")); // run first, once
    QVERIFY2(lines[1].contains("0.0%") && lines[1].contains("1/1"), qPrintable(lines[1]));
    const mw::Json summary = mw::readJsonFile(tmp.path().toStdString() + "/summary.json");
    for (const auto& row : summary.at("searchers"))
        QVERIFY(row.at("median_over_optimum").get<double>() >= 1.0);
    // bench optimal: the same optimum, and each searcher at or above it.
    const std::string net = tmp.path().toStdString() + "/fc.json";
    mw::writeTextFile(net, R"({"format": "mapwright.workload", "version": 1, "layers": [
        {"name": "fc", "kind": "conv2d", "N": 1, "G": 1, "C": 2048, "M": 1000, "P": 1,
         "Q": 1, "R": 1, "S": 1}]})");
    const std::string out = tmp.path().toStdString() + "/bench.json";
    const Run b = run(QStringList{"bench", "optimal", "--workload", QString::fromStdString(net),
                                  "--searchers", "random", "--seconds", "0.5", "--prove-seconds",
                                  "120", "--out", QString::fromStdString(out)} +
                      where);
    QVERIFY2(b.exitCode == 0, qPrintable(b.err));
    const mw::Json j = mw::readJsonFile(out);
    QCOMPARE(j.at("layers").size(), std::size_t(1));
    const auto& layer = j.at("layers").at(0);
    QVERIFY2(layer.at("proven").get<bool>(), qPrintable(QString::fromStdString(layer.dump())));
    QVERIFY(layer.at("searchers").at("random").at("best").get<double>() >=
            layer.at("optimum").get<double>());
    expectOneLineError(
        run({"bench", "optimal", "--arch", q(kSamples + "architectures/eyeriss_like.json"),
             "--workload", q(kSamples + "workloads/gemm_1024.json"), "--searchers", "hillclimb"}),
        "unknown searcher 'hillclimb'");
}

void TestCli::networkTotals() {
    const Run r = run({"network", "--arch", q(kSamples + "architectures/eyeriss_like.json"),
                       "--workload", q(kSamples + "networks/transformer_block.json"), "--searcher",
                       "gamma", "--budget", "300", "--warm-start"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY(r.out.contains("ffn_down"));
    QVERIFY(r.out.contains("6 layers (6 unique), 1800 evaluations"));
    QVERIFY(r.out.contains("warm from"));
    QVERIFY(r.out.contains("totals"));
    QVERIFY(r.out.contains("seconds"));
    // Each searched layer's time and searcher figures reach network.json.
    QTemporaryDir tmp;
    const Run rl = run({"network", "--arch", q(kSamples + "architectures/eyeriss_like.json"),
                        "--workload", q(kSamples + "networks/transformer_block.json"), "--searcher",
                        "reinforce", "--budget", "200", "--out", tmp.path()});
    QVERIFY2(rl.exitCode == 0, qPrintable(rl.err));
    const mw::Json nj = mw::readJsonFile(tmp.filePath("network.json").toStdString());
    QCOMPARE(nj["layers"].size(), std::size_t(6));
    for (const auto& layer : nj["layers"]) {
        QVERIFY(layer["seconds"].get<double>() > 0.0);
        QVERIFY(layer["stats"]["episodes"].get<double>() > 0.0);
    }
    // Constraints apply to every layer of a network.
    const Run c =
        run({"network", "--arch", q(kSamples + "architectures/eyeriss_like.json"), "--workload",
             q(kSamples + "networks/resnet18.json"), "--searcher", "gamma", "--budget", "200",
             "--constraints", q(kSamples + "constraints/eyeriss_row_stationary.json")});
    QVERIFY2(c.exitCode == 0, qPrintable(c.err));
    QVERIFY(c.out.contains("21 layers"));
    QVERIFY(!c.out.contains("no legal mapping"));
    // Layers with no legal mapping: the totals say they are incomplete, and
    // the exit status is search's (they read 0 with exit 0).
    const QString full = tmp.filePath("full.json");
    mw::writeTextFile(full.toStdString(),
                      R"({"format": "mapwright.constraints", "min_spatial_utilization": 1.0})");
    const Run none =
        run({"network", "--arch", q(kSamples + "architectures/eyeriss_like.json"), "--workload",
             q(kSamples + "networks/transformer_block.json"), "--searcher", "gamma", "--budget",
             "20", "--constraints", full, "--out", tmp.filePath("none")});
    QCOMPARE(none.exitCode, 1);
    QVERIFY2(none.out.contains("(incomplete: 6 of 6 layers have no legal mapping)"),
             qPrintable(none.out));
    QCOMPARE(mw::readJsonFile(tmp.filePath("none/network.json").toStdString())
                 .at("layers_without_mapping")
                 .get<int>(),
             6);
}

// An ONNX model imported, then searched layer by layer under its readable
// names, each with its ONNX name kept; bad models are one-line errors.
void TestCli::importOnnxThenSearch() {
    QTemporaryDir tmp;
    const QString onnx = q(std::string(MAPWRIGHT_TEST_DATA) + "/onnx/");
    const QString net = tmp.filePath("resnet18.json");
    const Run r = run({"import-onnx", onnx + "resnet18.onnx", "--out", net});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("21 layers (12 distinct shapes)"), qPrintable(r.out));
    QVERIFY(r.out.contains("20 convolution"));
    QVERIFY(r.out.contains("skipped: Add x8 Flatten x1 GlobalAveragePool x1 MaxPool x1 Relu x17"));
    QVERIFY(
        r.out.contains(QRegularExpression("layer2\\.0\\.downsample\\.0 +convolution .*"
                                          "/layer2/layer2\\.0/downsample/downsample\\.0/Conv")));
    const Run s =
        run({"network", "--arch", q(kSamples + "architectures/eyeriss_like.json"), "--workload",
             net, "--searcher", "gamma", "--budget", "100", "--out", tmp.path()});
    QVERIFY2(s.exitCode == 0, qPrintable(s.err));
    QVERIFY(s.out.contains("layer4.1.conv2"));
    const mw::Json nj = mw::readJsonFile(tmp.filePath("network.json").toStdString());
    QCOMPARE(nj["layers"].size(), std::size_t(21));
    QCOMPARE(nj["layers"][20]["name"].get<std::string>(), std::string("fc"));
    QCOMPARE(nj["layers"][20]["source"].get<std::string>(), std::string("/fc/Gemm"));

    const QString dynamic = onnx + "dynamic_no_shapes.onnx";
    expectOneLineError(run({"import-onnx", dynamic, "--out", tmp.filePath("d.json")}),
                       dynamic + ": input 'image' has a dynamic batch 'N'; expected --batch N");
    const Run batched =
        run({"import-onnx", dynamic, "--batch", "4", "--out", tmp.filePath("d.json")});
    QVERIFY2(batched.exitCode == 0, qPrintable(batched.err));
    QVERIFY(batched.out.contains("3 layers"));
    expectOneLineError(run({"import-onnx", q(kSamples + "architectures/eyeriss_like.json"), "--out",
                            tmp.filePath("x.json")}),
                       "is not an ONNX model");
    expectOneLineError(
        run({"import-onnx", dynamic, "--batch", "0", "--out", tmp.filePath("x.json")}), "--batch");
    expectOneLineError(run({"import-onnx", dynamic}), "--out");
}

void TestCli::searchBadInput() {
    const QStringList base{"--arch",     q(kSamples + "architectures/eyeriss_like.json"),
                           "--workload", q(kSamples + "workloads/resnet_conv3x3.json"),
                           "--out",      "/tmp/x"};
    expectOneLineError(
        run(QStringList{"search", "--searcher", "hillclimb", "--budget", "10"} + base),
        "unknown searcher 'hillclimb'");
    expectOneLineError(run(QStringList{"search", "--searcher", "gamma"} + base), "give --budget N");
    expectOneLineError(run(QStringList{"search", "--searcher", "gamma", "--budget", "-5"} + base),
                       "--budget: is '-5'; expected a whole number from 0 to 2^53");
    // Numbers a cast would wrap, and numbers that are not finite.
    expectOneLineError(run(QStringList{"search", "--searcher", "gamma", "--budget", "1e23"} + base),
                       "--budget: is '1e23'; expected a whole number from 0 to 2^53");
    expectOneLineError(run(QStringList{"search", "--searcher", "gamma", "--budget", "10", "--seed",
                                       "99999999999999999999"} +
                           base),
                       "--seed: is '99999999999999999999'; expected a whole number");
    expectOneLineError(run(QStringList{"search", "--searcher", "gamma", "--seconds", "nan"} + base),
                       "--seconds: is 'nan'; expected a finite decimal number");
    expectOneLineError(
        run(QStringList{"search", "--searcher", "gamma", "--budget", "10", "--threads", "100000"} +
            base),
        "--threads: is '100000'; expected a whole number from 1 to 256");
    expectOneLineError(run(QStringList{"compare", "--searchers", "gamma", "--budget", "10",
                                       "--seeds", "2147483648"} +
                           base),
                       "--seeds: is '2147483648'; expected a whole number from 1 to 100000");
    expectOneLineError(run(QStringList{"search", "--searcher", "gamma", "--budget", "10",
                                       "--objective", "weighted:nan,1"} +
                           base),
                       "'weighted:nan,1': expected weighted:A,B with numbers");
    expectOneLineError(run(QStringList{"search", "--searcher", "gamma", "--budget", "10", "--param",
                                       "population=nan"} +
                           base),
                       "'population=nan': expected a finite decimal number");
    expectOneLineError(run({"bench", "model", "--runs", "x"}),
                       "--runs: is 'x'; expected a finite decimal number");
    // Decimal only (std::stod read "0x10" as 16), and an option given twice
    // is refused (the last value once held in silence).
    expectOneLineError(run(QStringList{"search", "--searcher", "gamma", "--budget", "0x10"} + base),
                       "--budget: is '0x10'; expected a finite decimal number");
    expectOneLineError(
        run(QStringList{"search", "--searcher", "gamma", "--budget", "10", "--budget=20"} + base),
        "--budget: is given twice ('10', then '20'); expected it once");
    expectOneLineError(run(QStringList{"search", "--searcher", "gamma", "--budget", "10", "--param",
                                       "population=8", "--param", "population=9"} +
                           base),
                       "--param: 'population' is given twice, with 9 the second time");
    expectOneLineError(run(QStringList{"search", "--searcher", "gamma", "--budget", "10",
                                       "--objective", "edp@Inputs=0.5x"} +
                           base),
                       "--objective: density '0.5x' must be in (0, 1]");
    // Options the command does not take are refused, a misspelling named
    // (--constraint would otherwise search the whole space, unconstrained).
    expectOneLineError(run(QStringList{"search", "--searcher", "gamma", "--budget", "10",
                                       "--constraint", "c.json"} +
                           base),
                       "--constraint: is not an option of 'search' (did you mean --constraints?)");
    expectOneLineError(
        run(QStringList{"network", "--searcher", "gamma", "--budget", "10", "--layer", "x"} + base),
        "--layer: is not an option of 'network'");
    expectOneLineError(run(QStringList{"search", "--searcher", "--budget", "10"} + base),
                       "--searcher: expects a value");
    expectOneLineError(run(QStringList{"search", "--list=yes"}), "--list: takes no value");
    // A subcommand takes its own options only.
    expectOneLineError(run({"bench", "model", "--threads", "4"}),
                       "--threads: is not an option of 'bench model'");
    // A parameter the searcher never reads runs, and is said to have changed nothing.
    const QTemporaryDir unreadDir;
    const Run unread = run(QStringList{"search", "--searcher", "random", "--budget", "20",
                                       "--param", "frob=1", "--out", unreadDir.path()} +
                           base.mid(0, 4));
    QCOMPARE(unread.exitCode, 0);
    QVERIFY2(unread.out.contains("parameter 'frob' was not read by this run"),
             qPrintable(unread.out));
    // --name=value is --name value.
    const Run joined =
        run({"evaluate", "--arch=" + q(kSamples + "architectures/eyeriss_like.json"),
             "--workload=" + q(kSamples + "workloads/eyeriss_tutorial_conv.json"),
             "--mapping=" + q(kSamples + "mappings/eyeriss_tutorial_conv_timeloop.json")});
    QCOMPARE(joined.exitCode, 0);
    QCOMPARE(joined.out, run(QStringList{"evaluate"} + eyerissArgs()).out);
    expectOneLineError(
        run(QStringList{"search", "--searcher", "gamma", "--budget", "10", "--objective", "speed"} +
            base),
        "expected edp, energy, cycles or weighted:A,B");
    expectOneLineError(run(QStringList{"search", "--searcher", "gamma", "--budget", "10", "--param",
                                       "population"} +
                           base),
                       "expected NAME=VALUE");
    expectOneLineError(run(QStringList{"search", "--searcher", "gamma", "--budget", "10",
                                       "--constraints", "/nonexistent.json"} +
                           base),
                       "/nonexistent.json: cannot be opened");
    // Constraints that provably leave no legal mapping: said so, naming the file.
    QTemporaryDir tmp;
    const std::string bad = tmp.path().toStdString() + "/c.json";
    mw::writeTextFile(bad,
                      R"({"format": "mapwright.constraints", "levels": [{"level": "weights_spad",
        "keep": ["Weights"], "temporal": {"C": 128, "M": 16, "R": 3, "S": 3}}]})");
    expectOneLineError(run(QStringList{"search", "--searcher", "gamma", "--budget", "10",
                                       "--constraints", q(bad)} +
                           base),
                       q(bad + ": contradictory constraints: 'weights_spad' must keep Weights"));
    mw::writeTextFile(bad, R"({"format": "mapwright.constraints", "levels": [{"level": "shared_glb",
        "temporal": {"C": 3}}]})");
    expectOneLineError(run(QStringList{"search", "--searcher", "gamma", "--budget", "10",
                                       "--constraints", q(bad)} +
                           base),
                       q(bad + ": contradictory constraints: fixed factors of dimension C multiply "
                               "to 3, which does not divide its bound 128"));
    // A network: read against every distinct layer before any is searched
    // (ResNet-50's first layer, C = 3, passes; the next does not), the layer
    // named. (Searched first, the first layer would hold the run its 100 s.)
    QElapsedTimer clock;
    clock.start();
    expectOneLineError(
        run({"network", "--arch", q(kSamples + "architectures/eyeriss_like.json"), "--workload",
             q(kSamples + "networks/resnet50.json"), "--searcher", "gamma", "--seconds", "100",
             "--constraints", q(bad)}),
        q(bad + ": contradictory constraints: fixed factors of dimension C multiply to 3, which "
                "does not divide its bound 64 (for layer layer1.0.conv1)"));
    QVERIFY(clock.elapsed() < 60000);
    // Provably empty under them (as search says), and a file that cannot be
    // read: said of the file, not of a layer.
    mw::writeTextFile(bad,
                      R"({"format": "mapwright.constraints", "levels": [{"level": "weights_spad",
        "keep": ["Weights"], "temporal": {"C": 128, "M": 16, "R": 3, "S": 3}}]})");
    expectOneLineError(run({"network", "--arch", q(kSamples + "architectures/eyeriss_like.json"),
                            "--workload", q(kSamples + "workloads/resnet_conv3x3.json"),
                            "--searcher", "gamma", "--budget", "10", "--constraints", q(bad)}),
                       q(bad + ": contradictory constraints: 'weights_spad' must keep Weights"));
    const Run unreadable =
        run({"network", "--arch", q(kSamples + "architectures/eyeriss_like.json"), "--workload",
             q(kSamples + "networks/resnet50.json"), "--searcher", "gamma", "--budget", "10",
             "--constraints", "/nonexistent.yaml"});
    expectOneLineError(unreadable, "/nonexistent.yaml: cannot be opened");
    QVERIFY(!unreadable.err.contains("layer"));
}

void TestCli::badInput() {
    expectOneLineError(run({"frobnicate"}), "unknown command");
    expectOneLineError(
        run({"evaluate", "--arch", "/nonexistent/arch.json", "--workload", "w", "--mapping", "m"}),
        "/nonexistent/arch.json: cannot be opened");
    QStringList missing = eyerissArgs();
    missing.removeLast();
    missing.removeLast();
    expectOneLineError(run(QStringList{"evaluate"} + missing), "--mapping: is required");
    QStringList layer = eyerissArgs() + QStringList{"--layer", "nope"};
    expectOneLineError(run(QStringList{"evaluate"} + layer),
                       "no layer named (or imported as) 'nope'");
    expectOneLineError(run({"import-timeloop", "only-one.yaml", "--out", "x"}),
                       "only-one.yaml: cannot be opened");
    expectOneLineError(run({"import-timeloop", "--out", "x"}), "expected Timeloop YAML files");
    expectOneLineError(run({"bench", "nothing"}),
                       "expected 'bench model', 'bench search' or 'bench optimal'");
    // An output naming an input would replace it: refused before anything
    // runs, the input as it was (sweep report R --plot R once wrote a PNG
    // over the results).
    QTemporaryDir tmp;
    const QString results = tmp.filePath("results.sqlite");
    const std::string before = "not really a database";
    mw::writeTextFile(results.toStdString(), before);
    expectOneLineError(run({"sweep", "report", results, "--plot", results}),
                       "--plot: '" + results + "' is the input '" + results +
                           "'; expected another path (writing would replace it)");
    const QString arch = tmp.filePath("arch.json");
    QVERIFY(
        QFile::copy(QString::fromStdString(kSamples) + "architectures/eyeriss_like.json", arch));
    expectOneLineError(
        run({"train-surrogate", "--arch", arch, "--workload",
             QString::fromStdString(kSamples) + "workloads/eyeriss_tutorial_conv.json", "--out",
             arch}),
        "--out: '" + arch + "' is the input");
    QCOMPARE(mw::readTextFile(results.toStdString()), before);
    QVERIFY(mw::loadArchitecture(arch.toStdString()).numLevels() > 0);
    // An --out that cannot be written fails before the work, not after a
    // network's layers have all been searched.
    QElapsedTimer clock;
    clock.start();
    expectOneLineError(run({"network", "--arch", arch, "--workload",
                            QString::fromStdString(kSamples) + "networks/resnet18.json",
                            "--searcher", "gamma", "--budget", "100000", "--out", results}),
                       "--out: '" + results + "' cannot be made a folder");
    QVERIFY(clock.elapsed() < 20000);
    expectOneLineError(
        run({"bench", "optimal", "--arch", arch, "--workload",
             QString::fromStdString(kSamples) + "workloads/eyeriss_tutorial_conv.json", "--out",
             tmp.filePath("none/x.json")}),
        "' does not exist");
    // Import and parity cases name the folder they could not make, as the
    // other commands do.
    const QString conv = QString::fromStdString(kSamples) + "workloads/eyeriss_tutorial_conv.json";
    expectOneLineError(run({"parity-cases", "--arch", arch, "--workload", conv, "--out", results}),
                       "--out: '" + results + "' cannot be made a folder");
    const QString tl = QString::fromStdString(kSamples) + "timeloop/eyeriss_like_conv/";
    expectOneLineError(
        run({"import-timeloop", tl + "arch.yaml", tl + "problem.yaml", "--out", results}),
        "--out: '" + results + "' cannot be made a folder");
}

void TestCli::intrinsicMatches() {
    const QString samples = QString::fromStdString(kSamples);
    Run r = run({"intrinsic", "--workload", samples + "workloads/gemm_1024.json", "--intrinsic",
                 "matmul:16x16x16"});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.startsWith("1 ways"), qPrintable(r.out));
    r = run({"intrinsic", "--workload", samples + "workloads/resnet_conv3x3.json", "--intrinsic",
             "matmul:16x16x16"});
    QVERIFY2(r.out.startsWith("35 ways"), qPrintable(r.out));
    // The GEMM pinned on the tensor-core-like design's intrinsic, the rest searched.
    const QTemporaryDir out;
    r = run({"search", "--arch", samples + "architectures/tensor_core_like.json", "--workload",
             samples + "workloads/gemm_1024.json", "--searcher", "random", "--budget", "500",
             "--intrinsic", "matmul:16x16x16", "--intrinsic-level", "shared_buffer", "--out",
             out.path()});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.contains("intrinsic    matmul16x16x16 match 0 of 1"));
    const mw::Json e = mw::readJsonFile(out.filePath("evaluation.json").toStdString());
    QVERIFY(e.at("utilization").get<double>() >= 0.9);
    // Bad specifications are named.
    r = run({"intrinsic", "--workload", samples + "workloads/gemm_1024.json", "--intrinsic",
             "matmul:16x0"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY(r.err.contains("--intrinsic"));
    r = run({"search", "--arch", samples + "architectures/tensor_core_like.json", "--workload",
             samples + "workloads/gemm_1024.json", "--searcher", "random", "--budget", "10",
             "--intrinsic", "matmul:16x16x16", "--intrinsic-level", "nowhere", "--out",
             out.path()});
    QVERIFY(r.exitCode != 0);
    QVERIFY(r.err.contains("nowhere"));
    // The level alone changed nothing, in silence.
    r = run({"search", "--arch", samples + "architectures/tensor_core_like.json", "--workload",
             samples + "workloads/gemm_1024.json", "--searcher", "random", "--budget", "10",
             "--intrinsic-level", "shared_buffer", "--out", out.path()});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("--intrinsic-level: applies only with --intrinsic"), qPrintable(r.err));
}

// Ctrl-C in every long command, at random points (fixed seed): exit status
// 130, and what was finished is written and loads: a search's result (marked
// "stopped": "interrupted"), trace and best mapping, which the model finds
// legal; compare's summary; network's finished layers; no half-trained
// surrogate; bench prints the runs it finished.
void TestCli::interruptsKeepWhatIsFinished() {
    QTemporaryDir dir;
    const std::string d = dir.path().toStdString();
    const QString arch = q(kSamples + "architectures/eyeriss_like.json");
    const QString simba = q(kSamples + "architectures/simba_like.json");
    const QString net = q(kSamples + "networks/resnet50.json");
    std::mt19937 rng(2026);
    auto delay = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const auto loads = [](const std::string& path) {
        return fs::exists(path) ? mw::readJsonFile(path) : mw::Json();
    };
    for (const QString searcher : {"gamma", "annealing", "cosa", "reinforce"}) {
        const std::string out = d + "/search-" + searcher.toStdString();
        const Run r = interrupt({"search", "--arch", searcher == "cosa" ? simba : arch,
                                 "--workload", net, "--layer", "layer2.1.conv2", "--searcher",
                                 searcher, "--seconds", "30", "--threads", "2", "--out", q(out)},
                                delay(500, 1500));
        QCOMPARE(r.exitCode, 130);
        QVERIFY2(r.out.contains("interrupted  wrote"), qPrintable(r.out + r.err));
        const mw::Json result = loads(out + "/result.json");
        QCOMPARE(result.value("stopped", std::string()), std::string("interrupted"));
        QVERIFY(fs::exists(out + "/trace.csv"));
        // Interrupted before its first legal mapping (CoSA's one schedule
        // comes when its MIP is solved; under a sanitizer on a loaded
        // machine, half a second may end any searcher first), a run has
        // none, and says so.
        if (!result.value("found", true)) {
            QVERIFY(!fs::exists(out + "/best_mapping.json"));
            continue;
        }
        // (The layer by the name it was imported under: the same layer.)
        const Run e = run({"evaluate", "--arch", searcher == "cosa" ? simba : arch, "--workload",
                           net, "--layer", "_outputs_input.46", "--mapping",
                           q(out + "/best_mapping.json"), "--json"});
        QVERIFY2(e.exitCode == 0, qPrintable(searcher + ": " + e.err));
    }
    {
        const std::string out = d + "/compare";
        const Run r = interrupt({"compare", "--arch", arch, "--workload", net, "--layer",
                                 "layer2.1.conv2", "--searchers", "gamma,annealing", "--seeds", "3",
                                 "--seconds", "1", "--out", q(out)},
                                delay(1500, 4000));
        QCOMPARE(r.exitCode, 130);
        QCOMPARE(loads(out + "/summary.json").value("stopped", std::string()),
                 std::string("interrupted"));
    }
    {
        const std::string out = d + "/network";
        const Run r = interrupt({"network", "--arch", arch, "--workload", net, "--searcher",
                                 "annealing", "--budget", "200000", "--out", q(out)},
                                delay(500, 2000));
        QCOMPARE(r.exitCode, 130);
        const mw::Json n = loads(out + "/network.json");
        QCOMPARE(n.value("stopped", std::string()), std::string("interrupted"));
        QVERIFY(n.at("layers").size() == 54);
    }
    {
        const std::string models = d + "/models";
        const Run r = interrupt({"train-surrogate", "--arch", arch, "--workload", net, "--layer",
                                 "layer2.1.conv2", "--model-dir", q(models)},
                                delay(500, 1500));
        QCOMPARE(r.exitCode, 130);
        QVERIFY2(r.out.contains("nothing written"), qPrintable(r.out));
        QVERIFY(!fs::exists(models) || fs::is_empty(models));
    }
    for (const QStringList& bench :
         {QStringList{"bench", "model"}, QStringList{"bench", "search", "--searchers", "gamma"}}) {
        const Run r = interrupt(bench, delay(500, 2500));
        QCOMPARE(r.exitCode, 130);
        QVERIFY2(r.out.contains("interrupted"), qPrintable(r.out));
    }
}

// A second Ctrl-C does not wait for anything: in a child process, the first
// signal only raises the flag; the second ends the process with status 130.
void TestCli::secondInterruptExitsAtOnce() {
    const pid_t pid = fork();
    QVERIFY(pid >= 0);
    if (pid == 0) {
        cli::installInterruptHandler();
        raise(SIGINT);
        if (!cli::interrupted())
            _exit(3);
        raise(SIGINT);
        _exit(0); // not reached
    }
    int status = 0;
    QCOMPARE(waitpid(pid, &status, 0), pid);
    QVERIFY(WIFEXITED(status));
    QCOMPARE(WEXITSTATUS(status), 130);
}

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
