// The Python front end's architecture (v0.4 `nodes:`, as the exercises write
// it) turned into what its processed dump holds and timeloop-model reads:
// one subtree whose `local` list holds every level outermost first, and the
// nodes' constraints as architecture_constraints targets.
//
// As the front end does it (checked against the exercises' dumps):
// - a !Container's attributes pass to every node after it (a node's own win;
//   the top-level `variables` are the outermost container's); a container
//   with a spatial mesh becomes a dummy level `inter_<name>_spatial` at the
//   mesh above it, and multiplies the mesh of everything below; its spatial
//   constraints go to that dummy;
// - a !Component is a level at the mesh reached, with its dataspace
//   (keep/bypass -> type: bypass) and temporal constraints;
// - the branches of a !Parallel are consecutive levels at one mesh; each
//   keeps what its dataspace constraint keeps and bypasses every other data
//   space (a !Nothing branch only claims what it keeps, so the others pass it
//   by); !Hierarchical and !Pipelined nest a list in place.
// Expressions in attributes (depth: 2 * n) are evaluated with the variables
// and the attributes above them (timeloop/expression.h): nothing runs code.
#include "io/timeloop/expression.h"
#include "io/timeloop/node_arena.h"
#include "io/timeloop/yaml.h"

#include <algorithm>
#include <set>

namespace mw::timeloop_read {

namespace {

using namespace timeloop_yaml;

// Storage attributes the front end always sets itself: a container's value
// does not reach a component (its default counts as given).
bool frontEndDefault(const std::string& key) {
    for (const char* k : {"n_banks", "cluster_size", "reduction_supported", "multiple_buffering",
                          "min_utilization", "allow_overbooking", "has_power_gating"})
        if (key == k)
            return true;
    return false;
}

struct Names {
    std::vector<std::string> dims;
    std::vector<std::string> spaces;
    std::set<std::string> unitDims; // bound 1 in the instance (or not given)

    bool hasDim(const std::string& d) const {
        return std::find(dims.begin(), dims.end(), d) != dims.end();
    }
    bool hasSpace(const std::string& s) const {
        return std::find(spaces.begin(), spaces.end(), s) != spaces.end();
    }
};

// The names a factors or permutation value holds: a list, or one string of
// names apart ("R=1 S=1", "R=1,S=1", "C M") or of letters ("MCRSPQN").
std::vector<std::string> tokensOf(const YAML::Node& v, const Names& names) {
    std::vector<std::string> out;
    auto split = [&](const std::string& text) {
        std::string part;
        for (char c : text + " ") {
            if (std::isspace(static_cast<unsigned char>(c)) || c == ',') {
                if (!part.empty())
                    out.push_back(part);
                part.clear();
            } else {
                part += c;
            }
        }
    };
    if (v.IsSequence()) {
        for (const auto& e : v)
            if (e.IsScalar())
                split(e.Scalar());
    } else if (v.IsScalar()) {
        split(v.Scalar());
    }
    if (out.size() == 1 && out[0].find_first_of("=<>") == std::string::npos &&
        !names.hasDim(out[0])) { // one letter per dimension
        const std::string letters = out[0];
        out.clear();
        for (char c : letters)
            out.emplace_back(1, c);
    }
    return out;
}

// A factor's dimension: "M<=8" -> M.
std::string factorDim(const std::string& token) {
    return token.substr(0, token.find_first_of("=<>"));
}

// The problem's dimension and data-space names, as far as the spec gives them.
Names problemNames(const Spec& spec) {
    Names n;
    const Spec::Entry* e = spec.find({"problem"});
    if (!e)
        return n;
    const YAML::Node shape = child(e->node, "shape");
    if (shape.IsDefined() && shape.IsScalar()) { // the built-in CNN layer
        n.dims = {"C", "M", "R", "S", "N", "P", "Q"};
        n.spaces = {"Weights", "Inputs", "Outputs"};
    } else {
        const YAML::Node dims = child(shape, "dimensions");
        if (dims.IsDefined() && dims.IsSequence())
            for (const auto& d : dims)
                if (d.IsScalar())
                    n.dims.push_back(d.Scalar());
        const YAML::Node spaces = child(shape, "data_spaces");
        if (spaces.IsDefined() && spaces.IsSequence())
            for (const auto& s : spaces)
                if (given(child(s, "name")) && child(s, "name").IsScalar())
                    n.spaces.push_back(child(s, "name").Scalar());
    }
    const YAML::Node inst = child(e->node, "instance");
    for (const auto& d : n.dims) {
        const YAML::Node b = child(inst, d);
        if (!given(b) || (b.IsScalar() && b.Scalar() == "1"))
            n.unitDims.insert(d);
    }
    return n;
}

// The same names from a problem of ours.
Names problemNames(const Problem& p) {
    Names n;
    for (const auto& d : p.dims) {
        n.dims.push_back(d.name);
        if (d.bound == 1)
            n.unitDims.insert(d.name);
    }
    for (const auto& t : p.tensors)
        n.spaces.push_back(t.name);
    return n;
}

class NodeWalker {
  public:
    NodeWalker(const std::string& file, Names names, std::vector<std::string>& notes)
        : file_(file), names_(std::move(names)), notes_(notes) {}

