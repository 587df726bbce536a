// Reading a Timeloop case from its files, and writing one for Timeloop: the
// readers of each section are in timeloop_arch.cpp, timeloop_problem.cpp and
// timeloop_directives.cpp, the writers in timeloop_write.cpp.
#include "io/timeloop.h"

#include "io/timeloop_yaml.h"
#include "mapspace/mapspace.h"

#include <filesystem>

namespace mw {

namespace {

using timeloop_read::Spec;

// Constraints checked against the problem they came with: contradictions are
// errors here, not an empty search later; a space in which sampling finds no
// legal mapping (not a proof) is a note.
void checkSatisfiable(const Spec& spec, const Json& constraints, const Problem& p,
                      const Architecture& a, std::vector<std::string>& notes) {
    const Spec::Entry* source = spec.find(
        {"architecture_constraints", "arch_constraints", "mapspace_constraints", "mapspace"});
    const Spec::Entry* arch = spec.find({"architecture", "arch"});
    const std::string where = source ? source->file : arch ? arch->file : "Timeloop input";
    try {
        const MapSpace space(p, a, constraintsFromJson(constraints, p, a));
        const EmptySpace empty = whyNoLegalMapping(space);
        if (empty.proven)
            throw InputError(where + ": constraints", "contradictory constraints: " + empty.reason);
        if (!empty.reason.empty())
            notes.push_back("the constraints may leave no legal mapping: " + empty.reason);
    } catch (const InputError& e) {
        if (e.detail().find("contradictory") != std::string::npos)
            throw;
        throw InputError(where + ": constraints", "contradictory constraints: " + e.detail());
    }
}

} // namespace

Json importTimeloopConstraints(const std::vector<TimeloopText>& files, const Problem& p,
                               const Architecture& a, std::vector<std::string>& notes) {
    const Spec spec = timeloop_yaml::mergeFiles(files);
    try {
        bool constrained = false;
        const Json c = timeloop_read::readConstraints(spec, p, a, constrained, notes);
        if (!constrained)
            throw InputError(files.empty() ? std::string("Timeloop input") : files.front().name,
                             "constrains nothing; expected architecture_constraints or "
                             "mapspace_constraints with targets");
        checkSatisfiable(spec, c, p, a, notes);
        return c;
    } catch (const YAML::Exception& e) {
        throw InputError("Timeloop input", "unexpected YAML content (" + e.msg + ")");
    }
}

TimeloopCase importTimeloop(const std::vector<std::string>& files) {
    std::vector<TimeloopText> texts;
    for (const auto& f : files)
        texts.push_back({f, readTextFile(f)});
    return importTimeloopTexts(texts);
}

TimeloopCase importTimeloopTexts(const std::vector<TimeloopText>& files) {
    using namespace timeloop_read;
    using timeloop_yaml::given;
    const Spec spec = timeloop_yaml::mergeFiles(files);
    TimeloopCase c;
    for (const auto& [key, entry] : spec.keys) {
        if (key == "sparse_optimizations")
            throw InputError(timeloop_yaml::at(entry.file, entry.node) + ": sparse_optimizations",
                             "sparse optimizations are not modelled; expected a dense design");
        if (key == "compound_components")
            c.notes.push_back("compound component classes (" + entry.file +
                              ") are not read: the estimator prices components by class name");
        else if (key != "architecture" && key != "arch" && key != "problem" && key != "mapping" &&
                 key != "architecture_constraints" && key != "arch_constraints" &&
                 key != "mapspace_constraints" && key != "mapspace" && key != "mapper" &&
                 key != "ERT" && key != "ART" && key != "globals" && key != "variables" &&
                 key != "dumped_by_timeloop_front_end")
            c.notes.push_back("top-level key '" + key + "' (" + entry.file + ") ignored");
    }
    try {
        c.arch = readArchitecture(spec, c.notes);
        c.problem = readProblem(spec);
        c.mapping = makeTrivialMapping(c.problem, c.arch);
        if (const Spec::Entry* m = spec.find({"mapping"});
            m && given(m->node) && m->node.size() > 0) {
            c.mapping = readMapping(m->node, m->file, c.problem, c.arch);
            c.hasMapping = true;
        }
        bool constrained = false;
        const Json constraints = readConstraints(spec, c.problem, c.arch, constrained, c.notes);
        if (constrained) {
            checkSatisfiable(spec, constraints, c.problem, c.arch, c.notes);
            c.constraints = constraints;
            c.hasConstraints = true;
        }
        if (const Spec::Entry* m = spec.find({"mapper"})) {
            c.mapper = readMapper(*m, c.notes);
            c.hasMapper = true;
        }
    } catch (const YAML::Exception& e) {
        throw InputError("Timeloop input" + (e.mark.line >= 0
                                                 ? ":" + std::to_string(e.mark.line + 1)
                                                 : std::string()),
                         "unexpected YAML content (" + e.msg + ")");
    }
    return c;
}

void exportTimeloop(const Problem& p, const Architecture& a, const Mapping* m,
                    const std::string& dir, const Json* constraints, const TimeloopMapper& mapper) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec)
        throw InputError(dir, "cannot create the output directory (" + ec.message() + ")");
    const std::filesystem::path d(dir);
    // Everything is rendered before anything is written: a mapping or a
    // constraint Timeloop cannot say leaves no half-written case behind.
    const std::string arch = timeloopArchitectureYaml(a);
    const std::string problem = timeloopProblemYaml(p);
    const std::string mapping = m ? timeloopMappingYaml(p, a, *m) : "";
    const std::string ert = timeloopErtYaml(a);
    const std::string art = timeloopArtYaml(a);
    const std::string cons = constraints ? timeloopConstraintsYaml(*constraints, p, a) : "";
    const std::string mapperText = timeloopMapperYaml(mapper);
    writeTextFile((d / "arch.yaml").string(), arch);
    writeTextFile((d / "problem.yaml").string(), problem);
    if (m)
        writeTextFile((d / "mapping.yaml").string(), mapping);
    writeTextFile((d / "ERT.yaml").string(), ert);
    writeTextFile((d / "ART.yaml").string(), art);
    writeTextFile((d / "mapper.yaml").string(), mapperText);
    if (!cons.empty())
        writeTextFile((d / "constraints.yaml").string(), cons);
}

} // namespace mw
