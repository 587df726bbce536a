#pragma once
// Random mappings: each prime factor of each dimension goes to a random slot
// (a level's temporal loop, or its X or Y fan-out where the level has one),
// loop orders are shuffled, and non-outermost levels keep a random subset of
// tensors. The result may still be illegal (capacity); sampleLegalMapping
// retries until the cost model accepts one.
#include "mapping/mapping.h"

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

namespace mw {

struct Problem;
struct Architecture;

std::vector<std::int64_t> primeFactors(std::int64_t n);

Mapping sampleMapping(const Problem& p, const Architecture& a, std::mt19937_64& rng);

// Up to maxTries samples; nullopt when none was legal.
std::optional<Mapping> sampleLegalMapping(const Problem& p, const Architecture& a,
                                          std::mt19937_64& rng, int maxTries = 10000);

} // namespace mw
