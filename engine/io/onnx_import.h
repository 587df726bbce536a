#pragma once
// Networks from the frameworks: an ONNX model's layers as a Mapwright
// network, read with ONNX's own library (libonnx: the protobuf model and its
// shape inference, for graphs that do not store their shapes).
//
// Conv (groups and depthwise, strides, dilations, 1-D, 2-D and 3-D),
// ConvTranspose (as the convolution that scatters each input into its output
// window), Gemm and MatMul (fully connected layers, batched products such as
// attention's Q.K^T and .V with the heads as a batch dimension) become
// layers; every other operator is counted as skipped. Layer names come from
// the graph (node names, else the output's), shortened to their module path
// (layer2.0.conv2) and unique; each layer keeps its ONNX name as its source.
#include "workload/presets.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mw {

struct OnnxImportOptions {
    // The batch size for inputs whose first dimension is dynamic ("N",
    // "batch_size"); 0: none given, and a dynamic batch is an error.
    std::int64_t batch = 0;
};

struct OnnxImport {
    Network network; // the layers in graph order
    // What each imported layer is: convolution, depthwise convolution,
    // transposed convolution, fully connected, matmul (both operands computed).
    std::vector<std::string> roles; // one per layer
    std::map<std::string, int> roleCounts;
    std::map<std::string, int> skipped; // operator type -> count, never silently dropped
    int distinctShapes = 0;             // layers of distinct shape (a network search's count)
    std::vector<std::string> notes;
    double seconds = 0.0; // parse, shape inference and conversion
};

// Errors (a file that is not ONNX, is truncated, has dynamic shapes and no
// batch, holds no layer Mapwright models) are one-line InputErrors naming
// the file and what was expected.
OnnxImport importOnnx(const std::string& path, const OnnxImportOptions& options = {});
OnnxImport importOnnxBytes(const std::string& bytes, const std::string& name,
                           const OnnxImportOptions& options = {});

// A network file of any kind, by its extension: an ONNX model (.onnx, with
// `options`), a Timeloop problem (isTimeloopFileName: one layer) or a
// Mapwright workload JSON; `notes` (when given) receives what an import noted.
Network loadNetworkFile(const std::string& path, const OnnxImportOptions& options = {},
                        std::vector<std::string>* notes = nullptr);

// A readable, unique name from an ONNX node's name or output:
// "/layer1/layer1.0/conv1/Conv" -> "layer1.0.conv1"; exposed for tests.
std::string readableLayerName(const std::string& onnxName, const std::string& opType);

} // namespace mw
