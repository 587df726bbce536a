// ONNX import: the layers of AlexNet and ResNet-18 (../shared/onnx) against
// their known architectures, a transformer block's products, MobileNet-v2's
// depthwise and pointwise convolutions, the other convolution kinds, shape
// inference for graphs that store no shapes, readable names, and one-line
// errors for files that are not ONNX, are truncated, have a dynamic batch or
// hold no layer (tests/data/onnx/make_models.py wrote the small graphs).
#include "io/json_io.h"
#include "io/onnx_import.h"
#include "search/network_search.h"

#include "test_support.h"

#include <QtTest>

#include <algorithm>
#include <fstream>

using namespace mw;
using mw::test::errorOf;

namespace {

const std::string kOnnx = std::string(MAPWRIGHT_TEST_DATA) + "/onnx/";

// A conv2d layer's shape, in the order torchvision's tables give it.
struct Conv {
    const char* name;
    std::int64_t C, M, P, R, stride;
};

void expectConv(const LayerSpec& l, const Conv& c) {
    QCOMPARE(QString::fromStdString(l.name), QString(c.name));
    QCOMPARE(QString::fromStdString(l.kind), QString("conv2d"));
    QCOMPARE(l.param("C", 0), c.C);
    QCOMPARE(l.param("M", 0), c.M);
    QCOMPARE(l.param("P", 0), c.P);
    QCOMPARE(l.param("Q", 0), c.P);
    QCOMPARE(l.param("R", 0), c.R);
    QCOMPARE(l.param("S", 0), c.R);
    QCOMPARE(l.param("Wstride", 0), c.stride);
    QCOMPARE(l.param("Hstride", 0), c.stride);
}

} // namespace

class TestOnnx : public QObject {
    Q_OBJECT
  private slots:
    void resnet18AsTorchvision();
    void alexnet();
    void transformerBlockProducts();
    void mobilenetEveryLayerFound();
    void convolutionKinds();
    void shapesInferredAndBatchGiven();
    void readableNames();
    void badFilesAreOneLineErrors();
    void overflowingShapeIsSkippedWithNote();
    void missingHelperIsNamed();
    void importedNetworkSearches();
};

// ResNet-18: 20 convolutions (17 3x3 or 7x7, 3 1x1 downsamples) and one
// fully connected layer, with torchvision's shapes at 224 x 224.
void TestOnnx::resnet18AsTorchvision() {
    const OnnxImport r = importOnnx(kOnnx + "resnet18.onnx");
    QCOMPARE(r.network.layers.size(), std::size_t(21));
    // Named after the file: torch names every graph "torch_jit".
    QCOMPARE(QString::fromStdString(r.network.name), QString("resnet18"));
    QVERIFY(r.network.description.find("graph 'torch_jit'") != std::string::npos);
    QCOMPARE(r.roleCounts.at("convolution"), 20);
    QCOMPARE(r.roleCounts.at("fully connected"), 1);
    QCOMPARE(r.skipped.at("Relu"), 17);
    QCOMPARE(r.skipped.at("Add"), 8);
    const Conv expected[] = {{"conv1", 3, 64, 112, 7, 2},
                             {"layer1.0.conv1", 64, 64, 56, 3, 1},
                             {"layer1.0.conv2", 64, 64, 56, 3, 1},
                             {"layer1.1.conv1", 64, 64, 56, 3, 1},
                             {"layer1.1.conv2", 64, 64, 56, 3, 1},
                             {"layer2.0.conv1", 64, 128, 28, 3, 2},
                             {"layer2.0.conv2", 128, 128, 28, 3, 1},
                             {"layer2.0.downsample.0", 64, 128, 28, 1, 2},
                             {"layer2.1.conv1", 128, 128, 28, 3, 1},
                             {"layer2.1.conv2", 128, 128, 28, 3, 1},
                             {"layer3.0.conv1", 128, 256, 14, 3, 2},
                             {"layer3.0.conv2", 256, 256, 14, 3, 1},
                             {"layer3.0.downsample.0", 128, 256, 14, 1, 2},
                             {"layer3.1.conv1", 256, 256, 14, 3, 1},
                             {"layer3.1.conv2", 256, 256, 14, 3, 1},
                             {"layer4.0.conv1", 256, 512, 7, 3, 2},
                             {"layer4.0.conv2", 512, 512, 7, 3, 1},
                             {"layer4.0.downsample.0", 256, 512, 7, 1, 2},
                             {"layer4.1.conv1", 512, 512, 7, 3, 1},
                             {"layer4.1.conv2", 512, 512, 7, 3, 1}};
    for (std::size_t i = 0; i < std::size(expected); ++i)
        expectConv(r.network.layers[i], expected[i]);
    const LayerSpec& fc = r.network.layers[20];
    QCOMPARE(QString::fromStdString(fc.name), QString("fc"));
    QCOMPARE(QString::fromStdString(fc.kind), QString("gemm"));
    QCOMPARE(fc.param("M", 0), std::int64_t(1));
    QCOMPARE(fc.param("K", 0), std::int64_t(512));
    QCOMPARE(fc.param("N", 0), std::int64_t(1000));
    // The ONNX names are kept beside, and survive the network file.
    QCOMPARE(QString::fromStdString(r.network.layers[1].source),
             QString("/layer1/layer1.0/conv1/Conv"));
    const Network back = networkFromJson(toJson(r.network));
    QCOMPARE(back.layers[1].source, r.network.layers[1].source);
    QCOMPARE(r.distinctShapes, 12);
}

