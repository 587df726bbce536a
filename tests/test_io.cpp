// File formats: lossless JSON round trips, Timeloop YAML export read back, and
// clear errors (file, field, expectation) for malformed or invalid input.
#include "common/atomic_file.h"
#include "common/error.h"
#include "io/json_io.h"
#include "io/session_io.h"
#include "io/timeloop/timeloop.h"
#include "model/cost_model.h"

#include "test_support.h"
#include <QTemporaryDir>

#include <QtTest>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace mw;

namespace {

const std::string kSamples = std::string(MAPWRIGHT_SOURCE_DIR) + "/samples/";
const std::string kCases = std::string(MAPWRIGHT_TEST_DATA) + "/timeloop-tutorial/";

std::string writeTemp(const QTemporaryDir& dir, const std::string& name, const std::string& text) {
    const std::string path = (fs::path(dir.path().toStdString()) / name).string();
    std::ofstream(path) << text;
    return path;
}

using mw::test::errorOf;

TimeloopCase eyeriss() {
    const std::string d = kCases + "06-mapper-convlayer-eyeriss/";
    return importTimeloop({d + "input.yaml", d + "ERT.yaml", d + "map.yaml"});
}

} // namespace

class TestIo : public QObject {
    Q_OBJECT
  private slots:
    void architectureRoundTrip();
    void networkRoundTrip();
    void sharedLayerShapesImport();
    void layersByNameOrSource();
    void mappingAndEvaluationRoundTrip();
    void timeloopExportReadsBack();
    void malformedJson();
    void badArchitectureFields();
    void badWorkloadFields();
    void badMappingFields();
    void malformedYaml();
    void constraintsFile();
    void timeloopMapperCaseNeedsMapping();
    void runsKeepTheDesignTheySearched();
    void writesReplaceFilesWhole();
    void traceCsvText();
    void fuzzFindingsAreOneLineErrors();
};

void TestIo::architectureRoundTrip() {
    int n = 0;
    for (const auto& f : fs::directory_iterator(kSamples + "architectures")) {
        const Architecture a = loadArchitecture(f.path().string());
        const Json j = toJson(a);
        QCOMPARE(toJson(architectureFromJson(j)).dump(), j.dump());
        QCOMPARE(j.at("format").get<std::string>(), std::string("mapwright.architecture"));
        ++n;
    }
    QVERIFY(n >= 6);
}

void TestIo::networkRoundTrip() {
    for (const char* dir : {"networks", "workloads"})
        for (const auto& f : fs::directory_iterator(kSamples + dir)) {
            const Network net = loadNetwork(f.path().string());
            QVERIFY(!net.layers.empty());
            const Json j = toJson(net);
            const Network back = networkFromJson(j);
            QCOMPARE(toJson(back).dump(), j.dump());
            for (std::size_t i = 0; i < net.layers.size(); ++i)
                QCOMPARE(buildProblem(back.layers[i]).computes(),
                         buildProblem(net.layers[i]).computes());
        }
    // A custom problem survives too.
    const auto c = eyeriss();
    Network net;
    net.name = "custom";
    LayerSpec l;
    l.name = "layer";
    l.kind = "custom";
    l.custom = c.problem;
    net.layers.push_back(l);
    const Json j = toJson(net);
    const Network back = networkFromJson(j);
    QCOMPARE(toJson(back).dump(), j.dump());
    QCOMPARE(buildProblem(back.layers[0]).computes(), c.problem.computes());
}

// The bundled ResNet-50 names its layers by torchvision's module paths and
// keeps the converter's names as sources; --layer takes either.
void TestIo::layersByNameOrSource() {
    const Network n = loadNetwork(kSamples + "networks/resnet50.json");
    QCOMPARE(int(n.layers.size()), 54);
    std::set<std::string> names;
    for (const LayerSpec& l : n.layers) {
        QVERIFY2(names.insert(l.name).second, l.name.c_str());
        QVERIFY(!l.source.empty());
    }
    QCOMPARE(n.layers.front().name, std::string("conv1"));
    QCOMPARE(n.layers.back().name, std::string("fc"));
    const int conv3x = n.layerIndex("layer2.1.conv2");
    QVERIFY(conv3x >= 0);
    QCOMPARE(n.layers[std::size_t(conv3x)].param("C", 0), std::int64_t(128));
    QCOMPARE(n.layers[std::size_t(conv3x)].param("R", 0), std::int64_t(3));
    QCOMPARE(n.findLayer("layer2.1.conv2"), conv3x);
    QCOMPARE(n.findLayer("_outputs_input.46"), conv3x);
    QCOMPARE(n.layerIndex("_outputs_input.46"), -1); // a name is only a name
    QCOMPARE(&selectLayer(n, "_outputs_input.46"), &n.layers[std::size_t(conv3x)]);
    QVERIFY(errorOf([&] { selectLayer(n, "input.46"); }).find("--layer") == 0);
    // A name wins over another layer's source; a source two layers share names neither.
    Network m;
    m.layers = {n.layers[0], n.layers[1], n.layers[2]};
    m.layers[1].source = m.layers[0].name;
    QCOMPARE(m.findLayer(m.layers[0].name), 0);
    m.layers[2].source = m.layers[1].source = "shared";
    QCOMPARE(m.findLayer("shared"), -1);
    QCOMPARE(m.findLayer(""), -1);
}

void TestIo::sharedLayerShapesImport() {
    // The layer-shape files of ../shared/workloads, copied into tests/data.
    const Network net = loadNetwork(std::string(MAPWRIGHT_TEST_DATA) + "/workloads/resnet18.json");
    QCOMPARE(net.name, std::string("resnet18"));
    QCOMPARE(int(net.layers.size()), 21);
    const Problem first = buildProblem(net.layers[0]);
    QCOMPARE(first.dims[first.dimIndex("R")].bound, 7);
    // Stride 2 on P and Q: the input window spans 2*111 + 6 + 1 = 229.
    QCOMPARE(first.tensorSize(first.tensorIndex("Inputs")), 3LL * 229 * 229);
}

