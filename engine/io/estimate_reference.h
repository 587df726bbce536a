#pragma once
// The estimator against a Timeloop case's own tables: every energy its ERT
// and every area its ART gives for a storage level or the MACs, beside what
// the estimator makes of the same component from the case's attributes
// alone (`mapwright-cli estimate --reference`, and its test).
#include "io/timeloop/timeloop.h"

#include <string>
#include <vector>

namespace mw {

struct EstimateComparison {
    std::string component; // level or compute name
    std::string action;    // read, write, update, leak, compute or area
    double ours = 0.0;     // the estimator's
    double theirs = 0.0;   // the table's (Accelergy's, for the tutorial cases)
    std::string basis;     // how ours was priced
    // ours / theirs; 1 when both are 0, infinite when only theirs is 0.
    double ratio() const;
};

// The case's files (input, ERT, ART, ...) as importTimeloopTexts reads them;
// an ERT is required. Dummy levels (Accelergy's placeholders) are left out.
std::vector<EstimateComparison> compareWithTables(const std::vector<TimeloopText>& files);

} // namespace mw
