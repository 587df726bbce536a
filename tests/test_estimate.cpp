// The energy and area estimator: node scaling, SRAM, register file, DRAM and
// MAC recipes, pinned values, its data file's checks, and its agreement with
// Accelergy on the tutorial's ERTs and ARTs.
#include "common/error.h"
#include "estimate/estimator.h"
#include "io/estimate_reference.h"
#include "io/json_io.h"

#include "test_support.h"

#include <QtTest>

#include <cmath>
#include <filesystem>
#include <set>

namespace fs = std::filesystem;
using namespace mw;

namespace {

using mw::test::errorOf;

StorageLevel sram(std::int64_t words, int wordBits = 8, int block = 8) {
    StorageLevel s;
    s.name = "buf";
    s.cls = LevelClass::SRAM;
    s.capacityWords = words;
    s.wordBits = wordBits;
    s.blockSize = block;
    return s;
}

ComputeLevel mac(Arithmetic a, int mul, int add) {
    ComputeLevel c;
    c.arithmetic = a;
    c.wordBits = mul;
    c.multiplierBits = mul;
    c.adderBits = add;
    return c;
}

} // namespace

class TestEstimate : public QObject {
    Q_OBJECT
  private slots:
    void nodesScaleAsStated();
    void storageFollowsItsAttributes();
    void macsByFormat();
    void pinnedValuesStay();
    void dataFileIsChecked();
    void agreesWithAccelergy();
};

// 40 and 45 nm alike (Aladdin's node); 32 nm as Stillmaker-Baas at 0.8 V;
// 28 and 22 nm between 32 and 20; outside 7..130 nm an error.
void TestEstimate::nodesScaleAsStated() {
    const Estimator& e = Estimator::builtIn();
    QCOMPARE(e.energyScale(45, "t"), 1.0);
    QCOMPARE(e.energyScale(40, "t"), 1.0);
    QVERIFY(std::abs(e.energyScale(32, "t") - 0.659) < 1e-9);
    QVERIFY(std::abs(e.areaScale(32, "t") - 0.46) < 1e-9);
    const double e28 = e.energyScale(28, "t"), e22 = e.energyScale(22, "t");
    QVERIFY(e28 < e.energyScale(32, "t") && e28 > e22 && e22 > e.energyScale(20, "t"));
    QVERIFY(e.energyScale(7, "t") < e.energyScale(16, "t"));
    QVERIFY(e.energyScale(90, "t") > 1.0);
    const std::string msg = errorOf([&] { e.energyScale(5, "arch.technology_nm"); });
    QVERIFY2(msg.find("arch.technology_nm: technology node 5 nm is outside the estimator's 7 to "
                      "130 nm") != std::string::npos,
             msg.c_str());
}

void TestEstimate::storageFollowsItsAttributes() {
    const Estimator& e = Estimator::builtIn();
    // Deeper and wider arrays cost more per access and in area.
    const StorageEstimate small = e.storage(sram(8192), 45, "s");
    const StorageEstimate deep = e.storage(sram(65536), 45, "s");
    const StorageEstimate wide = e.storage(sram(8192 * 2, 8, 16), 45, "s"); // same depth, 128 b
    QVERIFY(deep.energy.read > small.energy.read && deep.area > 4 * small.area);
    QVERIFY(wide.energy.read > small.energy.read && wide.area > small.area);
    // At a smaller node, less of both.
    const StorageEstimate at16 = e.storage(sram(8192), 16, "s");
    QVERIFY(at16.energy.read < 0.5 * small.energy.read && at16.area < 0.5 * small.area);
    // A register file: a word's registers and the address comparators.
    StorageLevel rf = sram(64, 8, 1);
    rf.cls = LevelClass::RegFile;
    const StorageEstimate r = e.storage(rf, 40, "s");
    QVERIFY(std::abs(r.energy.read - 0.42564) < 1e-4); // Accelergy's, tutorial case 00
    QVERIFY(std::abs(r.area - 887.84) < 0.01);
    // DRAM by type, per bit of the block; an unknown type is an error naming the types.
    StorageLevel dram = sram(0, 8, 8);
    dram.cls = LevelClass::DRAM;
    std::map<std::string, double> byType;
    for (const std::string t : {"LPDDR4", "HBM2", "DDR4", "DDR3", "GDDR5"}) {
        dram.dramType = t;
        byType[t] = e.storage(dram, 45, "d").energy.read;
    }
    QCOMPARE(byType["LPDDR4"], 8.0 * 64);
    QVERIFY(byType["HBM2"] < byType["LPDDR4"] && byType["DDR4"] < byType["LPDDR4"] &&
            byType["DDR3"] > byType["GDDR5"]);
    dram.dramType = "SDRAM-99";
    const std::string msg = errorOf([&] { e.storage(dram, 45, "levels[0] (DRAM)"); });
    QVERIFY2(msg.find("levels[0] (DRAM).dram_type: is 'SDRAM-99'; expected one of DDR3, DDR4") !=
                 std::string::npos,
             msg.c_str());
    // A component the estimator does not price.
    StorageLevel odd = sram(1024);
    odd.component = "memristor_crossbar";
    QVERIFY(errorOf([&] { e.storage(odd, 45, "x"); })
                .find("expected a class the estimator "
                      "prices") != std::string::npos);
    // Dummy levels hold nothing and cost nothing.
    StorageLevel dummy = sram(0);
    dummy.cls = LevelClass::Dummy;
    QCOMPARE(e.storage(dummy, 45, "d").area, 0.0);
}

