#include "io/onnx_import.h"

#include "common/error.h"
#include "common/text_case.h"
#include "io/json_io.h"
#include "io/onnx_infer.h"
#include "io/timeloop/timeloop.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <map>
#include <numeric>
#include <set>

namespace mw {

namespace {

using Shape = std::vector<std::int64_t>; // -1 where a dimension is unknown

bool allDigits(const std::string& s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// A node name that says nothing of the model: empty, a counter ("Op4",
// "node_12") or the operator with a number ("Conv_3").
bool genericName(const std::string& name, const std::string& op) {
    if (name.empty())
        return true;
    std::string stem = name;
    while (!stem.empty() &&
           (std::isdigit(static_cast<unsigned char>(stem.back())) || stem.back() == '_'))
        stem.pop_back();
    if (stem.size() == name.size())
        return false;
    const std::string s = lowercase(stem);
    return s.empty() || s == "op" || s == "node" || s == "n" || s == lowercase(op);
}

// acc *= by; false (acc unchanged) when the product leaves 64 bits: a file's
// shapes are anyone's numbers.
bool multiplyInto(std::int64_t& acc, std::int64_t by) {
    std::int64_t p;
    if (__builtin_mul_overflow(acc, by, &p))
        return false;
    acc = p;
    return true;
}

Shape shapeOf(const onnx::TypeProto& type) {
    Shape s;
    if (!type.has_tensor_type() || !type.tensor_type().has_shape())
        return s;
    for (const auto& d : type.tensor_type().shape().dim())
        s.push_back(d.has_dim_value() && d.dim_value() > 0 ? d.dim_value() : -1);
    return s;
}

bool known(const Shape& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](std::int64_t d) { return d > 0; });
}

std::vector<std::int64_t> ints(const onnx::NodeProto& n, const char* name, std::size_t count,
                               std::int64_t fallback) {
    for (const auto& a : n.attribute())
        if (a.name() == name && a.ints_size() > 0)
            return {a.ints().begin(), a.ints().end()};
    return std::vector<std::int64_t>(count, fallback);
}

std::int64_t intAttr(const onnx::NodeProto& n, const char* name, std::int64_t fallback) {
    for (const auto& a : n.attribute())
        if (a.name() == name && a.has_i())
            return a.i();
    return fallback;
}

// The one place a layer is built, so every kind is checked the same way.
LayerSpec preset(const std::string& kind,
                 const std::vector<std::pair<std::string, std::int64_t>>& params) {
    LayerSpec l = presetLayer(kind, kind);
    for (const auto& [k, v] : params)
        for (auto& [pk, pv] : l.params)
            if (pk == k)
                pv = v;
    return l;
}

// A tensor's projection onto one dimension alone.
std::vector<std::pair<std::string, std::int64_t>> one(const char* dim) {
    return {{dim, 1}};
}

struct Converted {
    LayerSpec layer;
    std::string role;
};

// Why a node of one of our kinds was still left out, or its layer.
struct NodeResult {
    bool ok = false;
    Converted converted;
    std::string why;
};

class GraphReader {
  public:
    explicit GraphReader(const onnx::GraphProto& g) {
        for (const auto& t : g.initializer()) {
            initializers_.insert(t.name());
            shapes_[t.name()] = Shape(t.dims().begin(), t.dims().end());
        }
        for (const auto* list : {&g.input(), &g.value_info(), &g.output()})
            for (const auto& v : *list)
                if (!shapes_.count(v.name()) || shapes_[v.name()].empty())
                    shapes_[v.name()] = shapeOf(v.type());
    }

    NodeResult convert(const onnx::NodeProto& n) const {
        const std::string& op = n.op_type();
        if (op == "Conv")
            return conv(n);
        if (op == "ConvTranspose")
            return convTranspose(n);
        if (op == "Gemm")
            return gemm(n);
        if (op == "MatMul")
            return matmul(n);
        return {};
    }

  private:
    Shape shape(const std::string& name) const {
        const auto it = shapes_.find(name);
        return it == shapes_.end() ? Shape{} : it->second;
    }

