// Timeloop's files as users write them: their constraints as our map space,
// estimates where no table is given, the files we write back, and one-line
// errors for bad input.
#include "common/error.h"
#include "io/json_io.h"
#include "io/timeloop/timeloop.h"
#include "mapspace/enumerate.h"
#include "mapspace/mapspace.h"
#include "model/cost_model.h"
#include "workload/presets.h"

#include "test_support.h"
#include <QTemporaryDir>

#include <QtTest>

#include <filesystem>
#include <set>

namespace fs = std::filesystem;
using namespace mw;

namespace {

const std::string kData = MAPWRIGHT_TEST_DATA;
const std::string kCases = kData + "/timeloop-tutorial/";
const std::string kUser = kData + "/timeloop-user/";
const std::string kSamples = std::string(MAPWRIGHT_SOURCE_DIR) + "/samples/";

using mw::test::errorOf;

// The files of a user-written case, in a folder of the test's own, with one
// of them replaced by `text` (or added, under a new name).
struct UserCase {
    QTemporaryDir tmp;
    std::vector<std::string> files;
    UserCase(const std::string& name, const std::map<std::string, std::string>& replace = {},
             bool withErt = true) {
        for (const auto& e : fs::directory_iterator(kUser + name))
            if (e.path().extension() == ".yaml") {
                const std::string file = e.path().filename().string();
                const auto r = replace.find(file);
                write(file, r == replace.end() ? readTextFile(e.path().string()) : r->second);
            }
        for (const auto& [file, text] : replace)
            if (std::find(files.begin(), files.end(), path(file)) == files.end())
                write(file, text);
        std::sort(files.begin(), files.end());
        if (withErt)
            files.push_back(kCases + name + "/ERT.yaml");
    }
    std::string path(const std::string& file) const {
        return tmp.path().toStdString() + "/" + file;
    }
    void write(const std::string& file, const std::string& text) {
        writeTextFile(path(file), text);
        files.push_back(path(file));
    }
};

// text with its first `from` replaced by `to` (the test fails when absent).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    if (at == std::string::npos)
        return "<'" + from + "' not found>";
    return text.replace(at, from.size(), to);
}

// The legal mappings of a space, by the hash of their canonical form: the
// identity the search driver charges by (a JSON text per mapping took ten
// times as long, and minutes under AddressSanitizer).
std::set<std::uint64_t> legalMappings(const MapSpace& space, std::int64_t& visited) {
    std::set<std::uint64_t> out;
    Evaluation scratch;
    visited = enumerateMappings(space, {}, [&](const Mapping& m) {
        if (space.isLegal(m, scratch))
            out.insert(space.hash(m));
        return true;
    });
    return out;
}

} // namespace

class TestTimeloop : public QObject {
    Q_OBJECT
  private slots:
    void eyerissConstraintsImportToTheSampleSpace();
    void enumerationHoldsEverySample();
    void partialOrdersAndAxesFollowTimeloop();
    void estimatesWhereNoTableIsGiven();
    void exportedCaseReadsBack();
    void badInputsAreOneLineErrors();
    void contradictoryConstraintsAreReported();
    void keysGivenTwiceReadTheFirst();
    void minimumUtilizationAsTimeloop();
};

