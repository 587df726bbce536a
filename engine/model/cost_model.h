#pragma once
// The analytical cost model. It follows Timeloop v0.4's semantics for dense
// tensor algebra and reproduces its reference outputs; see cost_model.cpp for
// the rules. evaluate() performs no heap allocation and no string work.
#include "model/evaluation.h"

namespace mw {

struct Problem;
struct Architecture;
struct Mapping;

void evaluate(const Problem& p, const Architecture& a, const Mapping& m, Evaluation& out);
Evaluation evaluate(const Problem& p, const Architecture& a, const Mapping& m);

// Legality only (factor products, orders, fan-outs, capacities), without the
// costs: what a mapper checks before it spends an evaluation. `scratch` receives
// the violations.
bool isLegal(const Problem& p, const Architecture& a, const Mapping& m, Evaluation& scratch);

} // namespace mw
