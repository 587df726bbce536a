#pragma once
// Interop with Timeloop v0.4. Reading: any number of YAML files merged by
// top-level key, as timeloop-model and timeloop-mapper read them: the files
// users write (architecture with subtree/local and name[a..b] ranges,
// problem, mapping, architecture_constraints/mapspace_constraints, mapper),
// the front end's processed input.yaml, an ERT.yaml and an ART.yaml. Energies
// and areas the tables leave out come from the estimator. Writing: the files
// timeloop-model and timeloop-mapper need, ERT and ART included.
#include "arch/architecture.h"
#include "io/json_io.h"
#include "mapping/mapping.h"
#include "workload/problem.h"

#include <array>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mw {

// One file's name (it labels errors) and text; for a rendered template, the
// files it includes (rendered too, by the path its include nodes name).
struct TimeloopText {
    std::string name;
    std::string text;
    std::shared_ptr<const std::map<std::string, std::string>> included = nullptr;
};

// The mapper section, as settings for our searchers.
struct TimeloopMapper {
    std::string algorithm = "random_pruned"; // Timeloop's name
    std::string searcher = "random-pruned";  // ours
    std::string objective = "edp";           // ours, from the first optimization metric
    std::vector<std::string> metrics;        // Timeloop's, as given
    std::int64_t victoryCondition = 500;
    std::int64_t timeout = 1000;
    std::int64_t maxPermutations = 16;
    std::int64_t searchSize = 0; // 0: none
    int threads = 0;             // 0: all
};

struct TimeloopCase {
    Architecture arch;
    Problem problem;
    Mapping mapping;
    bool hasMapping = false; // false when the input only held mapper constraints
    // Architecture and mapspace constraints as a mapwright.constraints file
    // (level and dimension names), checked against the problem.
    Json constraints;
    bool hasConstraints = false;
    TimeloopMapper mapper;
    bool hasMapper = false;
    // One line each: what was estimated, what Timeloop reads that we ignore.
    std::vector<std::string> notes;
};

// Whether a file is by its name one of Timeloop's: YAML (*.yaml, *.yml) or a
// Jinja2 template of it (*.jinja, *.jinja2, *.j2), in any case.
bool isTimeloopFileName(const std::string& path);

// Reads and merges the files (errors name the file, line and key). A Jinja2
// template among them (the front end's top.yaml.jinja2, or a layer file with
// {{include_text(...)}}) is rendered first with `templateData` (name, value):
// see timeloop/template.h.
TimeloopCase
importTimeloop(const std::vector<std::string>& files,
               const std::vector<std::pair<std::string, std::string>>& templateData = {});
TimeloopCase importTimeloopTexts(const std::vector<TimeloopText>& files);
// The files as read: templates rendered (with their includes), others as they are.
std::vector<TimeloopText>
readTimeloopFiles(const std::vector<std::string>& files,
                  const std::vector<std::pair<std::string, std::string>>& templateData = {});

// Only the problem of a Timeloop file (a layer shape as the exercises write
// it, a template rendered without parse data); errors as importTimeloop's.
Problem importTimeloopProblem(const std::string& file, std::vector<std::string>& notes);
// Only the mapping of a Timeloop file (mapping.yaml, the mapper's map.yaml),
// read against a problem and architecture of ours by its level names.
Mapping importTimeloopMapping(const std::string& file, const Problem& p, const Architecture& a,
                              std::vector<std::string>* notes = nullptr);
// Only the constraint sections of Timeloop files (architecture_constraints,
// mapspace_constraints), read against a problem and architecture of ours, as
// a mapwright.constraints file; errors as importTimeloopTexts gives them.
Json importTimeloopConstraints(const std::vector<TimeloopText>& files, const Problem& p,
                               const Architecture& a, std::vector<std::string>& notes);

// Timeloop's text for each file.
std::string timeloopArchitectureYaml(const Architecture& a);
std::string timeloopProblemYaml(const Problem& p);
std::string timeloopMappingYaml(const Problem& p, const Architecture& a, const Mapping& m);
std::string timeloopErtYaml(const Architecture& a);
std::string timeloopArtYaml(const Architecture& a);
// A mapwright.constraints file as architecture_constraints (empty text when
// it constrains nothing); errors name the constraint that Timeloop cannot say.
std::string timeloopConstraintsYaml(const Json& constraints, const Problem& p,
                                    const Architecture& a);
std::string timeloopMapperYaml(const TimeloopMapper& m);

// The files of a case, as exportTimeloop names them in its folder (a front
// end asks before it replaces them).
inline constexpr std::array<const char*, 7> kTimeloopCaseFiles = {
    "arch.yaml", "problem.yaml", "mapping.yaml",    "ERT.yaml",
    "ART.yaml",  "mapper.yaml",  "constraints.yaml"};

// Writes arch.yaml, problem.yaml, ERT.yaml, ART.yaml and (when given)
// mapping.yaml into dir, for timeloop-model; and mapper.yaml and (when
// given) constraints.yaml, for timeloop-mapper. Nothing is written when any
// part cannot be said in Timeloop's terms. A mapping.yaml or constraints.yaml
// already there that this case has none of is renamed NAME.yaml.earlier; the
// notes returned say so.
std::vector<std::string> exportTimeloop(const Problem& p, const Architecture& a, const Mapping* m,
                                        const std::string& dir, const Json* constraints = nullptr,
                                        const TimeloopMapper& mapper = {});

} // namespace mw