// The tutorial's Eyeriss constraints, imported, give the map space of the
// hand-written samples/constraints/eyeriss_row_stationary.json: the same
// legal mappings on a small layer (every mapping of each space enumerated).
void TestTimeloop::eyerissConstraintsImportToTheSampleSpace() {
    const std::string d = kCases + "06-mapper-convlayer-eyeriss/";
    const TimeloopCase imported = importTimeloop({d + "input.yaml", d + "ERT.yaml"});
    QVERIFY(imported.hasConstraints);
    const Architecture arch = loadArchitecture(kSamples + "architectures/eyeriss_like.json");
    const Problem p = conv2dProblem("small", 1, 1, 2, 4, 2, 2, 3, 3);
    const MapSpace fromTimeloop(p, arch, constraintsFromJson(imported.constraints, p, arch));
    const MapSpace fromSample(
        p, arch, loadConstraints(kSamples + "constraints/eyeriss_row_stationary.json", p, arch));
    std::int64_t visitedA = 0, visitedB = 0;
    const std::set<std::uint64_t> a = legalMappings(fromTimeloop, visitedA);
    const std::set<std::uint64_t> b = legalMappings(fromSample, visitedB);
    qInfo("legal mappings: %zu (imported, of %lld enumerated), %zu (sample, of %lld)", a.size(),
          static_cast<long long>(visitedA), b.size(), static_cast<long long>(visitedB));
    QVERIFY(a.size() > 100);
    QCOMPARE(a.size(), b.size());
    QVERIFY(a == b);
    // Without the tutorial's orders (weights: C inside R; columns: Q inside M)
    // the space is larger: the test tells the two apart.
    Json loose = readJsonFile(kSamples + "constraints/eyeriss_row_stationary.json");
    for (auto& level : loose["levels"]) {
        level.erase("order");
        level.erase("spatial_order");
    }
    const MapSpace looser(p, arch, constraintsFromJson(loose, p, arch));
    std::int64_t visitedC = 0;
    QVERIFY(legalMappings(looser, visitedC).size() > a.size());
}

// The enumeration is complete: every legal mapping the sampler draws is in it.
void TestTimeloop::enumerationHoldsEverySample() {
    const Architecture arch = loadArchitecture(kSamples + "architectures/eyeriss_like.json");
    const Problem p = conv2dProblem("small", 1, 1, 2, 4, 2, 2, 3, 3);
    const MapSpace space(
        p, arch, loadConstraints(kSamples + "constraints/eyeriss_row_stationary.json", p, arch));
    std::int64_t visited = 0;
    const std::set<std::uint64_t> all = legalMappings(space, visited);
    Rng rng(5);
    Evaluation scratch;
    int found = 0;
    for (int i = 0; i < 3000; ++i) {
        Mapping m = space.sample(rng);
        if (!space.isLegal(m, scratch))
            continue;
        ++found;
        if (!all.count(space.hash(m)))
            QFAIL(toJson(space.canonical(m), p, arch).dump().c_str());
    }
    QVERIFY(found > 10);
}

// Timeloop's permutation "AB_CD" puts A innermost, then B, with C and D the
// outermost (D outside C); split counts the permutation's first entries as X.
void TestTimeloop::partialOrdersAndAxesFollowTimeloop() {
    const std::string constraints = R"(architecture_constraints:
  targets:
  - target: shared_glb
    type: temporal
    permutation: SR_MC
  - target: inter_PE_spatial
    type: spatial
    factors: N=1 P=1 Q=1 R=1
    permutation: NPQRSCM
    split: 4
)";
    UserCase u("06-mapper-convlayer-eyeriss", {{"constraints.yaml", constraints}});
    const TimeloopCase c = importTimeloop(u.files);
    const Json& levels = c.constraints.at("levels");
    Json glb, row;
    for (const auto& l : levels) {
        if (l.at("level") == "shared_glb")
            glb = l;
        if (l.at("level") == "inter_PE_spatial")
            row = l;
    }
    QCOMPARE(glb.at("order").dump(), std::string(R"(["C","M","*","R","S"])"));
    QCOMPARE(row.at("spatial_order").dump(), std::string(R"(["M","C","S","R","Q","P","N"])"));
    // The row level fans out on Y only (14 x 1 -> 14 x 12): S, C and M go there.
    QCOMPARE(row.at("spatial_x").at("N").get<int>(), 1);
    QVERIFY(!row.contains("spatial_dims_x"));
    // The order constraint as the map space holds it.
    const MapSpaceConstraints mc = constraintsFromJson(c.constraints, c.problem, c.arch);
    const OrderConstraint& oc = mc.levels[c.arch.levelIndex("shared_glb")].order;
    const Problem& p = c.problem;
    std::array<std::uint8_t, kMaxDims> order{};
    for (int d = 0; d < p.numDims(); ++d)
        order[d] = static_cast<std::uint8_t>(d);
    oc.apply(order, p.numDims());
    QCOMPARE(int(order[0]), p.dimIndex("C"));
    QCOMPARE(int(order[1]), p.dimIndex("M"));
    QCOMPARE(int(order[p.numDims() - 1]), p.dimIndex("S"));
    QCOMPARE(int(order[p.numDims() - 2]), p.dimIndex("R"));
    // Only real loops count: S innermost of the real ones, M outermost.
    std::uint32_t real =
        (1u << p.dimIndex("M")) | (1u << p.dimIndex("S")) | (1u << p.dimIndex("P"));
    QVERIFY(oc.holds(order, real, p.numDims()));
    std::swap(order[0], order[p.numDims() - 1]); // S outermost, C innermost
    QVERIFY(!oc.holds(order, real, p.numDims()));
    // Every sampled mapping meets it, and the searchers' moves keep it.
    const MapSpace space(c.problem, c.arch, mc);
    Rng rng(3);
    for (int i = 0; i < 500; ++i) {
        Mapping m = space.sample(rng);
        for (int k = 0; k < 5; ++k)
            space.randomMove(m, rng);
        QVERIFY(space.meetsConstraints(m) || !space.isLegalQuick(m));
        const LevelMapping& lm = m.levels[c.arch.levelIndex("shared_glb")];
        std::uint32_t r = 0;
        for (int d = 0; d < p.numDims(); ++d)
            r |= std::uint32_t(lm.temporal[d] > 1) << d;
        QVERIFY(oc.holds(lm.order, r, p.numDims()));
    }
}

