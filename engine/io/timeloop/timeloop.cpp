// Reading a Timeloop case from its files, and writing one for Timeloop: the
// readers of each section are in arch.cpp (nodes.cpp turns the front end's
// node list into the tree Timeloop reads), problem.cpp and directives.cpp,
// the writers in write.cpp; templates are rendered by template.cpp.
#include "io/timeloop/timeloop.h"

#include "common/atomic_file.h"
#include "io/timeloop/template.h"
#include "io/timeloop/yaml.h"
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

namespace {

// f() on one file's spec, its errors located in that file where they name
// none: a YAML exception, or the spec's generic "Timeloop input" (a key
// missing from an empty file). Others name the file they are in (an
// included one too) and stay as they are.
template <typename F> auto inFile(const std::string& file, F&& f) {
    try {
        return f();
    } catch (const YAML::Exception& e) {
        throw InputError(file, "unexpected YAML content (" + e.msg + ")");
    } catch (const InputError& e) {
        const std::string generic = "Timeloop input";
        if (e.where().rfind(generic, 0) != 0)
            throw;
        throw InputError(file + e.where().substr(generic.size()), e.detail());
    }
}

} // namespace

Problem importTimeloopProblem(const std::string& file, std::vector<std::string>& notes) {
    return inFile(file, [&] {
        const Spec spec = timeloop_yaml::mergeFiles(readTimeloopFiles({file}));
        notes.insert(notes.end(), spec.notes.begin(), spec.notes.end());
        return timeloop_read::readProblem(spec, notes);
    });
}

Mapping importTimeloopMapping(const std::string& file, const Problem& p, const Architecture& a,
                              std::vector<std::string>* notes) {
    return inFile(file, [&] {
        const Spec spec = timeloop_yaml::mergeFiles(readTimeloopFiles({file}));
        if (notes)
            notes->insert(notes->end(), spec.notes.begin(), spec.notes.end());
        const Spec::Entry* m = spec.find({"mapping"});
        if (!m || !timeloop_yaml::given(m->node) || (!m->node.IsScalar() && m->node.size() == 0))
            throw InputError(file, "holds no mapping; expected mapping: a list of directives "
                                   "({target, type, factors, permutation})");
        return timeloop_read::readMapping(m->node, m->file, p, a);
    });
}

Json importTimeloopConstraints(const std::vector<TimeloopText>& files, const Problem& p,
                               const Architecture& a, std::vector<std::string>& notes) {
    const std::string file = files.size() == 1 ? files.front().name : "Timeloop input";
    return inFile(file, [&] {
        Spec spec = timeloop_yaml::mergeFiles(files);
        notes.insert(notes.end(), spec.notes.begin(), spec.notes.end());
        timeloop_read::expandNodeArchitecture(spec, notes, &p);
        bool constrained = false;
        const Json c = timeloop_read::readConstraints(spec, p, a, constrained, notes);
        if (!constrained)
            throw InputError(files.empty() ? std::string("Timeloop input") : files.front().name,
                             "constrains nothing; expected architecture_constraints or "
                             "mapspace_constraints with targets");
        checkSatisfiable(spec, c, p, a, notes);
        return c;
    });
}

std::vector<TimeloopText>
readTimeloopFiles(const std::vector<std::string>& files,
                  const std::vector<std::pair<std::string, std::string>>& templateData) {
    std::vector<TimeloopText> texts;
    std::vector<TemplateJob> jobs;
    std::vector<std::size_t> rendered; // which texts the jobs are for
    for (const auto& f : files) {
        texts.push_back({f, readTextFile(f), nullptr});
        if (isTemplateFile(f, texts.back().text)) {
            jobs.push_back({std::filesystem::absolute(f).string(), templateData});
            rendered.push_back(texts.size() - 1);
        }
    }
    const std::vector<RenderedTemplate> out = renderTemplates(jobs, files.front());
    for (std::size_t i = 0; i < out.size(); ++i) {
        TimeloopText& t = texts[rendered[i]];
        if (!out[i].error.empty())
            throw InputError(out[i].errorFile.empty() ? t.name : out[i].errorFile, out[i].error);
        t.text = out[i].files.at(out[i].top);
        t.included = std::make_shared<const std::map<std::string, std::string>>(out[i].files);
    }
    return texts;
}

bool isTimeloopFileName(const std::string& path) {
    const std::string ext = lowercase(std::filesystem::path(path).extension().string());
    return ext == ".yaml" || ext == ".yml" || ext == ".jinja" || ext == ".jinja2" || ext == ".j2";
}

TimeloopCase importTimeloop(const std::vector<std::string>& files,
                            const std::vector<std::pair<std::string, std::string>>& templateData) {
    if (files.empty())
        return importTimeloopTexts({});
    return importTimeloopTexts(readTimeloopFiles(files, templateData));
}

