#include "learn/mlp.h"

#include <cmath>
#include <cstdint>
#include <istream>
#include <ostream>
#include <stdexcept>

namespace mw {

namespace {

constexpr std::uint32_t kMagic = 0x4d4c5031; // "MLP1"

template <typename T> void put(std::ostream& out, const T& v) {
    out.write(reinterpret_cast<const char*>(&v), sizeof v);
}
template <typename T> T get(std::istream& in) {
    T v{};
    if (!in.read(reinterpret_cast<char*>(&v), sizeof v))
        throw std::runtime_error("truncated model file");
    return v;
}
void putFloats(std::ostream& out, const float* p, std::size_t n) {
    out.write(reinterpret_cast<const char*>(p), std::streamsize(n * sizeof(float)));
}
void getFloats(std::istream& in, float* p, std::size_t n) {
    if (!in.read(reinterpret_cast<char*>(p), std::streamsize(n * sizeof(float))))
        throw std::runtime_error("truncated model file");
}

} // namespace

Mlp::Mlp(const std::vector<int>& widths, Rng& rng) : widths_(widths) {
    if (widths.size() < 2)
        throw std::invalid_argument("an MLP needs an input and an output width");
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (std::size_t i = 0; i + 1 < widths.size(); ++i) {
        const int in = widths[i], out = widths[i + 1];
        const float scale = std::sqrt(2.0f / float(in)); // He initialisation for ReLU
        Eigen::MatrixXf w(out, in);
        for (int r = 0; r < out; ++r)
            for (int c = 0; c < in; ++c)
                w(r, c) = normal(rng) * scale;
        weights_.push_back(w);
        biases_.push_back(Eigen::VectorXf::Zero(out));
    }
    clearGradients();
    for (std::size_t i = 0; i < weights_.size(); ++i) {
        weightVelocity_.push_back(Eigen::MatrixXf::Zero(weights_[i].rows(), weights_[i].cols()));
        biasVelocity_.push_back(Eigen::VectorXf::Zero(biases_[i].size()));
    }
}

std::size_t Mlp::parameterCount() const {
    std::size_t n = 0;
    for (std::size_t i = 0; i < weights_.size(); ++i)
        n += std::size_t(weights_[i].size() + biases_[i].size());
    return n;
}

const Eigen::MatrixXf& Mlp::forward(const Eigen::MatrixXf& x) {
    activations_.resize(weights_.size() + 1);
    activations_[0] = x;
    for (std::size_t i = 0; i < weights_.size(); ++i) {
        activations_[i + 1].noalias() = weights_[i] * activations_[i];
        activations_[i + 1].colwise() += biases_[i];
        if (i + 1 < weights_.size())
            activations_[i + 1] = activations_[i + 1].cwiseMax(0.0f);
    }
    return activations_.back();
}

Eigen::MatrixXf Mlp::backward(const Eigen::MatrixXf& dy) {
    Eigen::MatrixXf delta = dy;
    for (std::size_t k = weights_.size(); k-- > 0;) {
        if (k + 1 < weights_.size()) // ReLU: pass where the unit was active
            delta = delta.cwiseProduct((activations_[k + 1].array() > 0.0f).cast<float>().matrix());
        weightGrads_[k].noalias() += delta * activations_[k].transpose();
        biasGrads_[k] += delta.rowwise().sum();
        Eigen::MatrixXf next = weights_[k].transpose() * delta;
        delta.swap(next);
    }
    return delta;
}

void Mlp::step(float learningRate, float momentum, float scale) {
    for (std::size_t i = 0; i < weights_.size(); ++i) {
        weightVelocity_[i] = momentum * weightVelocity_[i] - learningRate * scale * weightGrads_[i];
        biasVelocity_[i] = momentum * biasVelocity_[i] - learningRate * scale * biasGrads_[i];
        weights_[i] += weightVelocity_[i];
        biases_[i] += biasVelocity_[i];
    }
    clearGradients();
}

void Mlp::clearGradients() {
    weightGrads_.resize(weights_.size());
    biasGrads_.resize(biases_.size());
    for (std::size_t i = 0; i < weights_.size(); ++i) {
        weightGrads_[i] = Eigen::MatrixXf::Zero(weights_[i].rows(), weights_[i].cols());
        biasGrads_[i] = Eigen::VectorXf::Zero(biases_[i].size());
    }
}

void Mlp::save(std::ostream& out) const {
    put(out, kMagic);
    put(out, std::uint32_t(widths_.size()));
    for (int w : widths_)
        put(out, std::int32_t(w));
    for (std::size_t i = 0; i < weights_.size(); ++i) {
        putFloats(out, weights_[i].data(), std::size_t(weights_[i].size()));
        putFloats(out, biases_[i].data(), std::size_t(biases_[i].size()));
    }
}

Mlp Mlp::load(std::istream& in) {
    if (get<std::uint32_t>(in) != kMagic)
        throw std::runtime_error("not a Mapwright MLP file");
    const auto n = get<std::uint32_t>(in);
    if (n < 2 || n > 64)
        throw std::runtime_error("bad layer count in model file");
    Mlp m;
    for (std::uint32_t i = 0; i < n; ++i) {
        const auto w = get<std::int32_t>(in);
        if (w < 1 || w > 1 << 16)
            throw std::runtime_error("bad layer width in model file");
        m.widths_.push_back(w);
    }
    for (std::size_t i = 0; i + 1 < m.widths_.size(); ++i) {
        Eigen::MatrixXf w(m.widths_[i + 1], m.widths_[i]);
        Eigen::VectorXf b(m.widths_[i + 1]);
        getFloats(in, w.data(), std::size_t(w.size()));
        getFloats(in, b.data(), std::size_t(b.size()));
        m.weights_.push_back(w);
        m.biases_.push_back(b);
        m.weightVelocity_.push_back(Eigen::MatrixXf::Zero(w.rows(), w.cols()));
        m.biasVelocity_.push_back(Eigen::VectorXf::Zero(b.size()));
    }
    m.clearGradients();
    return m;
}

float huberLoss(const Eigen::MatrixXf& prediction, const Eigen::MatrixXf& target,
                Eigen::MatrixXf& grad) {
    const Eigen::ArrayXXf diff = (prediction - target).array();
    const float n = float(diff.size());
    const Eigen::ArrayXXf absDiff = diff.abs();
    const Eigen::ArrayXXf quadratic = 0.5f * diff.square();
    const Eigen::ArrayXXf linear = absDiff - 0.5f;
    grad = (absDiff <= 1.0f).select(diff, diff.sign()).matrix() / n;
    return (absDiff <= 1.0f).select(quadratic, linear).sum() / n;
}

void Standardizer::fit(const Eigen::MatrixXf& data) {
    mean = data.rowwise().mean();
    const Eigen::MatrixXf centred = data.colwise() - mean;
    stddev =
        (centred.array().square().rowwise().sum() / float(std::max<Eigen::Index>(1, data.cols())))
            .sqrt()
            .matrix();
    // Constant features (e.g. a fixed factor) would divide by zero.
    for (Eigen::Index i = 0; i < stddev.size(); ++i)
        if (!(stddev[i] > 1e-6f))
            stddev[i] = 1.0f;
}

Eigen::MatrixXf Standardizer::apply(const Eigen::MatrixXf& data) const {
    return ((data.colwise() - mean).array().colwise() / stddev.array()).matrix();
}

Eigen::MatrixXf Standardizer::invert(const Eigen::MatrixXf& data) const {
    return ((data.array().colwise() * stddev.array()).matrix().colwise() + mean);
}

void Standardizer::save(std::ostream& out) const {
    put(out, std::uint32_t(mean.size()));
    putFloats(out, mean.data(), std::size_t(mean.size()));
    putFloats(out, stddev.data(), std::size_t(stddev.size()));
}

Standardizer Standardizer::load(std::istream& in) {
    const auto n = get<std::uint32_t>(in);
    if (n > 1 << 20)
        throw std::runtime_error("bad feature count in model file");
    Standardizer s;
    s.mean.resize(n);
    s.stddev.resize(n);
    getFloats(in, s.mean.data(), n);
    getFloats(in, s.stddev.data(), n);
    return s;
}

} // namespace mw