    // The nodes the walk makes (declared first: locals and targets are made in it).
    NodeArena arena;
    YAML::Node locals = arena.make(YAML::NodeType::Sequence);
    YAML::Node targets = arena.make(YAML::NodeType::Sequence);
    std::string topName;
    // Targets given apart from the nodes (the front end's constraints.targets,
    // the top file's extra_mapping_constraints): one on a node's own target
    // and type is merged into it, as the front end merges them (its keys win,
    // factors by dimension), before the unit loops go innermost; `merged`
    // says which were.
    std::vector<YAML::Node> apart;
    std::vector<bool> merged;

    struct State {
        std::int64_t meshX = 1, meshY = 1;
        AttributeScope attributes; // inherited, outermost first
    };

    void walk(const YAML::Node& list, State& state, const std::string& where) {
        if (!list.IsDefined() || !list.IsSequence())
            throw InputError(where, "expected a list of nodes (!Container, !Component, "
                                    "!Parallel, !Hierarchical, !Nothing)");
        for (const auto& n : list)
            node(n, state, false);
    }

  private:
    std::string file_;
    Names names_;
    std::vector<std::string>& notes_;
    std::set<std::string> used_;
    std::set<std::string> droppedNames_;

    std::string whereOf(const YAML::Node& n) const { return at(file_, n); }

    std::string nameOf(const YAML::Node& n, const std::string& where) {
        const YAML::Node name = child(n, "name");
        if (!given(name))
            throw InputError(where, n.Tag() + " without 'name'; expected a name for it");
        return text(name, where + ".name");
    }

    // The node's spatial mesh (1 x 1 when it has none).
    std::pair<std::int64_t, std::int64_t> meshOf(const YAML::Node& n, const std::string& where,
                                                 const AttributeScope& scope) {
        const YAML::Node spatial = child(n, "spatial");
        std::int64_t x = 1, y = 1;
        if (!given(spatial))
            return {x, y};
        if (!spatial.IsMap())
            throw InputError(where + ".spatial", "expected {meshX: N, meshY: M}");
        for (const auto& kv : spatial) {
            const std::string key = kv.first.Scalar();
            if (key != "meshX" && key != "meshY")
                throw InputError(where + ".spatial." + key, "is not read; expected meshX, meshY");
            const double v = evaluateNumber(kv.second, scope, where + ".spatial." + key);
            if (!(v >= 1 && v <= 1e9) || v != double(std::int64_t(v)))
                throw InputError(where + ".spatial." + key, "expected a whole number >= 1");
            (key == "meshX" ? x : y) = std::int64_t(v);
        }
        return {x, y};
    }