// Without an ERT, energies and areas come from the compound component
// classes the case declares (components.yaml, priced as Accelergy prices
// them, and pinned), else from the estimator at the technology the tree
// gives; with an ERT, its values are imported and pinned.
void TestTimeloop::estimatesWhereNoTableIsGiven() {
    UserCase noTables("06-mapper-convlayer-eyeriss", {}, /*withErt=*/false);
    const TimeloopCase e = importTimeloop(noTables.files);
    QCOMPARE(e.arch.technologyNm, 32.0);
    const StorageLevel& glb = e.arch.levels[e.arch.levelIndex("shared_glb")];
    QVERIFY(glb.sources.read == ValueSource::Imported);
    QVERIFY(glb.energy.read > 0.7 * 18.18 && glb.energy.read < 1.3 * 18.18); // Accelergy: 18.18
    QVERIFY(glb.area > 0);
    bool priced = false;
    for (const auto& n : e.notes)
        priced =
            priced || n.find("priced from the compound component classes") != std::string::npos;
    QVERIFY(priced);
    // Without the classes, the estimator prices by class name.
    UserCase noClasses("06-mapper-convlayer-eyeriss", {{"components.yaml", ""}}, false);
    const TimeloopCase n = importTimeloop(noClasses.files);
    const StorageLevel& ng = n.arch.levels[n.arch.levelIndex("shared_glb")];
    QVERIFY(ng.sources.read == ValueSource::Estimated);
    QVERIFY(ng.energy.read > 0.7 * 18.18 && ng.energy.read < 1.3 * 18.18);
    bool noted = false;
    for (const auto& note : n.notes)
        noted = noted || note.find("estimated at 32 nm") != std::string::npos;
    QVERIFY(noted);
    UserCase withTables("06-mapper-convlayer-eyeriss");
    const TimeloopCase t = importTimeloop(withTables.files);
    const StorageLevel& tg = t.arch.levels[t.arch.levelIndex("shared_glb")];
    QVERIFY(tg.sources.read == ValueSource::Imported);
    QCOMPARE(tg.energy.read, 18.183829);
    QVERIFY(tg.sources.area == ValueSource::Estimated); // no ART given
    // The note says what was estimated: the areas, not the energies the ERT gave.
    std::string estimatedNote;
    for (const auto& note : t.notes)
        if (note.find("estimated at") != std::string::npos)
            estimatedNote = note;
    EXPECT_CONTAINS(estimatedNote, "shared_glb (area), ");
    QVERIFY2(estimatedNote.find("energy") == std::string::npos, estimatedNote.c_str());
    // An ART pins areas.
    const std::string art = "ART:\n  version: 0.4\n  tables:\n  - name: system.shared_glb[1..1]\n"
                            "    area: 1234.5\n";
    UserCase withArt("06-mapper-convlayer-eyeriss", {{"ART.yaml", art}});
    const TimeloopCase a = importTimeloop(withArt.files);
    const StorageLevel& ag = a.arch.levels[a.arch.levelIndex("shared_glb")];
    QVERIFY(ag.sources.area == ValueSource::Imported);
    QCOMPARE(ag.area, 1234.5);
}