    NodeResult unknownShape(const onnx::NodeProto& n, const std::string& tensor) const {
        NodeResult r;
        r.why = n.op_type() + " '" + n.name() + "': the shape of '" + tensor +
                "' is not known (shape inference could not tell it)";
        return r;
    }

    NodeResult conv(const onnx::NodeProto& n) const {
        if (n.input_size() < 2 || n.output_size() < 1)
            return {false, {}, "Conv '" + n.name() + "' has no weight input"};
        const Shape x = shape(n.input(0)), w = shape(n.input(1)), y = shape(n.output(0));
        for (const auto& [name, s] : {std::pair{n.input(0), x}, {n.input(1), w}, {n.output(0), y}})
            if (!known(s))
                return unknownShape(n, name);
        const std::size_t k = w.size() - 2;
        if (k < 1 || k > 3 || x.size() != k + 2 || y.size() != k + 2)
            return {false,
                    {},
                    "Conv '" + n.name() + "' is " + std::to_string(k) +
                        "-D; expected 1-D, 2-D or 3-D"};
        const std::int64_t group = intAttr(n, "group", 1);
        const std::vector<std::int64_t> strides = ints(n, "strides", k, 1);
        const std::vector<std::int64_t> dilations = ints(n, "dilations", k, 1);
        if (group <= 0 || y[1] % group != 0 || strides.size() != k || dilations.size() != k)
            return {
                false, {}, "Conv '" + n.name() + "' has inconsistent group, strides or dilations"};
        const std::int64_t N = x[0], G = group, C = w[1], M = y[1] / group;
        NodeResult r;
        r.ok = true;
        if (k == 3) { // a 3-D convolution: a custom problem
            r.converted = {conv3d(N, G, C, M, y, w, strides, dilations), "convolution"};
            return r;
        }
        const std::int64_t P = y[2], Q = k == 2 ? y[3] : 1;
        const std::int64_t R = w[2], S = k == 2 ? w[3] : 1;
        const std::int64_t sw = strides[0], sh = k == 2 ? strides[1] : 1;
        const std::int64_t dw = dilations[0], dh = k == 2 ? dilations[1] : 1;
        // The window's sizes, strides and dilations, shared by both kinds.
        std::vector<std::pair<std::string, std::int64_t>> params = {
            {"N", N},        {"P", P},        {"Q", Q},          {"R", R},         {"S", S},
            {"Wstride", sw}, {"Hstride", sh}, {"Wdilation", dw}, {"Hdilation", dh}};
        if (G > 1 && C == 1 && M == 1) {
            params.emplace_back("C", G);
            r.converted = {preset("depthwise", params), "depthwise convolution"};
            return r;
        }
        params.insert(params.end(), {{"G", G}, {"C", C}, {"M", M}});
        r.converted = {preset("conv2d", params), "convolution"};
        return r;
    }

    static LayerSpec conv3d(std::int64_t N, std::int64_t G, std::int64_t C, std::int64_t M,
                            const Shape& y, const Shape& w, const std::vector<std::int64_t>& s,
                            const std::vector<std::int64_t>& d) {
        std::vector<Dimension> dims = {{"N", N},    {"G", G},    {"M", M},    {"C", C},
                                       {"Z", y[2]}, {"P", y[3]}, {"Q", y[4]}, {"T", w[2]},
                                       {"R", w[3]}, {"S", w[4]}};
        std::vector<TensorSpec> tensors = {
            {"Weights", {one("G"), one("M"), one("C"), one("T"), one("R"), one("S")}, false},
            {"Inputs",
             {one("N"),
              one("G"),
              one("C"),
              {{"Z", s[0]}, {"T", d[0]}},
              {{"P", s[1]}, {"R", d[1]}},
              {{"Q", s[2]}, {"S", d[2]}}},
             false},
            {"Outputs", {one("N"), one("G"), one("M"), one("Z"), one("P"), one("Q")}, true}};
        LayerSpec l;
        l.kind = "custom";
        l.custom = makeProblem("conv3d", dims, tensors);
        return l;
    }

