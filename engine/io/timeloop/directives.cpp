// Timeloop's per-level directives: a mapping's (factors, permutation, split,
// keep/bypass), the architecture and mapspace constraints, which say the
// same things of the map space, and the mapper's settings.
#include "io/timeloop/yaml.h"
#include "mapspace/mapspace.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>

namespace mw::timeloop_read {

namespace {

using namespace timeloop_yaml;

std::string dimNames(const Problem& p) {
    std::string s;
    for (const auto& d : p.dims)
        s += (s.empty() ? "" : ", ") + d.name;
    return s;
}

// A spatial directive's split: a whole number. The front end evaluates a
// Python expression there (split: len(spec.problem.instance)); reading a file
// never runs its code, so such a split is named for what it is.
std::int64_t splitValue(const YAML::Node& n, const std::string& where) {
    const std::string t = text(n, where);
    // (A name or a call: -1 or 1.5 are numbers, and parseCount says why not.)
    const bool expression = std::any_of(t.begin(), t.end(), [](char c) {
        return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
    });
    if (expression)
        throw InputError(where, "'" + t +
                                    "' is a Python expression of the front end, which is not "
                                    "evaluated (reading a file runs none of its code); expected "
                                    "the whole number it gives");
    return parseCount(t, where, "split");
}

// A directive's text field, joined when given as a list (the Python front
// end writes factors: [R=3, P=16]).
std::string joined(const YAML::Node& n, const std::string& where) {
    if (n.IsSequence()) {
        std::string s;
        for (const auto& e : n)
            s += (s.empty() ? "" : " ") + text(e, where);
        return s;
    }
    return text(n, where);
}

// "R=3,P=16", "C1 M8 R1", "C=1 M=8" or "N=0" (0: the whole dimension): the
// dimension, then its factor. Timeloop's max and min factors (C<=4, C>=2)
// are refused by name.
std::vector<std::pair<int, std::int64_t>> parseFactors(const std::string& text, const Problem& p,
                                                       const std::string& where) {
    std::vector<std::pair<int, std::int64_t>> out;
    const std::string t = text.substr(0, text.find('#'));
    std::size_t i = 0;
    while (i < t.size()) {
        while (i < t.size() && (std::isspace(static_cast<unsigned char>(t[i])) || t[i] == ','))
            ++i;
        if (i >= t.size())
            break;
        std::size_t j = i;
        while (j < t.size() && !std::isdigit(static_cast<unsigned char>(t[j])) && t[j] != '=' &&
               t[j] != '<' && t[j] != '>' && !std::isspace(static_cast<unsigned char>(t[j])) &&
               t[j] != ',')
            ++j;
        const std::string name = t.substr(i, j - i);
        while (j < t.size() && std::isspace(static_cast<unsigned char>(t[j])))
            ++j;
        if (j < t.size() && (t[j] == '<' || t[j] == '>'))
            throw InputError(where, "factors '" + text + "': bounds such as " + name + t[j] +
                                        "= are not supported; expected " + name + "=N");
        while (j < t.size() && t[j] == '=')
            ++j;
        while (j < t.size() && std::isspace(static_cast<unsigned char>(t[j])))
            ++j;
        std::size_t k = j;
        while (k < t.size() && std::isdigit(static_cast<unsigned char>(t[k])))
            ++k;
        if (k == j)
            throw InputError(where,
                             "factors '" + text + "': expected a number after '" + name + "'");
        const int d = p.dimIndex(name);
        if (d < 0)
            throw InputError(where, "factors '" + text + "': '" + name +
                                        "' is not a dimension of the problem; expected one of " +
                                        dimNames(p));
        std::int64_t f = parseCount(t.substr(j, k - j), where, "factor of " + name);
        if (f == 0) // Timeloop reads 0 as the whole dimension
            f = p.dims[d].bound;
        if (f > p.dims[d].bound)
            throw InputError(where, "factor of " + name + " is " + std::to_string(f) +
                                        " but its bound is " + std::to_string(p.dims[d].bound));
        out.emplace_back(d, f);
        i = k;
    }
    return out;
}

// A permutation, innermost first: one letter per dimension ("MPCQRSN"), or
// names apart ("C M R"); dimensions after "_" are the outermost (suffix).
struct Permutation {
    std::vector<int> prefix; // innermost first
    std::vector<int> suffix; // innermost first: the last is outermost
};

Permutation parsePermutation(const std::string& text, const Problem& p, const std::string& where) {
    const std::string t = text.substr(0, text.find('#'));
    std::vector<std::string> tokens;
    std::istringstream words(t);
    for (std::string w; words >> w;) {
        std::string part;
        for (char c : w) {
            if (c == ',') {
                if (!part.empty())
                    tokens.push_back(part);
                part.clear();
            } else {
                part += c;
            }
        }
        if (!part.empty())
            tokens.push_back(part);
    }
    if (tokens.size() == 1 && p.dimIndex(tokens[0]) < 0) { // "MPCQRSN": one letter each
        const std::string one = tokens[0];
        tokens.clear();
        for (char c : one)
            tokens.emplace_back(1, c);
    }
    Permutation perm;
    bool afterSeparator = false;
    std::set<int> seen;
    for (const auto& tok : tokens) {
        if (tok == "_") {
            afterSeparator = true;
            continue;
        }
        const int d = p.dimIndex(tok);
        if (d < 0)
            throw InputError(where, "permutation '" + text + "': '" + tok +
                                        "' is not a dimension of the problem; expected one of " +
                                        dimNames(p));
        if (!seen.insert(d).second)
            continue; // Timeloop keeps the first place of a repeated dimension
        (afterSeparator ? perm.suffix : perm.prefix).push_back(d);
    }
    return perm;
}

// Innermost-first dims -> an order outer to inner, the dims left out
// outermost in the problem's order (as Timeloop fills a mapping's loops).
void applyMappingOrder(std::array<std::uint8_t, kMaxDims>& order,
                       const std::vector<int>& innerFirst, int numDims) {
    std::vector<int> outerFirst;
    for (int d = 0; d < numDims; ++d)
        if (std::find(innerFirst.begin(), innerFirst.end(), d) == innerFirst.end())
            outerFirst.push_back(d);
    for (auto it = innerFirst.rbegin(); it != innerFirst.rend(); ++it)
        outerFirst.push_back(*it);
    for (int i = 0; i < numDims; ++i)
        order[i] = static_cast<std::uint8_t>(outerFirst[i]);
}

// A directive's level: its target (or name) as a storage level.
int targetLevel(const YAML::Node& dir, const std::string& where, const Architecture& a) {
    YAML::Node target = child(dir, "target");
    if (!given(target))
        target = child(dir, "name");
    if (!given(target))
        throw InputError(where, "a directive without 'target'; expected the storage level it "
                                "applies to");
    const std::string name = text(target, where + ".target");
    int l = a.levelIndex(name);
    // A v0.4 container, named as the front end lets mappings name it: its
    // fan-out's dummy level (nodes.cpp names it so).
    if (l < 0)
        l = a.levelIndex("inter_" + name + "_spatial");
    if (l < 0) {
        std::string levels;
        for (const auto& s : a.levels)
            levels += (levels.empty() ? "" : ", ") + s.name;
        throw InputError(where + ".target", "'" + name +
                                                "' is not a storage level of the architecture; "
                                                "expected one of " +
                                                levels);
    }
    return l;
}

std::vector<int> tensorList(const YAML::Node& dir, const char* key, const Problem& p,
                            const std::string& where) {
    std::vector<int> ts;
    const YAML::Node list = child(dir, key);
    if (!given(list))
        return ts;
    if (!list.IsSequence())
        throw InputError(where + "." + key, "expected a list of data spaces");
    for (const auto& n : list) {
        const std::string name = text(n, where + "." + key);
        const int t = p.tensorIndex(name);
        if (t < 0) {
            std::string known;
            for (const auto& ds : p.tensors)
                known += (known.empty() ? "" : ", ") + ds.name;
            throw InputError(where + "." + key,
                             "'" + name + "' is not a data space of the problem; expected one of " +
                                 known);
        }
        ts.push_back(t);
    }
    return ts;
}

// The directives of a mapping or constraints section: a list, or a map
// holding it under targets or constraints; a target may also hold its own
// list of constraints (Timeloop's older form).
std::vector<std::pair<YAML::Node, YAML::Node>> directives(const YAML::Node& section,
                                                          const std::string& where) {
    YAML::Node list = section;
    if (section.IsMap()) {
        list = firstChild(section, {"targets", "constraints"});
        if (!given(list))
            return {};
    }
    if (!list.IsSequence())
        throw InputError(where, "expected a list of directives (target, type, ...)");
    std::vector<std::pair<YAML::Node, YAML::Node>> out; // (target holder, directive)
    for (const auto& d : list) {
        const YAML::Node nested = child(d, "constraints");
        if (given(nested) && nested.IsSequence())
            for (const auto& c : nested)
                out.emplace_back(d, c);
        else
            out.emplace_back(d, d);
    }
    return out;
}

} // namespace

Mapping readMapping(const YAML::Node& list, const std::string& file, const Problem& p,
                    const Architecture& a) {
    Mapping m = makeTrivialMapping(p, a);
    // (A map holds the list under targets; one without it is not a mapping:
    // `mapping: {target: DRAM}` read as every factor 1.)
    if (list.IsMap() && !given(firstChild(list, {"targets", "constraints"})))
        throw InputError(at(file, list) + ": mapping",
                         "expected a list of directives (target, type, ...)");
    for (const auto& [holder, dir] : directives(list, file + ": mapping")) {
        const std::string where = at(file, dir) + ": mapping";
        const int l = targetLevel(holder, where, a);
        const YAML::Node typeNode = child(dir, "type");
        if (!given(typeNode))
            throw InputError(where, "each directive needs 'target' and 'type'");
        const std::string type = text(typeNode, where + ".type");
        LevelMapping& lm = m.levels[l];
        if (type == "temporal" || type == "spatial") {
            const bool spatial = type == "spatial";
            Permutation perm;
            if (given(child(dir, "permutation")))
                perm = parsePermutation(joined(child(dir, "permutation"), where), p,
                                        where + ".permutation");
            if (!perm.suffix.empty())
                throw InputError(where + ".permutation",
                                 "a mapping's permutation has no '_'; expected every loop's place");
            std::map<int, std::int64_t> factor;
            if (given(child(dir, "factors")))
                for (const auto& [d, f] :
                     parseFactors(joined(child(dir, "factors"), where), p, where + ".factors"))
                    factor[d] = f;
            if (!spatial) {
                for (const auto& [d, f] : factor)
                    lm.temporal[d] = static_cast<std::uint32_t>(f);
                applyMappingOrder(lm.order, perm.prefix, p.numDims());
                continue;
            }
            // Spatial: dimensions before `split` in the permutation go to X, the rest to Y.
            const YAML::Node splitNode = child(dir, "split");
            const std::size_t split = given(splitNode)
                                          ? std::size_t(splitValue(splitNode, where + ".split"))
                                          : perm.prefix.size() + std::size_t(p.numDims());
            std::vector<int> order = perm.prefix;
            for (int d = 0; d < p.numDims(); ++d)
                if (std::find(order.begin(), order.end(), d) == order.end())
                    order.push_back(d);
            for (std::size_t k = 0; k < order.size(); ++k) {
                const int d = order[k];
                const auto f = static_cast<std::uint32_t>(factor.count(d) ? factor[d] : 1);
                lm.spatialX[d] = k < split ? f : 1;
                lm.spatialY[d] = k < split ? 1 : f;
            }
            applyMappingOrder(lm.spatialOrder, perm.prefix, p.numDims());
        } else if (type == "bypass" || type == "datatype" || type == "dataspace") {
            for (int t : tensorList(dir, "keep", p, where))
                lm.setKeep(t, true);
            for (int t : tensorList(dir, "bypass", p, where))
                lm.setKeep(t, false);
        } else {
            throw InputError(where + ".type",
                             "is '" + type + "'; expected temporal, spatial, bypass or datatype");
        }
    }
    return m;
}

Json readConstraints(const Spec& spec, const Problem& p, const Architecture& a, bool& hasAny,
                     std::vector<std::string>& notes) {
    hasAny = false;
    const int D = p.numDims();
    struct LevelJson {
        Json obj = Json::object();
        std::set<std::string> given;        // "temporal N", "spatial N", "keep T", "order", ...
        std::uint32_t keep = 0, bypass = 0; // by tensor, listed in the problem's order
    };
    std::vector<LevelJson> levels(static_cast<std::size_t>(a.numLevels()));
    double minUtilization = 0.0;
    bool utilizationGiven = false;

    // Timeloop's sources: architecture constraints (three spellings) and
    // mapspace constraints (two); both say the same kinds of things.
    std::vector<std::pair<YAML::Node, std::string>> sections;
    const Spec::Entry* archEntry = spec.find({"architecture", "arch"});
    if (archEntry && given(child(archEntry->node, "constraints")))
        sections.emplace_back(child(archEntry->node, "constraints"), archEntry->file);
    else if (const Spec::Entry* e = spec.find({"arch_constraints", "architecture_constraints"}))
        sections.emplace_back(e->node, e->file);
    if (const Spec::Entry* e = spec.find({"mapspace", "mapspace_constraints"}))
        sections.emplace_back(e->node, e->file);

    auto conflict = [](const std::string& where, const std::string& what) {
        return InputError(where, "contradictory constraints: " + what +
                                     " given twice (e.g. in the architecture and the mapspace "
                                     "constraints); expected once");
    };
    for (const auto& [section, file] : sections) {
        if (!given(section))
            continue;
        for (const auto& [holder, dir] : directives(section, at(file, section) + ": constraints")) {
            const std::string where = at(file, dir) + ": constraints";
            const YAML::Node typeNode = child(dir, "type");
            if (!given(typeNode))
                throw InputError(where, "a constraint without 'type'; expected temporal, spatial, "
                                        "bypass or utilization");
            const std::string type = text(typeNode, where + ".type");
            for (const char* unsupported :
                 {"no_link_transfer", "no_multicast_no_reduction", "no_reuse", "no_temporal_reuse",
                  "rmw_first_update", "no_coalesce", "remainders"})
                if (given(child(dir, unsupported)))
                    throw InputError(where + "." + unsupported,
                                     "changes how Timeloop counts accesses and is not modelled; "
                                     "expected it left out");
            if (type == "utilization" || type == "parallelism") {
                const YAML::Node attrs =
                    given(child(dir, "attributes")) ? child(dir, "attributes") : dir;
                const double v = scalarAs<double>(child(attrs, "min"), where + ".min",
                                                  "a minimum utilization from 0 to 1");
                if (!(v >= 0 && v <= 1))
                    throw InputError(where + ".min", "expected a number from 0 to 1");
                if (utilizationGiven)
                    throw conflict(where, "the minimum utilization");
                utilizationGiven = true;
                minUtilization = v;
                hasAny = hasAny || v > 0;
                continue;
            }
            if (type == "max_overbooked_proportion")
                throw InputError(where + ".type", "max_overbooked_proportion (sparse overbooking) "
                                                  "is not modelled; expected it left out");
            const int l = targetLevel(holder, where, a);
            LevelJson& lj = levels[static_cast<std::size_t>(l)];
            const std::string level = a.levels[l].name;
            const YAML::Node attrs =
                given(child(dir, "attributes")) ? child(dir, "attributes") : dir;
            if (type == "bypass" || type == "datatype" || type == "dataspace" ||
                type == "bypassing") {
                for (const char* key : {"keep", "bypass"})
                    for (int t : tensorList(attrs, key, p, where)) {
                        const std::string tn = p.tensors[t].name;
                        if (lj.given.count("keep " + tn))
                            throw conflict(where + "." + key,
                                           "keep or bypass of " + tn + " at " + level);
                        lj.given.insert("keep " + tn);
                        if (l == 0 && std::string(key) == "bypass")
                            throw InputError(where + ".bypass",
                                             "contradictory constraints: the outermost level '" +
                                                 level + "' must keep every data space (" + tn +
                                                 " bypassed)");
                        (std::string(key) == "keep" ? lj.keep : lj.bypass) |= 1u << t;
                        hasAny = true;
                    }
                continue;
            }
            if (type != "temporal" && type != "spatial")
                throw InputError(where + ".type", "is '" + type +
                                                      "'; expected temporal, spatial, bypass, "
                                                      "datatype or utilization");
            const bool spatial = type == "spatial";
            std::vector<std::pair<int, std::int64_t>> factors;
            if (given(child(attrs, "factors")))
                factors =
                    parseFactors(joined(child(attrs, "factors"), where), p, where + ".factors");
            for (const char* key : {"default_max_factor", "default_min_factor"})
                if (given(child(attrs, key)))
                    throw InputError(where + "." + key, "bounds on factors are not supported; "
                                                        "expected factors as D=N");
            Permutation perm;
            const bool hasPerm = given(child(attrs, "permutation"));
            if (hasPerm)
                perm = parsePermutation(joined(child(attrs, "permutation"), where), p,
                                        where + ".permutation");
            // Our order lists run outer to inner, with "*" for the free dims.
            auto orderJson = [&] {
                Json order = Json::array();
                for (auto it = perm.suffix.rbegin(); it != perm.suffix.rend(); ++it)
                    order.push_back(p.dims[*it].name);
                if (static_cast<int>(perm.prefix.size() + perm.suffix.size()) < D)
                    order.push_back("*");
                for (auto it = perm.prefix.rbegin(); it != perm.prefix.rend(); ++it)
                    order.push_back(p.dims[*it].name);
                return order;
            };
            if (!spatial) {
                if (a.levels[l].cls == LevelClass::Dummy) {
                    for (const auto& [d, f] : factors)
                        if (f > 1)
                            throw InputError(where + ".factors",
                                             "contradictory constraints: " + p.dims[d].name + "=" +
                                                 std::to_string(f) + " at '" + level +
                                                 "', a dummy level, which holds no temporal loops");
                    continue; // its loops are all 1 and have no order
                }
                for (const auto& [d, f] : factors) {
                    const std::string key = "temporal " + p.dims[d].name;
                    if (lj.given.count(key))
                        throw conflict(where + ".factors",
                                       "the temporal factor of " + p.dims[d].name + " at " + level);
                    lj.given.insert(key);
                    lj.obj["temporal"][p.dims[d].name] = f;
                    hasAny = true;
                }
                if (hasPerm && !(perm.prefix.empty() && perm.suffix.empty())) {
                    if (lj.given.count("order"))
                        throw conflict(where + ".permutation", "the loop order at " + level);
                    lj.given.insert("order");
                    lj.obj["order"] = orderJson();
                    hasAny = true;
                }
                continue;
            }
            // Spatial: which axis each dimension takes.
            const int fanX = a.fanoutX(l), fanY = a.fanoutY(l);
            if (fanX * fanY <= 1) {
                for (const auto& [d, f] : factors)
                    if (f > 1)
                        throw InputError(where + ".factors",
                                         "contradictory constraints: " + p.dims[d].name + "=" +
                                             std::to_string(f) + " spatially at '" + level +
                                             "', which does not fan out");
                continue;
            }
            const YAML::Node splitNode = child(dir, "split");
            const bool hasSplit = given(splitNode);
            // -1: either axis (no split given, or both axes fan out freely).
            std::vector<int> axis(static_cast<std::size_t>(D), -1);
            // (A level that fans out on one axis only puts every factor there,
            // whatever the split says: it is not read, so the front end's
            // `split: len(spec.problem.instance)` for "all on X" is no error.)
            if (fanY == 1)
                std::fill(axis.begin(), axis.end(), 0);
            else if (fanX == 1)
                std::fill(axis.begin(), axis.end(), 1);
            else if (hasSplit) {
                const std::int64_t split = splitValue(splitNode, where + ".split");
                const std::int64_t pre = std::int64_t(perm.prefix.size());
                const std::int64_t infix = D - pre - std::int64_t(perm.suffix.size());
                for (std::size_t i = 0; i < perm.prefix.size(); ++i)
                    axis[static_cast<std::size_t>(perm.prefix[i])] =
                        std::int64_t(i) < split ? 0 : 1;
                for (std::size_t i = 0; i < perm.suffix.size(); ++i)
                    axis[static_cast<std::size_t>(perm.suffix[i])] =
                        pre + infix + std::int64_t(i) < split ? 0 : 1;
                for (int d = 0; d < D; ++d) {
                    if (axis[static_cast<std::size_t>(d)] >= 0)
                        continue;
                    if (split <= pre)
                        axis[static_cast<std::size_t>(d)] = 1;
                    else if (split >= pre + infix)
                        axis[static_cast<std::size_t>(d)] = 0;
                    else
                        throw InputError(where + ".split",
                                         "is " + std::to_string(split) +
                                             ", which falls among the dimensions the permutation "
                                             "leaves out; expected a permutation naming every "
                                             "dimension on X");
                }
            }
            std::map<int, std::int64_t> fixed(factors.begin(), factors.end());
            Json xs = Json::array(), ys = Json::array();
            for (int d = 0; d < D; ++d) {
                const std::string dn = p.dims[d].name;
                const int ax = axis[static_cast<std::size_t>(d)];
                const auto it = fixed.find(d);
                if (it != fixed.end()) {
                    const std::string key = "spatial " + dn;
                    if (lj.given.count(key))
                        throw conflict(where + ".factors",
                                       "the spatial factor of " + dn + " at " + level);
                    lj.given.insert(key);
                    hasAny = true;
                    if (it->second == 1) {
                        lj.obj["spatial_x"][dn] = 1;
                        lj.obj["spatial_y"][dn] = 1;
                        continue;
                    }
                    if (ax < 0)
                        throw InputError(where + ".split",
                                         "is needed: " + dn + "=" + std::to_string(it->second) +
                                             " at '" + level +
                                             "' may go on X or Y; expected a split");
                    lj.obj[ax == 0 ? "spatial_x" : "spatial_y"][dn] = it->second;
                    lj.obj[ax == 0 ? "spatial_y" : "spatial_x"][dn] = 1;
                    continue;
                }
                if (ax == 0)
                    xs.push_back(dn);
                else if (ax == 1)
                    ys.push_back(dn);
                else {
                    xs.push_back(dn);
                    ys.push_back(dn);
                }
            }
            if (hasSplit && fanX > 1 && fanY > 1) {
                lj.obj["spatial_dims_x"] = xs;
                lj.obj["spatial_dims_y"] = ys;
                hasAny = true;
            }
            if (hasPerm && !(perm.prefix.empty() && perm.suffix.empty())) {
                if (lj.given.count("spatial order"))
                    throw conflict(where + ".permutation", "the spatial order at " + level);
                lj.given.insert("spatial order");
                lj.obj["spatial_order"] = orderJson();
                hasAny = true;
            }
        }
    }
    Json out = {{"format", "mapwright.constraints"},
                {"version", kFormatVersion},
                {"description", "imported from Timeloop's architecture and mapspace constraints"}};
    if (minUtilization > 0)
        out["min_spatial_utilization"] = minUtilization;
    Json levelList = Json::array();
    for (int l = 0; l < a.numLevels(); ++l) {
        LevelJson& lj = levels[static_cast<std::size_t>(l)];
        Json& obj = lj.obj;
        for (int t = 0; t < p.numTensors(); ++t) {
            if ((lj.keep >> t) & 1u)
                obj["keep"].push_back(p.tensors[t].name);
            if ((lj.bypass >> t) & 1u)
                obj["bypass"].push_back(p.tensors[t].name);
        }
        // Factors in the problem's order of dimensions, whatever the files' order.
        for (const char* key : {"temporal", "spatial_x", "spatial_y"}) {
            if (!obj.contains(key))
                continue;
            Json sorted = Json::object();
            for (const auto& dim : p.dims)
                if (obj[key].contains(dim.name))
                    sorted[dim.name] = obj[key][dim.name];
            obj[key] = sorted;
        }
        if (obj.empty())
            continue;
        Json entry = {{"level", a.levels[l].name}};
        for (auto& [k, v] : obj.items())
            entry[k] = v;
        levelList.push_back(entry);
    }
    out["levels"] = levelList;
    if (!hasAny && !sections.empty())
        notes.push_back("the constraints sections constrain nothing");
    return out;
}

TimeloopMapper readMapper(const Spec::Entry& entry, std::vector<std::string>& notes) {
    TimeloopMapper m;
    const YAML::Node& n = entry.node;
    const std::string where = at(entry.file, n) + ": mapper";
    if (!n.IsMap())
        throw InputError(where, "expected a map of mapper settings");
    auto count = [&](const char* key, std::int64_t fallback) {
        const YAML::Node v = child(n, key);
        if (!given(v))
            return fallback;
        const auto x = scalarAs<std::int64_t>(v, where + "." + key, "a whole number");
        if (x < -1)
            throw InputError(where + "." + key, "expected a whole number >= 0");
        return x;
    };
    if (given(child(n, "algorithm")))
        m.algorithm = text(child(n, "algorithm"), where + ".algorithm");
    std::string alg = lowercase(m.algorithm);
    std::replace(alg.begin(), alg.end(), '-', '_');
    if (alg == "random_pruned")
        m.searcher = "random-pruned";
    else if (alg == "linear_pruned" || alg == "exhaustive")
        m.searcher = "exhaustive";
    else if (alg == "random")
        m.searcher = "random";
    else if (alg == "hybrid") {
        m.searcher = "random-pruned";
        notes.push_back("mapper algorithm hybrid (linear and random) runs as random-pruned");
    } else
        throw InputError(where + ".algorithm", "is '" + m.algorithm +
                                                   "'; expected random_pruned, linear_pruned, "
                                                   "random, hybrid or exhaustive");
    m.victoryCondition = count("victory_condition", 500);
    m.timeout = count("timeout", count("heartbeat", 1000));
    m.maxPermutations = count("max_permutations_per_if_visit", 16);
    m.searchSize = count("search_size", 0);
    m.threads = static_cast<int>(std::clamp<std::int64_t>(count("num_threads", 0), 0, 256));
    const YAML::Node single = child(n, "optimization_metric");
    const YAML::Node list = child(n, "optimization_metrics");
    if (given(single) && single.IsScalar())
        m.metrics = {single.Scalar()};
    else if (given(list) && list.IsSequence())
        for (const auto& x : list)
            m.metrics.push_back(text(x, where + ".optimization_metrics"));
    else if (given(single))
        notes.push_back("optimization_metric holds a list, which Timeloop reads as no metric: "
                        "EDP, as Timeloop then uses");
    m.objective = "edp";
    if (!m.metrics.empty()) {
        const std::string first = lowercase(m.metrics.front());
        if (first == "energy")
            m.objective = "energy";
        else if (first == "delay" || first == "cycles")
            m.objective = "cycles";
        else if (first != "edp")
            notes.push_back("optimization metric '" + m.metrics.front() +
                            "' is not an objective here: EDP instead");
        if (m.metrics.size() > 1)
            notes.push_back("Timeloop ranks by " + m.metrics.front() +
                            ", then the next metrics; the searchers optimise " + m.objective);
    }
    return m;
}

} // namespace mw::timeloop_read
