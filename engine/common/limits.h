#pragma once
// Fixed capacities of the engine's value types. They keep Mapping and Evaluation
// trivially copyable and let the cost model run without touching the heap.
#include <cstddef>

namespace mw {

inline constexpr int kMaxDims = 10;   // conv2d uses 8 (N G C M P Q R S)
inline constexpr int kMaxTensors = 4; // MTTKRP has 4 data spaces
inline constexpr int kMaxRanks = 6;   // coordinates per tensor
inline constexpr int kMaxTerms = 3;   // dimension terms per coordinate (P*stride + R*dilation)
inline constexpr int kMaxLevels = 12; // storage levels, outermost (DRAM) first
inline constexpr int kMaxViolations = 32;

} // namespace mw
