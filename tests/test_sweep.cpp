// Design-space sweeps: parameters and their errors, the points and their
// chains, each point priced as its own design, results independent of how
// the points are distributed (threads, shards, a resumed run), the SQLite
// database, Pareto fronts.
#include "estimate/estimator.h"
#include "explore/pareto.h"
#include "explore/sweep_db.h"
#include "io/json_io.h"
#include "test_support.h"

#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <sqlite3.h>

using namespace mw;
using mw::test::errorOf;

namespace {

const std::string kSamples = std::string(MAPWRIGHT_SOURCE_DIR) + "/samples/";

SweepSpec smallSweep() {
    SweepSpec s;
    s.base = loadArchitecture(kSamples + "architectures/eyeriss_like.json");
    s.network = mw::test::twoConvs();
    s.axes = {{"shared_glb.capacity_words", {"32768", "65536", "131072"}},
              {"DRAM.class", {"LPDDR4", "HBM2"}}};
    s.searcher = "gamma";
    s.budget = 150;
    return s;
}

// Records compared without their wall time.
Json comparable(const std::map<int, PointRecord>& points) {
    Json j = Json::array();
    for (const auto& [index, r] : points) {
        Json p = toJson(r);
        p.erase("seconds");
        j.push_back(p);
    }
    return j;
}

std::map<int, PointRecord> runAll(const SweepSpec& s, int threads,
                                  const std::map<int, PointRecord>& before = {},
                                  SweepShard shard = {}) {
    std::map<int, PointRecord> out = before;
    SweepRunOptions o;
    o.threads = threads;
    o.shard = shard;
    runSweep(s, before, o, [&](const PointRecord& r) { out[r.index] = r; });
    return out;
}

} // namespace

class TestSweep : public QObject {
    Q_OBJECT
  private slots:
    void parametersChangeTheDesign();
    void badSweepsAreOneLineErrors();
    void pointsAndChains();
    void pointsPriceTheirOwnDesign();
    void invalidCombinationsAreRecorded();
    void resultsIndependentOfThreads();
    void databaseRoundTripAndResume();
    void killedMidWriteReadsWhole();
    void shardsMergeToTheWholeSweep();
    void mergeChecksBeforeWriting();
    void paretoFronts();
    void sweepFileFormat();
};

void TestSweep::parametersChangeTheDesign() {
    const Architecture base = loadArchitecture(kSamples + "architectures/eyeriss_like.json");
    Architecture a = base;
    applySweepParameter(a, "pe_mesh", "16x16");
    QCOMPARE(a.compute.meshX, 16);
    QCOMPARE(a.compute.meshY, 16);
    QCOMPARE(a.levels[std::size_t(a.levelIndex("ifmap_spad"))].meshX, 16);
    QCOMPARE(a.levels[std::size_t(a.levelIndex("ifmap_spad"))].meshY, 16);
    QCOMPARE(a.levels[std::size_t(a.levelIndex("inter_PE_spatial"))].meshX, 16);
    QCOMPARE(a.levels[std::size_t(a.levelIndex("shared_glb"))].meshX, 1);
    validateArchitecture(a);

    // A DRAM's class is its type; the level is re-priced (the sample's values are pinned).
    Architecture d = base;
    applySweepParameter(d, "DRAM.class", "HBM2");
    applyEstimates(d);
    QCOMPARE(QString::fromStdString(d.levels[0].dramType), QString("HBM2"));
    QVERIFY(d.levels[0].sources.read == ValueSource::Estimated);
    Architecture l = base;
    applySweepParameter(l, "DRAM.dram_type", "LPDDR4");
    applyEstimates(l);
    QVERIFY(d.levels[0].energy.read < l.levels[0].energy.read); // HBM2 costs less per bit

    // A buffer doubled costs more per access and more area.
    Architecture small = base, big = base;
    applySweepParameter(small, "shared_glb.capacity_words", "65536");
    applySweepParameter(big, "shared_glb.capacity_words", "262144");
    applyEstimates(small);
    applyEstimates(big);
    QVERIFY(big.levels[1].energy.read > small.levels[1].energy.read);
    QVERIFY(big.levels[1].area > 2 * small.levels[1].area);
    QVERIFY(estimateArchitecture(big).onChipArea > estimateArchitecture(small).onChipArea);

    Architecture c = base;
    applySweepParameter(c, "compute.arithmetic", "fp");
    applySweepParameter(c, "technology_nm", "16");
    QVERIFY(c.compute.arithmetic == Arithmetic::Float);
    QCOMPARE(c.technologyNm, 16.0);
    QVERIFY(c.compute.energySource == ValueSource::Estimated);
}