void TestIo::mappingAndEvaluationRoundTrip() {
    const auto c = eyeriss();
    const Json mj = toJson(c.mapping, c.problem, c.arch);
    const Mapping back = mappingFromJson(mj, c.problem, c.arch);
    QCOMPARE(toJson(back, c.problem, c.arch).dump(), mj.dump());
    const Evaluation e1 = evaluate(c.problem, c.arch, c.mapping);
    const Evaluation e2 = evaluate(c.problem, c.arch, back);
    QCOMPARE(e2.edp, e1.edp);
    QCOMPARE(e2.cycles, e1.cycles);
    const Json ej = toJson(e1, c.problem, c.arch);
    QCOMPARE(toJson(evaluationFromJson(ej, c.problem, c.arch), c.problem, c.arch).dump(),
             ej.dump());
    QCOMPARE(ej.at("levels").at(0).at("tensors").at("Weights").at("reads").get<std::int64_t>(),
             8257536LL);
}

void TestIo::timeloopExportReadsBack() {
    const auto c = eyeriss();
    QTemporaryDir tmp;
    const std::string dir = tmp.path().toStdString();
    exportTimeloop(c.problem, c.arch, &c.mapping, dir);
    for (const char* f : {"arch.yaml", "problem.yaml", "mapping.yaml", "ERT.yaml"})
        QVERIFY(fs::exists(fs::path(dir) / f));
    // Timeloop merges its input files; so do we, by concatenation.
    const std::string input = writeTemp(
        tmp, "input.yaml", readTextFile(dir + "/arch.yaml") + readTextFile(dir + "/problem.yaml"));
    const auto back = importTimeloop({input, dir + "/ERT.yaml", dir + "/mapping.yaml"});
    const Evaluation e1 = evaluate(c.problem, c.arch, c.mapping);
    const Evaluation e2 = evaluate(back.problem, back.arch, back.mapping);
    QVERIFY(e2.valid);
    QCOMPARE(e2.cycles, e1.cycles);
    QCOMPARE(e2.computes, e1.computes);
    QVERIFY(std::abs(e2.energy - e1.energy) < 1e-6 * e1.energy);
    for (int l = 0; l < e1.numLevels; ++l)
        for (int t = 0; t < e1.numTensors; ++t) {
            QCOMPARE(e2.levels[l].tensors[t].reads, e1.levels[l].tensors[t].reads);
            QCOMPARE(e2.levels[l].tensors[t].fills, e1.levels[l].tensors[t].fills);
            QCOMPARE(e2.levels[l].tensors[t].updates, e1.levels[l].tensors[t].updates);
        }
    // The mapping file names every level and uses Timeloop's directive types.
    const std::string mapping = readTextFile(dir + "/mapping.yaml");
    for (const char* line : {"target: psum_spad", "type: spatial", "split: 0"})
        QVERIFY2(mapping.find(line) != std::string::npos, line);
    // A second export into the folder without a mapping or constraints
    // leaves none of the first's where timeloop-model would read them with
    // it, and loses neither (a person may have written them): they are set
    // aside, and the notes say so.
    const std::string written = "architecture_constraints: {targets: []}\n";
    writeTemp(tmp, "constraints.yaml", written);
    const std::vector<std::string> notes = exportTimeloop(c.problem, c.arch, nullptr, dir);
    QVERIFY(fs::exists(fs::path(dir) / "arch.yaml"));
    QVERIFY(!fs::exists(fs::path(dir) / "mapping.yaml"));
    QVERIFY(!fs::exists(fs::path(dir) / "constraints.yaml"));
    QCOMPARE(readTextFile(dir + "/constraints.yaml.earlier"), written);
    QCOMPARE(readTextFile(dir + "/mapping.yaml.earlier"), mapping);
    QCOMPARE(notes.size(), std::size_t(2));
    EXPECT_CONTAINS(notes[0], "mapping.yaml aside as " + dir +
                                  "/mapping.yaml.earlier: this case "
                                  "has none");
    // Once more: nothing left to set aside, the earlier copies kept.
    QVERIFY(exportTimeloop(c.problem, c.arch, nullptr, dir).empty());
    QCOMPARE(readTextFile(dir + "/constraints.yaml.earlier"), written);
    // With a mapping, then without again: the mapping set aside the second
    // time goes beside the first one's copy, not over it.
    exportTimeloop(c.problem, c.arch, &c.mapping, dir);
    writeTemp(tmp, "mapping.yaml", "mapping: []  # by hand\n");
    EXPECT_CONTAINS(exportTimeloop(c.problem, c.arch, nullptr, dir).at(0),
                    "aside as " + dir + "/mapping.yaml.earlier.1:");
    QCOMPARE(readTextFile(dir + "/mapping.yaml.earlier"), mapping);
    QCOMPARE(readTextFile(dir + "/mapping.yaml.earlier.1"),
             std::string("mapping: []  # by hand\n"));
}

void TestIo::malformedJson() {
    QTemporaryDir tmp;
    const std::string path =
        writeTemp(tmp, "broken.json", "{\n  \"levels\": [\n    {\"name\": }\n");
    const std::string msg = errorOf([&] { loadArchitecture(path); });
    EXPECT_CONTAINS(msg, path + ":3:");
    EXPECT_CONTAINS(msg, "malformed JSON");
    EXPECT_CONTAINS(errorOf([&] { loadArchitecture(path + ".missing"); }), "cannot be opened");
    // A folder for a file was "malformed JSON (unexpected end of input)".
    EXPECT_CONTAINS(errorOf([&] { loadArchitecture(tmp.path().toStdString()); }),
                    tmp.path().toStdString() + ": is a folder; expected a file");
}

