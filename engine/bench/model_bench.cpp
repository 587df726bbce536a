#include "bench/model_bench.h"

#include "arch/architecture.h"
#include "common/error.h"
#include "mapspace/mapspace.h"
#include "model/cost_model.h"
#include "workload/presets.h"

#include <algorithm>
#include <chrono>
#include <unordered_set>

namespace mw {

namespace {
// Representative 7-dimension conv layers (ResNet/VGG shapes).
std::vector<Problem> benchLayers() {
    return {
        conv2dProblem("conv3x3_128", 1, 1, 128, 128, 28, 28, 3, 3),
        conv2dProblem("conv3x3_64", 1, 1, 64, 64, 56, 56, 3, 3),
        conv2dProblem("conv1x1_256_64", 1, 1, 256, 64, 56, 56, 1, 1),
        conv2dProblem("conv7x7_s2", 1, 1, 3, 64, 112, 112, 7, 7, 2, 2),
        conv2dProblem("conv3x3_512", 1, 1, 512, 512, 7, 7, 3, 3),
    };
}

// Asks for the levels of m that an evaluation reads. A searcher evaluates a
// mapping it has just built, which is in the cache; ten thousand mappings are
// not, and without this the benchmark would time the memory, not the model
// (on this project's VM: 1.19 against 0.88 us per evaluation). The size is
// the architecture's, not m.numLevels: reading that field is itself a miss
// the loop waits for (perf: 6 % of the run on that one load).
void prefetchMapping(const Mapping& m, int numLevels) {
    const char* p = reinterpret_cast<const char*>(&m);
    const std::size_t bytes = sizeof(LevelMapping) * std::size_t(numLevels);
    for (std::size_t k = 0; k < bytes; k += 64)
        __builtin_prefetch(p + k);
    __builtin_prefetch(&m.numLevels);
}
} // namespace

ModelBench::ModelBench(const Architecture& arch, int mappingsPerLayer,
                       const std::atomic<bool>* cancel)
    : arch_(&arch), cancel_(cancel), layers_(benchLayers()), mappingsPerLayer_(mappingsPerLayer) {
    Rng rng(12345);
    Evaluation scratch;
    items_.reserve(layers_.size() * std::size_t(mappingsPerLayer));
    models_.reserve(layers_.size());
    for (const Problem& layer : layers_) // (layers_ no longer changes: the models refer to it)
        models_.emplace_back(layer, arch);
    for (std::size_t l = 0; l < layers_.size(); ++l) {
        const MapSpace space(layers_[l], arch);
        std::unordered_set<std::uint64_t> seen;
        // Distinct: a repeat would be a mapping the predictor has seen. (The
        // spaces hold 10^20 and more; the bound only guards small ones.)
        for (int tries = 0; int(seen.size()) < mappingsPerLayer; ++tries) {
            if (cancelled())
                return;
            Mapping m;
            if (tries > 4 * mappingsPerLayer || !space.sampleLegal(rng, m, scratch, 200000))
                throw InputError("bench model", "no " + std::to_string(mappingsPerLayer) +
                                                    " distinct legal mappings found for layer " +
                                                    layers_[l].name + " on architecture '" +
                                                    arch.name + "'");
            if (seen.insert(space.hash(m)).second)
                items_.push_back({int(l), m});
        }
    }
    for (const Item& it : items_)
        all_.push_back(&it);
    for (std::size_t i = 0; i < items_.size(); ++i)
        if (int(i) % mappingsPerLayer < kRepeatedPerLayer)
            repeated_.push_back(&items_[i]);
}

double ModelBench::timePasses(const std::vector<const Item*>& work, double seconds) {
    using clock = std::chrono::steady_clock;
    Evaluation e;
    long long n = 0;
    const auto start = clock::now();
    double elapsed = 0.0;
    const std::size_t count = work.size();
    const int levels = arch_->numLevels();
    do {
        for (std::size_t i = 0; i < count; ++i) {
            if ((i & 1023) == 0 && cancelled())
                return n > 0 ? double(n) / elapsed : 0.0;
            if (i + 2 < count)
                prefetchMapping(work[i + 2]->mapping, levels);
            const Item& it = *work[i];
            models_[std::size_t(it.layer)].evaluate(it.mapping, e);
            checksum_ += e.edp;
        }
        n += static_cast<long long>(count);
        elapsed = std::chrono::duration<double>(clock::now() - start).count();
    } while (elapsed < seconds);
    lastRunEvaluations_ = n;
    return double(n) / elapsed;
}

double ModelBench::rate(double seconds) {
    return timePasses(all_, seconds);
}

double ModelBench::repeatedSetRate(double seconds) {
    return timePasses(repeated_, seconds);
}

ModelBenchResult benchModel(const Architecture& arch, int runs, double secondsPerRun,
                            const std::atomic<bool>* cancel) {
    ModelBench bench(arch, ModelBench::kMappingsPerLayer, cancel);
    ModelBenchResult r;
    r.layers = bench.layers();
    r.mappingsPerLayer = bench.mappingsPerLayer();
    std::vector<double> rates;
    for (int run = 0; run < runs && !bench.cancelled(); ++run) {
        const double rate = bench.rate(secondsPerRun);
        if (bench.cancelled())
            break; // an unfinished run is no measurement
        rates.push_back(rate);
        r.evaluationsPerRun = bench.lastRunEvaluations();
    }
    r.runs = static_cast<int>(rates.size());
    r.cancelled = bench.cancelled();
    if (rates.empty())
        return r;
    std::sort(rates.begin(), rates.end());
    r.evaluationsPerSecond = rates[rates.size() / 2];
    r.minPerSecond = rates.front();
    r.maxPerSecond = rates.back();
    if (!bench.cancelled())
        r.repeatedSetPerSecond = bench.repeatedSetRate(secondsPerRun);
    r.checksum = bench.checksum();
    return r;
}

} // namespace mw
