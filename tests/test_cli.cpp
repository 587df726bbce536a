// mapwright-cli as scripts use it: the documented command forms, the JSON
// fields other tools read, and a one-line error with a non-zero exit on bad input.
#include "bench/model_bench.h"
#include "cli_interrupt.h"
#include "common/error.h"
#include "explore/sweep_db.h"
#include "io/json_io.h"
#include "test_support.h"

#include <QImage>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>
#include <filesystem>
#include <random>
#include <sqlite3.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

const QString kCli = QStringLiteral(MAPWRIGHT_CLI);
const std::string kSamples = std::string(MAPWRIGHT_SOURCE_DIR) + "/samples/";
const std::string kCases = std::string(MAPWRIGHT_TEST_DATA) + "/timeloop-tutorial/";

struct Run {
    int exitCode;
    QString out;
    QString err;
};

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

Run run(const QStringList& args) {
    QProcess p;
    p.start(kCli, args);
    if (!p.waitForFinished(120000))
        return {-1, "", "timeout"};
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2,
            QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

QStringList eyerissArgs() {
    return {"--arch",     q(kSamples + "architectures/eyeriss_like.json"),
            "--workload", q(kSamples + "workloads/eyeriss_tutorial_conv.json"),
            "--mapping",  q(kSamples + "mappings/eyeriss_tutorial_conv_timeloop.json")};
}

void expectOneLineError(const Run& r, const QString& part) {
    QVERIFY2(r.exitCode != 0, qPrintable("exit code " + QString::number(r.exitCode)));
    const QString err = r.err.trimmed();
    QVERIFY2(!err.isEmpty() && !err.contains('\n'), qPrintable("stderr: " + r.err));
    QVERIFY2(err.startsWith("error: "), qPrintable(err));
    QVERIFY2(err.contains(part), qPrintable(err + " lacks " + part));
}

// test_support.h's small network, as a file.
std::string writeSmallNetwork(const QTemporaryDir& tmp) {
    const mw::Network n = mw::test::twoConvs();
    const std::string path = tmp.filePath("net.json").toStdString();
    mw::writeTextFile(path, mw::toJson(n).dump(1));
    return path;
}

QStringList sweepArgs(const std::string& network, const QString& db, int budget) {
    return {"sweep",
            "--arch",
            q(kSamples + "architectures/eyeriss_like.json"),
            "--workload",
            q(network),
            "--vary",
            "shared_glb.capacity_words=32768,65536,131072",
            "--vary",
            "pe_mesh=14x12,16x16",
            "--vary",
            "DRAM.class=LPDDR4,HBM2",
            "--searcher",
            "gamma",
            "--budget",
            QString::number(budget),
            "--seed",
            "3",
            "--db",
            db};
}

// A database's points without their wall times.
std::string sweepContents(const QString& db) {
    mw::Json j = mw::Json::array();
    for (const auto& [index, r] : mw::SweepDatabase::open(db.toStdString()).points()) {
        mw::Json p = mw::toJson(r);
        p.erase("seconds");
        j.push_back(p);
    }
    return j.dump();
}

} // namespace

class TestCli : public QObject {
    Q_OBJECT
  private slots:
    void evaluateJson();
    void mindMappingsShowsItsTraining();
    void evaluateText();
    void evaluateInvalidMapping();
    void importAndExportTimeloop();
    void importUserFilesForTheMapper();
    void estimateAgainstAccelergy();
    void benchModel();
    void benchSearch();
    void benchSearchPrintsOnce();
    void benchSearchTakesParams();
    void searchList();
    void searchWritesResults();
    void compareTable();
    void distancesFromTheOptimum();
    void networkTotals();
    void importOnnxThenSearch();
    void sweepReportsItsFront();
    void sweepBadInput();
    void sweepKilledThenResumed();
    void sweepUnderMpi();
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
             net, "--searcher", "random-pruned", "--budget", "100", "--out", tmp.path()});
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