// What export-timeloop writes reads back as the same case: architecture
// (with its estimates as tables), problem, mapping, constraints and mapper.
void TestTimeloop::exportedCaseReadsBack() {
    const std::string d = kCases + "06-mapper-convlayer-eyeriss/";
    const TimeloopCase c = importTimeloop({d + "input.yaml", d + "ERT.yaml", d + "map.yaml"});
    QTemporaryDir tmp;
    const std::string out = tmp.path().toStdString();
    TimeloopMapper mapper;
    mapper.objective = "energy";
    mapper.victoryCondition = 77;
    exportTimeloop(c.problem, c.arch, &c.mapping, out, &c.constraints, mapper);
    for (const char* f : {"arch.yaml", "problem.yaml", "mapping.yaml", "ERT.yaml", "ART.yaml",
                          "constraints.yaml", "mapper.yaml"})
        QVERIFY2(fs::exists(fs::path(out) / f), f);
    const TimeloopCase back = importTimeloop(
        {out + "/arch.yaml", out + "/problem.yaml", out + "/mapping.yaml",
         out + "/constraints.yaml", out + "/mapper.yaml", out + "/ERT.yaml", out + "/ART.yaml"});
    Architecture a = c.arch;
    // Areas were estimated on import (the case has no ART): exported, they come back pinned.
    for (auto& s : a.levels)
        s.sources.area = ValueSource::Imported;
    a.compute.areaSource = ValueSource::Imported;
    a.compute.leakSource = ValueSource::Imported;
    Architecture b = back.arch;
    a.name = b.name = "";
    QCOMPARE(toJson(b).dump(1), toJson(a).dump(1));
    QCOMPARE(toJson(back.mapping, back.problem, back.arch).dump(),
             toJson(c.mapping, c.problem, c.arch).dump());
    QCOMPARE(back.constraints.at("levels").dump(), c.constraints.at("levels").dump());
    QVERIFY(back.hasMapper);
    QCOMPARE(back.mapper.objective, std::string("energy"));
    QCOMPARE(back.mapper.victoryCondition, std::int64_t(77));
    const Evaluation e1 = evaluate(c.problem, c.arch, c.mapping);
    const Evaluation e2 = evaluate(back.problem, back.arch, back.mapping);
    QCOMPARE(e2.cycles, e1.cycles);
    QCOMPARE(e2.energy, e1.energy);
}

