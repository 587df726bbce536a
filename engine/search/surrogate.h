#pragma once
// Mind Mappings' surrogate (Hegde et al., ASPLOS'21, Sec. 4-5): an MLP that
// predicts a mapping's meta-statistics (energy per level, utilization, total
// energy and cycles, each relative to the paper's "algorithmic minimum") from the
// problem shape and a continuous encoding of the mapping. Trained offline on
// random legal mappings of problems of one family (same dimensions and
// tensors, varied bounds) on one architecture, and cached on disk.
#include "learn/mlp.h"
#include "learn/mlp_inference.h"
#include "mapspace/mapspace.h"

#include <atomic>
#include <functional>
#include <string>

namespace mw {

// The continuous encoding of a mapping, laid out from a map space: log2 of
// every free factor slot per dimension, each temporal level's loop order as
// positions (0 outermost .. 1 innermost), and keep bits.
class MappingCodec {
  public:
    MappingCodec() = default;
    // The layout comes from the unconstrained map space of p on a, so it is the
    // same for every problem of p's family and every constrained space.
    MappingCodec(const Problem& p, const Architecture& a);
    int problemFeatures() const { return dims_; }
    int mappingFeatures() const { return mappingFeatures_; }
    int features() const { return dims_ + mappingFeatures_; }
    void encodeProblem(const Problem& p, float* out) const; // log2 of the bounds
    void encode(const Mapping& m, float* out) const;        // the mapping part
    // The projection: the nearest mapping whose factors, orders and keeps
    // match the continuous vector (greedy per prime, argsort per level,
    // threshold per keep bit), repaired to a legal one when it is not.
    // `space` is the (possibly constrained) space to project into.
    bool project(const float* x, const MapSpace& space, Mapping& out, Rng& rng,
                 Evaluation& scratch) const;
    std::string signature() const; // the layout, to check a loaded surrogate

  private:
    int dims_ = 0;
    int mappingFeatures_ = 0;
    std::vector<std::vector<MapSpace::Slot>> slots_; // per dimension, unconstrained
    std::vector<int> slotOffset_;                    // per dimension: first slot feature
    std::vector<int> orderLevels_;                   // levels with temporal loops
    int orderOffset_ = 0;
    std::vector<std::pair<int, int>> keepBits_; // (level, tensor) free keep choices
    int keepOffset_ = 0;
};

struct SurrogateOptions {
    int samples = 100'000;      // training mappings (legal, from many shapes)
    int mappingsPerShape = 500; // as the paper's data generator
    int epochs = 20;
    int batch = 128;
    float learningRate = 1e-2f; // SGD, momentum 0.9, x0.1 every epochs/4 (paper: every 25 of 100)
    // The paper's nine layers [64, 256, 1024, 2048, 2048, 1024, 256, 64, out]
    // with widths divided by widthDivisor; measured here, plain SGD does not
    // train that depth within tens of epochs (held-out rank correlation ~0),
    // so the default is two hidden layers of 256 (rank correlation ~0.86 on
    // 50,000 samples in under a minute on 2 cores).
    bool paperLayers = false;
    int widthDivisor = 4;
    std::vector<int> hidden = {256, 256};
    int threads = 1; // data generation
    std::uint64_t seed = 1;
};

struct SurrogateReport {
    int samples = 0;
    // The target problem's own training mappings (its shape is the first
    // one generated, whatever stops training): how many were evaluated, and
    // the best few by true EDP, best first.
    int targetEvaluations = 0;
    std::vector<Mapping> targetBest;
    double generateSeconds = 0.0;
    double trainSeconds = 0.0;
    double testLoss = 0.0;
    double rankCorrelation = 0.0; // Spearman, predicted vs true EDP, held-out 10 %
    std::size_t parameters = 0;
};

// What Mind Mappings' gradient descent follows on the surrogate: the
// predicted log(EDP / algorithmic minimum), or, as the paper's reference code
// does (its loss is out.sum()), the sum of the network's standardised
// outputs, utilization included.
enum class SurrogateDescent { LogEdp, OutputSum };

class Surrogate {
  public:
    // Outputs, in order: energy of each non-dummy storage level, utilization,
    // energy, cycles; all but utilization as log(value / algorithmic minimum)
    // (every word once at every level; surrogate.cpp).
    static int outputCount(const Architecture& a);

    // Trains on problems of p's family on a's (unconstrained) map space.
    // progress(phase, fraction) tells the phase ("training data", "training
    // epoch 3/20") and the fraction of all training done; returning false
    // cancels (throws std::runtime_error, with `report` filled so far).
    using Progress = std::function<bool(const std::string& phase, double fraction)>;
    static Surrogate train(const Problem& p, const Architecture& a, const SurrogateOptions& o,
                           SurrogateReport& report, const Progress& progress = {});

    // Predicted log(EDP / EDP algorithmic minimum) of x (problem + mapping features,
    // raw); when grad is given, d/dx (raw units) of what `descent` follows.
    double predict(const float* x, float* grad = nullptr,
                   SurrogateDescent descent = SurrogateDescent::LogEdp);
    // The value whose gradient predict() gives for `descent`.
    double descentObjective(const float* x, SurrogateDescent descent);
    const MappingCodec& codec() const { return codec_; }

    void save(const std::string& path) const;
    // Throws InputError naming the file when it is missing, not a surrogate,
    // made for another problem family or architecture, or stale: made with a
    // cost model that no longer gives the same costs (the file keeps the
    // fingerprint of a few fixed evaluations, checked again here).
    static Surrogate load(const std::string& path, const Problem& p, const Architecture& a);
    // Cache file for a problem family on an architecture.
    static std::string cachePath(const std::string& dir, const Problem& p, const Architecture& a);
    // The same file among the surrogates shipped with Mapwright
    // (resources/surrogates; $MAPWRIGHT_BUNDLED_MODELS overrides), whether
    // or not it exists; empty when no such folder is known.
    static std::string bundledPath(const Problem& p, const Architecture& a);

  private:
    MappingCodec codec_;
    Mlp net_;
    Standardizer in_, out_;
    int energyOutput_ = 0, cyclesOutput_ = 0;
    std::uint64_t fingerprint_ = 0;             // of the cost model it was trained on
    MlpInference inference_;                    // net_, frozen, for predict()
    std::vector<float> standardized_, dOutput_; // predict()'s scratch
};

// Training set statistics shared with tests: Spearman rank correlation.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

} // namespace mw