    // A constraint as a target of architecture_constraints, as the front end
    // writes it: names the problem lacks dropped (noted; a design's
    // constraints for convolutions say nothing of a GEMM), and the loops that
    // cannot matter (a factor of 1, a dimension of bound 1) put innermost in
    // its permutation, which moves `split` as it moves it in Timeloop.
    void addTarget(const std::string& target, const char* type, const YAML::Node& from,
                   std::initializer_list<const char*> keys, bool unitLoopsFirst = false) {
        YAML::Node t = arena.make(YAML::NodeType::Map);
        bool any = false;
        for (const char* k : keys) {
            const YAML::Node v = child(from, k);
            if (!given(v))
                continue;
            const std::string key = k;
            if (key == "keep" || key == "bypass") {
                YAML::Node kept = arena.make(YAML::NodeType::Sequence);
                for (const auto& e : v)
                    if (!e.IsScalar() || names_.spaces.empty() || names_.hasSpace(e.Scalar()))
                        kept.push_back(e);
                    else
                        dropped(target, e.Scalar());
                t[k] = kept;
            } else if ((key == "factors" || key == "permutation") && !names_.dims.empty()) {
                YAML::Node list = arena.make(YAML::NodeType::Sequence);
                for (const auto& tok : tokensOf(v, names_)) {
                    const std::string dim = key == "factors" ? factorDim(tok) : tok;
                    if (names_.hasDim(dim) || tok == "_")
                        list.push_back(tok);
                    else
                        dropped(target, dim);
                }
                t[k] = list;
            } else {
                t[k] = v;
            }
            any = true;
        }
        // What a target given apart set here (a key; a factor by "factor:" and
        // its dimension): a later one replaces that one, not the node's.
        std::set<std::string> setApart;
        const auto whose = [&setApart](const std::string& what) {
            return setApart.count(what) ? "an earlier target given apart's" : "the node's";
        };
        for (std::size_t i = 0; i < apart.size(); ++i) {
            const YAML::Node& e = apart[i];
            if (!e.IsMap() || !sameTarget(child(e, "target").as<std::string>(""), target) ||
                !sameType(child(e, "type").as<std::string>(""), type))
                continue;
            merged[i] = true;
            for (const auto& kv : e) {
                const std::string key = kv.first.Scalar();
                if (key == "target" || key == "type")
                    continue;
                if ((key == "keep" || key == "bypass") && t[key].IsDefined() &&
                    kv.second.IsSequence()) {
                    // Lists of data spaces join.
                    YAML::Node list = arena.make(YAML::NodeType::Sequence);
                    std::set<std::string> in;
                    for (const auto& node : {t[key], kv.second})
                        for (const auto& space : node)
                            if (space.IsScalar() && in.insert(space.Scalar()).second)
                                list.push_back(space.Scalar());
                    t[key] = list;
                    any = true;
                    continue;
                }
                if ((key == "factors" || key == "permutation") && !names_.dims.empty()) {
                    // As lists (the unit loops are put into the permutation
                    // below), with the node's factors of dimensions the
                    // target leaves out.
                    YAML::Node list = arena.make(YAML::NodeType::Sequence);
                    const std::vector<std::string> tokens = tokensOf(kv.second, names_);
                    std::set<std::string> dims;
                    for (const auto& tok : tokens)
                        dims.insert(factorDim(tok));
                    if (key == "factors" && t["factors"].IsDefined())
                        for (const auto& tok : t["factors"]) {
                            if (!dims.count(factorDim(tok.Scalar())))
                                list.push_back(tok.Scalar());
                            else if (std::find(tokens.begin(), tokens.end(), tok.Scalar()) ==
                                     tokens.end())
                                replaced(target, type, whose("factor:" + factorDim(tok.Scalar())),
                                         "factor " + tok.Scalar(), tokens, factorDim(tok.Scalar()));
                        }
                    if (key == "permutation" && t["permutation"].IsDefined() &&
                        tokensOf(t["permutation"], names_) != tokens)
                        replaced(target, type, whose(key),
                                 "permutation " + oneLine(t["permutation"]), tokens, "");
                    for (const auto& tok : tokens) {
                        list.push_back(tok);
                        setApart.insert(key == "factors" ? "factor:" + factorDim(tok) : key);
                    }
                    t[key] = list;
                } else {
                    if (t[key].IsDefined() && oneLine(t[key]) != oneLine(kv.second))
                        replaced(target, type, whose(key), key + " " + oneLine(t[key]),
                                 {oneLine(kv.second)}, "");
                    t[key] = kv.second;
                    setApart.insert(key);
                }
                any = true;
            }
        }
        if (unitLoopsFirst && !names_.dims.empty()) {
            std::vector<std::string> perm;
            if (t["permutation"].IsDefined())
                for (const auto& e : t["permutation"])
                    perm.push_back(e.Scalar());
            std::vector<std::string> first; // each put innermost in turn
            if (t["factors"].IsDefined())
                for (const auto& e : t["factors"]) {
                    const std::string tok = e.Scalar();
                    const std::string dim = factorDim(tok);
                    if (tok == dim + "=1")
                        first.push_back(dim);
                }
            for (const auto& d : names_.dims)
                if (names_.unitDims.count(d))
                    first.push_back(d);
            for (const auto& d : first)
                if (std::find(perm.begin(), perm.end(), d) == perm.end())
                    perm.insert(perm.begin(), d);
            if (!perm.empty()) {
                YAML::Node list = arena.make(YAML::NodeType::Sequence);
                for (const auto& d : perm)
                    list.push_back(d);
                t["permutation"] = list;
                any = true;
            }
        }
        if (!any)
            return;
        t["type"] = type;
        t["target"] = target;
        targets.push_back(t);
    }