void TestCli::sweepReportsItsFront() {
    QTemporaryDir tmp;
    const std::string net = writeSmallNetwork(tmp);
    const QString db = tmp.filePath("results.sqlite");
    const Run r = run(sweepArgs(net, db, 120) + QStringList{"--threads", "2"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("sweep        12 points (0 done before), 3 layers each, gamma at 120 "
                            "evaluations per layer, 2 threads"),
             qPrintable(r.out));
    QVERIFY(
        r.out.contains(QRegularExpression("point +11 +\\d+/12 +shared_glb.capacity_words=131072 "
                                          "pe_mesh=16x16 DRAM.class=HBM2 +energy [0-9.]+ mJ")));
    QVERIFY(r.out.contains("12 points in " + db + " (0 invalid)"));
    QVERIFY(r.out.contains("pareto front (energy, cycles): "));
    const QString csv = tmp.filePath("points.csv"), png = tmp.filePath("front.png");
    const Run rep = run(
        {"sweep", "report", db, "--metrics", "energy,cycles,area", "--csv", csv, "--plot", png});
    QVERIFY2(rep.exitCode == 0, qPrintable(rep.err));
    QVERIFY(rep.out.contains("12 of 12 points, 0 invalid; gamma, 120 evaluations per layer, "
                             "two-convs on eyeriss-like"));
    QVERIFY(rep.out.contains("pareto front (energy, cycles, area): "));
    const QStringList lines =
        QString::fromStdString(mw::readTextFile(csv.toStdString())).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 13);
    QCOMPARE(lines[0], QString("point,shared_glb.capacity_words,pe_mesh,DRAM.class,valid,"
                               "energy_mJ,cycles,edp,area_mm2,evaluations,seconds,pareto,reason"));
    QImage image(png);
    QVERIFY(image.width() > 800 && image.height() > 500);
    // Merge needs shards of one sweep.
    const Run m = run({"sweep", "merge", tmp.filePath("all.sqlite"), db});
    QVERIFY2(m.exitCode == 0, qPrintable(m.err));
    QVERIFY(m.out.contains("12 points added, 12 of 12 points"));
    QCOMPARE(sweepContents(tmp.filePath("all.sqlite")), sweepContents(db));
}

void TestCli::sweepBadInput() {
    QTemporaryDir tmp;
    const std::string net = writeSmallNetwork(tmp);
    const QString db = tmp.filePath("r.sqlite");
    const QStringList base{
        "sweep",      "--arch",   q(kSamples + "architectures/eyeriss_like.json"),
        "--workload", q(net),     "--searcher",
        "gamma",      "--budget", "100",
        "--db",       db};
    expectOneLineError(run(base + QStringList{"--vary", "glb.capacity_words=1024"}),
                       "glb.capacity_words: 'glb' is not a level of eyeriss-like");
    expectOneLineError(run(base + QStringList{"--vary", "shared_glb.depth=1024"}),
                       "shared_glb.depth: is not a field a sweep varies");
    expectOneLineError(run(base + QStringList{"--vary", "pe_mesh=16x16,0x4"}),
                       "pe_mesh=0x4: expected a whole number >= 1");
    expectOneLineError(run(base + QStringList{"--vary", "inter_PE_spatial.mesh_x=5"}),
                       "inter_PE_spatial.mesh_x=5: makes the base architecture invalid");
    expectOneLineError(run(base), "sweep: varies nothing");
    expectOneLineError(run(base + QStringList{"--vary", "pe_mesh=8x8", "--seconds", "5"}),
                       "--seconds: a sweep's budget is evaluations");
    expectOneLineError(run(base + QStringList{"--vary", "pe_mesh=8x8", "--searcher", "tabu"}),
                       "unknown searcher 'tabu'");
    QVERIFY(!QFile::exists(db)); // nothing started
    expectOneLineError(run({"sweep", "report", tmp.filePath("none.sqlite")}), "does not exist");
    const QString args = tmp.filePath("a.json");
    mw::writeTextFile(args.toStdString(), "{}");
    expectOneLineError(run({"sweep", "report", args}), "is not a Mapwright results database");
    // A finished sweep's database is not run over.
    QVERIFY(run(base + QStringList{"--vary", "pe_mesh=8x8"}).exitCode == 0);
    expectOneLineError(run(base + QStringList{"--vary", "pe_mesh=8x8"}),
                       "already holds results of this sweep; expected --resume");
    expectOneLineError(run(base + QStringList{"--vary", "pe_mesh=16x16", "--resume"}),
                       "holds the results of a different sweep");
}

