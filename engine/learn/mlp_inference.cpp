#include "learn/mlp_inference.h"

#include <algorithm>
#include <cstring>

namespace mw {

namespace {

// Eight floats; GCC and Clang lower it to two SSE registers where the
// function's target has no AVX.
using Float8 = float __attribute__((vector_size(32)));

inline Float8 load8(const float* p) {
    Float8 v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
inline void store8(float* p, Float8 v) {
    std::memcpy(p, &v, sizeof v);
}

// y[0..rows) += the columns cols[0..n) of W (rows x ?, column after column)
// times a[cols[k]], in the order listed. Four columns go together through
// each block of rows, each row's sum still adding them one by one, so the
// result does not depend on the blocking nor on the vector width.
[[gnu::always_inline]] inline void accumulateColumns(const float* __restrict W, int rows,
                                                     const int* cols, int n,
                                                     const float* __restrict a,
                                                     float* __restrict y) {
    const auto stride = std::size_t(rows);
    int k = 0;
    for (; k + 4 <= n; k += 4) {
        const float* w0 = W + stride * std::size_t(cols[k]);
        const float* w1 = W + stride * std::size_t(cols[k + 1]);
        const float* w2 = W + stride * std::size_t(cols[k + 2]);
        const float* w3 = W + stride * std::size_t(cols[k + 3]);
        const float a0 = a[cols[k]], a1 = a[cols[k + 1]], a2 = a[cols[k + 2]], a3 = a[cols[k + 3]];
        int i = 0;
        for (; i + 8 <= rows; i += 8) {
            Float8 acc = load8(y + i);
            acc = acc + load8(w0 + i) * a0;
            acc = acc + load8(w1 + i) * a1;
            acc = acc + load8(w2 + i) * a2;
            acc = acc + load8(w3 + i) * a3;
            store8(y + i, acc);
        }
        for (; i < rows; ++i) {
            float acc = y[i];
            acc = acc + w0[i] * a0;
            acc = acc + w1[i] * a1;
            acc = acc + w2[i] * a2;
            acc = acc + w3[i] * a3;
            y[i] = acc;
        }
    }
    for (; k < n; ++k) {
        const float* w = W + stride * std::size_t(cols[k]);
        const float ak = a[cols[k]];
        int i = 0;
        for (; i + 8 <= rows; i += 8)
            store8(y + i, load8(y + i) + load8(w + i) * ak);
        for (; i < rows; ++i)
            y[i] = y[i] + w[i] * ak;
    }
}

void accumulateColumnsPortable(const float* W, int rows, const int* cols, int n, const float* a,
                               float* y) {
    accumulateColumns(W, rows, cols, n, a, y);
}

#if defined(__x86_64__) || defined(__i386__)
[[gnu::target("avx2")]] void accumulateColumnsAvx2(const float* W, int rows, const int* cols, int n,
                                                   const float* a, float* y) {
    accumulateColumns(W, rows, cols, n, a, y);
}
bool hasAvx2() {
    return __builtin_cpu_supports("avx2");
}
#else
constexpr auto accumulateColumnsAvx2 = accumulateColumnsPortable;
bool hasAvx2() {
    return false;
}
#endif

} // namespace

MlpInference::MlpInference(const Mlp& net, Kernels kernels) {
    const std::vector<int>& widths = net.widths();
    for (std::size_t k = 0; k + 1 < widths.size(); ++k) {
        Layer layer;
        layer.in = widths[k];
        layer.out = widths[k + 1];
        const Eigen::MatrixXf& w = net.weights(k);
        layer.weights.assign(w.data(), w.data() + w.size());
        const Eigen::MatrixXf t = w.transpose();
        layer.transposed.assign(t.data(), t.data() + t.size());
        layer.bias.assign(net.biases(k).data(), net.biases(k).data() + layer.out);
        layers_.push_back(std::move(layer));
    }
    activations_.resize(layers_.size());
    int widest = 0;
    for (std::size_t k = 0; k < layers_.size(); ++k) {
        activations_[k].assign(std::size_t(layers_[k].out), 0.0f);
        widest = std::max({widest, layers_[k].in, layers_[k].out});
    }
    delta_.assign(std::size_t(widest), 0.0f);
    next_.assign(std::size_t(widest), 0.0f);
    live_.assign(std::size_t(widest), 0);
    avx2_ = kernels == Kernels::Best && hasAvx2();
}

const float* MlpInference::forward(const float* x) {
    const auto product = avx2_ ? accumulateColumnsAvx2 : accumulateColumnsPortable;
    const float* input = x;
    for (std::size_t k = 0; k < layers_.size(); ++k) {
        const Layer& layer = layers_[k];
        int n = 0; // without a branch: a ReLU's zeros come as coin tosses
        for (int j = 0; j < layer.in; ++j) {
            live_[std::size_t(n)] = j;
            n += input[j] != 0.0f;
        }
        float* y = activations_[k].data();
        std::copy(layer.bias.begin(), layer.bias.end(), y);
        product(layer.weights.data(), layer.out, live_.data(), n, input, y);
        if (k + 1 < layers_.size())
            for (int i = 0; i < layer.out; ++i)
                y[i] = std::max(y[i], 0.0f);
        input = y;
    }
    return activations_.back().data();
}

void MlpInference::inputGradient(const float* dy, float* dx) {
    const auto product = avx2_ ? accumulateColumnsAvx2 : accumulateColumnsPortable;
    std::copy(dy, dy + outputs(), delta_.begin());
    for (std::size_t k = layers_.size(); k-- > 0;) {
        const Layer& layer = layers_[k];
        int n = 0;
        const bool hidden = k + 1 < layers_.size();
        for (int i = 0; i < layer.out; ++i) {
            // Through a hidden layer's ReLU only where the unit was active.
            float& d = delta_[std::size_t(i)];
            d = hidden && !(activations_[k][std::size_t(i)] > 0.0f) ? 0.0f : d;
            live_[std::size_t(n)] = i;
            n += d != 0.0f;
        }
        float* out = k == 0 ? dx : next_.data();
        std::fill(out, out + layer.in, 0.0f);
        product(layer.transposed.data(), layer.in, live_.data(), n, delta_.data(), out);
        if (k > 0)
            std::copy(next_.begin(), next_.begin() + layer.in, delta_.begin());
    }
}

} // namespace mw
