// Conformance with Timeloop's published reference outputs: every tutorial case
// is imported from Timeloop's own input and energy table, evaluated, and
// compared with expected.json. Access counts and cycles must match exactly,
// energies within 0.5 %. The same cases as a user writes them
// (tests/data/timeloop-user: arch, problem, mapping or constraints and mapper,
// checked in timeloop-model) import to the same architecture, problem and
// mapping, and so meet the same figures.
#include "io/json_io.h"
#include "io/timeloop/timeloop.h"
#include "mapping/mapping.h"
#include "model/cost_model.h"

#include <QtTest>

#include <filesystem>

namespace fs = std::filesystem;
using json = mw::Json;

class TestConformance : public QObject {
    Q_OBJECT
  private slots:
    void referenceCase_data();
    void referenceCase();
    void userFilesLoadAsTheDumps_data() { referenceCase_data(); }
    void userFilesLoadAsTheDumps();
    void allCasesPresent();
};

static fs::path caseRoot() {
    return fs::path(MAPWRIGHT_TEST_DATA) / "timeloop-tutorial";
}

void TestConformance::referenceCase_data() {
    QTest::addColumn<QString>("dir");
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(caseRoot()))
        if (e.is_directory())
            dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    for (const auto& d : dirs)
        QTest::newRow(d.filename().string().c_str()) << QString::fromStdString(d.string());
}

// The processed dump, its ERT and, for mapper cases, the mapping found.
static mw::TimeloopCase importDump(const fs::path& d) {
    std::vector<std::string> files = {(d / "input.yaml").string(), (d / "ERT.yaml").string()};
    if (fs::exists(d / "map.yaml"))
        files.push_back((d / "map.yaml").string());
    return mw::importTimeloop(files);
}

// The same case as a user writes it: every YAML file of its folder, the ERT
// and (mapper cases) the mapping found, merged as Timeloop merges them.
static mw::TimeloopCase importUserFiles(const fs::path& d) {
    const fs::path user = fs::path(MAPWRIGHT_TEST_DATA) / "timeloop-user" / d.filename();
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(user))
        if (e.path().extension() == ".yaml")
            files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    files.push_back((d / "ERT.yaml").string());
    if (fs::exists(d / "map.yaml"))
        files.push_back((d / "map.yaml").string());
    return mw::importTimeloop(files);
}

static void expectClose(double ours, double theirs, double relTol, const std::string& what) {
    const double diff = std::abs(ours - theirs);
    const double scale = std::max(std::abs(theirs), 1e-9);
    if (diff > relTol * scale && diff > 0.02) // reference values are rounded to 0.01
        QFAIL(qPrintable(QString::fromStdString(what + ": ours " + std::to_string(ours) +
                                                ", Timeloop " + std::to_string(theirs))));
}