// Killed outright (SIGKILL) mid-sweep, then resumed: the same results as a
// sweep that ran through.
void TestCli::sweepKilledThenResumed() {
    QTemporaryDir tmp;
    const std::string net = writeSmallNetwork(tmp);
    const QString whole = tmp.filePath("whole.sqlite"), killed = tmp.filePath("killed.sqlite");
    const Run full = run(sweepArgs(net, whole, 1500) + QStringList{"--threads", "1"});
    QVERIFY2(full.exitCode == 0, qPrintable(full.err));

    QProcess p;
    p.start(kCli, sweepArgs(net, killed, 1500) + QStringList{"--threads", "1"});
    QVERIFY(p.waitForStarted(10000));
    // A point takes ~12 ms here. CI saw all 12 points written before the kill
    // twice: once under a slow poll, once when the watcher waited on the
    // sweep's write lock inside SQLite's busy handler, whose back-off sleeps up
    // to 100 ms a try. So the watcher never waits inside SQLite: it reads the
    // count without a transaction every millisecond (a busy read is just
    // retried) and kills the moment it sees three. The kill may land while the
    // sweep writes a later point; that point's transaction is rolled back on
    // the next open, so the database holds at least what was counted.
    sqlite3* watcher = nullptr;
    for (int i = 0; i < 1000 && !QFile::exists(killed); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    QVERIFY(sqlite3_open_v2(killed.toUtf8().constData(), &watcher, SQLITE_OPEN_READONLY, nullptr) ==
            SQLITE_OK);
    int counted = 0;
    for (int i = 0; i < 20000 && counted < 3; ++i) {
        sqlite3_stmt* q = nullptr;
        if (sqlite3_prepare_v2(watcher, "SELECT COUNT(*) FROM points", -1, &q, nullptr) ==
                SQLITE_OK &&
            sqlite3_step(q) == SQLITE_ROW)
            counted = sqlite3_column_int(q, 0);
        sqlite3_finalize(q);
        if (counted >= 3)
            ::kill(static_cast<pid_t>(p.processId()), SIGKILL);
        else
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    sqlite3_close(watcher);
    p.waitForFinished(10000);
    const int kept = int(mw::SweepDatabase::open(killed.toStdString()).points().size());
    QVERIFY2(kept >= counted && counted >= 3 && kept < 12,
             qPrintable(QString("%1 kept, %2 counted").arg(kept).arg(counted)));

    const Run resumed =
        run(sweepArgs(net, killed, 1500) + QStringList{"--threads", "2", "--resume"});
    QVERIFY2(resumed.exitCode == 0, qPrintable(resumed.err));
    QVERIFY(resumed.out.contains(QString("(%1 done before)").arg(kept)));
    QCOMPARE(sweepContents(killed), sweepContents(whole));
}

// mpirun -np 2 and -np 3 give the single process's database.
void TestCli::sweepUnderMpi() {
#ifndef MAPWRIGHT_TEST_MPIRUN
    QSKIP("this build has no MPI (install libopenmpi-dev and rebuild to test sweeps under mpirun)");
#else
    QTemporaryDir tmp;
    const std::string net = writeSmallNetwork(tmp);
    const QString single = tmp.filePath("single.sqlite");
    QVERIFY(run(sweepArgs(net, single, 200) + QStringList{"--threads", "1"}).exitCode == 0);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("OMPI_ALLOW_RUN_AS_ROOT", "1"); // CI runs as root
    env.insert("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    for (const QStringList& np :
         {QStringList{"-np", "2"}, QStringList{"-np", "3", "--oversubscribe"}}) {
        const QString db = tmp.filePath("mpi" + np[1] + ".sqlite");
        QProcess p;
        p.setProcessEnvironment(env);
        p.start(MAPWRIGHT_TEST_MPIRUN,
                np + QStringList{kCli} + sweepArgs(net, db, 200) + QStringList{"--threads", "1"});
        QVERIFY(p.waitForFinished(300000));
        const QString out = QString::fromUtf8(p.readAllStandardOutput());
        QVERIFY2(p.exitCode() == 0, qPrintable(out + QString::fromUtf8(p.readAllStandardError())));
        QVERIFY2(out.contains("on " + np[1] + " MPI ranks"), qPrintable(out));
        QCOMPARE(sweepContents(db), sweepContents(single));
    }
#endif
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
                       "--budget: expected a whole number");
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
}

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"

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
        // CoSA's one schedule comes when its MIP is solved: interrupted
        // before, it has none, and says so.
        if (searcher == "cosa" && !result.value("found", true)) {
            QVERIFY(!fs::exists(out + "/best_mapping.json"));
            continue;
        }
        // (The layer by the name it was imported under: the same layer.)
        const Run e = run({"evaluate", "--arch", searcher == "cosa" ? simba : arch, "--workload",
                           net, "--layer", "_outputs_input.46", "--mapping",
                           q(out + "/best_mapping.json"), "--json"});
        QCOMPARE(e.exitCode, 0);
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
