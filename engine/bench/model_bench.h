#pragma once
// The cost-model benchmark behind `mapwright-cli bench model`: one thread,
// a fixed set of conv layers with legal mappings on an architecture, timed over
// several runs; the median rate is reported.
#include <string>
#include <vector>

namespace mw {

struct Architecture;

struct ModelBenchResult {
    double evaluationsPerSecond = 0.0; // median over runs
    double minPerSecond = 0.0;
    double maxPerSecond = 0.0;
    long long evaluationsPerRun = 0;
    int runs = 0;
    int layers = 0;
    int mappingsPerLayer = 0;
    double checksum = 0.0; // keeps the work observable
};

ModelBenchResult benchModel(const Architecture& arch, int runs = 7, double secondsPerRun = 0.4);

} // namespace mw
