#pragma once
// Interop with Timeloop v0.4: read its processed input (architecture, problem,
// mapping) with its energy reference table, and write YAML that timeloop-model reads.
#include "arch/architecture.h"
#include "mapping/mapping.h"
#include "workload/problem.h"

#include <string>

namespace mw {

struct TimeloopCase {
    Architecture arch;
    Problem problem;
    Mapping mapping;
    bool hasMapping = false; // false when the input only held mapper constraints
};

// inputYaml: Timeloop's input.yaml (architecture, problem, optionally mapping).
// ertYaml: its ERT.yaml. mappingYaml (optional): a mapping file such as the
// mapper's map.yaml, which then replaces any mapping in inputYaml.
TimeloopCase importTimeloop(const std::string& inputYaml, const std::string& ertYaml,
                            const std::string& mappingYaml = "");

// The same from texts already read; each name labels its errors. A mapping
// with an empty name is absent.
struct TimeloopText {
    std::string name;
    std::string text;
};
TimeloopCase importTimeloopTexts(const TimeloopText& input, const TimeloopText& ert,
                                 const TimeloopText& mapping = {});

// Timeloop's text for each file; exportTimeloop writes them into dir as
// arch.yaml, problem.yaml, mapping.yaml and ERT.yaml.
std::string timeloopArchitectureYaml(const Architecture& a);
std::string timeloopProblemYaml(const Problem& p);
std::string timeloopMappingYaml(const Problem& p, const Architecture& a, const Mapping& m);
std::string timeloopErtYaml(const Architecture& a);
void exportTimeloop(const Problem& p, const Architecture& a, const Mapping& m,
                    const std::string& dir);

} // namespace mw