void TestTimeloop::badInputsAreOneLineErrors() {
    const std::string c06 = "06-mapper-convlayer-eyeriss";
    UserCase base(c06);
    const std::string arch = readTextFile(kUser + c06 + "/arch.yaml");
    const std::string cons = readTextFile(kUser + c06 + "/constraints.yaml");
    auto errorWith = [&](const std::string& file, const std::string& text, bool ert = true) {
        UserCase u(c06, {{file, text}}, ert);
        return std::pair(errorOf([&] { importTimeloop(u.files); }), u.path(file));
    };
    // Unknown class.
    auto [e1, f1] =
        errorWith("arch.yaml", replaced(arch, "class: smartbuffer_SRAM", "class: fancy_buffer"));
    EXPECT_CONTAINS(e1, f1 + ":");
    EXPECT_CONTAINS(
        e1,
        "component 'shared_glb'.class: is 'fancy_buffer', which is neither storage nor compute");
    // Missing attribute.
    auto [e2, f2] = errorWith("arch.yaml", replaced(arch, "depth: 16384", "n_rows: 16384"));
    EXPECT_CONTAINS(e2, f2 + ":");
    EXPECT_CONTAINS(e2, "component 'shared_glb': missing attribute 'depth'");
    // A technology that is no node, and one outside the estimator's range.
    auto [e3, f3] = errorWith("arch.yaml", replaced(arch, "32nm", "thirty-two"), false);
    EXPECT_CONTAINS(e3, f3 + ":");
    EXPECT_CONTAINS(e3, "technology: is 'thirty-two'; expected a process node such as 45nm");
    auto [e4, f4] = errorWith("arch.yaml", replaced(arch, "32nm", "3nm"), false);
    EXPECT_CONTAINS(e4, "technology node 3 nm is outside the estimator's 7 to 130 nm");
    // No technology and no ERT: nothing to price the energies with.
    auto [e5, f5] =
        errorWith("arch.yaml", replaced(arch, "technology: 32nm", "cycle_ns: 1"), false);
    EXPECT_CONTAINS(e5, "component 'shared_glb'.technology: gives no process node");
    EXPECT_CONTAINS(e5, "no ERT entry prices component 'shared_glb'; expected a node such as "
                        "45nm, or an ERT");
    // A placeholder node, as the front end's files carry: accepted where an
    // ERT prices the component, an error naming it where nothing does.
    for (const char* placeholder : {"\"SET ME\"", "must_specify", "-1"}) {
        auto [e5b, f5b] = errorWith("arch.yaml", replaced(arch, "32nm", placeholder), false);
        EXPECT_CONTAINS(e5b, f5b + ":");
        EXPECT_CONTAINS(e5b, "'.technology: gives no process node");
        UserCase priced(c06, {{"arch.yaml", replaced(arch, "32nm", placeholder)}}, true);
        QVERIFY(importTimeloop(priced.files).arch.numLevels() > 0);
    }
    // A constraint naming a level or a dimension that does not exist.
    auto [e6, f6] =
        errorWith("constraints.yaml", replaced(cons, "target: psum_spad", "target: psum_pad"));
    EXPECT_CONTAINS(e6, f6 + ":");
    EXPECT_CONTAINS(e6,
                    "'psum_pad' is not a storage level of the architecture; expected one of DRAM");
    auto [e7, f7] = errorWith("constraints.yaml", replaced(cons, "N=1", "K=1"));
    EXPECT_CONTAINS(e7, f7 + ":");
    EXPECT_CONTAINS(e7,
                    "'K' is not a dimension of the problem; expected one of C, M, R, S, N, P, Q");
    auto [e8, f8] =
        errorWith("constraints.yaml", replaced(cons, "bypass: [ Weights ]", "bypass: [ Psums ]"));
    EXPECT_CONTAINS(e8, "'Psums' is not a data space of the problem");
    // Factor bounds Timeloop has and we do not model are refused by name.
    auto [e9, f9] = errorWith("constraints.yaml", replaced(cons, "N=1", "N<=4"));
    EXPECT_CONTAINS(e9, "bounds such as N<= are not supported; expected N=N");
    // A malformed file.
    auto [e10, f10] = errorWith("problem.yaml", "problem:\n  shape: [\n");
    EXPECT_CONTAINS(e10, f10 + ":");
    EXPECT_CONTAINS(e10, "malformed YAML");
    // An expression that does not evaluate shows its text (it said "expected a
    // number" of a division by zero).
    auto [e16, f16] = errorWith("arch.yaml", replaced(arch, "depth: 16384", "depth: 16384 / 0"));
    EXPECT_CONTAINS(e16, "component 'shared_glb'.depth: is '16384 / 0'; expected a number, or an "
                         "expression");
    // A mesh the JSON reader would refuse is refused here too (it was imported
    // and could not be read back).
    std::string wide = replaced(arch, "PE_column[0..13]", "PE_column[0..33554431]");
    for (std::size_t at = 0; (at = wide.find("meshX: 14")) != std::string::npos;)
        wide.replace(at, 9, "meshX: 33554432");
    auto [e17, f17] = errorWith("arch.yaml", wide);
    EXPECT_CONTAINS(e17, "mesh: expected mesh_x and mesh_y from 1 to 2^24");
    // An empty file is named (it was "Timeloop input: missing 'architecture'").
    QTemporaryDir emptyDir;
    const std::string empty = emptyDir.filePath("empty.yaml").toStdString();
    writeTextFile(empty, "# nothing yet\n");
    EXPECT_CONTAINS(errorOf([&] { importTimeloop({empty}); }),
                    empty + ": holds no YAML keys; expected Timeloop's architecture");
    // A mapping that is not a list (it was read as every factor 1, or as none).
    auto [e14, f14] = errorWith("mapping.yaml", "mapping: {target: DRAM}\n");
    EXPECT_CONTAINS(e14, f14 + ":1: mapping: expected a list of directives");
    auto [e15, f15] = errorWith("mapping.yaml", "mapping: hello\n");
    EXPECT_CONTAINS(e15, f15 + ": mapping: expected a list of directives");
    // A term of three entries, which Timeloop refuses (it was read as a product).
    const std::string problem = readTextFile(kUser + c06 + "/problem.yaml");
    auto [e13, f13] =
        errorWith("problem.yaml", replaced(problem, "[P, Wstride] ]", "[P, Wstride, Hstride] ]"));
    EXPECT_CONTAINS(e13, f13 + ":");
    EXPECT_CONTAINS(e13, "projection: a term of 3 entries; expected [dimension] or [dimension, "
                         "coefficient]");
    // Aliases of aliases (nine to a list, seven deep: 4.8 million nodes once
    // walked) are refused at once, even under a key nobody reads.
    std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n";
    for (char c = 'b'; c <= 'g'; ++c) {
        const std::string below(1, char(c - 1));
        bomb += std::string(1, c) + ": &" + c + " [";
        for (int i = 0; i < 9; ++i)
            bomb += (i ? ", *" : "*") + below;
        bomb += "]\n";
    }
    QElapsedTimer clock;
    clock.start();
    auto [e11, f11] = errorWith("problem.yaml", readTextFile(kUser + c06 + "/problem.yaml") + bomb);
    EXPECT_CONTAINS(e11, f11 + ": holds more than 1,000,000 nodes once its aliases are expanded");
    QVERIFY2(clock.elapsed() < 10000, "the expansion is cut short, not walked to its end");
    // Merges of merges: each level merges the last and holds it twice more
    // (ten levels took over 30 s).
    std::string merges = "x0: &x0 {a: 1}\n";
    for (int level = 1; level <= 10; ++level) {
        const std::string below = "*x" + std::to_string(level - 1);
        merges += "x" + std::to_string(level) + ": &x" + std::to_string(level) + " {<<: " + below +
                  ", l" + std::to_string(level) + ": " + below + ", r" + std::to_string(level) +
                  ": " + below + "}\n";
    }
    clock.restart();
    auto [e12, f12] =
        errorWith("problem.yaml", readTextFile(kUser + c06 + "/problem.yaml") + merges);
    EXPECT_CONTAINS(e12, f12 + ": merges (<<, <<<) more than 20,000 nodes");
    // (3 s in a release build, nearly all of it yaml-cpp's own node
    // bookkeeping, and over 10 s under AddressSanitizer on a loaded
    // machine; uncut, ten levels took over 30 s in a release build.)
    QVERIFY2(clock.elapsed() < 25000, "the merges are cut short");
}

