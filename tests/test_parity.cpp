// Parity with Timeloop on the differential corpus (tests/data/parity/*.json,
// made by tests/parity/regenerate.py from timeloop-model's own answers):
// random legal mappings, invalid ones and searchers' best mappings on many
// architectures and layer shapes. For every case Timeloop accepted, the model
// must agree exactly on cycles and on every level's per-tensor reads, fills,
// updates, utilized capacity and instances, and on energy within 0.5 %; for
// every case Timeloop refused, the model must refuse it for the same reason
// (capacity at the same level, or fan-out).
//
// Cases listed in known_differences.json are disagreements not yet resolved:
// they are counted and reported, and one that starts to agree fails the test
// until it is taken off the list, so the list only ever shrinks.
#include "io/json_io.h"
#include "mapping/mapping.h"
#include "model/cost_model.h"

#include <QtTest>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

namespace fs = std::filesystem;
using json = mw::Json;

namespace {

fs::path corpusRoot() {
    return fs::path(MAPWRIGHT_TEST_DATA) / "parity";
}

bool close(double ours, double theirs) {
    // Timeloop prints energies to 0.01 pJ.
    return std::abs(ours - theirs) <= std::max(0.005 * std::abs(theirs), 0.011);
}

std::string num(double v) {
    std::ostringstream s;
    s.precision(10);
    s << v;
    return s.str();
}

bool isFanout(mw::ViolationKind k) {
    return k == mw::ViolationKind::FanoutX || k == mw::ViolationKind::FanoutY ||
           k == mw::ViolationKind::NoFanout || k == mw::ViolationKind::SplitAxes;
}

} // namespace

// The first disagreement between the model and Timeloop's answer, or "".
std::string compareCase(const mw::Problem& p, const mw::Architecture& a, const json& c) {
    const mw::Mapping m = mw::mappingFromJson(c.at("mapping"), p, a);
    const mw::Evaluation e = mw::evaluate(p, a, m);
    const json& tl = c.at("timeloop");
    if (!tl.at("valid").get<bool>()) {
        if (e.valid)
            return "Timeloop refuses it (" + tl.at("error").get<std::string>() +
                   "); the model accepts it";
        const std::string cls = tl.at("error_class").get<std::string>();
        const std::string level =
            tl.at("error_level").is_string() ? tl.at("error_level").get<std::string>() : "";
        for (int i = 0; i < e.numViolations; ++i) {
            const mw::Violation& v = e.violations[i];
            if (cls == "fanout" && isFanout(v.kind))
                return "";
            if (cls == "capacity" && v.kind == mw::ViolationKind::Capacity && v.level >= 0 &&
                a.levels[v.level].name == level)
                return "";
        }
        std::string ours;
        for (const auto& d : mw::describeViolations(e, p, a))
            ours += d + "; ";
        return "Timeloop: " + tl.at("error").get<std::string>() + "; the model: " + ours;
    }
    if (!e.valid) {
        std::string ours;
        for (const auto& d : mw::describeViolations(e, p, a))
            ours += d + "; ";
        return "Timeloop accepts it; the model refuses it: " + ours;
    }
    if (e.cycles != tl.at("cycles").get<std::int64_t>())
        return "cycles: ours " + num(double(e.cycles)) + ", Timeloop " +
               num(tl.at("cycles").get<double>());
    for (const auto& [name, lv] : tl.at("levels").items()) {
        const int l = a.levelIndex(name);
        if (l < 0)
            return "level " + name + " unknown";
        const mw::LevelStats& ls = e.levels[l];
        std::set<std::string> theirs;
        for (const auto& [tname, tv] : lv.at("tensors").items()) {
            theirs.insert(tname);
            const int t = p.tensorIndex(tname);
            if (t < 0)
                return "tensor " + tname + " unknown";
            const mw::TensorLevelStats& ts = ls.tensors[t];
            const std::string where = name + "/" + tname + " ";
            if (!ts.kept)
                return where + "kept in Timeloop, not in the model";
            const std::int64_t ours[] = {ts.reads, ts.fills, ts.updates, ts.tile,
                                         ls.utilizedInstances};
            const char* what[] = {"reads", "fills", "updates", "utilized capacity",
                                  "utilized instances"};
            for (int k = 0; k < 5; ++k)
                if (ours[k] != tv.at(k).get<std::int64_t>())
                    return where + what[k] + ": ours " + num(double(ours[k])) + ", Timeloop " +
                           num(tv.at(k).get<double>());
            if (!close(ts.energy, tv.at(5).get<double>()))
                return where + "energy: ours " + num(ts.energy) + " pJ, Timeloop " +
                       num(tv.at(5).get<double>());
        }
        for (int t = 0; t < p.numTensors(); ++t)
            if (ls.tensors[t].kept && !theirs.count(p.tensors[t].name))
                return name + "/" + p.tensors[t].name + " kept in the model, not in Timeloop";
        if (!close(ls.leakEnergy, lv.at("leak_pJ").get<double>()))
            return name + " leakage: ours " + num(ls.leakEnergy) + " pJ, Timeloop " +
                   num(lv.at("leak_pJ").get<double>());
    }
    const json& mac = tl.at("mac");
    if (e.utilizedMacs != mac.at("utilized_instances").get<std::int64_t>())
        return "utilized MACs: ours " + num(double(e.utilizedMacs)) + ", Timeloop " +
               num(mac.at("utilized_instances").get<double>());
    if (!close(e.computeEnergy, mac.at("energy_pJ").get<double>()))
        return "MAC energy: ours " + num(e.computeEnergy) + ", Timeloop " +
               num(mac.at("energy_pJ").get<double>());
    const double energy = tl.at("energy_pJ").get<double>();
    if (std::abs(e.energy - energy) > 0.005 * energy)
        return "energy: ours " + num(e.energy) + " pJ, Timeloop " + num(energy);
    return "";
}

