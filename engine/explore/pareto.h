#pragma once
// Pareto fronts of a sweep's points over two or three of its figures, all
// minimized: a point is on the front when no other point is at least as good
// in every figure and better in one.
#include "explore/sweep_run.h"

#include <string>
#include <vector>

namespace mw {

enum class SweepMetric { Energy, Cycles, Edp, Area };
const char* toString(SweepMetric m); // "energy", "cycles", "edp", "area"
// In the units reports show: mJ, cycles, J x cycles, mm^2.
double metricValue(const PointRecord& r, SweepMetric m);
// "energy,cycles[,area]": two or three distinct metrics; InputError naming `where`.
std::vector<SweepMetric> parseSweepMetrics(const std::string& text, const std::string& where);

// The indices (into `points`) of the valid points on the front, sorted by the
// first metric.
std::vector<std::size_t> paretoFront(const std::vector<PointRecord>& points,
                                     const std::vector<SweepMetric>& metrics);

} // namespace mw
