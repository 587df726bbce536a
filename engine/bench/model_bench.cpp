#include "bench/model_bench.h"

#include "arch/architecture.h"
#include "common/error.h"
#include "mapspace/mapspace.h"
#include "model/cost_model.h"
#include "workload/presets.h"

#include <algorithm>
#include <chrono>

namespace mw {

ModelBenchResult benchModel(const Architecture& arch, int runs, double secondsPerRun) {
    // Representative 7-dimension conv layers (ResNet/VGG shapes).
    const std::vector<Problem> layers = {
        conv2dProblem("conv3x3_128", 1, 1, 128, 128, 28, 28, 3, 3),
        conv2dProblem("conv3x3_64", 1, 1, 64, 64, 56, 56, 3, 3),
        conv2dProblem("conv1x1_256_64", 1, 1, 256, 64, 56, 56, 1, 1),
        conv2dProblem("conv7x7_s2", 1, 1, 3, 64, 112, 112, 7, 7, 2, 2),
        conv2dProblem("conv3x3_512", 1, 1, 512, 512, 7, 7, 3, 3),
    };
    constexpr int kMappingsPerLayer = 64;
    Rng rng(12345);
    std::vector<std::pair<const Problem*, Mapping>> work;
    Evaluation scratch;
    for (const auto& p : layers) {
        const MapSpace space(p, arch);
        for (int i = 0; i < kMappingsPerLayer; ++i) {
            Mapping m;
            if (!space.sampleLegal(rng, m, scratch, 200000))
                throw InputError("bench model", "no legal mapping found for layer " + p.name +
                                                    " on architecture '" + arch.name + "'");
            work.emplace_back(&p, m);
        }
    }

    ModelBenchResult r;
    r.layers = static_cast<int>(layers.size());
    r.mappingsPerLayer = kMappingsPerLayer;
    r.runs = runs;
    std::vector<double> rates;
    Evaluation e;
    using clock = std::chrono::steady_clock;
    for (int run = 0; run < runs; ++run) {
        long long n = 0;
        const auto start = clock::now();
        double elapsed = 0.0;
        do {
            for (const auto& [p, m] : work) {
                evaluate(*p, arch, m, e);
                r.checksum += e.edp;
            }
            n += static_cast<long long>(work.size());
            elapsed = std::chrono::duration<double>(clock::now() - start).count();
        } while (elapsed < secondsPerRun);
        rates.push_back(double(n) / elapsed);
        r.evaluationsPerRun = n;
    }
    std::sort(rates.begin(), rates.end());
    r.evaluationsPerSecond = rates[rates.size() / 2];
    r.minPerSecond = rates.front();
    r.maxPerSecond = rates.back();
    return r;
}

} // namespace mw