void TestSweep::badSweepsAreOneLineErrors() {
    const SweepSpec good = smallSweep();
    auto withAxes = [&](std::vector<SweepAxis> axes) {
        SweepSpec s = good;
        s.axes = std::move(axes);
        return errorOf([&] { checkSweep(s); });
    };
    // The error of reading the good sweep's spec with key set to value.
    auto specWith = [&](const char* key, const Json& value) {
        return errorOf([&] {
            Json j = toJson(good);
            j[key] = value;
            sweepSpecFromJson(j, "spec.json", "");
        });
    };
    auto checkedWith = [&](const char* key, const Json& value) {
        return errorOf([&] {
            Json j = toJson(good);
            j[key] = value;
            checkSweep(sweepSpecFromJson(j, "spec.json", ""));
        });
    };
    const std::pair<std::string, std::string> cases[] = {
        // A spec's points are checked as --vary values are (each was an
        // invalid point, or searched twice, or the whole product ran).
        {checkedWith("points",
                     Json::array({Json::array({"32768", "HBM2"}), Json::array({"0", "HBM2"})})),
         "spec.json: $.points[1]: shared_glb.capacity_words=0: "},
        {checkedWith("points",
                     Json::array({Json::array({"32768", "HBM2"}), Json::array({"32768", "HBM2"})})),
         "spec.json: $.points[1]: is points[0] again; expected each point once"},
        {specWith("points", Json::array()), "spec.json: $.points: is empty; expected at least one"},
        // An objective naming a tensor a layer lacks made every point invalid.
        {checkedWith("objective", Json("edp@Bias=0.5")),
         "objective: 'Bias' is not a tensor of layer conv_a"},
        {withAxes({{"glb.capacity_words", {"1024"}}}),
         "glb.capacity_words: 'glb' is not a level of eyeriss-like; expected one of DRAM, "
         "shared_glb,"},
        {withAxes({{"shared_glb.size", {"1024"}}}),
         "shared_glb.size: is not a field a sweep varies; expected one of capacity_words,"},
        {withAxes({{"shared_glb.capacity_words", {"lots"}}}),
         "shared_glb.capacity_words=lots: expected a whole number >= 1"},
        {withAxes({{"pe_mesh", {"16"}}}), "pe_mesh=16: expected X x Y, as 16x16"},
        {withAxes({{"DRAM.class", {"SDRAM"}}}), "DRAM.class=SDRAM: expected a DRAM type:"},
        {withAxes({{"inter_PE_spatial.mesh_x", {"5"}}}),
         "inter_PE_spatial.mesh_x=5: makes the base architecture invalid"},
        {withAxes(
             {{"shared_glb.capacity_words", {"1024"}}, {"shared_glb.capacity_words", {"2048"}}}),
         "shared_glb.capacity_words: is varied twice"},
        {withAxes({{"pe_mesh", {}}}), "pe_mesh: has no values; expected at least one"},
        {withAxes({}), "sweep: varies nothing"},
        {errorOf([] { parseSweepAxis("pe_mesh="); }), "--vary pe_mesh=: expected PARAMETER=V1,V2"},
        {errorOf([] { parseSweepAxis("pe_mesh=8x8,,16x16"); }), "has an empty value"},
        {errorOf([] { parseSweepShard("3/2"); }),
         "--shard: is '3/2'; expected I/N with 0 <= I < N"},
        {errorOf([] { parseSweepMetrics("energy,joy", "--metrics"); }),
         "--metrics: has 'joy'; expected energy, cycles, edp or area"},
        // A misspelt field of a spec ran with the default in silence.
        {specWith("budgett", 5),
         "spec.json: $.budgett: is not a field here (did you mean 'budget'?)"},
        // The spec's own values are named at their paths in the file; the
        // command line's checks named options the user never gave.
        {specWith("budget", -5),
         "spec.json: $.budget: is -5; expected evaluations per layer from 1 to 1e9"},
        {specWith("searcher", Json("gama")),
         "spec.json: $.searcher: unknown searcher 'gama' (did you mean 'gamma'?)"},
        {specWith("objective", Json("edpp")), "spec.json: $.objective: is 'edpp'"},
        {errorOf([&] {
             Json j = toJson(good);
             j["vary"][1]["parameter"] = "DRAM.clas";
             checkSweep(sweepSpecFromJson(j, "spec.json", ""));
         }),
         "spec.json: $.vary[1]: DRAM.clas: is not a field a sweep varies (did you mean 'class'?)"},
        {specWith("constraints", Json("missing.json")),
         "spec.json: $.constraints: missing.json: cannot be opened"},
        {specWith("points", Json::array({Json::array({"32768"})})),
         "spec.json: $.points[0]: gives 1 values; expected one per axis of vary (2)"},
    };
    for (const auto& [msg, expected] : cases) {
        QVERIFY2(msg.find(expected) != std::string::npos, (msg + " lacks " + expected).c_str());
        QVERIFY2(msg.find('\n') == std::string::npos, msg.c_str());
    }
    // An axis added on the command line is named as given there, not in the file.
    SweepSpec added = sweepSpecFromJson(toJson(good), "spec.json", "");
    added.axes.push_back(parseSweepAxis("pe_mesh=16"));
    const std::string addedMsg = errorOf([&] { checkSweep(added); });
    QVERIFY2(addedMsg.rfind("pe_mesh=16: expected X x Y", 0) == 0, addedMsg.c_str());
    SweepSpec points = good;
    points.points = {{"32768"}};
    const std::string msg = errorOf([&] { checkSweep(points); });
    QVERIFY2(msg.find("points[0]: gives 1 values; expected one per axis (2)") != std::string::npos,
             msg.c_str());
}

