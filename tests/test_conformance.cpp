// Conformance with Timeloop's published reference outputs: every tutorial case
// is imported from Timeloop's own input and energy table, evaluated, and
// compared with expected.json. Access counts and cycles must match exactly,
// energies within 0.5 %.
#include "io/json_io.h"
#include "io/timeloop.h"
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
    const fs::path mapFile = d / "map.yaml";
    const auto c = mw::importTimeloop((d / "input.yaml").string(), (d / "ERT.yaml").string(),
                                      fs::exists(mapFile) ? mapFile.string() : "");
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
            auto eq = [&](std::int64_t ours, const char* key) {
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

void TestConformance::allCasesPresent() {
    int n = 0;
    for (const auto& e : fs::directory_iterator(caseRoot()))
        n += e.is_directory() && fs::exists(e.path() / "expected.json");
    QCOMPARE(n, 15);
}

QTEST_GUILESS_MAIN(TestConformance)
#include "test_conformance.moc"