    // A target given apart names a node: a container's spatial constraints
    // are those of its fan-out's dummy level.
    static bool sameTarget(const std::string& given, const std::string& target) {
        return given == target || "inter_" + given + "_spatial" == target;
    }
    // The front end's keep and bypass targets are of type dataspace.
    static bool sameType(const std::string& given, const std::string& type) {
        return given == type || (type == "bypass" && given == "dataspace");
    }

  public:
    // A target given apart that no node's target took: on a container, its
    // fan-out's dummy level (when it has one).
    YAML::Node unmerged(const YAML::Node& e) const {
        const std::string target = e.IsMap() ? child(e, "target").as<std::string>("") : "";
        if (!dummies_.count(target))
            return e;
        YAML::Node copy = YAML::Clone(e);
        copy["target"] = "inter_" + target + "_spatial";
        return copy;
    }

  private:
    std::set<std::string> dummies_; // containers with a fan-out's dummy level

    // A value as one line: a scalar as it is, a list or map in YAML's flow
    // style ("[M, C, P]", "{X: 2, Y: 1}").
    // (A node keeps the style it was read in, which an emitter's Flow does
    // not override: a copy set to flow prints alike however it was written.)
    static std::string oneLine(const YAML::Node& n) {
        std::string s;
        if (n.IsScalar()) {
            s = n.Scalar();
        } else {
            YAML::Node flow = YAML::Clone(n);
            flow.SetStyle(YAML::EmitterStyle::Flow);
            YAML::Emitter out;
            out << flow;
            s = out.c_str();
        }
        std::replace(s.begin(), s.end(), '\n', ' ');
        return s;
    }