void TestIo::badArchitectureFields() {
    QTemporaryDir tmp;
    Json a = toJson(loadArchitecture(kSamples + "architectures/eyeriss_like.json"));
    Json noCompute = a;
    noCompute.erase("compute");
    const std::string p1 = writeTemp(tmp, "nocompute.json", noCompute.dump());
    const std::string m1 = errorOf([&] { loadArchitecture(p1); });
    EXPECT_CONTAINS(m1, p1);
    EXPECT_CONTAINS(m1, "$.compute");
    EXPECT_CONTAINS(m1, "no compute level");

    Json negative = a;
    negative["levels"][1]["capacity_words"] = -5;
    const std::string m2 =
        errorOf([&] { loadArchitecture(writeTemp(tmp, "neg.json", negative.dump())); });
    EXPECT_CONTAINS(m2, "$.levels[1].capacity_words: is -5; expected a positive integer");

    Json text = a;
    text["levels"][1]["mesh_x"] = "wide";
    EXPECT_CONTAINS(errorOf([&] { loadArchitecture(writeTemp(tmp, "t.json", text.dump())); }),
                    "$.levels[1].mesh_x: expected an integer, got \"wide\"");

    Json badMesh = a;
    badMesh["levels"][4]["mesh_x"] = 5; // 5 does not divide 14
    EXPECT_CONTAINS(errorOf([&] { loadArchitecture(writeTemp(tmp, "m.json", badMesh.dump())); }),
                    "does not divide the mesh of its child");

    // An energy no access costs made every energy infinite.
    Json costly = a;
    costly["levels"][1]["energy_pJ"]["read"] = 1e308;
    EXPECT_CONTAINS(errorOf([&] { loadArchitecture(writeTemp(tmp, "e.json", costly.dump())); }),
                    "(shared_glb).energy_pJ: has an energy that is negative or beyond 1e12 pJ");

    // Counts are ints: 2^32 + 14 was read as 14.
    Json wrapped = a;
    wrapped["levels"][4]["mesh_x"] = (std::int64_t(1) << 32) + 14;
    EXPECT_CONTAINS(errorOf([&] { loadArchitecture(writeTemp(tmp, "w.json", wrapped.dump())); }),
                    "$.levels[4].mesh_x: is 4294967310; expected a whole number up to 2^24");
    Json wrappedBits = a;
    wrappedBits["compute"]["word_bits"] = (std::int64_t(1) << 32) + 16;
    EXPECT_CONTAINS(
        errorOf([&] { loadArchitecture(writeTemp(tmp, "wb.json", wrappedBits.dump())); }),
        "$.compute.word_bits: is 4294967312; expected a whole number up to 2^24");

    Json wrongFormat = a;
    wrongFormat["format"] = "mapwright.mapping";
    EXPECT_CONTAINS(
        errorOf([&] { loadArchitecture(writeTemp(tmp, "f.json", wrongFormat.dump())); }),
        "$.format: is 'mapwright.mapping'; expected 'mapwright.architecture'");

    // A misspelt key kept its default in silence (a 16-word buffer read as
    // unbounded capacity would have been refused, but a word width not).
    Json misspelt = a;
    misspelt["levels"][1]["word_bit"] = 8;
    EXPECT_CONTAINS(errorOf([&] { loadArchitecture(writeTemp(tmp, "k.json", misspelt.dump())); }),
                    "$.levels[1].word_bit: is not a field here (did you mean 'word_bits'?)");
    Json misspeltEnergy = a;
    misspeltEnergy["levels"][0]["energy_pJ"]["reads"] = 3.0;
    EXPECT_CONTAINS(
        errorOf([&] { loadArchitecture(writeTemp(tmp, "ke.json", misspeltEnergy.dump())); }),
        "$.levels[0].energy_pJ.reads: is not a field here (did you mean 'read'?)");
    Json misspeltCompute = a;
    misspeltCompute["compute"]["energy"] = 0.5;
    EXPECT_CONTAINS(
        errorOf([&] { loadArchitecture(writeTemp(tmp, "kc.json", misspeltCompute.dump())); }),
        "$.compute.energy: is not a field here");
    Json misspeltSource = a;
    misspeltSource["compute"]["sources"] = {{"energi", "typed"}};
    EXPECT_CONTAINS(
        errorOf([&] { loadArchitecture(writeTemp(tmp, "ks.json", misspeltSource.dump())); }),
        "$.compute.sources.energi: is not a field here (did you mean 'energy'?)");
}

