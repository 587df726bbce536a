#pragma once
// A small multi-layer perceptron in Eigen: ReLU hidden layers, a linear
// output, SGD with momentum. Shared by the Mind Mappings surrogate and the
// reinforcement-learning policy. Batches are matrices with one column per
// sample.
#include "mapspace/mapspace.h" // Rng

#include <Eigen/Dense>

#include <iosfwd>
#include <vector>

namespace mw {

class Mlp {
  public:
    Mlp() = default;
    // widths: input, hidden..., output. He-initialised from rng.
    Mlp(const std::vector<int>& widths, Rng& rng);

    int inputs() const { return widths_.empty() ? 0 : widths_.front(); }
    int outputs() const { return widths_.empty() ? 0 : widths_.back(); }
    const std::vector<int>& widths() const { return widths_; }
    std::size_t parameterCount() const;
    // Layer k's weights (outputs x inputs) and biases.
    const Eigen::MatrixXf& weights(std::size_t k) const { return weights_[k]; }
    const Eigen::VectorXf& biases(std::size_t k) const { return biases_[k]; }

    // x: inputs x batch. Keeps the activations for backward().
    const Eigen::MatrixXf& forward(const Eigen::MatrixXf& x);
    // dy: dLoss/dOutput (outputs x batch) of the last forward(). Adds the
    // parameter gradients to the accumulators and returns dLoss/dInput.
    // (Descent on the inputs of a trained network, Mind Mappings' steps,
    // uses MlpInference instead.)
    Eigen::MatrixXf backward(const Eigen::MatrixXf& dy);
    // Gradient step with the accumulated gradients (scaled by `scale`, e.g.
    // 1/batch), then clears them.
    void step(float learningRate, float momentum, float scale = 1.0f);
    void clearGradients();

    // Binary, versioned; load() throws std::runtime_error on a bad stream.
    void save(std::ostream& out) const;
    static Mlp load(std::istream& in);

  private:
    std::vector<int> widths_;
    std::vector<Eigen::MatrixXf> weights_, weightGrads_, weightVelocity_;
    std::vector<Eigen::VectorXf> biases_, biasGrads_, biasVelocity_;
    std::vector<Eigen::MatrixXf> activations_; // input, then each layer's output
};

// Huber loss (delta 1) of predictions against targets, averaged over all
// entries; writes dLoss/dPrediction into grad.
float huberLoss(const Eigen::MatrixXf& prediction, const Eigen::MatrixXf& target,
                Eigen::MatrixXf& grad);

// Per-feature mean and standard deviation (z-scoring), fitted on columns.
struct Standardizer {
    Eigen::VectorXf mean, stddev;
    void fit(const Eigen::MatrixXf& data);
    Eigen::MatrixXf apply(const Eigen::MatrixXf& data) const;
    Eigen::MatrixXf invert(const Eigen::MatrixXf& data) const;
    void save(std::ostream& out) const;
    static Standardizer load(std::istream& in);
};

} // namespace mw