    // A target given apart replaces what the node's own says, as the front
    // end does it, but a user who wrote both should know which one holds.
    void replaced(const std::string& target, const char* type, const char* whose,
                  const std::string& what, const std::vector<std::string>& by,
                  const std::string& dim) {
        std::string with;
        for (const auto& tok : by)
            if (dim.empty() || factorDim(tok) == dim)
                with += (with.empty() ? "" : ", ") + tok;
        notes_.push_back(file_ + ": the " + type + " constraint on " + target +
                         " given apart (extra_mapping_constraints, constraints.targets) replaces " +
                         whose + " " + what + " with " +
                         (by.size() == 1 && dim.empty() ? with : "[" + with + "]") +
                         ", as Timeloop does");
    }

    void dropped(const std::string& target, const std::string& name) {
        if (droppedNames_.insert(name).second)
            notes_.push_back(file_ + ": the design's constraints (on " + target +
                             " and others) name '" + name +
                             "', which the problem does not have: those parts are dropped "
                             "(Timeloop's mapper refuses the pair)");
    }

    // A dummy level for a fan-out, at the mesh above it, with the fan-out's
    // spatial constraints (and none of its own: no tiles, no temporal loops).
    void spatialLevel(const std::string& name, const YAML::Node& constraints, const State& state) {
        const std::string dummy = "inter_" + name + "_spatial";
        dummies_.insert(name);
        YAML::Node c = arena.make(YAML::NodeType::Map);
        c["name"] = dummy;
        c["class"] = "dummy_storage";
        YAML::Node attrs = arena.make(YAML::NodeType::Map);
        attrs["width"] = 1;
        attrs["depth"] = 1;
        attrs["datawidth"] = 1;
        attrs["technology"] = -1;
        attrs["meshX"] = state.meshX;
        attrs["meshY"] = state.meshY;
        c["attributes"] = attrs;
        emit(c, dummy, state);
        addTarget(dummy, "spatial", child(constraints, "spatial"),
                  {"factors", "permutation", "split", "no_reuse", "no_link_transfer"}, true);
        // No loops and no tiles at the dummy, said as the front end says it.
        if (!names_.dims.empty()) {
            YAML::Node none = arena.make(YAML::NodeType::Map);
            YAML::Node factors = arena.make(YAML::NodeType::Sequence);
            YAML::Node perm = arena.make(YAML::NodeType::Sequence);
            for (const auto& d : names_.dims) {
                factors.push_back(d + "=1");
                perm.push_back(d);
            }
            none["factors"] = factors;
            none["permutation"] = perm;
            addTarget(dummy, "temporal", none, {"factors", "permutation"});
            YAML::Node all = arena.make(YAML::NodeType::Sequence);
            for (const auto& sp : names_.spaces)
                all.push_back(sp);
            YAML::Node bypass = arena.make(YAML::NodeType::Map);
            bypass["bypass"] = all;
            addTarget(dummy, "bypass", bypass, {"bypass"});
        }
    }

    // A node's spatial mesh, if it has one: its dummy level, then the mesh
    // of everything below multiplied.
    void fanOut(const YAML::Node& n, const std::string& name, const std::string& nw,
                const YAML::Node& constraints, const AttributeScope& scope, State& state,
                bool inParallel) {
        const auto [x, y] = meshOf(n, nw, scope);
        if (x * y <= 1)
            return;
        if (inParallel)
            throw InputError(nw + ".spatial", "is a fan-out inside !Parallel; expected "
                                              "fan-outs outside parallel branches");
        spatialLevel(name, constraints, state);
        state.meshX = countProduct(state.meshX, x, nw);
        state.meshY = countProduct(state.meshY, y, nw);
    }

    void emit(YAML::Node component, const std::string& name, const State& state) {
        if (!used_.insert(name).second)
            throw InputError(file_ + ": architecture",
                             "two nodes are named '" + name + "'; expected unique names");
        const std::int64_t instances = state.meshX * state.meshY;
        component["name"] = name + "[1.." + std::to_string(instances) + "]";
        locals.push_back(component);
    }