void TestIo::badWorkloadFields() {
    QTemporaryDir tmp;
    const std::string zero = writeTemp(
        tmp, "zero.json",
        R"({"format":"mapwright.workload","version":1,"layers":[{"name":"l","kind":"gemm","M":0}]})");
    EXPECT_CONTAINS(errorOf([&] { loadNetwork(zero); }),
                    "$.layers[0].M: is 0; expected a positive integer");
    const std::string kind =
        writeTemp(tmp, "kind.json", R"({"layers":[{"name":"l","kind":"fft"}]})");
    EXPECT_CONTAINS(errorOf([&] { loadNetwork(kind); }), "$.layers[0].kind: is 'fft'");
    const std::string unknownDim =
        writeTemp(tmp, "dim.json", R"({"layers":[{"name":"l","kind":"custom",
        "dimensions":[{"name":"I","bound":4}],
        "tensors":[{"name":"A","ranks":[[{"dim":"J"}]]}]}]})");
    EXPECT_CONTAINS(errorOf([&] { loadNetwork(unknownDim); }),
                    "$.layers[0].tensors[0].ranks[0][0].dim: unknown dimension 'J'");
    // Two tensors of one name could not be told apart (keep, bypass, the
    // reports), and an export wrote both.
    const std::string twice =
        writeTemp(tmp, "twice.json", R"({"layers":[{"name":"l","kind":"custom",
        "dimensions":[{"name":"I","bound":4}],
        "tensors":[{"name":"A","ranks":[[{"dim":"I"}]]},{"name":"A","ranks":[[{"dim":"I"}]],
        "read_write":true}]}]})");
    EXPECT_CONTAINS(errorOf([&] { loadNetwork(twice); }),
                    "$.layers[0]: problem 'l'.tensors.A: is defined twice; expected one data "
                    "space of each name");
    const std::string extra =
        writeTemp(tmp, "extra.json", R"({"layers":[{"name":"l","kind":"gemm","Q":3}]})");
    EXPECT_CONTAINS(errorOf([&] { loadNetwork(extra); }), "Q: is not a parameter of gemm");
    // A key given twice in one object (the last one held, in silence).
    const std::string twiceM = writeTemp(tmp, "twiceM.json", R"({"layers":[{"name":"g",
        "kind":"gemm","M":16,"N":4,"K":4,"M":4}]})");
    EXPECT_CONTAINS(errorOf([&] { loadNetwork(twiceM); }),
                    "twiceM.json: has the key 'M' twice in one object; expected each key once");
    // A file past the limit is refused by its size, before it is read (a
    // 3 GB one took 34 s and 4 GB of memory); an empty path names itself.
    const std::string oversized = tmp.filePath("oversized.json").toStdString();
    writeTextFile(oversized, "{}");
    std::filesystem::resize_file(oversized, kMaxTextFileBytes + 1); // sparse: no disk used
    EXPECT_CONTAINS(errorOf([&] { loadNetwork(oversized); }),
                    "oversized.json: is larger than 512 MiB; expected a smaller file");
    std::filesystem::remove(oversized);
    EXPECT_CONTAINS(errorOf([&] { loadNetwork(""); }),
                    "file: has an empty path; expected a file to read");
    // Two layers of one name: a run of the second was read back as the first's.
    const std::string sameName =
        writeTemp(tmp, "sameName.json",
                  R"({"layers":[{"name":"fc","kind":"gemm","M":4,"N":4,"K":4},
        {"name":"fc","kind":"gemm","M":8,"N":4,"K":4}]})");
    EXPECT_CONTAINS(errorOf([&] { loadNetwork(sameName); }),
                    "sameName.json: $.layers[1].name: 'fc' is already the name of layers[0]; "
                    "expected a name unique within the network");
    const std::string defaultName = writeTemp(tmp, "defaultName.json",
                                              R"({"layers":[{"kind":"gemm","M":4,"N":4,"K":4},
        {"name":"layer0","kind":"gemm","M":8,"N":4,"K":4}]})");
    EXPECT_CONTAINS(errorOf([&] { loadNetwork(defaultName); }),
                    "$.layers[1].name: 'layer0' is already the name of layers[0] (its default)");
    // A blank name is no name to tell a layer by.
    const std::string blank = writeTemp(
        tmp, "blank.json", R"({"layers":[{"name":" ","kind":"gemm","M":4,"N":4,"K":4}]})");
    EXPECT_CONTAINS(errorOf([&] { loadNetwork(blank); }),
                    "blank.json: $.layers[0].name: is blank; expected a layer's name (or no name: "
                    "layer0)");
    // A shape parameter left out is missing, not the editor's default; one of
    // 1 (a stride) may be left out.
    const std::string noC = writeTemp(tmp, "noC.json", R"({"layers":[{"name":"l","kind":"conv2d",
        "M":8,"P":7,"Q":7,"R":3,"S":3}]})");
    EXPECT_CONTAINS(errorOf([&] { loadNetwork(noC); }),
                    "$.layers[0]: has no 'C'; expected the conv2d layer's C");
    const std::string noStride = writeTemp(tmp, "noStride.json", R"({"layers":[{"name":"l",
        "kind":"conv2d","C":4,"M":8,"P":7,"Q":7,"R":3,"S":3}]})");
    QCOMPARE(buildProblem(loadNetwork(noStride).layers.at(0)).computes(),
             std::int64_t(4 * 8 * 7 * 7 * 3 * 3));
    // Problems the model's integers cannot count.
    const std::string huge = writeTemp(tmp, "huge.json", R"({"layers":[{"name":"g","kind":"gemm",
        "M":2097152,"N":2097152,"K":2097152}]})");
    EXPECT_CONTAINS(errorOf([&] { loadNetwork(huge); }),
                    "problem 'g': has 9.22e+18 computes (the product of its bounds); at most 2^50");
    const std::string wide = writeTemp(tmp, "wide.json", R"({"layers":[{"name":"w","kind":"custom",
        "dimensions":[{"name":"I","bound":2048}],
        "tensors":[{"name":"A","ranks":[[{"dim":"I","coef":1000000000000}]]},
                   {"name":"Z","read_write":true,"ranks":[[{"dim":"I"}]]}]}]})");
    EXPECT_CONTAINS(errorOf([&] { loadNetwork(wide); }),
                    "tensors.A: spans 2.05e+15 words over the whole problem; at most 2^50");
    // Misspelt keys of a custom layer and of the file.
    const std::string readWrite =
        writeTemp(tmp, "rw.json", R"({"layers":[{"name":"l","kind":"custom",
        "dimensions":[{"name":"I","bound":4}],
        "tensors":[{"name":"A","ranks":[[{"dim":"I"}]]},
                   {"name":"Z","readwrite":true,"ranks":[[{"dim":"I"}]]}]}]})");
    EXPECT_CONTAINS(errorOf([&] { loadNetwork(readWrite); }),
                    "$.layers[0].tensors[1].readwrite: is not a field here (did you mean "
                    "'read_write'?)");
    const std::string coef = writeTemp(tmp, "coef.json", R"({"layers":[{"name":"l",
        "kind":"custom","dimensions":[{"name":"I","bound":4}],
        "tensors":[{"name":"A","ranks":[[{"dim":"I","coeff":2}]]}]}]})");
    EXPECT_CONTAINS(errorOf([&] { loadNetwork(coef); }),
                    "$.layers[0].tensors[0].ranks[0][0].coeff: is not a field here (did you "
                    "mean 'coef'?)");
    const std::string coefficients = writeTemp(tmp, "cs.json", R"({"layers":[{"name":"l",
        "kind":"custom","dimensions":[{"name":"I","bound":4}],"coefficients":[2],
        "tensors":[{"name":"A","ranks":[[{"dim":"I"}]]}]}]})");
    EXPECT_CONTAINS(errorOf([&] { loadNetwork(coefficients); }),
                    "$.layers[0].coefficients: expected an object of name: integer, got array");
    const std::string root =
        writeTemp(tmp, "root.json", R"({"layer":[{"name":"l","kind":"gemm","M":2,"N":2,"K":2}]})");
    EXPECT_CONTAINS(errorOf([&] { loadNetwork(root); }),
                    "$.layer: is not a field here (did you mean 'layers'?)");
}