// Integer MACs scale with the adder's width and the square of the
// multiplier's; floats with their significand (fp16 < fp32, bf16 < fp16).
void TestEstimate::macsByFormat() {
    const Estimator& e = Estimator::builtIn();
    const double int8 = e.compute(mac(Arithmetic::Int, 8, 8), 45, "c").energy;
    QVERIFY(std::abs(int8 - 0.845) < 1e-6); // Accelergy's intmac, tutorial case 00
    const double int16 = e.compute(mac(Arithmetic::Int, 16, 16), 45, "c").energy;
    QVERIFY(int16 > 3 * int8);
    const double fp32 = e.compute(mac(Arithmetic::Float, 32, 32), 45, "c").energy;
    QVERIFY(std::abs(fp32 - 51.979) < 1e-6); // Accelergy's fpmac
    const double fp16 = e.compute(mac(Arithmetic::Float, 16, 16), 45, "c").energy;
    const double bf16 = e.compute(mac(Arithmetic::BFloat, 16, 16), 45, "c").energy;
    const double fp16acc32 = e.compute(mac(Arithmetic::Float, 16, 32), 45, "c").energy;
    QVERIFY(fp16 < 0.5 * fp32 && bf16 < fp16 && fp16acc32 > fp16);
    QVERIFY(e.compute(mac(Arithmetic::Float, 8, 8), 45, "c").energy < fp16);
    const std::string msg = errorOf([&] { e.compute(mac(Arithmetic::Float, 12, 12), 45, "c"); });
    QVERIFY2(msg.find("c.multiplier_bits: fp12 is not a format the estimator knows; expected fp "
                      "with 8, 16, 32, 64 bits") != std::string::npos,
             msg.c_str());
}

// applyEstimates sets what is estimated and leaves imported and typed values.
void TestEstimate::pinnedValuesStay() {
    Architecture a = loadArchitecture(std::string(MAPWRIGHT_SOURCE_DIR) +
                                      "/samples/architectures/eyeriss_like.json");
    const int glb = a.levelIndex("shared_glb");
    StorageLevel& s = a.levels[std::size_t(glb)];
    QVERIFY(s.sources.read == ValueSource::Imported);
    const double imported = s.energy.read;
    s.capacityWords *= 4;
    applyEstimates(a);
    QCOMPARE(s.energy.read, imported); // pinned
    s.sources.read = ValueSource::Estimated;
    applyEstimates(a);
    QVERIFY(s.energy.read > imported); // the bigger array, estimated
    // Read back from JSON: sources kept; values without a source given are typed.
    const Architecture back = architectureFromJson(toJson(a));
    QVERIFY(back.levels[std::size_t(glb)].sources.read == ValueSource::Estimated);
    QVERIFY(back.levels[std::size_t(glb)].sources.write == ValueSource::Imported);
    Json bad = toJson(a);
    bad["levels"][1]["sources"]["read"] = "guessed";
    QVERIFY(errorOf([&] { architectureFromJson(bad); })
                .find("$.levels[1].sources.read: is 'guessed'; expected estimated, imported or "
                      "typed") != std::string::npos);
}

// The data file: every figure cites a source the file lists.
void TestEstimate::dataFileIsChecked() {
    Json data = Json::parse(Estimator::builtInDataText());
    QVERIFY(data.at("sources").size() >= 10);
    Estimator::fromJsonText(data.dump(), "data.json"); // the built-in file reads
    Json bad = data;
    bad["logic_45nm"]["int_adder_32b"]["source"] = "FOLKLORE";
    QVERIFY(errorOf([&] { Estimator::fromJsonText(bad.dump(), "data.json"); })
                .find("data.json: $.logic_45nm.int_adder_32b.source: 'FOLKLORE' is not in "
                      "$.sources") != std::string::npos);
    bad = data;
    bad["sram_45nm"]["points"][0]["read"] = -1;
    QVERIFY(errorOf([&] {
                Estimator::fromJsonText(bad.dump(), "data.json");
            }).find("expected a positive number") != std::string::npos);
}

// Every storage level and MAC of the tutorial's ERTs and ARTs (Accelergy's
// figures) within 30 %, but for the exercises' intmac, whose compound class
// prices its 8-bit multiplier as a 32-bit adder (its energy and leakage).
void TestEstimate::agreesWithAccelergy() {
    const fs::path root = fs::path(MAPWRIGHT_TEST_DATA) / "timeloop-tutorial";
    int entries = 0, within = 0;
    std::set<std::string> outside;
    for (const auto& dir : fs::directory_iterator(root)) {
        std::vector<TimeloopText> files;
        for (const char* f : {"input.yaml", "ERT.yaml", "ART.yaml"})
            files.push_back({(dir.path() / f).string(), readTextFile((dir.path() / f).string())});
        for (const EstimateComparison& c : compareWithTables(files)) {
            ++entries;
            const double r = c.ratio();
            if (r >= 0.7 && r <= 1.3)
                ++within;
            else
                outside.insert(dir.path().filename().string() + " " + c.component + " " + c.action);
        }
    }
    QCOMPARE(entries, 258);
    QCOMPARE(within, 254);
    const std::set<std::string> expected = {
        "06-mapper-convlayer-eyeriss mac compute", "06-mapper-convlayer-eyeriss mac leak",
        "accelergy-intmac mac compute", "accelergy-intmac mac leak"};
    QVERIFY(outside == expected);
}

QTEST_GUILESS_MAIN(TestEstimate)
#include "test_estimate.moc"
