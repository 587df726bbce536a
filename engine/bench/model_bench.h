#pragma once
// The cost-model benchmark behind `mapwright-cli bench model`: one thread,
// five conv layers with distinct legal mappings on an architecture, each
// mapping evaluated once per pass, timed over several runs; the median rate is
// reported.
//
// Distinct mappings, because no search evaluates a mapping twice: a loop over a
// few hundred mappings, evaluated again and again, is learned by the branch
// predictor and runs far faster than the model runs on mappings it has not
// seen. That rate is still reported (the repeated set), for comparison.
#include "mapping/mapping.h"
#include "model/cost_model.h"
#include "workload/problem.h"

#include <atomic>
#include <vector>

namespace mw {

struct Architecture;

struct ModelBenchResult {
    double evaluationsPerSecond = 0.0; // median over runs, distinct mappings
    double minPerSecond = 0.0;
    double maxPerSecond = 0.0;
    // The same model on the first kRepeatedPerLayer mappings of each layer,
    // evaluated over and over (what this benchmark measured before).
    double repeatedSetPerSecond = 0.0;
    long long evaluationsPerRun = 0;
    int runs = 0;
    int layers = 0;
    int mappingsPerLayer = 0;
    double checksum = 0.0;  // keeps the work observable
    bool cancelled = false; // runs counts the runs finished before it
};

class ModelBench {
  public:
    static constexpr int kMappingsPerLayer = 2000; // too many for a predictor to learn
    static constexpr int kRepeatedPerLayer = 64;

    // Samples the mappings (a fixed seed, so every run times the same set);
    // throws InputError when a layer has no legal mapping on the architecture.
    // The architecture must outlive the benchmark. A raised `cancel` stops
    // sampling and timing within a few milliseconds (cancelled() then says so).
    explicit ModelBench(const Architecture& arch, int mappingsPerLayer = kMappingsPerLayer,
                        const std::atomic<bool>* cancel = nullptr);

    // Evaluations per second over whole passes, for at least `seconds`.
    double rate(double seconds);
    bool cancelled() const { return cancel_ && cancel_->load(std::memory_order_relaxed); }
    // The same over the repeated set.
    double repeatedSetRate(double seconds);

    int layers() const { return static_cast<int>(layers_.size()); }
    int mappingsPerLayer() const { return mappingsPerLayer_; }
    // The benchmark's work, layer by layer: problem index and mapping.
    struct Item {
        int layer;
        Mapping mapping;
    };
    const std::vector<Item>& items() const { return items_; }
    const Problem& layer(int i) const { return layers_[static_cast<std::size_t>(i)]; }
    double checksum() const { return checksum_; }
    long long lastRunEvaluations() const { return lastRunEvaluations_; }

  private:
    double timePasses(const std::vector<const Item*>& work, double seconds);

    const Architecture* arch_;
    const std::atomic<bool>* cancel_;
    std::vector<Problem> layers_;
    std::vector<CostModel> models_; // one per layer
    int mappingsPerLayer_;
    std::vector<Item> items_;
    std::vector<const Item*> all_, repeated_;
    double checksum_ = 0.0;
    long long lastRunEvaluations_ = 0;
};

ModelBenchResult benchModel(const Architecture& arch, int runs = 7, double secondsPerRun = 0.4,
                            const std::atomic<bool>* cancel = nullptr);

} // namespace mw