void TestSweep::pointsAndChains() {
    SweepSpec s = smallSweep();
    const auto points = planSweep(s);
    QCOMPARE(points.size(), std::size_t(6));
    // The last axis varies fastest; chains follow the first.
    QCOMPARE(QString::fromStdString(points[1].values[0]), QString("32768"));
    QCOMPARE(QString::fromStdString(points[1].values[1]), QString("HBM2"));
    QCOMPARE(points[0].predecessor, -1);
    QCOMPARE(points[1].predecessor, -1);
    QCOMPARE(points[2].predecessor, 0);
    QCOMPARE(points[4].predecessor, 2);
    QCOMPARE(points[5].predecessor, 3);
    QCOMPARE(points[4].chain, 0);
    QCOMPARE(points[5].chain, 1);
    // Sampling draws distinct points of the product, in its order.
    s.axes.push_back({"pe_mesh", {"14x12", "16x16", "8x8"}});
    s.sample = 7;
    const auto sampled = planSweep(s);
    QCOMPARE(sampled.size(), std::size_t(7));
    std::set<std::vector<std::string>> distinct;
    for (const auto& p : sampled)
        distinct.insert(p.values);
    QCOMPARE(distinct.size(), std::size_t(7));
    QCOMPARE(planSweep(s)[3].values, sampled[3].values); // reproducible from its seed
}

void TestSweep::pointsPriceTheirOwnDesign() {
    const SweepSpec s = smallSweep();
    const auto points = planSweep(s);
    const auto small = evaluateDesignPoint(s, points[0], nullptr);
    const auto large = evaluateDesignPoint(s, points[4], nullptr);
    QVERIFY(small && large && small->valid && large->valid);
    QVERIFY(large->area > small->area);
    QCOMPARE(small->layers.size(), std::size_t(3));
    QCOMPARE(small->layers[2].sameAs, 0);
    QVERIFY(!small->layers[0].mapping.is_null());
    QVERIFY(small->layers[2].mapping.is_null()); // the repeat keeps no copy
    QCOMPARE(small->energy,
             small->layers[0].energy + small->layers[1].energy + small->layers[2].energy);
    const Architecture a = architectureFromJson(large->architecture);
    QCOMPARE(a.levels[1].capacityWords, std::int64_t(131072));
    // Warm started from its neighbour: it says so.
    const auto warm = evaluateDesignPoint(s, points[2], &*small);
    QVERIFY(warm && warm->valid);
    QCOMPARE(warm->warmFrom, 0);
}

