#pragma once
// A trained Mlp evaluated on one input at a time, its weights frozen: what
// descent on a network's inputs needs (Mind Mappings' steps), in about half
// the time of Eigen's matrix-vector products (README, "Mind Mappings").
//  - Units that are zero (half of a ReLU layer's, most of a masked
//    gradient's) are skipped instead of multiplied.
//  - The products are vectorised across a layer's units with AVX2 where the
//    CPU has it. Each unit's sum still runs over its inputs in one order,
//    with no fused multiply-add, so every result is the same bit for bit on
//    any x86-64, with or without AVX2.
#include "learn/mlp.h"

#include <vector>

namespace mw {

class MlpInference {
  public:
    // Best: AVX2 where this CPU has it; Portable: never (the same results).
    enum class Kernels { Best, Portable };

    MlpInference() = default;
    explicit MlpInference(const Mlp& net, Kernels kernels = Kernels::Best);

    int inputs() const { return layers_.empty() ? 0 : layers_.front().in; }
    int outputs() const { return layers_.empty() ? 0 : layers_.back().out; }

    // The network's output for x (inputs() values); the pointer stays valid
    // until the next call. Keeps the activations for inputGradient().
    const float* forward(const float* x);
    // dLoss/dInput (inputs() values into dx) at the last forward(), for
    // dLoss/dOutput = dy (outputs() values).
    void inputGradient(const float* dy, float* dx);

  private:
    struct Layer {
        int in = 0, out = 0;
        std::vector<float> weights;    // out x in, one input's column after another
        std::vector<float> transposed; // in x out, one unit's column after another
        std::vector<float> bias;
    };
    std::vector<Layer> layers_;
    std::vector<std::vector<float>> activations_; // each layer's output (after ReLU)
    std::vector<float> delta_, next_;             // inputGradient's scratch
    std::vector<int> live_;                       // nonzero inputs of a product
    bool avx2_ = false;
};

} // namespace mw
