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

} // namespace mw