void TestSweep::invalidCombinationsAreRecorded() {
    SweepSpec s = smallSweep();
    s.axes = {{"pe_mesh", {"14x12", "16x16"}}, {"inter_PE_spatial.mesh_x", {"14", "7"}}};
    checkSweep(s); // every value alone is a design
    const auto records = runAll(s, 2);
    QCOMPARE(records.size(), std::size_t(4));
    QVERIFY(records.at(0).valid && records.at(1).valid);
    for (int i : {2, 3}) {
        QVERIFY(!records.at(i).valid);
        QVERIFY2(records.at(i).reason.find("not a design: ") == 0, records.at(i).reason.c_str());
        QVERIFY(records.at(i).architecture.is_null());
    }
}

void TestSweep::resultsIndependentOfThreads() {
    const SweepSpec s = smallSweep();
    const auto one = runAll(s, 1);
    const auto two = runAll(s, 2);
    QCOMPARE(one.size(), std::size_t(6));
    QCOMPARE(comparable(one).dump(), comparable(two).dump());
    QCOMPARE(one.at(2).warmFrom, 0);
}

void TestSweep::databaseRoundTripAndResume() {
    QTemporaryDir tmp;
    const SweepSpec s = smallSweep();
    const std::string path = tmp.filePath("results.sqlite").toStdString();
    const auto whole = runAll(s, 2);
    // The empty file a sweep that failed before its first write leaves is
    // begun anew (it was refused as "not a Mapwright results database").
    writeTextFile(path, "");
    {
        SweepDatabase db = SweepDatabase::create(path, toJson(s), "", false);
        // Three points committed, as a kill would leave it (the points after
        // them were in flight and are lost).
        int written = 0;
        SweepRunOptions o;
        o.threads = 1;
        runSweep(s, {}, o, [&](const PointRecord& r) {
            if (written++ < 3)
                db.write(r);
        });
        QCOMPARE(db.points().size(), std::size_t(3));
    }
    // Not over it without --resume, nor another sweep's.
    QVERIFY(errorOf([&] {
                SweepDatabase::create(path, toJson(s), "", false);
            }).find("already holds results of this sweep; expected --resume") != std::string::npos);
    SweepSpec other = s;
    other.budget = 99;
    QVERIFY(errorOf([&] {
                SweepDatabase::create(path, toJson(other), "", true);
            }).find("holds the results of a different sweep") != std::string::npos);
    SweepDatabase db = SweepDatabase::create(path, toJson(s), "", true);
    const auto before = db.points();
    SweepRunOptions o;
    o.threads = 2;
    QVERIFY(runSweep(s, before, o, [&](const PointRecord& r) { db.write(r); }));
    QCOMPARE(comparable(db.points()).dump(), comparable(whole).dump());
    // A write that fails mid-sweep (a full disk) is the caller's error, with
    // the workers stopped (they were left running: std::terminate).
    {
        SweepRunOptions two;
        two.threads = 2;
        QVERIFY(errorOf([&] {
                    runSweep(s, {}, two, [&](const PointRecord&) {
                        throw InputError("results.sqlite", "database error: disk full");
                    });
                }).find("disk full") != std::string::npos);
    }
    // A database that cannot be written is refused before the points, not
    // at the first write: here another writer holds it (a read-only file or
    // folder does the same, but not for root, who runs CI).
    {
        sqlite3* other = nullptr;
        sqlite3_open_v2(path.c_str(), &other, SQLITE_OPEN_READWRITE, nullptr);
        QCOMPARE(sqlite3_exec(other, "BEGIN IMMEDIATE;", nullptr, nullptr, nullptr), SQLITE_OK);
        const std::string msg = errorOf([&] { SweepDatabase::create(path, toJson(s), "", true); });
        sqlite3_exec(other, "ROLLBACK;", nullptr, nullptr, nullptr);
        sqlite3_close(other);
        EXPECT_CONTAINS(msg, "results.sqlite: cannot be written (database error: database is "
                             "locked)");
    }
    EXPECT_CONTAINS(errorOf([&] { SweepDatabase::create("", toJson(s), "", false); }),
                    "results database: has an empty path");
    // Reopened read-only, the sweep comes back whole.
    const SweepDatabase again = SweepDatabase::open(path);
    QVERIFY(again.spec() == toJson(s));
    QCOMPARE(sweepSpecFromJson(again.spec(), path, "").axes.size(), std::size_t(2));
    QVERIFY(errorOf([&] {
                SweepDatabase::open(tmp.filePath("none.sqlite").toStdString());
            }).find("does not exist") != std::string::npos);
    const std::string notDb = tmp.filePath("text.sqlite").toStdString();
    writeTextFile(notDb, "{}");
    const std::string msg = errorOf([&] { SweepDatabase::open(notDb); });
    QVERIFY2(msg.find("is not a Mapwright results database") != std::string::npos, msg.c_str());
    // A database altered outside mapwright (a point without its design's
    // values, an index past an int) is refused by name: the report and the
    // plot once read past a point's values and crashed.
    auto altered = [&](const char* sql) {
        const std::string copy = tmp.filePath("altered.sqlite").toStdString();
        std::filesystem::remove(copy);
        std::filesystem::copy_file(path, copy);
        sqlite3* writer = nullptr;
        sqlite3_open_v2(copy.c_str(), &writer, SQLITE_OPEN_READWRITE, nullptr);
        const int rc = sqlite3_exec(writer, sql, nullptr, nullptr, nullptr);
        sqlite3_close(writer);
        return rc == SQLITE_OK ? errorOf([&] { SweepDatabase::open(copy).points(); })
                               : std::string("<sql failed>");
    };
    EXPECT_CONTAINS(altered("INSERT INTO points(id, valid, reason) VALUES(500, 0, 'x')"),
                    "altered.sqlite: point 500 has 0 values of its design; expected one per "
                    "varied parameter (2");
    EXPECT_CONTAINS(altered("UPDATE points SET id = 9223372036854775807 WHERE id = 0"),
                    "points.id 9223372036854775807: expected a point index from 0");
    EXPECT_CONTAINS(altered("UPDATE points SET energy_pJ = 'abc' WHERE valid = 1"),
                    "'s energy_pJ is not a number from 0");
    EXPECT_CONTAINS(altered("UPDATE points SET cycles = -5 WHERE valid = 1"),
                    "'s cycles is not a number from 0");
}