// Constraints that leave no legal mapping are reported as such, before any search.
void TestTimeloop::contradictoryConstraintsAreReported() {
    const std::string c06 = "06-mapper-convlayer-eyeriss";
    const std::string cons = readTextFile(kUser + c06 + "/constraints.yaml");
    auto errorWith = [&](const std::string& text) {
        UserCase u(c06, {{"constraints.yaml", text}});
        return errorOf([&] { importTimeloop(u.files); });
    };
    const std::string head = "architecture_constraints:\n  targets:\n";
    // The same factor twice.
    EXPECT_CONTAINS(
        errorWith(head + "  - {target: weights_spad, type: temporal, factors: M=1}\n"
                         "  - {target: weights_spad, type: temporal, factors: M=2}\n"),
        "contradictory constraints: the temporal factor of M at weights_spad given twice");
    // Kept and bypassed.
    EXPECT_CONTAINS(
        errorWith(head + "  - {target: shared_glb, type: bypass, keep: [Weights]}\n"
                         "  - {target: shared_glb, type: bypass, bypass: [Weights]}\n"),
        "contradictory constraints: keep or bypass of Weights at shared_glb given twice");
    // More fixed parallelism than the fan-out has.
    EXPECT_CONTAINS(
        errorWith(head + "  - {target: inter_PE_spatial, type: spatial, factors: M=16 C=1 S=1 N=1 "
                         "P=1 Q=1 R=1}\n"),
        "contradictory constraints: the fixed spatial factors at 'inter_PE_spatial' need 1 x 16 "
        "children; it fans out to 1 x 12");
    // A scratchpad that must keep a tile it cannot hold.
    EXPECT_CONTAINS(errorWith(head + "  - {target: weights_spad, type: bypass, keep: [Weights]}\n"
                                     "  - {target: weights_spad, type: temporal, factors: C=128 "
                                     "M=16 R=3 S=3}\n"),
                    "contradictory constraints: 'weights_spad' must keep Weights, whose smallest "
                    "tiles under the fixed factors take 18432 words; it holds 384");
    // Fixed factors that do not divide the bound.
    EXPECT_CONTAINS(errorWith(head + "  - {target: shared_glb, type: temporal, factors: P=3}\n"),
                    "contradictory constraints: fixed factors of dimension P multiply to 3, which "
                    "does not divide its bound 56");
    // The tutorial's own constraints are satisfiable.
    UserCase ok(c06);
    QVERIFY(importTimeloop(ok.files).hasConstraints);
}