class TestParity : public QObject {
    Q_OBJECT
  private slots:
    void corpusAgreesWithTimeloop();
    void corpusIsLargeAndVaried();
};

void TestParity::corpusAgreesWithTimeloop() {
    std::map<std::string, std::string> known;
    const fs::path knownFile = corpusRoot() / "known_differences.json";
    const json knownDoc = fs::exists(knownFile) ? mw::readJsonFile(knownFile.string())
                                                : json{{"cases", json::object()}};
    for (const auto& [k, v] : knownDoc.at("cases").items())
        known[k] = v.get<std::string>();
    int cases = 0, agree = 0, knownSeen = 0;
    std::vector<std::string> failures;
    std::map<std::string, std::string> disagreements; // id -> first difference
    for (const auto& entry : fs::directory_iterator(corpusRoot())) {
        if (entry.path().extension() != ".json" || entry.path() == knownFile)
            continue;
        const json doc = mw::readJsonFile(entry.path().string());
        const std::string suite = doc.at("suite").get<std::string>();
        const mw::Architecture a = mw::architectureFromJson(doc.at("architecture"));
        const mw::Problem p = mw::problemFromJson(doc.at("problem"), suite);
        for (const json& c : doc.at("cases")) {
            const std::string id = suite + "/" + c.at("id").get<std::string>();
            const std::string diff = compareCase(p, a, c);
            ++cases;
            agree += diff.empty();
            if (!diff.empty())
                disagreements[id] = c.at("kind").get<std::string>() + ": " + diff;
            const bool isKnown = known.count(id) > 0;
            knownSeen += isKnown;
            if (!diff.empty() && !isKnown)
                failures.push_back(id + " (" + c.at("kind").get<std::string>() + "): " + diff);
            if (diff.empty() && isKnown)
                failures.push_back(id + ": now agrees with Timeloop; take it off "
                                        "known_differences.json");
        }
    }
    // MAPWRIGHT_PARITY_WRITE_KNOWN=FILE writes today's disagreements as a
    // known list (to start one after the corpus is regenerated).
    if (const char* out = std::getenv("MAPWRIGHT_PARITY_WRITE_KNOWN")) {
        json list = json::object();
        for (const auto& [id, diff] : disagreements)
            list[id] = diff;
        mw::writeTextFile(out, json{{"about", "Cases of tests/data/parity where the model and "
                                              "Timeloop still disagree, with the first "
                                              "difference; test_parity keeps this list exact."},
                                    {"cases", list}}
                                       .dump(1) +
                                   "\n");
    }
    qInfo("parity: %d cases, %d agree with Timeloop (%.1f %%), %d known differences", cases, agree,
          cases ? 100.0 * agree / cases : 0.0, int(known.size()));
    QCOMPARE(knownSeen, int(known.size())); // every listed case exists
    for (std::size_t i = 0; i < failures.size() && i < 40; ++i)
        qWarning("%s", failures[i].c_str());
    QVERIFY2(failures.empty(), qPrintable(QString::number(failures.size()) +
                                          " cases disagree beyond the known list"));
}

void TestParity::corpusIsLargeAndVaried() {
    int cases = 0, invalid = 0, searchers = 0;
    std::set<std::string> archs, problems;
    for (const auto& entry : fs::directory_iterator(corpusRoot())) {
        if (entry.path().extension() != ".json" ||
            entry.path().filename() == "known_differences.json")
            continue;
        const json doc = mw::readJsonFile(entry.path().string());
        archs.insert(doc.at("architecture").dump());
        problems.insert(doc.at("problem").dump());
        for (const json& c : doc.at("cases")) {
            ++cases;
            invalid += !c.at("timeloop").at("valid").get<bool>();
            searchers += c.at("kind").get<std::string>().rfind("searcher:", 0) == 0;
        }
    }
    qInfo("corpus: %d cases, %d invalid in Timeloop, %d searchers' best, %d architectures, "
          "%d problems",
          cases, invalid, searchers, int(archs.size()), int(problems.size()));
    QVERIFY(cases >= 3000);
    QVERIFY(invalid * 10 >= cases);
    QVERIFY(archs.size() >= 10);
    QVERIFY(problems.size() >= 4);
}

QTEST_GUILESS_MAIN(TestParity)
#include "test_parity.moc"
