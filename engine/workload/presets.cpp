#include "workload/presets.h"

#include "common/error.h"

namespace mw {

bool isBlankLayerName(const std::string& name) {
    return name.find_first_not_of(" \t") == std::string::npos;
}

std::int64_t LayerSpec::param(const std::string& key, std::int64_t fallback) const {
    for (const auto& [k, v] : params)
        if (k == key)
            return v;
    return fallback;
}

int Network::layerIndex(const std::string& n) const {
    for (int i = 0; i < static_cast<int>(layers.size()); ++i)
        if (layers[i].name == n)
            return i;
    return -1;
}

int Network::findLayer(const std::string& nameOrSource) const {
    if (const int i = layerIndex(nameOrSource); i >= 0)
        return i;
    int found = -1;
    for (int i = 0; i < static_cast<int>(layers.size()); ++i)
        if (!nameOrSource.empty() && layers[i].source == nameOrSource) {
            if (found >= 0)
                return -1; // two layers came from it: a source does not name one
            found = i;
        }
    return found;
}

const std::vector<PresetInfo>& presetCatalog() {
    static const std::vector<PresetInfo> catalog = {
        {"conv2d",
         {{"N", 1},
          {"G", 1},
          {"C", 64},
          {"M", 64},
          {"P", 56},
          {"Q", 56},
          {"R", 3},
          {"S", 3},
          {"Wstride", 1},
          {"Hstride", 1},
          {"Wdilation", 1},
          {"Hdilation", 1}},
         "Outputs[N,G,M,P,Q] += Weights[G,M,C,R,S] * Inputs[N,G,C,P*Wstride+R*Wdilation,"
         "Q*Hstride+S*Hdilation]; C and M per group"},
        {"depthwise",
         {{"N", 1},
          {"C", 64},
          {"P", 56},
          {"Q", 56},
          {"R", 3},
          {"S", 3},
          {"Wstride", 1},
          {"Hstride", 1},
          {"Wdilation", 1},
          {"Hdilation", 1}},
         "depthwise conv2d: conv2d with G = C and one input and output channel per group"},
        {"gemm", {{"M", 256}, {"N", 256}, {"K", 256}}, "Z[M,N] += A[M,K] * B[K,N]"},
        {"bgemm", {{"B", 8}, {"M", 128}, {"N", 128}, {"K", 64}}, "Z[B,M,N] += A[B,M,K] * B[B,K,N]"},
        {"mttkrp",
         {{"I", 64}, {"J", 32}, {"K", 64}, {"L", 64}},
         "O[I,J] += T[I,K,L] * B[K,J] * C[L,J]"},
    };
    return catalog;
}

const PresetInfo* findPreset(const std::string& kind) {
    for (const auto& p : presetCatalog())
        if (p.kind == kind)
            return &p;
    return nullptr;
}

LayerSpec presetLayer(const std::string& kind, const std::string& name) {
    const PresetInfo* info = findPreset(kind);
    if (!info)
        throw InputError("layer '" + name + "'.kind", "unknown kind '" + kind + "'");
    LayerSpec l;
    l.name = name;
    l.kind = kind;
    l.params = info->params;
    return l;
}

Network networkOf(const Problem& p) {
    LayerSpec layer;
    layer.name = p.name;
    layer.kind = "custom";
    layer.custom = p;
    Network n;
    n.name = p.name;
    n.layers.push_back(layer);
    return n;
}

Problem conv2dProblem(const std::string& name, std::int64_t N, std::int64_t G, std::int64_t C,
                      std::int64_t M, std::int64_t P, std::int64_t Q, std::int64_t R,
                      std::int64_t S, std::int64_t Wstride, std::int64_t Hstride,
                      std::int64_t Wdilation, std::int64_t Hdilation) {
    return makeProblem(
        name, {{"N", N}, {"G", G}, {"C", C}, {"M", M}, {"P", P}, {"Q", Q}, {"R", R}, {"S", S}},
        {{"Weights", {{{"G", 1}}, {{"M", 1}}, {{"C", 1}}, {{"R", 1}}, {{"S", 1}}}},
         {"Inputs",
          {{{"N", 1}},
           {{"G", 1}},
           {{"C", 1}},
           {{"P", Wstride}, {"R", Wdilation}},
           {{"Q", Hstride}, {"S", Hdilation}}}},
         {"Outputs", {{{"N", 1}}, {{"G", 1}}, {{"M", 1}}, {{"P", 1}}, {{"Q", 1}}}, true}},
        {{"Wstride", Wstride},
         {"Hstride", Hstride},
         {"Wdilation", Wdilation},
         {"Hdilation", Hdilation}});
}

Problem gemmProblem(const std::string& name, std::int64_t M, std::int64_t N, std::int64_t K) {
    return makeProblem(name, {{"M", M}, {"N", N}, {"K", K}},
                       {{"A", {{{"M", 1}}, {{"K", 1}}}},
                        {"B", {{{"K", 1}}, {{"N", 1}}}},
                        {"Z", {{{"M", 1}}, {{"N", 1}}}, true}});
}

Problem batchedGemmProblem(const std::string& name, std::int64_t B, std::int64_t M, std::int64_t N,
                           std::int64_t K) {
    return makeProblem(name, {{"B", B}, {"M", M}, {"N", N}, {"K", K}},
                       {{"A", {{{"B", 1}}, {{"M", 1}}, {{"K", 1}}}},
                        {"B", {{{"B", 1}}, {{"K", 1}}, {{"N", 1}}}},
                        {"Z", {{{"B", 1}}, {{"M", 1}}, {{"N", 1}}}, true}});
}

Problem mttkrpProblem(const std::string& name, std::int64_t I, std::int64_t J, std::int64_t K,
                      std::int64_t L) {
    return makeProblem(name, {{"I", I}, {"J", J}, {"K", K}, {"L", L}},
                       {{"T", {{{"I", 1}}, {{"K", 1}}, {{"L", 1}}}},
                        {"B", {{{"K", 1}}, {{"J", 1}}}},
                        {"C", {{{"L", 1}}, {{"J", 1}}}},
                        {"O", {{{"I", 1}}, {{"J", 1}}}, true}});
}

namespace {
// Sets the densities a layer gives; unknown tensors and values outside (0, 1]
// are errors naming the layer.
Problem withDensities(Problem p, const LayerSpec& l, const std::string& where) {
    for (const auto& [tensor, d] : l.densities) {
        const int t = p.tensorIndex(tensor);
        if (t < 0)
            throw InputError(where + ".densities." + tensor, "is not a tensor of " + l.kind);
        if (!(d > 0.0 && d <= 1.0))
            throw InputError(where + ".densities." + tensor,
                             "is " + std::to_string(d) + "; expected a value in (0, 1]");
        p.tensors[std::size_t(t)].density = d;
    }
    return p;
}
Problem buildDense(const LayerSpec& l);
} // namespace

Problem buildProblem(const LayerSpec& l) {
    return withDensities(buildDense(l), l, "layer '" + l.name + "'");
}

namespace {
Problem buildDense(const LayerSpec& l) {
    const std::string where = "layer '" + l.name + "'";
    if (l.kind == "custom") {
        Problem p = l.custom;
        if (p.name.empty())
            p.name = l.name;
        try {
            finalizeProblem(p);
        } catch (const InputError& e) {
            throw e.within(where);
        }
        return p;
    }
    const PresetInfo* info = findPreset(l.kind);
    if (!info)
        throw InputError(where + ".kind", "unknown kind '" + l.kind +
                                              "'; expected conv2d, depthwise, gemm, bgemm, "
                                              "mttkrp or custom");
    for (const auto& [k, v] : l.params) {
        bool known = false;
        for (const auto& [pk, pv] : info->params)
            known = known || pk == k;
        if (!known)
            throw InputError(where + "." + k, "is not a parameter of " + l.kind);
        if (v <= 0)
            throw InputError(where + "." + k,
                             "is " + std::to_string(v) + "; expected a positive integer");
    }
    auto g = [&](const char* key) {
        std::int64_t fallback = 1;
        for (const auto& [pk, pv] : info->params)
            if (pk == key)
                fallback = pv;
        return l.param(key, fallback);
    };
    try {
        if (l.kind == "conv2d")
            return conv2dProblem(l.name, g("N"), g("G"), g("C"), g("M"), g("P"), g("Q"), g("R"),
                                 g("S"), g("Wstride"), g("Hstride"), g("Wdilation"),
                                 g("Hdilation"));
        if (l.kind == "depthwise")
            return conv2dProblem(l.name, g("N"), g("C"), 1, 1, g("P"), g("Q"), g("R"), g("S"),
                                 g("Wstride"), g("Hstride"), g("Wdilation"), g("Hdilation"));
        if (l.kind == "gemm")
            return gemmProblem(l.name, g("M"), g("N"), g("K"));
        if (l.kind == "bgemm")
            return batchedGemmProblem(l.name, g("B"), g("M"), g("N"), g("K"));
        return mttkrpProblem(l.name, g("I"), g("J"), g("K"), g("L"));
    } catch (const InputError& e) {
        throw e.within(where);
    }
}

} // namespace

} // namespace mw