void TestIo::badMappingFields() {
    const auto c = eyeriss();
    Json m = toJson(c.mapping, c.problem, c.arch);
    Json unknownDim = m;
    unknownDim["levels"][0]["temporal"][0]["dim"] = "Z";
    EXPECT_CONTAINS(errorOf([&] { mappingFromJson(unknownDim, c.problem, c.arch); }),
                    "$.levels[0].temporal[0].dim: unknown dimension 'Z'");
    Json unknownLevel = m;
    unknownLevel["levels"][1]["level"] = "L9";
    EXPECT_CONTAINS(errorOf([&] { mappingFromJson(unknownLevel, c.problem, c.arch); }),
                    "'L9' is not a level");
    Json zero = m;
    zero["levels"][0]["temporal"][0]["factor"] = 0;
    EXPECT_CONTAINS(errorOf([&] { mappingFromJson(zero, c.problem, c.arch); }),
                    "factor: is 0; expected a positive integer");
    Json tooBig = m;
    tooBig["levels"][0]["temporal"][0]["factor"] = 1LL << 40;
    EXPECT_CONTAINS(errorOf([&] { mappingFromJson(tooBig, c.problem, c.arch); }),
                    "dimension Q is only 56");
    Json axis = m;
    axis["levels"][2]["spatial"][0]["axis"] = "Z";
    EXPECT_CONTAINS(errorOf([&] { mappingFromJson(axis, c.problem, c.arch); }),
                    "axis: is 'Z'; expected X or Y");
    // A misspelt "temporal" left the level's loops at 1 in silence.
    Json misspelt = m;
    misspelt["levels"][0]["temporl"] = misspelt["levels"][0]["temporal"];
    misspelt["levels"][0].erase("temporal");
    EXPECT_CONTAINS(errorOf([&] { mappingFromJson(misspelt, c.problem, c.arch); }),
                    "$.levels[0].temporl: is not a field here (did you mean 'temporal'?)");
    Json factors = m;
    factors["levels"][0]["temporal"][0]["factors"] = 2;
    EXPECT_CONTAINS(errorOf([&] { mappingFromJson(factors, c.problem, c.arch); }),
                    "$.levels[0].temporal[0].factors: is not a field here");
    // A mapping whose factors do not multiply to the bounds loads, and the model names it.
    Json wrong = m;
    wrong["levels"][0]["temporal"][0]["factor"] = 5;
    const Mapping bad = mappingFromJson(wrong, c.problem, c.arch);
    const Evaluation e = evaluate(c.problem, c.arch, bad);
    QVERIFY(!e.valid);
    EXPECT_CONTAINS(describeViolations(e, c.problem, c.arch).front(),
                    "factors multiply to 70 but the bound is 56");
}

void TestIo::malformedYaml() {
    QTemporaryDir tmp;
    const std::string d = kCases + "00-model-conv1d-1level/";
    const std::string bad =
        writeTemp(tmp, "bad.yaml", "architecture:\n  subtree: [\n   - name: x\n");
    const std::string msg = errorOf([&] { importTimeloop({bad, d + "ERT.yaml"}); });
    EXPECT_CONTAINS(msg, bad + ":");
    EXPECT_CONTAINS(msg, "malformed YAML");
    // A mapping directive naming a level that does not exist.
    const std::string mapping =
        writeTemp(tmp, "map.yaml",
                  "mapping:\n  - target: Nowhere\n    type: temporal\n    factors: R=3 P=16\n");
    const std::string m2 = errorOf([&] {
        importTimeloop({d + "input.yaml", d + "ERT.yaml", mapping});
    });
    EXPECT_CONTAINS(m2, mapping + ":2");
    EXPECT_CONTAINS(m2, "'Nowhere' is not a storage level");
    const std::string factors = writeTemp(
        tmp, "f.yaml", "mapping:\n  - target: Buffer\n    type: temporal\n    factors: R=3 X=16\n");
    EXPECT_CONTAINS(errorOf([&] {
                        importTimeloop({d + "input.yaml", d + "ERT.yaml", factors});
                    }),
                    "'X' is not a dimension of the problem");
}

