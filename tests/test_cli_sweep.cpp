// mapwright-cli sweep as scripts use it: the Pareto front and its report,
// bad input, a sweep killed while it writes and resumed to the same points,
// and the same points under mpirun.
#include "cli_support.h"
#include "explore/sweep_db.h"

#include <QImage>

#include <csignal>
#include <sqlite3.h>
#include <thread>

using namespace mw::cli_test;

namespace {

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

class TestCliSweep : public QObject {
    Q_OBJECT
  private slots:
    void sweepReportsItsFront();
    void sweepBadInput();
    void sweepKilledThenResumed();
    void sweepUnderMpi();
};

void TestCliSweep::sweepReportsItsFront() {
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
    // Outputs it cannot write as asked: refused before the report.
    expectOneLineError(run({"sweep", "report", db, "--csv", csv, "--plot", csv}),
                       "--plot: '" + csv + "' is --csv's file too");
    expectOneLineError(run({"sweep", "report", db, "--plot", tmp.filePath("front.svg")}),
                       "front.svg': expected a .png or .pdf file");
    expectOneLineError(run({"sweep", "report", db, "--csv", ""}),
                       "--csv: is empty; expected a file to write");
    // Merge needs shards of one sweep.
    const Run m = run({"sweep", "merge", tmp.filePath("all.sqlite"), db});
    QVERIFY2(m.exitCode == 0, qPrintable(m.err));
    QVERIFY(m.out.contains("12 points added, 12 of 12 points"));
    QCOMPARE(sweepContents(tmp.filePath("all.sqlite")), sweepContents(db));
}

void TestCliSweep::sweepBadInput() {
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
    expectOneLineError(run(base + QStringList{"--vary", "shared_glb.dram_type=HBM2"}),
                       "shared_glb.dram_type: 'shared_glb' is not a DRAM level");
    expectOneLineError(run(base + QStringList{"--vary", "shared_glb.multiple_buffering=2,0"}),
                       "shared_glb.multiple_buffering=0: expected a number >= 1");
    expectOneLineError(run(base + QStringList{"--vary", "shared_glb.read_bandwidth=0x10"}),
                       "shared_glb.read_bandwidth=0x10: expected a number >= 0");
    expectOneLineError(run(base), "sweep: varies nothing");
    expectOneLineError(
        run(base + QStringList{"--vary", "pe_mesh=8x8", "--coordinator-threads", "0"}),
        "--coordinator-threads: sets rank 0's threads under mpirun");
    expectOneLineError(run(base + QStringList{"--vary", "pe_mesh=8x8", "--seconds", "5"}),
                       "--seconds: a sweep's budget is evaluations");
    QStringList tabu = base;
    tabu[tabu.indexOf("gamma")] = "tabu";
    expectOneLineError(run(tabu + QStringList{"--vary", "pe_mesh=8x8"}),
                       "--searcher: unknown searcher 'tabu'");
    // A sample: its seed alone, or beside listed points, would do nothing;
    // one larger than the sweep runs the sweep, with a note.
    expectOneLineError(run(base + QStringList{"--vary", "pe_mesh=8x8", "--sample-seed", "3"}),
                       "--sample-seed: is given without a sample to draw");
    const QString listed = tmp.filePath("listed.json");
    mw::writeTextFile(listed.toStdString(),
                      R"({"format": "mapwright.sweep", "architecture": ")" + kSamples +
                          R"(architectures/eyeriss_like.json", "workload": ")" + net +
                          R"(", "vary": [{"parameter": "pe_mesh", "values": ["8x8", "16x16"]}],
                          "points": [["8x8"]], "searcher": "random", "budget": 20})");
    expectOneLineError(run({"sweep", "--spec", listed, "--sample", "1", "--db", db}),
                       "--sample: cannot draw from a --spec that lists its points");
    mw::writeTextFile(
        tmp.filePath("both.json").toStdString(),
        mw::readTextFile(listed.toStdString()).replace(0, 1, R"({"sample": {"count": 1}, )"));
    expectOneLineError(run({"sweep", "--spec", tmp.filePath("both.json"), "--db", db}),
                       "both.json: $.sample: cannot draw from a sweep that lists its points");
    QVERIFY(!QFile::exists(db));
    const Run oversampled =
        run({"sweep", "--arch", q(kSamples + "architectures/eyeriss_like.json"), "--workload",
             q(net), "--searcher", "random", "--budget", "20", "--vary", "pe_mesh=8x8,16x16",
             "--sample", "5", "--db", tmp.filePath("oversampled.sqlite")});
    QVERIFY2(oversampled.exitCode == 0, qPrintable(oversampled.err));
    QVERIFY(oversampled.err.contains("note: the sweep has 2 points, fewer than the sample of 5; "
                                     "all are run"));
    // A spec's bad value is named in the spec; an option given beside it
    // overrides it.
    const QString spec = tmp.filePath("spec.json");
    mw::writeTextFile(spec.toStdString(),
                      R"({"format": "mapwright.sweep", "architecture": ")" + kSamples +
                          R"(architectures/eyeriss_like.json", "workload": ")" + net +
                          R"(", "vary": [{"parameter": "pe_mesh", "values": ["8x8"]}],
                          "searcher": "gama", "budget": 100})");
    expectOneLineError(run({"sweep", "--spec", spec, "--db", db}),
                       "spec.json: $.searcher: unknown searcher 'gama'");
    QVERIFY(!QFile::exists(db)); // nothing started
    QCOMPARE(run({"sweep", "--spec", spec, "--searcher", "random", "--budget", "20", "--db",
                  tmp.filePath("override.sqlite")})
                 .exitCode,
             0);
    // Constraints that do not fit a layer: before the database too.
    const QString badConstraints = tmp.filePath("constraints.json");
    mw::writeTextFile(badConstraints.toStdString(),
                      R"({"format": "mapwright.constraints", "levels": [{"level": "nope_level",
                          "temporal": {"C": 2}}]})");
    expectOneLineError(
        run(base + QStringList{"--vary", "pe_mesh=8x8", "--constraints", badConstraints}),
        "constraints.json: $.levels[0].level: 'nope_level' is not a level");
    QVERIFY(!QFile::exists(db));
    // A searcher parameter it refuses is the sweep's error, before the
    // database (not every point's); one it does not read is noted.
    const QString params = tmp.filePath("params.json");
    mw::writeTextFile(params.toStdString(),
                      R"({"format": "mapwright.sweep", "architecture": ")" + kSamples +
                          R"(architectures/eyeriss_like.json", "workload": ")" + net +
                          R"(", "vary": [{"parameter": "pe_mesh", "values": ["8x8", "16x16"]}],
                          "searcher": "gamma", "budget": 40, "params": {"population": -5}})");
    expectOneLineError(run({"sweep", "--spec", params, "--db", db}),
                       "params.json: $.params.population: is -5; expected a whole number from 4");
    QVERIFY(!QFile::exists(db));
    expectOneLineError(run({"sweep", "--spec", params, "--param", "population=2.5", "--db", db}),
                       "--param population: is 2.5; expected a whole number");
    QVERIFY(!QFile::exists(db));
    // The driver's own parameter too (it once made every point invalid, exit 0).
    expectOneLineError(run({"sweep", "--spec", params, "--param", "population=8", "--param",
                            "exhausted_after=0", "--db", db}),
                       "--param exhausted_after: is 0; expected a whole number from 1");
    QVERIFY(!QFile::exists(db));
    const Run misspelt = run({"sweep", "--spec", params, "--param", "population=8", "--param",
                              "mutaton_rate=0.2", "--db", tmp.filePath("misspelt.sqlite")});
    QVERIFY2(misspelt.exitCode == 0, qPrintable(misspelt.err));
    QCOMPARE(misspelt.err.count("note: parameter 'mutaton_rate' was not read by gamma"), 1);
    QVERIFY(!misspelt.err.contains("'population'"));
    QVERIFY(
        misspelt.out.contains("2 points in " + tmp.filePath("misspelt.sqlite") + " (0 invalid)"));
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
void TestCliSweep::sweepKilledThenResumed() {
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

// mpirun -np 2 and -np 3 give the single process's database. At -np 2 rank
// 0 runs no point itself (--coordinator-threads 0), so the note of the
// parameter nobody reads can only come from the worker's results.
void TestCliSweep::sweepUnderMpi() {
#ifndef MAPWRIGHT_TEST_MPIRUN
    QSKIP("this build has no MPI (install libopenmpi-dev and rebuild to test sweeps under mpirun)");
#else
    QTemporaryDir tmp;
    const std::string net = writeSmallNetwork(tmp);
    const QString single = tmp.filePath("single.sqlite");
    // A parameter no search reads: noted once, whichever ranks ran the points
    // (the workers' records once came without it).
    const QStringList options{"--threads", "1", "--param", "mutaton_rate=0.2"};
    QVERIFY(run(sweepArgs(net, single, 200) + options).exitCode == 0);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("OMPI_ALLOW_RUN_AS_ROOT", "1"); // CI runs as root
    env.insert("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    auto mpirun = [&](const QStringList& np, const QStringList& args) {
        QProcess p;
        p.setProcessEnvironment(env);
        p.start(MAPWRIGHT_TEST_MPIRUN, np + QStringList{kCli} + args);
        p.waitForFinished(300000);
        return Run{p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2,
                   QString::fromUtf8(p.readAllStandardOutput()),
                   QString::fromUtf8(p.readAllStandardError())};
    };
    for (const QStringList& np :
         {QStringList{"-np", "2"}, QStringList{"-np", "3", "--oversubscribe"}}) {
        const QString db = tmp.filePath("mpi" + np[1] + ".sqlite");
        const bool workersOnly = np[1] == "2";
        const Run r = mpirun(
            np, sweepArgs(net, db, 200) + options +
                    (workersOnly ? QStringList{"--coordinator-threads", "0"} : QStringList{}));
        QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
        QCOMPARE(r.err.count("note: parameter 'mutaton_rate' was not read by"), 1);
        QVERIFY2(r.out.contains("on " + np[1] + " MPI ranks, 1 thread each" +
                                (workersOnly ? " (rank 0: 0)" : "")),
                 qPrintable(r.out));
        QCOMPARE(sweepContents(db), sweepContents(single));
    }
    // Rank 0 without threads and no other rank: refused before the database.
    const QString none = tmp.filePath("none.sqlite");
    const Run alone =
        mpirun({"-np", "1"}, sweepArgs(net, none, 200) + QStringList{"--coordinator-threads", "0"});
    QVERIFY(alone.exitCode != 0);
    QVERIFY2(alone.err.startsWith("error: --coordinator-threads: is 0 and mpirun started one rank"),
             qPrintable(alone.err));
    // A rank alone exits with its one line, not through MPI_Abort (whose
    // banner tells of killed processes); mpirun's own note may follow.
    QVERIFY2(!alone.err.contains("MPI_ABORT"), qPrintable(alone.err));
    QVERIFY(!QFile::exists(none));
#endif
}

QTEST_GUILESS_MAIN(TestCliSweep)
#include "test_cli_sweep.moc"