namespace {

// Sparse designs (Sparseloop's): refused, naming what makes them sparse.
void refuseSparse(const Spec& spec) {
    const std::string why = "sparsity is not modelled; expected a dense design";
    if (const Spec::Entry* s = spec.find({"sparse_optimizations"}))
        throw InputError(timeloop_yaml::at(s->file, s->node) + ": sparse_optimizations", why);
    const Spec::Entry* arch = spec.find({"architecture", "arch"});
    if (!arch)
        return;
    // Metadata storage (compressed formats) anywhere in the architecture.
    std::vector<YAML::Node> stack{arch->node};
    while (!stack.empty()) {
        const YAML::Node n = stack.back();
        stack.pop_back();
        if (n.IsSequence()) {
            for (const auto& v : n)
                stack.push_back(v);
        } else if (n.IsMap()) {
            for (const auto& kv : n) {
                const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "";
                const bool metadataClass =
                    (key == "class" || key == "subclass") && kv.second.IsScalar() &&
                    lowercase(kv.second.Scalar()).find("metadata") != std::string::npos;
                if (key.rfind("metadata_", 0) == 0 || metadataClass)
                    throw InputError(timeloop_yaml::at(arch->file, kv.first) + ": architecture." +
                                         key,
                                     "describes metadata storage: " + why);
                stack.push_back(kv.second);
            }
        }
    }
}

} // namespace

TimeloopCase importTimeloopTexts(const std::vector<TimeloopText>& files) {
    using namespace timeloop_read;
    using timeloop_yaml::given;
    Spec spec = timeloop_yaml::mergeFiles(files);
    if (spec.keys.empty()) { // (empty files, or only comments: named, not "Timeloop input")
        std::string names;
        for (const TimeloopText& f : files)
            names += (names.empty() ? "" : ", ") + f.name;
        throw InputError(names, std::string(files.size() == 1 ? "holds" : "hold") +
                                    " no YAML keys; expected Timeloop's architecture, problem, "
                                    "mapping, ...");
    }
    TimeloopCase c;
    c.notes = spec.notes;
    refuseSparse(spec);
    // The front end's constraints.targets join a node list's constraints.
    const Spec::Entry* archEntry = spec.find({"architecture", "arch"});
    const bool nodeList = archEntry && given(timeloop_yaml::child(archEntry->node, "nodes"));
    for (const auto& [key, entry] : spec.keys) {
        if (key == "compound_components" || key == "components")
            continue; // read where they price a component (components.cpp notes which)
        if (key == "constraints" && nodeList)
            continue;
        if (key.find("ignore") != std::string::npos)
            continue; // the front end's convention: a key to hold anchors, not read
        else if (key != "architecture" && key != "arch" && key != "problem" && key != "mapping" &&
                 key != "architecture_constraints" && key != "arch_constraints" &&
                 key != "mapspace_constraints" && key != "mapspace" && key != "mapper" &&
                 key != "ERT" && key != "ART" && key != "globals" && key != "variables" &&
                 key != "dumped_by_timeloop_front_end" && key != "extra_mapping_constraints")
            c.notes.push_back("top-level key '" + key + "' (" + entry.file + ") ignored");
    }
    try {
        expandNodeArchitecture(spec, c.notes);
        c.arch = readArchitecture(spec, c.notes);
        c.problem = readProblem(spec, c.notes);
        c.mapping = makeTrivialMapping(c.problem, c.arch);
        if (const Spec::Entry* m = spec.find({"mapping"});
            // (A scalar is not a mapping, and is read to say so.)
            m && given(m->node) && (m->node.IsScalar() || m->node.size() > 0)) {
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

std::vector<std::string> exportTimeloop(const Problem& p, const Architecture& a, const Mapping* m,
                                        const std::string& dir, const Json* constraints,
                                        const TimeloopMapper& mapper) {
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
    // One case: written together, and a mapping or constraints file already
    // in the folder set aside when this case has none (timeloop-model would
    // read it beside this case's architecture; a person may have written it).
    // (By kTimeloopCaseFiles; none: the case has no such file.)
    const std::array<const std::string*, kTimeloopCaseFiles.size()> texts = {
        &arch, &problem,    m ? &mapping : nullptr,        &ert,
        &art,  &mapperText, cons.empty() ? nullptr : &cons};
    FileSet files;
    for (std::size_t i = 0; i < texts.size(); ++i) {
        const std::string path = (d / kTimeloopCaseFiles[i]).string();
        if (texts[i])
            files.stage(path, *texts[i]);
        else
            files.setAsideOnCommit(path, path + ".earlier");
    }
    files.commit();
    std::vector<std::string> notes;
    for (const auto& [path, aside] : files.setAside())
        notes.push_back("set " + path + " aside as " + aside +
                        ": this case has none, and timeloop-model would read it with this one");
    return notes;
}

} // namespace mw