    // A transposed convolution: every input position scatters its kernel
    // window into the output, Outputs[.., P*stride + R*dilation, ..] +=
    // Weights[.., R, ..] * Inputs[.., P, ..], over the input's positions.
    NodeResult convTranspose(const onnx::NodeProto& n) const {
        if (n.input_size() < 2)
            return {false, {}, "ConvTranspose '" + n.name() + "' has no weight input"};
        const Shape x = shape(n.input(0)), w = shape(n.input(1));
        for (const auto& [name, s] : {std::pair{n.input(0), x}, {n.input(1), w}})
            if (!known(s))
                return unknownShape(n, name);
        const std::size_t k = w.size() - 2;
        if (k < 1 || k > 2 || x.size() != k + 2)
            return {false,
                    {},
                    "ConvTranspose '" + n.name() + "' is " + std::to_string(k) +
                        "-D; expected 1-D or 2-D"};
        const std::int64_t G = intAttr(n, "group", 1);
        const std::vector<std::int64_t> strides = ints(n, "strides", k, 1);
        const std::vector<std::int64_t> dilations = ints(n, "dilations", k, 1);
        if (G <= 0 || x[1] % G != 0 || strides.size() != k || dilations.size() != k)
            return {false,
                    {},
                    "ConvTranspose '" + n.name() +
                        "' has inconsistent group, strides or dilations"};
        const std::int64_t N = x[0], C = x[1] / G, M = w[1];
        const std::int64_t P = x[2], Q = k == 2 ? x[3] : 1, R = w[2], S = k == 2 ? w[3] : 1;
        const std::int64_t sw = strides[0], sh = k == 2 ? strides[1] : 1;
        const std::int64_t dw = dilations[0], dh = k == 2 ? dilations[1] : 1;
        std::vector<Dimension> dims = {{"N", N}, {"G", G}, {"M", M}, {"C", C},
                                       {"P", P}, {"Q", Q}, {"R", R}, {"S", S}};
        std::vector<TensorSpec> tensors = {
            {"Weights", {one("G"), one("C"), one("M"), one("R"), one("S")}, false},
            {"Inputs", {one("N"), one("G"), one("C"), one("P"), one("Q")}, false},
            {"Outputs",
             {one("N"), one("G"), one("M"), {{"P", sw}, {"R", dw}}, {{"Q", sh}, {"S", dh}}},
             true}};
        NodeResult r;
        r.ok = true;
        r.converted.layer.kind = "custom";
        r.converted.layer.custom = makeProblem("conv_transpose", dims, tensors);
        r.converted.role = "transposed convolution";
        return r;
    }

    NodeResult gemm(const onnx::NodeProto& n) const {
        if (n.input_size() < 2)
            return {false, {}, "Gemm '" + n.name() + "' has fewer than two inputs"};
        Shape a = shape(n.input(0)), b = shape(n.input(1));
        for (const auto& [name, s] : {std::pair{n.input(0), a}, {n.input(1), b}})
            if (!known(s) || s.size() != 2)
                return unknownShape(n, name);
        if (intAttr(n, "transA", 0))
            std::swap(a[0], a[1]);
        if (intAttr(n, "transB", 0))
            std::swap(b[0], b[1]);
        NodeResult r;
        r.ok = true;
        r.converted = {preset("gemm", {{"M", a[0]}, {"N", b[1]}, {"K", a[1]}}), "fully connected"};
        return r;
    }