    void node(const YAML::Node& n, State& state, bool inParallel) {
        const std::string where = whereOf(n);
        const std::string tag = n.Tag();
        if (!n.IsMap())
            throw InputError(where, "expected a node as a map, such as !Component {name: ...}");
        const YAML::Node enabled = child(n, "enabled");
        if (given(enabled) && !scalarAs<bool>(enabled, where + ".enabled", "true or false"))
            return;
        if (tag == "!Nothing")
            return;
        if (tag == "!Hierarchical" || tag == "!Pipelined") {
            walk(child(n, "nodes"), state, where + ".nodes");
            return;
        }
        if (tag == "!Parallel") {
            parallel(n, state, where);
            return;
        }
        if (tag != "!Container" && tag != "!Component")
            throw InputError(where, (tag == "?" || tag.empty() ? std::string("a node without a tag")
                                                               : "tag '" + tag + "'") +
                                        "; expected !Container, !Component, !Parallel, "
                                        "!Hierarchical or !Nothing");
        const std::string name = nameOf(n, where);
        const std::string nw = where + ": " + tag.substr(1) + " '" + name + "'";
        const YAML::Node constraints = child(n, "constraints");
        if (tag == "!Container") {
            state.attributes.push(child(n, "attributes"), nw + ".attributes");
            if (topName.empty())
                topName = name + "_top_level";
            fanOut(n, name, nw, constraints, state.attributes, state, inParallel);
            for (const char* k : {"temporal", "dataspace"})
                if (given(child(constraints, k)))
                    notes_.push_back(nw + ": its " + k +
                                     " constraints are ignored, as the front end ignores them "
                                     "(a container holds no data)");
            return;
        }
        // A component: its own attributes evaluated, then what it inherits.
        AttributeScope own = state.attributes;
        own.push(child(n, "attributes"), nw + ".attributes");
        fanOut(n, name, nw, constraints, own, state, inParallel);
        YAML::Node c = arena.make(YAML::NodeType::Map);
        for (const char* k : {"class", "subclass", "required_actions"})
            if (given(child(n, k)))
                c[k] = child(n, k);
        if (!given(child(n, "class")))
            throw InputError(nw, "missing 'class'; expected a storage or compute class");
        YAML::Node attrs = own.flattened(
            [&](const std::string& key, int depth) {
                // Inherited values skip the front end's own storage defaults.
                return depth == own.depth() - 1 || !frontEndDefault(key);
            },
            arena);
        attrs["meshX"] = state.meshX;
        attrs["meshY"] = state.meshY;
        c["attributes"] = attrs;
        emit(c, name, state);

        const YAML::Node dataspace = child(constraints, "dataspace");
        if (given(dataspace) || inParallel) {
            YAML::Node d = arena.make(YAML::NodeType::Map);
            const YAML::Node keep = child(dataspace, "keep");
            YAML::Node bypass = child(dataspace, "bypass");
            if (inParallel && !names_.spaces.empty()) {
                // A parallel branch bypasses every data space it does not keep.
                std::set<std::string> kept;
                if (given(keep))
                    for (const auto& k : keep)
                        kept.insert(text(k, nw + ".constraints.dataspace.keep"));
                bypass.reset(arena.make(YAML::NodeType::Sequence));
                for (const auto& s : names_.spaces)
                    if (!kept.count(s))
                        bypass.push_back(s);
            }
            if (given(keep))
                d["keep"] = keep;
            if (given(bypass) && bypass.size() > 0)
                d["bypass"] = bypass;
            addTarget(name, "bypass", d, {"keep", "bypass"});
        }
        if (isStorageClass(c["class"].Scalar()))
            addTarget(name, "temporal", child(constraints, "temporal"),
                      {"factors", "permutation", "no_reuse", "no_link_transfer"}, true);
    }

