#pragma once
// Reading Timeloop's YAML, shared by the readers of its architecture, problem,
// mappings and constraints (internal to engine/io). Timeloop reads any number
// of files as one document; here each file is parsed on its own, so errors
// name the file and line, and their top-level keys are merged.
#include "common/error.h"
#include "common/text_case.h"
#include "io/timeloop/expression.h"
#include "io/timeloop/timeloop.h"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace mw::timeloop_yaml {

// The merged top-level keys, each with the file that gave it. A key given
// again replaces the earlier one (a mapper's map.yaml given last replaces the
// empty mapping of the input it was run on).
struct Spec {
    struct Entry {
        YAML::Node node;
        std::string file;
        // The files its template included (rendered), for values left unexpanded.
        std::shared_ptr<const std::map<std::string, std::string>> included = nullptr;
    };
    std::map<std::string, Entry> keys;
    // What reading the files found worth saying (a key given twice in a map).
    std::vector<std::string> notes;
    // The first of `names` present, or null.
    const Entry* find(std::initializer_list<const char*> names) const;
};
// Each file parsed, its includes (a rendered template's) put in place and its
// merge keys applied: YAML's << (the merged maps' keys where the map has
// none) and the front end's <<< (the same, recursively: maps merge, lists
// join, the map's own values win).
Spec mergeFiles(const std::vector<TimeloopText>& files);
// A top-level value the reader left unexpanded (the compound component
// classes, read only when something is priced from them), expanded.
YAML::Node expandEntry(const Spec::Entry& entry);
// origins, when given: the file each top-level key's value was included from.
// A key given twice in one map: the first is read, as timeloop-model reads it
// (yaml-cpp's look-up), and notes (when given) say so.
YAML::Node parseText(const TimeloopText& file,
                     std::map<std::string, std::string>* origins = nullptr,
                     std::vector<std::string>* notes = nullptr);

// "file:line" of a node (just the file when the node has no position).
std::string at(const std::string& file, const YAML::Node& n);

// A map's value for `key`, or for its spelling with hyphens (Timeloop turns
// "word-bits" into "word_bits" before reading); a null node when absent or
// when `map` is not a map.
YAML::Node child(const YAML::Node& map, const std::string& key);
// The first of several keys present (Timeloop's aliases), or a null node.
YAML::Node firstChild(const YAML::Node& map, std::initializer_list<const char*> keys);
// Present and not null.
inline bool given(const YAML::Node& n) {
    return n.IsDefined() && !n.IsNull();
}

// A scalar as T; anything else an InputError naming `where` and `what`.
template <typename T> T scalarAs(const YAML::Node& n, const std::string& where, const char* what) {
    if (!n.IsScalar())
        throw InputError(where, std::string("expected ") + what);
    try {
        return n.as<T>();
    } catch (const YAML::Exception&) {
        throw InputError(where, std::string("expected ") + what);
    }
}
// A scalar's text (numbers included); anything else an InputError.
std::string text(const YAML::Node& n, const std::string& where);

// A count within Timeloop's files: digits only, at most 10^12 (a count past
// that is a typo, and products of counts must not overflow).
constexpr std::int64_t kMaxCount = 1'000'000'000'000;
std::int64_t parseCount(const std::string& digits, const std::string& where,
                        const std::string& what);
// a x b, both counts up to 10^12, refused beyond 10^12.
std::int64_t countProduct(std::int64_t a, std::int64_t b, const std::string& where);
// "ifmap_spad[1..168]" -> ("ifmap_spad", 168); "PE[0..15]" -> ("PE", 16).
std::pair<std::string, std::int64_t> splitName(const std::string& full, const std::string& where);
// A name in an ERT or ART: "system.PE[0..13].mac[1..168]" -> "mac".
std::string tableComponentName(const std::string& full, const std::string& where);

// A key as Timeloop's front end compares it: '-' read as '_' ("word-bits").
std::string underscores(std::string s);

// Timeloop's class families (substrings, as topology.hpp lists them).
bool isStorageClass(const std::string& cls);
bool isComputeClass(const std::string& cls);

} // namespace mw::timeloop_yaml

namespace mw::timeloop_read {

using timeloop_yaml::Spec;

// Energies per action of each component (an ERT's), by component name.
using EnergyTable = std::map<std::string, std::map<std::string, double>>;

// A component the compound classes may price: its name, the class Accelergy
// prices it by (its subclass, else its class), its attributes (its own and
// what it inherits, evaluated) and its process node (0: none).
struct ComponentToPrice {
    std::string name;
    std::string cls;
    AttributeScope attributes;
    double nm = 0.0;
    std::string where;
};
struct PricedComponents {
    EnergyTable energy;
    std::map<std::string, double> area;
};
// What the spec's compound component classes (components.classes) make of
// the components, as an ERT and an ART would say it (components.cpp); only
// components whose class is defined there (or is an Accelergy primitive
// given directly) and that have a node.
PricedComponents priceFromClasses(const Spec& spec, const std::vector<ComponentToPrice>& components,
                                  std::vector<std::string>& notes);

// Each reader is in its own file (arch.cpp, problem.cpp, directives.cpp);
// notes collect one line per thing estimated or ignored.
Architecture readArchitecture(const Spec& spec, std::vector<std::string>& notes);
Problem readProblem(const Spec& spec, std::vector<std::string>& notes);
Mapping readMapping(const YAML::Node& list, const std::string& file, const Problem& p,
                    const Architecture& a);
// Both constraint sections as one mapwright.constraints file; hasAny false
// when neither section constrains anything.
Json readConstraints(const Spec& spec, const Problem& p, const Architecture& a, bool& hasAny,
                     std::vector<std::string>& notes);
TimeloopMapper readMapper(const Spec::Entry& mapper, std::vector<std::string>& notes);
// The front end's node list (architecture.nodes) as the subtree timeloop-model
// reads, its nodes' constraints added to architecture_constraints (nodes.cpp);
// a spec without one is left as it is. The constraints are rewritten for the
// problem as the front end rewrites them: `problem` when given (constraints
// read apart from their problem), else the spec's.
void expandNodeArchitecture(Spec& spec, std::vector<std::string>& notes,
                            const Problem* problem = nullptr);

} // namespace mw::timeloop_read