    NodeResult matmul(const onnx::NodeProto& n) const {
        if (n.input_size() < 2)
            return {false, {}, "MatMul '" + n.name() + "' has fewer than two inputs"};
        Shape a = shape(n.input(0)), b = shape(n.input(1));
        for (const auto& [name, s] : {std::pair{n.input(0), a}, {n.input(1), b}})
            if (!known(s))
                return unknownShape(n, name);
        if (a.size() == 1) // a vector times a matrix: one row
            a.insert(a.begin(), 1);
        if (b.size() == 1)
            b.push_back(1);
        const std::int64_t M = a[a.size() - 2], K = a.back(), N = b.back();
        const bool weights = initializers_.count(n.input(1)) > 0;
        auto tooLarge = [&] {
            return NodeResult{false,
                              {},
                              "MatMul '" + n.name() +
                                  "': its batch of rows has more than 2^63 elements"};
        };
        NodeResult r;
        r.ok = true;
        if (b.size() == 2) { // one matrix for every row of every batch: a fully connected layer
            std::int64_t rows = M;
            for (std::size_t i = 0; i + 2 < a.size(); ++i)
                if (!multiplyInto(rows, a[i]))
                    return tooLarge();
            r.converted = {preset("gemm", {{"M", rows}, {"N", N}, {"K", K}}),
                           weights ? "fully connected" : "matmul"};
            return r;
        }
        // Batched: the batch dimensions broadcast (attention's heads among them).
        const std::size_t batchDims = std::max(a.size(), b.size()) - 2;
        std::int64_t batch = 1;
        for (std::size_t i = 0; i < batchDims; ++i) {
            const std::int64_t da =
                i + a.size() >= batchDims + 2 ? a[i + a.size() - batchDims - 2] : 1;
            const std::int64_t db =
                i + b.size() >= batchDims + 2 ? b[i + b.size() - batchDims - 2] : 1;
            if (!multiplyInto(batch, std::max(da, db)))
                return tooLarge();
        }
        r.converted = {preset("bgemm", {{"B", batch}, {"M", M}, {"N", N}, {"K", K}}),
                       weights ? "fully connected" : "matmul"};
        return r;
    }

    std::map<std::string, Shape> shapes_;
    std::set<std::string> initializers_;
};

// Dynamic dimensions of the graph's inputs: the first one (the batch) takes
// `batch` when given; any other is an error naming it.
void fixInputShapes(onnx::GraphProto& g, const std::string& file, std::int64_t batch,
                    std::vector<std::string>& notes) {
    std::set<std::string> inits;
    for (const auto& t : g.initializer())
        inits.insert(t.name());
    bool set = false;
    for (auto& in : *g.mutable_input()) {
        if (inits.count(in.name()) || !in.type().has_tensor_type() ||
            !in.type().tensor_type().has_shape())
            continue;
        auto* dims = in.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim();
        for (int i = 0; i < dims->size(); ++i) {
            auto& d = (*dims)[i];
            if (d.has_dim_value() && d.dim_value() > 0)
                continue;
            const std::string what = d.has_dim_param() ? "'" + d.dim_param() + "'" : "unknown";
            if (i != 0)
                throw InputError(file, "input '" + in.name() + "' has a dynamic dimension " + what +
                                           " at position " + std::to_string(i) +
                                           "; expected fixed shapes apart from the batch");
            if (batch <= 0)
                throw InputError(file, "input '" + in.name() + "' has a dynamic batch " + what +
                                           "; expected --batch N to fix it");
            d.clear_dim_param();
            d.set_dim_value(batch);
            notes.push_back("input '" + in.name() + "': batch " + what + " set to " +
                            std::to_string(batch));
            set = true;
        }
    }
    if (batch > 0 && !set) // (it was ignored without a word)
        notes.push_back("batch " + std::to_string(batch) +
                        " ignored: no input has a dynamic batch, so the model's own shapes hold");
}

// Every input a node reads is a graph input, an initializer or an earlier
// node's output (ONNX requires the nodes in topological order), and every
// node of ours has its inputs; ONNX's shape inference assumes as much.
void checkTopology(const onnx::GraphProto& g, const std::string& file) {
    std::set<std::string> defined;
    for (const auto& t : g.initializer())
        defined.insert(t.name());
    for (const auto& in : g.input())
        defined.insert(in.name());
    for (const auto& n : g.node()) {
        for (const auto& in : n.input())
            if (!in.empty() && !defined.count(in))
                throw InputError(file, n.op_type() + " node '" + n.name() + "' reads '" + in +
                                           "', which no input, weight or earlier node gives; "
                                           "expected a graph in topological order");
        for (const auto& out : n.output())
            defined.insert(out);
    }
}

// Whether every input and output of a node we convert already has its whole shape
// (exporters that ran inference themselves): then the helper is not needed.
bool shapesKnownForLayers(const onnx::GraphProto& g) {
    std::map<std::string, Shape> shapes;
    for (const auto& t : g.initializer())
        shapes[t.name()] = Shape(t.dims().begin(), t.dims().end());
    for (const auto* list : {&g.input(), &g.value_info(), &g.output()})
        for (const auto& v : *list)
            if (!shapes.count(v.name()))
                shapes[v.name()] = shapeOf(v.type());
    for (const auto& n : g.node()) {
        const std::string& op = n.op_type();
        if (op != "Conv" && op != "ConvTranspose" && op != "Gemm" && op != "MatMul")
            continue;
        for (const auto* names : {&n.input(), &n.output()})
            for (const auto& tensor : *names) {
                const auto it = shapes.find(tensor);
                if (!tensor.empty() && (it == shapes.end() || !known(it->second)))
                    return false;
            }
    }
    return true;
}

} // namespace

