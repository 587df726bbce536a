#pragma once
// Layer presets (conv2d, depthwise, GEMM, batched GEMM, MTTKRP) and networks:
// an ordered list of named layers, each a preset with parameters or a custom problem.
#include "workload/problem.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mw {

struct LayerSpec {
    std::string name;
    std::string kind; // conv2d, depthwise, gemm, bgemm, mttkrp, custom
    std::vector<std::pair<std::string, std::int64_t>> params; // preset parameters, in order
    Problem custom;                                           // used when kind == "custom"
    // Expected nonzero fraction per tensor name (absent: dense), e.g. {"Inputs", 0.5}.
    std::vector<std::pair<std::string, double>> densities;
    // Where the layer came from, when imported: its name in the ONNX graph, say.
    std::string source;

    std::int64_t param(const std::string& key, std::int64_t fallback) const;
};

// Whether a layer's name is blank (empty, or only spaces and tabs). Results,
// sessions and reports tell layers apart by name, so a blank one is refused
// on reading and never given by an import.
bool isBlankLayerName(const std::string& name);

struct Network {
    std::string name;
    std::string description;
    std::vector<LayerSpec> layers;

    int layerIndex(const std::string& name) const; // -1 when unknown
    // A layer by its name, else by its source (the ONNX or converter name it
    // was imported under) when exactly one layer has that source; -1 when neither.
    int findLayer(const std::string& nameOrSource) const;
};

// The preset kinds and, for each, its parameter names and defaults.
struct PresetInfo {
    std::string kind;
    // name, default (in a new layer; a file gives every parameter but those
    // whose default is 1)
    std::vector<std::pair<std::string, std::int64_t>> params;
    std::string description;
};
const std::vector<PresetInfo>& presetCatalog();
const PresetInfo* findPreset(const std::string& kind);

// A layer spec of the given preset kind with its default parameters.
LayerSpec presetLayer(const std::string& kind, const std::string& name);

// A network of one custom layer, network and layer named as the problem.
Network networkOf(const Problem& p);

// Builds the problem of a layer; throws InputError naming the layer and field.
Problem buildProblem(const LayerSpec& layer);

Problem conv2dProblem(const std::string& name, std::int64_t N, std::int64_t G, std::int64_t C,
                      std::int64_t M, std::int64_t P, std::int64_t Q, std::int64_t R,
                      std::int64_t S, std::int64_t Wstride = 1, std::int64_t Hstride = 1,
                      std::int64_t Wdilation = 1, std::int64_t Hdilation = 1);
Problem gemmProblem(const std::string& name, std::int64_t M, std::int64_t N, std::int64_t K);
Problem batchedGemmProblem(const std::string& name, std::int64_t B, std::int64_t M, std::int64_t N,
                           std::int64_t K);
Problem mttkrpProblem(const std::string& name, std::int64_t I, std::int64_t J, std::int64_t K,
                      std::int64_t L);

} // namespace mw
