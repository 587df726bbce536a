#pragma once
// Timeloop front-end templates: a Jinja2 top file (the exercises'
// top.yaml.jinja2) and the files it includes, rendered by the helper program
// mapwright-jinja (Debian's python3-jinja2, sandboxed: templates cannot run
// code, and their functions only read files). The helper leaves each
// include()/include_all() as a tagged node that the YAML reader resolves
// (timeloop/yaml.h), so that every file is parsed, merged and reported on by
// one reader.
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace mw {

// One top file and its parse data (Jinja2 variables: architecture=eyeriss_like,
// problem=../layer_shapes/alexnet/0.yaml), as text; the helper gives the
// template the Python value each spells (False, 16, 0.5, else the text), as
// the exercises' notebooks pass them.
struct TemplateJob {
    std::string file;
    std::vector<std::pair<std::string, std::string>> data;
};

struct RenderedTemplate {
    std::string top;                          // the top file's absolute path
    std::map<std::string, std::string> files; // every file rendered, by absolute path
    std::string error;                        // else: what failed, naming the file
    std::string errorFile;
};

// Renders the jobs in one run of the helper. A job that fails says why in
// its error; a helper that cannot run is an InputError naming `where`.
std::vector<RenderedTemplate> renderTemplates(const std::vector<TemplateJob>& jobs,
                                              const std::string& where);

// The variables a template uses and does not set (its parse data), sorted;
// errors as renderTemplates gives them, naming the file.
std::vector<std::string> templateVariables(const std::string& file);

// A file to render before reading: named *.jinja, *.jinja2 or *.j2, or
// holding template tags ({{ or {%) as the exercises' layer files do.
bool isTemplateFile(const std::string& name, const std::string& text);

// "name=value" -> (name, value); an InputError naming `where` otherwise.
std::pair<std::string, std::string> parseTemplateSetting(const std::string& setting,
                                                         const std::string& where);

} // namespace mw