std::string readableLayerName(const std::string& onnxName, const std::string& opType) {
    std::string s = onnxName;
    // "/conv1/Conv_output_0" -> "/conv1/Conv"
    const auto out = s.rfind("_output_");
    if (out != std::string::npos && allDigits(s.substr(out + 8)))
        s.resize(out);
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (start <= s.size()) {
        const auto slash = s.find('/', start);
        const std::string part =
            s.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
        if (!part.empty())
            parts.push_back(part);
        if (slash == std::string::npos)
            break;
        start = slash + 1;
    }
    // The operator's own component ("Conv", "MatMul_1") names no module.
    if (parts.size() > 1 && parts.back().rfind(opType, 0) == 0 &&
        (parts.back().size() == opType.size() ||
         (parts.back()[opType.size()] == '_' && allDigits(parts.back().substr(opType.size() + 1)))))
        parts.pop_back();
    // A scope that the next one extends ("layer1" before "layer1.0") says nothing more.
    std::vector<std::string> kept;
    for (std::size_t i = 0; i < parts.size(); ++i)
        if (i + 1 == parts.size() || parts[i + 1].rfind(parts[i] + ".", 0) != 0)
            kept.push_back(parts[i]);
    std::string name;
    for (const auto& p : kept)
        name += (name.empty() ? "" : ".") + p;
    // Caffe2's outputs number themselves ("conv1_1"): the stem is the name.
    if (kept.size() == 1 && s.find('/') == std::string::npos) {
        const auto us = name.rfind('_');
        if (us != std::string::npos && us > 0 && allDigits(name.substr(us + 1)))
            name.resize(us);
    }
    return name.empty() ? onnxName : name;
}

Network loadNetworkFile(const std::string& path, const OnnxImportOptions& options,
                        std::vector<std::string>* notes) {
    std::vector<std::string> unshown;
    std::vector<std::string>& said = notes ? *notes : unshown;
    const std::string ext = std::filesystem::path(path).extension().string();
    if (lowercase(ext) == ".onnx") {
        OnnxImport imported = importOnnx(path, options);
        said.insert(said.end(), imported.notes.begin(), imported.notes.end());
        return std::move(imported.network);
    }
    if (options.batch > 0) // (only a model's dynamic batch takes it)
        said.push_back(path + ": batch " + std::to_string(options.batch) +
                       " ignored: it sets an ONNX model's dynamic batch, and this is no model");
    if (isTimeloopFileName(path))
        return networkOf(importTimeloopProblem(path, said));
    return loadNetwork(path);
}

OnnxImport importOnnx(const std::string& path, const OnnxImportOptions& options) {
    return importOnnxBytes(readTextFile(path, kMaxOnnxFileBytes), path, options);
}