// A key given twice in one map: timeloop-model reads the first (yaml-cpp's
// look-up; the oracle sized this Buffer 64 words), and so do we, also where
// a merge key makes us rebuild the map (which read the last), with a note.
void TestTimeloop::keysGivenTwiceReadTheFirst() {
    const std::string d = kCases + "01-model-conv1d-2level-os/";
    const std::string input = readTextFile(d + "input.yaml");
    const std::string buffer = "- name: Buffer[1..1]";
    const std::size_t at = input.find("depth: 64", input.find(buffer));
    QVERIFY(at != std::string::npos);
    for (const std::string& extra :
         {std::string(), std::string("\n                <<: {foo: 1}")}) {
        std::string twice = input;
        twice.insert(at + std::string("depth: 64").size(), "\n                depth: 3000" + extra);
        const TimeloopCase c = importTimeloopTexts(
            {{"input.yaml", twice, nullptr}, {"ERT.yaml", readTextFile(d + "ERT.yaml"), nullptr}});
        QCOMPARE(c.arch.levels[std::size_t(c.arch.levelIndex("Buffer"))].capacityWords,
                 std::int64_t(64));
        std::string said;
        for (const std::string& note : c.notes)
            said += note + "\n";
        QVERIFY2(said.find("input.yaml:41: 'depth' is given twice in one map (first at line 40); "
                           "the first is read, as timeloop-model reads it") != std::string::npos,
                 said.c_str());
    }
    // At the top level (yaml-cpp finds a key node by identity, not by name:
    // the last was read), and in an expression's scope (which looked from
    // the back).
    QTemporaryDir tmp;
    const std::string twice = tmp.filePath("twice.yaml").toStdString();
    const std::string shape = "  shape: {name: s, dimensions: [C, M], data-spaces: [{name: W, "
                              "projection: [[[C]], [[M]]]}, {name: O, projection: [[[M]]], "
                              "read-write: true}]}\n";
    writeTextFile(twice, "problem:\n" + shape + "  instance: {C: 4, M: 4}\nproblem:\n" + shape +
                             "  instance: {C: 8, M: 8}\n");
    std::vector<std::string> notes;
    const Problem p = importTimeloopProblem(twice, notes);
    QCOMPARE(p.dims[std::size_t(p.dimIndex("C"))].bound, std::int64_t(4));
    QCOMPARE(notes.size(), std::size_t(1));
    QVERIFY2(notes[0].find("twice.yaml:4: 'problem' is given twice in one map (first at line 1)") !=
                 std::string::npos,
             notes[0].c_str());
    // A blank shape name keeps the file's (a blank layer name does not read back).
    const std::string blank = tmp.filePath("blank.yaml").toStdString();
    std::string blankShape = shape;
    blankShape.replace(blankShape.find("name: s"), 7, "name: ' '");
    writeTextFile(blank, "problem:\n" + blankShape + "  instance: {C: 4, M: 4}\n");
    QCOMPARE(importTimeloopProblem(blank, notes).name, std::string("blank"));
    const TimeloopCase scoped = importTimeloopTexts({{"nodes.yaml", R"(architecture:
  nodes:
  - !Container {name: sys, attributes: {technology: 45nm}}
  - !Component {name: DRAM, class: DRAM, attributes: {type: LPDDR4, width: 64, datawidth: 8}}
  - !Component {name: buf, class: SRAM, attributes: {depth: 64, w: 8, w: 64, width: w,
      datawidth: 8}}
  - !Component {name: mac, class: intmac, attributes: {datawidth: 8}}
problem: {shape: cnn-layer, instance: {C: 4, M: 4}}
)",
                                                      nullptr}});
    QCOMPARE(scoped.arch.levels[std::size_t(scoped.arch.levelIndex("buf"))].capacityWords,
             std::int64_t(64));
}