// The Caffe2 AlexNet (224 x 224, grouped conv2, conv4, conv5): 5
// convolutions and 3 fully connected layers, named by their outputs.
void TestOnnx::alexnet() {
    const OnnxImport r = importOnnx(kOnnx + "alexnet.onnx");
    QCOMPARE(r.roleCounts.at("convolution"), 5);
    QCOMPARE(r.roleCounts.at("fully connected"), 3);
    QCOMPARE(r.network.layers.size(), std::size_t(8));
    expectConv(r.network.layers[0], {"conv1", 3, 96, 54, 11, 4});
    const LayerSpec& conv2 = r.network.layers[1];
    QCOMPARE(QString::fromStdString(conv2.name), QString("conv2"));
    QCOMPARE(conv2.param("G", 0), std::int64_t(2));
    QCOMPARE(conv2.param("C", 0), std::int64_t(48)); // per group
    QCOMPARE(conv2.param("M", 0), std::int64_t(128));
    QCOMPARE(conv2.param("P", 0), std::int64_t(26));
    QCOMPARE(conv2.param("R", 0), std::int64_t(5));
    expectConv(r.network.layers[2], {"conv3", 256, 384, 12, 3, 1});
    QCOMPARE(r.network.layers[3].param("G", 0), std::int64_t(2));
    QCOMPARE(r.network.layers[4].param("M", 0), std::int64_t(128));
    const std::int64_t fcK[] = {9216, 4096, 4096}, fcN[] = {4096, 4096, 1000};
    const char* fcNames[] = {"fc6", "fc7", "fc8"};
    for (int i = 0; i < 3; ++i) {
        const LayerSpec& fc = r.network.layers[std::size_t(5 + i)];
        QCOMPARE(QString::fromStdString(fc.name), QString(fcNames[i]));
        QCOMPARE(fc.param("K", 0), fcK[i]);
        QCOMPARE(fc.param("N", 0), fcN[i]);
    }
    QCOMPARE(r.skipped.at("LRN"), 2);
}