// What the fuzz harnesses found (tests/fuzz/regressions), as a user meets
// it: each is an InputError naming where and what was expected, on one line.
void TestIo::fuzzFindingsAreOneLineErrors() {
    QTemporaryDir tmp;
    // A number beyond a double's range: the JSON parser's own complaint.
    const std::string huge = writeTemp(tmp, "huge.json", "{\"format\": 1e999}");
    const std::string m1 = errorOf([&] { loadArchitecture(huge); });
    EXPECT_CONTAINS(m1, huge + ": malformed JSON");
    EXPECT_CONTAINS(m1, "number overflow");
    // An integer field holding a double beyond int64 (was an undefined conversion).
    const Json arch = toJson(loadArchitecture(kSamples + "architectures/eyeriss_like.json"));
    Json wide = arch;
    wide["levels"][1]["mesh_x"] = 1.8e111;
    EXPECT_CONTAINS(errorOf([&] { architectureFromJson(wide); }),
                    "$.levels[1].mesh_x: expected an integer, got 1.8e+111");
    // A session field of the wrong type (was a json type_error escaping).
    Json session = readJsonFile(kSamples + "sessions/default.json");
    session["name"] = Json::array();
    EXPECT_CONTAINS(errorOf([&] { sessionFromJson(session, "s.json"); }),
                    "s.json: $.name: expected a string, got array");
    session = readJsonFile(kSamples + "sessions/default.json");
    session["runs"] = {
        {{"searcher", "gamma"}, {"settings", {{"budget_evaluations", 10}, {"threads", 1e6}}}}};
    EXPECT_CONTAINS(errorOf([&] { sessionFromJson(session, "s.json"); }),
                    "s.json: runs[0].settings.threads: is 1000000; expected 1 to 256 threads");
    // A later build's session (was read as if it were this build's).
    session = readJsonFile(kSamples + "sessions/default.json");
    session["version"] = 99;
    EXPECT_CONTAINS(errorOf([&] { sessionFromJson(session, "s.json"); }),
                    "s.json: $.version: is 99; this build reads up to version");
    // The chart's view: saved as written, refused when it is not one.
    session = readJsonFile(kSamples + "sessions/default.json");
    session["view"] = {{"search_x", "seconds"}, {"search_log_x", true}};
    const Session viewed = sessionFromJson(session, "s.json");
    QVERIFY(viewed.view.searchSeconds && viewed.view.searchLogX);
    QVERIFY(toJson(viewed).at("view") == session.at("view"));
    QVERIFY(!sessionFromJson(readJsonFile(kSamples + "sessions/default.json"), "s.json")
                 .view.searchLogX);
    session["view"] = {{"search_x", "cycles"}};
    EXPECT_CONTAINS(errorOf([&] { sessionFromJson(session, "s.json"); }),
                    "s.json: view.search_x: is 'cycles'; expected 'evaluations' or 'seconds'");
    session["view"] = {{"search_log_x", "yes"}};
    EXPECT_CONTAINS(errorOf([&] { sessionFromJson(session, "s.json"); }),
                    "s.json: view.search_log_x: expected true or false, got string");
    session["view"] = 3;
    EXPECT_CONTAINS(errorOf([&] { sessionFromJson(session, "s.json"); }),
                    "s.json: view: expected an object");
    // A run's notes (a refused surrogate file, say): kept, or refused when
    // they are not lines.
    Session noted = sessionFromJson(readJsonFile(kSamples + "sessions/default.json"), "s.json");
    SessionRun run;
    run.searcher = "mind-mappings";
    run.layer = noted.network.layers[0].name;
    run.settings.budget.seconds = 1;
    run.finished = true;
    run.result.notes = {"Mind Mappings: refused m.surrogate: stale", "second line"};
    noted.runs.push_back(run);
    session = toJson(noted);
    QVERIFY(sessionFromJson(session, "s.json").runs.at(0).result.notes == run.result.notes);
    session["runs"][0]["result"]["notes"] = {1};
    EXPECT_CONTAINS(errorOf([&] { sessionFromJson(session, "s.json"); }),
                    "s.json: runs[0].result.notes: expected a list of lines");
    // Figures no run can have (the table showed -7 evaluations, -2.00 s),
    // and an objective named as the file's field, not as --objective.
    session = toJson(noted);
    session["runs"][0]["result"]["evaluations"] = -7;
    EXPECT_CONTAINS(errorOf([&] { sessionFromJson(session, "s.json"); }),
                    "s.json: runs[0].result.evaluations: is negative");
    session = toJson(noted);
    session["runs"][0]["result"]["trace"] = {{-5, -1.0, 3.0, 3.0}};
    EXPECT_CONTAINS(errorOf([&] { sessionFromJson(session, "s.json"); }),
                    "s.json: runs[0].result.trace[0]: has a negative evaluation or time");
    session = toJson(noted);
    session["runs"][0]["settings"]["objective"] = "fast";
    EXPECT_CONTAINS(errorOf([&] { sessionFromJson(session, "s.json"); }),
                    "s.json: runs[0].settings.objective: is 'fast'; expected edp, energy");
    // Timeloop: a mesh of 0 (was a division by zero), a range that is no number
    // (was std::stoll's exception), and quoted input with a line break.
    const std::string d = kCases + "00-model-conv1d-1level/";
    const std::string input = readTextFile(d + "input.yaml");
    auto importWith = [&](const std::string& from, const std::string& to) {
        std::string text = input;
        const auto at = text.find(from);
        if (at == std::string::npos)
            return std::string("<'" + from + "' not in the input>");
        text.replace(at, from.size(), to);
        return errorOf([&] {
            importTimeloopTexts({{"in.yaml", text}, {"ERT.yaml", readTextFile(d + "ERT.yaml")}});
        });
    };
    EXPECT_CONTAINS(importWith("datawidth: 8", "datawidth: 8\n                meshX: 0"),
                    ".meshX: is 0; expected a whole number from 1 to 1");
    EXPECT_CONTAINS(importWith("Buffer[1..1]", "Buffer[1..x]"),
                    "the range of 'Buffer[1..x]' 'x': expected a whole number up to 10^12");
    // Whatever input an error quotes, it stays one line.
    QCOMPARE(std::string(InputError("in.yaml:3: component 'a\nb'", "bad\tvalue\r").what()),
             std::string("in.yaml:3: component 'a\\nb': bad\\tvalue\\r"));
}