OnnxImport importOnnxBytes(const std::string& bytes, const std::string& name,
                           const OnnxImportOptions& options) {
    const auto started = std::chrono::steady_clock::now();
    OnnxImport result;
    onnx::ModelProto model;
    if (bytes.empty() || !model.ParseFromString(bytes) || !model.has_graph() ||
        model.ir_version() <= 0)
        throw InputError(name, "is not an ONNX model (a truncated file, or another format); "
                               "expected a model as torch.onnx.export writes it");
    onnx::GraphProto& g = *model.mutable_graph();
    if (g.node_size() == 0)
        throw InputError(name, "holds a graph without nodes; expected a network");
    fixInputShapes(g, name, options.batch, result.notes);
    checkTopology(g, name);
    if (!shapesKnownForLayers(g)) {
        // Inference runs in a helper (io/onnx_infer.h): ONNX's crashes on
        // malformed graphs must not take the program with them.
        const std::string inferred = inferOnnxShapes(model.SerializeAsString(), name);
        if (!model.ParseFromString(inferred))
            throw InputError(name, "shape inference gave back a model that does not parse");
    }
    // The graph as inferred (parsing anew may have replaced the message).
    const onnx::GraphProto& graph = model.graph();
    const GraphReader reader(graph);
    std::vector<std::string> sources;
    std::vector<std::string> ops;
    for (int i = 0; i < graph.node_size(); ++i) {
        const onnx::NodeProto& n = graph.node(i);
        NodeResult r;
        try {
            r = reader.convert(n);
        } catch (const InputError& e) {
            r = {false, {}, n.op_type() + " '" + n.name() + "': " + e.detail()};
        }
        const bool ours = n.op_type() == "Conv" || n.op_type() == "ConvTranspose" ||
                          n.op_type() == "Gemm" || n.op_type() == "MatMul";
        if (!r.ok) {
            ++result.skipped[n.op_type()];
            if (ours)
                result.notes.push_back("skipped " + r.why);
            continue;
        }
        const bool named = !genericName(n.name(), n.op_type());
        std::string source = named ? n.name() : n.output_size() > 0 ? n.output(0) : n.name();
        sources.push_back(source);
        ops.push_back(n.op_type());
        result.roles.push_back(r.converted.role);
        ++result.roleCounts[r.converted.role];
        result.network.layers.push_back(r.converted.layer);
    }
    if (result.network.layers.empty()) {
        std::string ops_;
        for (const auto& [op, count] : result.skipped)
            ops_ += (ops_.empty() ? "" : ", ") + op + " x" + std::to_string(count);
        throw InputError(name, "has no layer Mapwright models (" +
                                   (ops_.empty() ? std::string("no nodes") : ops_) +
                                   "); expected Conv, ConvTranspose, Gemm or MatMul");
    }
    // Readable names, unique: a name two layers share takes their operator
    // ("attention.matmul", "attention.matmul_1"), then a count.
    std::vector<std::string> names;
    std::map<std::string, int> seen;
    for (std::size_t i = 0; i < sources.size(); ++i) {
        std::string base = readableLayerName(sources[i], ops[i]);
        if (isBlankLayerName(base))
            base = std::to_string(i);
        if (allDigits(base))
            base = lowercase(ops[i]) + "_" + base;
        names.push_back(base);
        ++seen[base];
    }
    for (std::size_t i = 0; i < names.size(); ++i)
        if (seen[names[i]] > 1) {
            const auto slash = sources[i].rfind('/');
            const std::string last = slash == std::string::npos ? "" : sources[i].substr(slash + 1);
            if (!last.empty() && last.rfind(ops[i], 0) == 0)
                names[i] += "." + lowercase(last);
        }
    std::map<std::string, int> used;
    for (std::size_t i = 0; i < names.size(); ++i) {
        std::string n = names[i];
        for (int k = 2; used.count(n); ++k)
            n = names[i] + "_" + std::to_string(k);
        used[n] = 1;
        LayerSpec& l = result.network.layers[i];
        l.name = n;
        l.source = sources[i];
        if (l.kind == "custom")
            l.custom.name = n;
    }
    // The network: named after the file, as exporters name graphs generically
    // ("torch_jit", "main_graph"); the graph's name goes in the description.
    const std::string stem = std::filesystem::path(name).stem().string();
    result.network.name = !stem.empty() ? stem : graph.name().empty() ? name : graph.name();
    result.network.description =
        "imported from " + name + " (" +
        (model.producer_name().empty() ? std::string("ONNX") : model.producer_name()) +
        (graph.name().empty() ? std::string() : ", graph '" + graph.name() + "'") + ")";
    std::set<std::string> shapes;
    for (const auto& l : result.network.layers) {
        Json j = toJson(Network{"", "", {l}});
        j["layers"][0].erase("name");
        j["layers"][0].erase("source");
        shapes.insert(j["layers"][0].dump());
    }
    result.distinctShapes = static_cast<int>(shapes.size());
    for (const auto& l : result.network.layers) // every layer a problem the engine accepts
        try {
            buildProblem(l);
        } catch (const InputError& e) {
            throw e.within(name + ": layer '" + l.name + "'");
        }
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return result;
}

} // namespace mw