// A transformer block (batch 2, 128 tokens, 4 heads of 64): the Q, K, V,
// output and FFN projections are fully connected over all 256 tokens; Q.K^T
// and .V are batched products with the heads as the batch (2 x 4 = 8).
void TestOnnx::transformerBlockProducts() {
    const OnnxImport r = importOnnx(kOnnx + "transformer_block.onnx");
    QCOMPARE(r.network.layers.size(), std::size_t(8));
    QCOMPARE(r.roleCounts.at("fully connected"), 6);
    QCOMPARE(r.roleCounts.at("matmul"), 2);
    auto layer = [&](const char* name) {
        const int i = r.network.layerIndex(name);
        if (i < 0)
            QTest::qFail(name, __FILE__, __LINE__);
        return r.network.layers[std::size_t(std::max(i, 0))];
    };
    const LayerSpec q = layer("encoder.layer.0.attention.query");
    QCOMPARE(QString::fromStdString(q.kind), QString("gemm"));
    QCOMPARE(q.param("M", 0), std::int64_t(256));
    QCOMPARE(q.param("K", 0), std::int64_t(256));
    const LayerSpec scores = layer("encoder.layer.0.attention.matmul");
    QCOMPARE(QString::fromStdString(scores.kind), QString("bgemm"));
    QCOMPARE(scores.param("B", 0), std::int64_t(8));
    QCOMPARE(scores.param("M", 0), std::int64_t(128));
    QCOMPARE(scores.param("N", 0), std::int64_t(128));
    QCOMPARE(scores.param("K", 0), std::int64_t(64));
    const LayerSpec context = layer("encoder.layer.0.attention.matmul_1");
    QCOMPARE(context.param("N", 0), std::int64_t(64));
    QCOMPARE(context.param("K", 0), std::int64_t(128));
    const LayerSpec fc1 = layer("encoder.layer.0.ffn.fc1");
    QCOMPARE(fc1.param("N", 0), std::int64_t(1024));
    QCOMPARE(r.skipped.at("Softmax"), 1);
}

// MobileNet-v2: every convolution found, the 17 depthwise ones as depthwise.
void TestOnnx::mobilenetEveryLayerFound() {
    const OnnxImport r = importOnnx(kOnnx + "mobilenet_v2.onnx");
    QCOMPARE(r.roleCounts.at("depthwise convolution"), 17);
    QCOMPARE(r.roleCounts.at("convolution"), 35);
    QCOMPARE(r.roleCounts.at("fully connected"), 1);
    QVERIFY(!r.skipped.count("Conv") && !r.skipped.count("Gemm"));
    const LayerSpec& dw = r.network.layers[1];
    QCOMPARE(QString::fromStdString(dw.name), QString("features.1.conv.0.0"));
    QCOMPARE(QString::fromStdString(dw.kind), QString("depthwise"));
    QCOMPARE(dw.param("C", 0), std::int64_t(32));
    QCOMPARE(QString::fromStdString(r.network.layers.back().name), QString("classifier.1"));
    // Without its stored shapes, ONNX's inference (in the helper) finds the
    // same layers.
    const OnnxImport inferred = importOnnx(kOnnx + "mobilenet_v2_no_shapes.onnx");
    QCOMPARE(inferred.network.layers.size(), r.network.layers.size());
    for (std::size_t i = 0; i < r.network.layers.size(); ++i) {
        QCOMPARE(inferred.network.layers[i].name, r.network.layers[i].name);
        QVERIFY(inferred.network.layers[i].params == r.network.layers[i].params);
    }
}

void TestOnnx::convolutionKinds() {
    const OnnxImport r = importOnnx(kOnnx + "conv_kinds.onnx");
    QCOMPARE(r.network.layers.size(), std::size_t(6));
    const LayerSpec& c1 = r.network.layers[0]; // 1-D: 100 samples, kernel 5, stride 2
    QCOMPARE(c1.param("P", 0), std::int64_t(50));
    QCOMPARE(c1.param("Q", 0), std::int64_t(1));
    QCOMPARE(c1.param("R", 0), std::int64_t(5));
    QCOMPARE(c1.param("S", 0), std::int64_t(1));
    const LayerSpec& c3 = r.network.layers[1]; // 3-D: a problem of its own
    QCOMPARE(QString::fromStdString(c3.kind), QString("custom"));
    const Problem p3 = buildProblem(c3);
    QCOMPARE(p3.dims[std::size_t(p3.dimIndex("Z"))].bound, std::int64_t(16));
    QCOMPARE(p3.dims[std::size_t(p3.dimIndex("T"))].bound, std::int64_t(3));
    QCOMPARE(p3.computes(), std::int64_t(8) * 4 * 16 * 32 * 32 * 27);
    QCOMPARE(r.network.layers[2].param("Wdilation", 0), std::int64_t(2));
    QCOMPARE(r.network.layers[3].param("Wstride", 0), std::int64_t(2));
    const Problem up = buildProblem(r.network.layers[4]); // every input scatters a 4x4 window
    QCOMPARE(up.computes(), std::int64_t(2) * 64 * 16 * 14 * 14 * 16);
    const LayerSpec& head = r.network.layers[5]; // MatMul after a Reshape
    QCOMPARE(head.param("M", 0), std::int64_t(2));
    QCOMPARE(head.param("K", 0), std::int64_t(16 * 28 * 28));
}