void TestIo::constraintsFile() {
    const Architecture a = loadArchitecture(kSamples + "architectures/eyeriss_like.json");
    const Problem p = conv2dProblem("c", 1, 1, 64, 64, 56, 56, 3, 3);
    const MapSpaceConstraints c =
        loadConstraints(kSamples + "constraints/eyeriss_row_stationary.json", p, a);
    const int glb = a.levelIndex("shared_glb");
    QCOMPARE(int(c.levels[glb].keepFixed), 0x7);
    QCOMPARE(int(c.levels[glb].keepValue),
             (1 << p.tensorIndex("Inputs")) | (1 << p.tensorIndex("Outputs")));
    QCOMPARE(c.levels[a.levelIndex("weights_spad")].temporal[p.dimIndex("M")], 1LL);
    QCOMPARE(c.levels[a.levelIndex("weights_spad")].temporal[p.dimIndex("C")], 0LL); // free
    const LevelConstraint& pe = c.levels[a.levelIndex("inter_PE_spatial")];
    QVERIFY(!((pe.spatialAllowedX >> p.dimIndex("P")) & 1u));
    QVERIFY(!((pe.spatialAllowedY >> p.dimIndex("P")) & 1u));
    Json bad = readJsonFile(kSamples + "constraints/eyeriss_row_stationary.json");
    bad["levels"][0]["level"] = "L7";
    EXPECT_CONTAINS(errorOf([&] { constraintsFromJson(bad, p, a); }), "'L7' is not a level");
    bad = readJsonFile(kSamples + "constraints/eyeriss_row_stationary.json");
    bad["levels"][0]["keep"][0] = "Psums";
    EXPECT_CONTAINS(errorOf([&] { constraintsFromJson(bad, p, a); }),
                    "$.levels[0].keep[0]: 'Psums' is not a tensor");
    bad = readJsonFile(kSamples + "constraints/eyeriss_row_stationary.json");
    bad["min_spatial_utilization"] = 2;
    EXPECT_CONTAINS(errorOf([&] { constraintsFromJson(bad, p, a); }), "from 0 to 1");
    // A misspelt field was dropped, and the constraint with it.
    bad = readJsonFile(kSamples + "constraints/eyeriss_row_stationary.json");
    bad["levels"][1]["kep"] = bad["levels"][1]["keep"];
    bad["levels"][1].erase("keep");
    EXPECT_CONTAINS(errorOf([&] { constraintsFromJson(bad, p, a); }),
                    "$.levels[1].kep: is not a field here (did you mean 'keep'?); expected one "
                    "of level, temporal");
    bad = readJsonFile(kSamples + "constraints/eyeriss_row_stationary.json");
    bad["min_spatial_utilisation"] = 0.5;
    EXPECT_CONTAINS(errorOf([&] { constraintsFromJson(bad, p, a); }),
                    "(did you mean 'min_spatial_utilization'?)");
    // A dimension the problem lacks is ignored (one file serves layers of
    // several shapes), with a note: a typo no longer changes nothing unsaid.
    QTemporaryDir tmp;
    Json typo = readJsonFile(kSamples + "constraints/eyeriss_row_stationary.json");
    typo["levels"][0]["temporal"]["ZZ"] = 4;
    typo["levels"][0]["order"] = Json::array({"Nope", "*"});
    typo["levels"][1]["order"] = Json::array({"*", "ZZ"});
    const std::string typoFile = writeTemp(tmp, "typo.json", typo.dump());
    std::vector<std::string> notes;
    loadConstraints(typoFile, p, a, &notes);
    QCOMPARE(notes.size(), std::size_t(2));
    QCOMPARE(notes[0], std::string("'ZZ' is not a dimension of the problem (N, G, C, M, P, Q, R, "
                                   "S): ignored at $.levels[0].temporal, $.levels[1].order"));
    EXPECT_CONTAINS(notes[1], "'Nope' is not a dimension");
    notes.clear();
    loadConstraints(kSamples + "constraints/eyeriss_row_stationary.json", p, a, &notes);
    QVERIFY(notes.empty());
}

void TestIo::timeloopMapperCaseNeedsMapping() {
    const std::string d = kCases + "05-mapper-conv1d+oc-3level-null/";
    const auto c = importTimeloop({d + "input.yaml", d + "ERT.yaml"});
    QVERIFY(!c.hasMapping); // mapper constraints only
    const auto withMap = importTimeloop({d + "input.yaml", d + "ERT.yaml", d + "map.yaml"});
    QVERIFY(withMap.hasMapping);
    QVERIFY(evaluate(withMap.problem, withMap.arch, withMap.mapping).valid);
}