void TestConformance::referenceCase() {
    QFETCH(QString, dir);
    const fs::path d = dir.toStdString();
    const auto c = importDump(d);
    QVERIFY2(c.hasMapping, "case has a mapping");
    const auto e = mw::evaluate(c.problem, c.arch, c.mapping);
    if (!e.valid) {
        std::string msg;
        for (const auto& v : mw::describeViolations(e, c.problem, c.arch))
            msg += v + "; ";
        QFAIL(msg.c_str());
    }
    const json expected = mw::readJsonFile((d / "expected.json").string());
    const json& summary = expected.at("summary");
    QCOMPARE(e.computes, summary.at("computes").get<std::int64_t>());
    QCOMPARE(e.cycles, summary.at("cycles").get<std::int64_t>());
    expectClose(100.0 * e.utilization, summary.at("utilization_pct").get<double>(), 0.001,
                "utilization");
    const double computes = double(e.computes);
    expectClose(e.energy * 1000.0 / computes,
                summary.at("fJ_per_compute").at("Total").get<double>(), 0.005, "total energy");

    int checkedLevels = 0;
    for (const auto& lv : expected.at("levels")) {
        const std::string name = lv.at("name").get<std::string>();
        if (name == c.arch.compute.name) {
            expectClose(e.computeEnergy, lv.at("specs").at("energy_total").get<double>(), 0.005,
                        name + " energy");
            continue;
        }
        const int l = c.arch.levelIndex(name);
        QVERIFY2(l >= 0, ("level " + name + " exists").c_str());
        const auto& ls = e.levels[l];
        QCOMPARE(ls.cycles, lv.at("cycles").get<std::int64_t>());
        // Loop nest text, per level, as Timeloop prints it.
        std::vector<std::string> ours;
        for (const auto& loop : mw::levelLoops(c.problem, c.mapping, l))
            ours.push_back(mw::loopText(c.problem, loop));
        QCOMPARE(ours, lv.at("loop_nest").get<std::vector<std::string>>());
        for (const auto& [tname, tv] : lv.at("tensors").items()) {
            const int t = c.problem.tensorIndex(tname);
            QVERIFY(t >= 0);
            const auto& ts = ls.tensors[t];
            const std::string where = name + "/" + tname;
            QVERIFY2(ts.kept, (where + " kept").c_str());
            auto eq = [&, &tv = tv](std::int64_t ours, const char* key) {
                const auto theirs = tv.at(key).get<std::int64_t>();
                if (ours != theirs)
                    QFAIL(qPrintable(QString::fromStdString(where + " " + key + ": ours " +
                                                            std::to_string(ours) + ", Timeloop " +
                                                            std::to_string(theirs))));
            };
            eq(ts.reads, "scalar_reads_per_instance");
            eq(ts.fills, "scalar_fills_per_instance");
            eq(ts.updates, "scalar_updates_per_instance");
            eq(ts.tile, "utilized_capacity");
            eq(ls.utilizedInstances, "utilized_instances_max");
            expectClose(ts.energy, tv.at("energy_total").get<double>(), 0.005, where + " energy");
        }
        // Level energy (accesses and leakage) from Timeloop's fJ/compute breakdown.
        const auto& fj = summary.at("fJ_per_compute");
        if (fj.contains(name))
            expectClose(ls.energy * 1000.0 / computes, fj.at(name).get<double>(), 0.005,
                        name + " level energy");
        ++checkedLevels;
    }
    QVERIFY(checkedLevels > 0);
}

void TestConformance::userFilesLoadAsTheDumps() {
    QFETCH(QString, dir);
    const fs::path d = dir.toStdString();
    const mw::TimeloopCase dump = importDump(d);
    const mw::TimeloopCase user = importUserFiles(d);
    // Everything the model reads is the same: the architecture's levels
    // (sizes, meshes, bandwidths, energies), the problem and the mapping.
    mw::Architecture a = dump.arch, b = user.arch;
    a.name = b.name = "";
    QCOMPARE(mw::toJson(b).dump(1), mw::toJson(a).dump(1));
    QCOMPARE(mw::timeloopProblemYaml(user.problem), mw::timeloopProblemYaml(dump.problem));
    QCOMPARE(user.hasMapping, dump.hasMapping);
    QCOMPARE(mw::toJson(user.mapping, user.problem, user.arch).dump(),
             mw::toJson(dump.mapping, dump.problem, dump.arch).dump());
    // So are the constraints and the mapper's settings of mapper cases.
    QCOMPARE(user.hasConstraints, dump.hasConstraints);
    QCOMPARE(user.constraints.dump(), dump.constraints.dump());
    if (fs::exists(d / "map.yaml")) { // (the dumps of model cases hold a default mapper too)
        QVERIFY(user.hasMapper && dump.hasMapper);
        QCOMPARE(user.mapper.searcher, dump.mapper.searcher);
        QCOMPARE(user.mapper.objective, dump.mapper.objective);
        QCOMPARE(user.mapper.victoryCondition, dump.mapper.victoryCondition);
    }
    const auto e1 = mw::evaluate(dump.problem, dump.arch, dump.mapping);
    const auto e2 = mw::evaluate(user.problem, user.arch, user.mapping);
    QCOMPARE(e2.cycles, e1.cycles);
    QCOMPARE(e2.energy, e1.energy);
}

void TestConformance::allCasesPresent() {
    int n = 0;
    for (const auto& e : fs::directory_iterator(caseRoot()))
        n += e.is_directory() && fs::exists(e.path() / "expected.json") &&
             fs::exists(fs::path(MAPWRIGHT_TEST_DATA) / "timeloop-user" / e.path().filename() /
                        "arch.yaml");
    QCOMPARE(n, 15);
}

QTEST_GUILESS_MAIN(TestConformance)
#include "test_conformance.moc"