// A graph that stores no intermediate shapes and has a dynamic batch: ONNX's
// shape inference gives the shapes once the batch is given.
void TestOnnx::shapesInferredAndBatchGiven() {
    const std::string path = kOnnx + "dynamic_no_shapes.onnx";
    const std::string msg = errorOf([&] { importOnnx(path); });
    QVERIFY2(msg == path + ": input 'image' has a dynamic batch 'N'; expected --batch N to fix it",
             msg.c_str());
    OnnxImportOptions o;
    o.batch = 8;
    const OnnxImport r = importOnnx(path, o);
    QCOMPARE(r.network.layers.size(), std::size_t(3));
    QCOMPARE(r.network.layers[0].param("N", 0), std::int64_t(8));
    QCOMPARE(r.network.layers[1].param("P", 0), std::int64_t(16));
    QCOMPARE(r.network.layers[2].param("M", 0), std::int64_t(8));
    QCOMPARE(r.network.layers[2].param("K", 0), std::int64_t(32 * 16 * 16));
    // A batch given where none is dynamic is noted, not ignored in silence.
    const OnnxImport fixed = importOnnx(kOnnx + "resnet18.onnx", o);
    QCOMPARE(fixed.network.layers[0].param("N", 0), std::int64_t(1));
    QVERIFY(std::any_of(fixed.notes.begin(), fixed.notes.end(), [](const std::string& n) {
        return n.find("batch 8 ignored: no input has a dynamic batch") != std::string::npos;
    }));
    std::vector<std::string> notes;
    loadNetworkFile(std::string(MAPWRIGHT_SOURCE_DIR) + "/samples/workloads/resnet_conv3x3.json", o,
                    &notes);
    QCOMPARE(notes.size(), std::size_t(1));
    QVERIFY2(notes[0].find("resnet_conv3x3.json: batch 8 ignored: it sets an ONNX model's "
                           "dynamic batch") != std::string::npos,
             notes[0].c_str());
}

void TestOnnx::readableNames() {
    QCOMPARE(readableLayerName("/layer2/layer2.0/conv2/Conv", "Conv"),
             std::string("layer2.0.conv2"));
    QCOMPARE(readableLayerName("/layer3/layer3.0/downsample/downsample.0/Conv_output_0", "Conv"),
             std::string("layer3.0.downsample.0"));
    QCOMPARE(readableLayerName("/fc/Gemm", "Gemm"), std::string("fc"));
    QCOMPARE(readableLayerName("conv2_1", "Conv"), std::string("conv2"));
    QCOMPARE(readableLayerName("/blocks/blocks.3/attn/MatMul_1", "MatMul"),
             std::string("blocks.3.attn"));
    QCOMPARE(readableLayerName("features.0", "Conv"), std::string("features.0"));

    // AlexNet's conv1 is unnamed and names its output "conv1_1"; blanked (the
    // same length, so the protobuf stays whole), the layer takes its position,
    // and the network reads back (a blank layer name is refused on reading).
    std::string bytes = readTextFile(kOnnx + "alexnet.onnx");
    int blanked = 0;
    for (auto at = bytes.find("conv1_1"); at != std::string::npos; at = bytes.find("conv1_1", at)) {
        bytes.replace(at, 7, 7, ' ');
        ++blanked;
    }
    QVERIFY(blanked >= 2); // (the Conv's output and the Relu's input)
    QTemporaryDir tmp;
    const std::string blank = tmp.path().toStdString() + "/blank_names.onnx";
    std::ofstream(blank, std::ios::binary) << bytes;
    const OnnxImport r = importOnnx(blank);
    QCOMPARE(QString::fromStdString(r.network.layers[0].name), QString("conv_0"));
    QCOMPARE(QString::fromStdString(r.network.layers[1].name), QString("conv2"));
    QCOMPARE(networkFromJson(toJson(r.network)).layers[0].name, std::string("conv_0"));
}