// A run records what it searched, the same digest for the same design in
// any run of the program, and saved with it: an edit since (architecture or
// layer) makes its curve and any proof another design's; an undo, its own.
void TestIo::runsKeepTheDesignTheySearched() {
    const auto c = eyeriss();
    const Session s = sessionFromTimeloop(c);
    QVERIFY(!s.runs.empty());
    QCOMPARE(s.runs[0].searcher, std::string(kImportedRun)); // (then the mapper's, requested)
    const std::string searched = s.runs[0].design;
    QCOMPARE(searched.size(), std::size_t(16));
    QCOMPARE(designFingerprint(s.arch, s.network.layers[0]), searched);
    QCOMPARE(designFingerprints(s.arch, s.network), std::vector<std::string>{searched});
    Architecture larger = s.arch;
    larger.levels[1].capacityWords *= 2;
    QVERIFY(designFingerprint(larger, s.network.layers[0]) != searched);
    Network sparser = s.network;
    sparser.layers[0].densities.push_back({"Inputs", 0.5});
    QVERIFY(designFingerprint(s.arch, sparser.layers[0]) != searched);
    const Session back = sessionFromJson(toJson(s), "s.json");
    QCOMPARE(back.runs[0].design, searched);
    // An imported mapping that is not legal says why, not only "none found".
    TimeloopCase broken = c;
    broken.mapping.levels[0].temporal[0] *= 2;
    const SessionRun imported = sessionFromTimeloop(broken).runs.at(0);
    QVERIFY(!imported.result.found);
    EXPECT_CONTAINS(imported.result.stopReason,
                    "imported from Timeloop, not a legal mapping: dimension " +
                        broken.problem.dims[0].name + ": factors multiply to");
}

QTEST_GUILESS_MAIN(TestIo)
#include "test_io.moc"

namespace {
std::string fileText(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}
} // namespace

// Files are written beside their target and renamed over it: a write that
// fails (here a file-size limit standing in for a full disk, in a child
// process) leaves the previous file whole and no temporary behind.
void TestIo::writesReplaceFilesWhole() {
    QTemporaryDir dir;
    const std::string path = dir.path().toStdString() + "/result.json";
    mw::writeTextFile(path, "{\"first\": 1}\n");
    mw::writeTextFile(path, "{\"second\": 2}\n");
    QCOMPARE(fileText(path), std::string("{\"second\": 2}\n"));
    const pid_t pid = fork();
    QVERIFY(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN); // a write past the limit fails with EFBIG instead
        const rlimit limit{64, 64};
        setrlimit(RLIMIT_FSIZE, &limit);
        try {
            mw::writeTextFile(path, std::string(4096, 'x'));
        } catch (const mw::InputError& e) {
            const std::string what = e.what();
            _exit(what.find("result.json") != std::string::npos &&
                          what.find("previous file is kept") != std::string::npos
                      ? 0
                      : 4);
        }
        _exit(3); // the write should have failed
    }
    int status = 0;
    QCOMPARE(waitpid(pid, &status, 0), pid);
    QVERIFY(WIFEXITED(status));
    QCOMPARE(WEXITSTATUS(status), 0);
    QCOMPARE(fileText(path), std::string("{\"second\": 2}\n"));
    int entries = 0;
    for (const auto& e : fs::directory_iterator(dir.path().toStdString())) {
        (void)e;
        ++entries;
    }
    QCOMPARE(entries, 1); // no temporary left behind

    // A set of files replaces the old set whole or not at all: a search's
    // new result never sits beside an old best mapping.
    const std::string d = dir.path().toStdString();
    mw::writeTextFile(d + "/trace.csv", "old trace\n");
    mw::writeTextFile(d + "/best_mapping.json", "old mapping\n");
    {
        mw::FileSet files;
        files.stage(path, "new result\n");
        files.stage(d + "/trace.csv", "new trace\n");
        // The third cannot be written: nothing is replaced.
        QVERIFY(errorOf([&] {
                    files.stage(d + "/missing/folder/x.json", "x");
                }).find("cannot be opened for writing") != std::string::npos);
    }
    QCOMPARE(fileText(path), std::string("{\"second\": 2}\n"));
    QCOMPARE(fileText(d + "/trace.csv"), std::string("old trace\n"));
    {
        mw::FileSet files;
        files.stage(path, "new result\n");
        files.stage(d + "/trace.csv", "new trace\n");
        files.removeOnCommit(d + "/best_mapping.json"); // this run found none
        files.removeOnCommit(d + "/evaluation.json");   // (absent: nothing to do)
        files.commit();
    }
    QCOMPARE(fileText(path), std::string("new result\n"));
    QCOMPARE(fileText(d + "/trace.csv"), std::string("new trace\n"));
    QVERIFY(!fs::exists(d + "/best_mapping.json"));
    entries = 0;
    for (const auto& e : fs::directory_iterator(d)) {
        (void)e;
        ++entries;
    }
    QCOMPARE(entries, 2); // the two files, no temporary
}

// The trace's numbers as printf's %.10g (seconds) and %.10e (costs) write
// them, an illegal candidate's cost as "inf": the text users' scripts parse.
void TestIo::traceCsvText() {
    mw::SearchResult r;
    r.trace.push_back({1, 1.5e-5, 12345.678, mw::SearchContext::kInfinity});
    r.trace.push_back({2, 0.25, mw::SearchContext::kInfinity, 12345.678});
    r.trace.push_back({1234567, 3601.123456789, 6.02214076e23, 1.0 / 3.0});
    QCOMPARE(QString::fromStdString(mw::traceCsv(r)),
             QString("evaluation,seconds,cost,best\n"
                     "1,1.5e-05,1.2345678000e+04,inf\n"
                     "2,0.25,inf,1.2345678000e+04\n"
                     "1234567,3601.123457,6.0221407600e+23,3.3333333333e-01\n"));
    QCOMPARE(QString::fromStdString(mw::traceCsv(mw::SearchResult{})),
             QString("evaluation,seconds,cost,best\n"));
}