    void parallel(const YAML::Node& n, State& state, const std::string& where) {
        const YAML::Node branches = child(n, "nodes");
        if (!given(branches) || !branches.IsSequence())
            throw InputError(where + ".nodes", "expected the parallel branches as a list");
        // What each branch keeps; each branch bypasses what the others keep.
        std::vector<std::set<std::string>> kept;
        for (const auto& b : branches) {
            std::set<std::string> k;
            const YAML::Node keep = child(child(child(b, "constraints"), "dataspace"), "keep");
            if (given(keep) && keep.IsSequence())
                for (const auto& s : keep)
                    k.insert(text(s, whereOf(s)));
            kept.push_back(k);
        }
        for (std::size_t i = 0; i < kept.size(); ++i)
            for (std::size_t j = 0; j < i; ++j)
                for (const auto& s : kept[i])
                    if (kept[j].count(s))
                        throw InputError(where, "two parallel branches keep '" + s +
                                                    "'; expected each data space in one branch");
        for (const auto& b : branches) {
            State branch = state; // siblings: one mesh, and no attributes pass between them
            node(b, branch, true);
        }
    }
};

} // namespace

void expandNodeArchitecture(Spec& spec, std::vector<std::string>& notes, const Problem* problem) {
    Spec::Entry* entry = nullptr;
    for (const char* k : {"architecture", "arch"})
        if (spec.keys.count(k)) {
            entry = &spec.keys[k];
            break;
        }
    if (!entry || !given(child(entry->node, "nodes")))
        return;
    const std::string& file = entry->file;
    NodeWalker walker(file, problem ? problemNames(*problem) : problemNames(spec), notes);
    // Targets given apart: the front end's constraints.targets and the top
    // file's extra_mapping_constraints (a design's mapping.yaml).
    for (const char* key : {"constraints", "extra_mapping_constraints"})
        if (const Spec::Entry* extra = spec.find({key})) {
            const YAML::Node list = firstChild(extra->node, {"targets", "constraints"});
            if (given(list) && list.IsSequence())
                for (const auto& t : list)
                    walker.apart.push_back(t);
        }
    walker.merged.assign(walker.apart.size(), false);
    NodeWalker::State state;
    // The variables are the outermost attributes (technology, cycle time).
    if (const Spec::Entry* v = spec.find({"variables"}); v && given(v->node) && v->node.IsMap())
        state.attributes.push(v->node, at(v->file, v->node) + ": variables");
    walker.walk(child(entry->node, "nodes"), state, at(file, entry->node) + ": architecture.nodes");

    YAML::Node top = walker.arena.make(YAML::NodeType::Map);
    top["name"] = walker.topName.empty() ? std::string("system_top_level") : walker.topName;
    top["local"] = walker.locals;
    YAML::Node subtrees = walker.arena.make(YAML::NodeType::Sequence);
    subtrees.push_back(top);
    YAML::Node arch = walker.arena.make(YAML::NodeType::Map);
    arch["version"] = "0.4";
    arch["subtree"] = subtrees;
    entry->node.reset(arch);

    // Targets given apart on a target and type no node constrains join the list.
    for (std::size_t i = 0; i < walker.apart.size(); ++i)
        if (!walker.merged[i])
            walker.targets.push_back(walker.unmerged(walker.apart[i]));
    if (walker.targets.size() == 0)
        return;
    Spec::Entry& cons = spec.keys["architecture_constraints"];
    YAML::Node list = walker.arena.make(YAML::NodeType::Sequence);
    if (given(cons.node)) {
        const YAML::Node old = firstChild(cons.node, {"targets", "constraints"});
        if (given(old) && old.IsSequence())
            for (const auto& t : old)
                list.push_back(t);
    } else {
        cons.file = file;
    }
    for (const auto& t : walker.targets)
        list.push_back(t);
    YAML::Node section = walker.arena.make(YAML::NodeType::Map);
    section["targets"] = list;
    cons.node.reset(section);
}

} // namespace mw::timeloop_read