// A sweep killed while it writes a point leaves a hot journal; a read-only
// open (sweep report, the GUI) must roll it back and read the points that
// were committed, not call the file "not a results database".
void TestSweep::killedMidWriteReadsWhole() {
    QTemporaryDir tmp;
    SweepSpec s = smallSweep();
    s.axes.pop_back();
    const std::string path = tmp.filePath("results.sqlite").toStdString();
    std::map<int, PointRecord> points;
    {
        SweepDatabase db = SweepDatabase::create(path, toJson(s), "", false);
        SweepRunOptions o;
        o.threads = 1;
        runSweep(s, {}, o, [&](const PointRecord& r) {
            points[r.index] = r;
            if (r.index < 2)
                db.write(r);
        });
    }
    // What a kill mid-write leaves: the files as they stand inside an open
    // write transaction that has spilled pages to the database, with no
    // process holding a lock.
    const std::string killed = tmp.filePath("killed.sqlite").toStdString();
    sqlite3* writer = nullptr;
    QCOMPARE(sqlite3_open_v2(path.c_str(), &writer, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
    QCOMPARE(sqlite3_exec(writer,
                          "PRAGMA cache_size=1; BEGIN IMMEDIATE; DELETE FROM layers; "
                          "DELETE FROM point_values; DELETE FROM points;",
                          nullptr, nullptr, nullptr),
             SQLITE_OK);
    std::filesystem::copy_file(path, killed);
    std::filesystem::copy_file(path + "-journal", killed + "-journal");
    sqlite3_exec(writer, "ROLLBACK;", nullptr, nullptr, nullptr);
    sqlite3_close(writer);
    QVERIFY(std::filesystem::file_size(killed + "-journal") > 0);

    const SweepDatabase read = SweepDatabase::open(killed);
    QCOMPARE(comparable(read.points()).dump(),
             comparable({{0, points.at(0)}, {1, points.at(1)}}).dump());
    QVERIFY(!std::filesystem::exists(killed + "-journal"));
}

void TestSweep::shardsMergeToTheWholeSweep() {
    QTemporaryDir tmp;
    const SweepSpec s = smallSweep();
    const auto whole = runAll(s, 1);
    std::vector<std::string> shards;
    for (int i = 0; i < 2; ++i) {
        const std::string path = tmp.filePath(QString("shard%1.sqlite").arg(i)).toStdString();
        const SweepShard shard{i, 2};
        SweepDatabase db = SweepDatabase::create(path, toJson(s), std::to_string(i) + "/2", false);
        SweepRunOptions o;
        o.shard = shard;
        runSweep(s, {}, o, [&](const PointRecord& r) { db.write(r); });
        QCOMPARE(db.points().size(), std::size_t(3)); // each shard holds one of the two chains
        shards.push_back(path);
    }
    const std::string merged = tmp.filePath("merged.sqlite").toStdString();
    QCOMPARE(mergeSweepDatabases(merged, shards), 6);
    QCOMPARE(comparable(SweepDatabase::open(merged).points()).dump(), comparable(whole).dump());
    QCOMPARE(mergeSweepDatabases(merged, shards), 0); // again: nothing new
}

// A merge that cannot be made is refused before OUT is written, naming the
// shard at fault. (It once wrote the points before a conflict and stopped
// there, and its errors named OUT.)
void TestSweep::mergeChecksBeforeWriting() {
    QTemporaryDir tmp;
    const Json spec = toJson(smallSweep());
    auto point = [](int index, double energy) {
        PointRecord r;
        r.index = index;
        r.values = {"65536", "14x12"};
        r.valid = true;
        r.energy = energy;
        return r;
    };
    auto shard = [&](const QString& name, const std::string& part,
                     const std::vector<PointRecord>& points) {
        const std::string path = tmp.filePath(name).toStdString();
        SweepDatabase::create(path, spec, part, false).write(points);
        return path;
    };
    const std::string a = shard("a.sqlite", "0/2", {point(1, 5.0)});
    const std::string b = shard("b.sqlite", "1/2", {point(0, 3.0), point(1, 6.0)});
    const std::string out = tmp.filePath("out.sqlite").toStdString();
    // Two shards that disagree on a point: OUT is not even made.
    EXPECT_CONTAINS(errorOf([&] {
                        mergeSweepDatabases(out, {a, b});
                    }),
                    b + ": holds point 1 with other results than " + a);
    QVERIFY(!std::filesystem::exists(out));
    // A shard that disagrees with OUT: OUT keeps what it held (point 0 of b
    // was written before the conflict at point 1).
    QCOMPARE(mergeSweepDatabases(out, {a}), 1);
    EXPECT_CONTAINS(errorOf([&] { mergeSweepDatabases(out, {b}); }),
                    b + ": holds point 1 with other results than " + out + " holds");
    QCOMPARE(SweepDatabase::open(out).points().size(), std::size_t(1));
    // OUT among the shards, a shard as OUT, empty paths.
    EXPECT_CONTAINS(errorOf([&] {
                        mergeSweepDatabases(out, {a, out});
                    }),
                    out + ": is OUT itself; expected a shard to merge into " + out);
    EXPECT_CONTAINS(errorOf([&] { mergeSweepDatabases(a, {b}); }),
                    a + ": is shard '0/2' of a sweep; expected a merged database");
    EXPECT_CONTAINS(errorOf([&] { mergeSweepDatabases("", {a}); }), "OUT has an empty path");
    EXPECT_CONTAINS(errorOf([&] { mergeSweepDatabases(out, {""}); }),
                    "results database: has an empty path");
    // OUT of another sweep.
    SweepSpec other = smallSweep();
    other.budget += 1;
    const std::string otherOut = tmp.filePath("other.sqlite").toStdString();
    SweepDatabase::create(otherOut, toJson(other), "", false);
    EXPECT_CONTAINS(errorOf([&] { mergeSweepDatabases(otherOut, {a}); }),
                    otherOut + ": holds the results of a different sweep than " + a);
    // The same shard twice merges as once.
    QCOMPARE(mergeSweepDatabases(tmp.filePath("twice.sqlite").toStdString(), {a, a}), 1);
}

void TestSweep::paretoFronts() {
    auto point = [](int i, double energyMj, double cycles, double areaMm2, bool valid = true) {
        PointRecord r;
        r.index = i;
        r.valid = valid;
        r.energy = energyMj * 1e9;
        r.cycles = cycles;
        r.area = areaMm2 * 1e6;
        r.edp = r.energy * 1e-12 * cycles;
        return r;
    };
    const std::vector<PointRecord> pts = {point(0, 1.0, 100, 5),       point(1, 2.0, 50, 5),
                                          point(2, 2.0, 120, 1),       point(3, 3.0, 40, 9),
                                          point(4, 0.5, 10, 1, false), point(5, 1.0, 100, 6)};
    const auto two = paretoFront(pts, {SweepMetric::Energy, SweepMetric::Cycles});
    QCOMPARE(two, (std::vector<std::size_t>{0, 5, 1, 3})); // 0 and 5 tie; 2 is dominated; 4 invalid
    const auto three =
        paretoFront(pts, {SweepMetric::Energy, SweepMetric::Cycles, SweepMetric::Area});
    QCOMPARE(three, (std::vector<std::size_t>{0, 1, 2, 3})); // 5 loses to 0 on area; 2 wins it
}

void TestSweep::sweepFileFormat() {
    QTemporaryDir tmp;
    const std::string file = tmp.filePath("sweep.json").toStdString();
    writeTextFile(file, R"({"format": "mapwright.sweep", "version": 1,
        "architecture": ")" +
                            kSamples + R"(architectures/eyeriss_like.json",
        "workload": ")" + kSamples +
                            R"(workloads/resnet_conv3x3.json",
        "vary": [{"parameter": "shared_glb.capacity_words", "values": [65536, 131072]},
                 {"parameter": "pe_mesh", "values": ["14x12", "16x16"]}],
        "points": [{"shared_glb.capacity_words": 65536, "pe_mesh": "16x16"}, [131072, "14x12"]],
        "searcher": "random-pruned", "budget": 300, "seed": 4})");
    const SweepSpec s = sweepSpecFromJson(readJsonFile(file), file, "");
    checkSweep(s);
    const auto points = planSweep(s);
    QCOMPARE(points.size(), std::size_t(2));
    QCOMPARE(QString::fromStdString(points[0].values[1]), QString("16x16"));
    QCOMPARE(QString::fromStdString(points[1].values[0]), QString("131072"));
    QCOMPARE(s.seed, std::uint64_t(4));
    // The database's copy (everything embedded) reads back to the same sweep.
    const Json embedded = toJson(s);
    QVERIFY(toJson(sweepSpecFromJson(embedded, "db", "")) == embedded);
    const std::string bad = tmp.filePath("bad.json").toStdString();
    writeTextFile(
        bad,
        R"({"format": "mapwright.sweep", "architecture": ")" + kSamples +
            R"(architectures/eyeriss_like.json", "workload": ")" + kSamples +
            R"(workloads/resnet_conv3x3.json", "vary": [{"parameter": "pe_mesh", "values": [[1]]}]})");
    const std::string msg = errorOf([&] { sweepSpecFromJson(readJsonFile(bad), bad, ""); });
    QVERIFY2(msg == bad + ": $.vary[0].values[0]: expected a number or a string, got array",
             msg.c_str());
}

QTEST_GUILESS_MAIN(TestSweep)
#include "test_sweep.moc"