// Timeloop's min_utilization: a level's kept tiles must fill that share of
// its words (after multiple buffering). Tutorial 03's register file holds
// 64 words and the mapping's tiles 11: timeloop-model 0fc43fb maps it at
// 0.17 (1536 cycles, as without) and refuses it at 0.18 ("mapped tile size
// 11 is less than constrained minimum utilization 11.52") and at 0.9
// (57.6). The share survives our JSON and the export.
void TestTimeloop::minimumUtilizationAsTimeloop() {
    const std::string d = kCases + "03-model-conv1d+oc-3level-no-bypass/";
    const std::string input = readTextFile(d + "input.yaml");
    const std::size_t rf = input.find("name: RegisterFile");
    const std::size_t at = input.find("min_utilization: 0", rf);
    QVERIFY(rf != std::string::npos && at != std::string::npos);
    QTemporaryDir tmp;
    auto withShare = [&](const std::string& share) {
        std::string text = input;
        text.replace(at, std::string("min_utilization: 0").size(), "min_utilization: " + share);
        const std::string file = tmp.filePath("input.yaml").toStdString();
        writeTextFile(file, text);
        return importTimeloop({file, d + "ERT.yaml"});
    };
    const TimeloopCase fits = withShare("0.17");
    const int l = fits.arch.levelIndex("RegisterFile");
    QCOMPARE(fits.arch.levels[std::size_t(l)].minUtilization, 0.17);
    const Evaluation e = evaluate(fits.problem, fits.arch, fits.mapping);
    QVERIFY(e.valid);
    QCOMPARE(e.cycles, std::int64_t(1536));
    auto refusal = [&](const std::string& share) {
        const TimeloopCase c = withShare(share);
        const Evaluation r = evaluate(c.problem, c.arch, c.mapping);
        if (r.valid || r.numViolations != 1)
            return std::string("<not one violation>");
        return describe(r.violations[0], c.problem, c.arch);
    };
    QCOMPARE(refusal("0.18"), std::string("level 'RegisterFile': kept tiles together fill 11 "
                                          "words but its minimum utilization asks for 12"));
    EXPECT_CONTAINS(refusal("0.9"), "asks for 58");
    // Through our JSON and Timeloop's YAML.
    const TimeloopCase c = withShare("0.5");
    QCOMPARE(architectureFromJson(toJson(c.arch)).levels[std::size_t(l)].minUtilization, 0.5);
    const std::string out = tmp.filePath("export").toStdString();
    exportTimeloop(c.problem, c.arch, &c.mapping, out);
    const TimeloopCase back = importTimeloop(
        {out + "/arch.yaml", out + "/problem.yaml", out + "/mapping.yaml", out + "/ERT.yaml"});
    QCOMPARE(back.arch.levels[std::size_t(l)].minUtilization, 0.5);
    EXPECT_CONTAINS(errorOf([&] {
                        Architecture bad = c.arch;
                        bad.levels[std::size_t(l)].minUtilization = 1.5;
                        validateArchitecture(bad);
                    }),
                    "min_utilization: expected a share from 0 to 1");
}

QTEST_GUILESS_MAIN(TestTimeloop)
#include "test_timeloop.moc"
