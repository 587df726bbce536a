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
#include "timeloop_figures.h"

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

} // namespace

using mw::test::compareCase;

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