void TestOnnx::badFilesAreOneLineErrors() {
    QTemporaryDir tmp;
    auto write = [&](const char* name, const std::string& bytes) {
        const std::string path = tmp.path().toStdString() + "/" + name;
        std::ofstream(path, std::ios::binary) << bytes;
        return path;
    };
    const std::string full = readTextFile(kOnnx + "resnet18.onnx");
    for (const auto& [file, bytes] :
         {std::pair{write("truncated.onnx", full.substr(0, full.size() / 3)),
                    "is not an ONNX model"},
          {write("json.onnx", "{\"format\": \"mapwright.workload\"}"), "is not an ONNX model"},
          {write("empty.onnx", ""), "is not an ONNX model"},
          {kOnnx + "activations_only.onnx",
           "has no layer Mapwright models (Relu x1, Softmax x1); expected Conv, ConvTranspose, "
           "Gemm or MatMul"},
          {tmp.path().toStdString() + "/missing.onnx", "cannot be opened"},
          // ONNX 1.12's inference dereferences a null attribute on this graph
          // (found by fuzzing): the helper crashes, the program does not.
          {std::string(MAPWRIGHT_SOURCE_DIR) +
               "/tests/fuzz/regressions/onnx/conv-after-failed-inference",
           "shape inference failed: ONNX's library crashed"}}) {
        const std::string msg = errorOf([&file = file] { importOnnx(file); });
        QVERIFY2(msg.rfind(file + ": ", 0) == 0, msg.c_str());
        QVERIFY2(msg.find(bytes) != std::string::npos, msg.c_str());
        QVERIFY2(msg.find('\n') == std::string::npos, msg.c_str());
    }
}

// A MatMul whose batch of rows overflows 64 bits (found by fuzzing: the
// product was signed overflow) is skipped with a note naming it; the other
// layers import.
void TestOnnx::overflowingShapeIsSkippedWithNote() {
    const OnnxImport r = importOnnx(std::string(MAPWRIGHT_SOURCE_DIR) +
                                    "/tests/fuzz/regressions/onnx/matmul-batch-overflow");
    QVERIFY(!r.network.layers.empty());
    QCOMPARE(r.skipped.at("MatMul"), 1);
    const std::string want = "skipped MatMul '/encoder/layer/layer.0/attention/query/MatMul': "
                             "its batch of rows has more than 2^63 elements";
    QVERIFY2(std::find(r.notes.begin(), r.notes.end(), want) != r.notes.end(),
             r.notes.empty() ? "no notes" : r.notes.front().c_str());
}

// Without its helper a model that needs inference is refused with the way
// out; one that stores its shapes does not need it.
void TestOnnx::missingHelperIsNamed() {
    qputenv("MAPWRIGHT_ONNX", "/nonexistent/mapwright-onnx");
    const std::string path = kOnnx + "mobilenet_v2_no_shapes.onnx";
    const std::string msg = errorOf([&] { importOnnx(path); });
    const OnnxImport stored = importOnnx(kOnnx + "transformer_block.onnx");
    qunsetenv("MAPWRIGHT_ONNX");
    QVERIFY2(msg == path + ": needs shape inference, and its helper mapwright-onnx was not found "
                           "beside the program (set MAPWRIGHT_ONNX to its path)",
             msg.c_str());
    QVERIFY(!stored.network.layers.empty());
}

// The imported network searches end to end (identical layers once).
void TestOnnx::importedNetworkSearches() {
    const OnnxImport r = importOnnx(kOnnx + "resnet18.onnx");
    const Architecture a = loadArchitecture(std::string(MAPWRIGHT_SOURCE_DIR) +
                                            "/samples/architectures/eyeriss_like.json");
    NetworkSearchOptions o;
    o.searcher = "random-pruned";
    o.settings.budget.evaluations = 200;
    const NetworkOutcome out = searchNetwork(r.network, a, o);
    QCOMPARE(out.layers.size(), std::size_t(21));
    for (const auto& l : out.layers)
        QVERIFY(l.result.found);
    QCOMPARE(out.uniqueLayers, r.distinctShapes);
}

QTEST_GUILESS_MAIN(TestOnnx)
#include "test_onnx.moc"
