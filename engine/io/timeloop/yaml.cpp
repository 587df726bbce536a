#include "io/timeloop/yaml.h"

#include "io/timeloop/node_arena.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <utility>

namespace mw::timeloop_yaml {

namespace {

YAML::Node load(const std::string& name, const std::string& text) {
    try {
        return YAML::Load(text);
    } catch (const YAML::ParserException& e) {
        throw InputError(name + ":" + std::to_string(e.mark.line + 1),
                         "malformed YAML (" + e.msg + ")");
    } catch (const YAML::Exception& e) {
        throw InputError(name, std::string("cannot be read as YAML (") + e.what() + ")");
    }
}

bool isMap(const YAML::Node& n) {
    return n.IsDefined() && n.IsMap();
}

// A deep copy of n (anchored nodes are shared: a merge must not change them).
YAML::Node copyOf(const YAML::Node& n) {
    return YAML::Clone(n);
}

// The front end's <<< of `base` under `own`: keys only in base are added;
// where both have a key, maps merge recursively, lists join (own first), and
// own's value stays otherwise.
YAML::Node deepMerge(const YAML::Node& own, const YAML::Node& base, NodeArena& arena) {
    if (isMap(own) && isMap(base)) {
        YAML::Node out = arena.make(YAML::NodeType::Map);
        out.SetTag(own.Tag());
        for (const auto& kv : own) {
            const YAML::Node b = base[kv.first.Scalar()];
            out[kv.first.Scalar()] = b.IsDefined() ? deepMerge(kv.second, b, arena) : kv.second;
        }
        for (const auto& kv : base)
            if (!own[kv.first.Scalar()].IsDefined())
                out[kv.first.Scalar()] = copyOf(kv.second);
        return out;
    }
    if (own.IsDefined() && own.IsSequence() && base.IsDefined() && base.IsSequence()) {
        YAML::Node out = arena.make(YAML::NodeType::Sequence);
        for (const auto& v : own)
            out.push_back(v);
        for (const auto& v : base)
            out.push_back(copyOf(v));
        return out;
    }
    return own;
}

// The maps a merge key names: one map, or a list of them (earlier ones win).
std::vector<YAML::Node> mergedMaps(const YAML::Node& value, const std::string& where,
                                   const char* key) {
    std::vector<YAML::Node> maps;
    bool allMaps = true;
    if (isMap(value)) {
        maps.push_back(value);
    } else if (value.IsDefined() && value.IsSequence()) {
        for (const auto& v : value) {
            allMaps = allMaps && isMap(v);
            maps.push_back(v);
        }
    }
    if (maps.empty() || !allMaps)
        throw InputError(where, std::string(key) + ": expected a map (such as *anchor) or a "
                                                   "list of maps to merge");
    return maps;
}

// Nodes an expansion may visit. Aliases are shared in the parsed file but
// walked as a tree, so a short file of aliases of aliases (nine to a list,
// seven deep: 4.8 million nodes) would take seconds per level; the exercises'
// files visit fewer than 1,000 each.
constexpr long kMaxVisitedNodes = 1'000'000;
// Nodes the merge keys may copy (<< and <<<): a file of merges of merges
// (each level merging the last three times) copies three times as many nodes
// a level down, past a million at thirteen levels; a merge of
// problem_base.yaml, the exercises' largest, copies about 40.
constexpr long kMaxMergedNodes = 20'000;

// The nodes of n's tree (aliases counted each time they occur), counting
// stopped once past `limit`.
long treeSize(const YAML::Node& n, long limit) {
    long size = 1;
    if (n.IsMap()) {
        for (const auto& kv : n)
            if ((size += treeSize(kv.second, limit - size)) > limit)
                break;
    } else if (n.IsSequence()) {
        for (const auto& v : n)
            if ((size += treeSize(v, limit - size)) > limit)
                break;
    }
    return size;
}

// Notes the keys given twice in a map of n's tree, the first `budget` nodes
// of it (aliases each time they occur; callers give a tenth of what the
// expansion visits, and real files hold a few thousand).
void noteDuplicateKeys(const YAML::Node& n, const std::string& file, long& budget,
                       std::vector<std::string>& notes, int depth = 0) {
    // (An alias may hold itself, `&a {b: *a}`: the expansion refuses that
    // past 200 levels, and this walk stops there too.)
    if (--budget < 0 || depth > 200)
        return;
    if (n.IsMap()) {
        std::map<std::string, int> lineOf;
        for (const auto& kv : n) {
            if (kv.first.IsScalar()) {
                const int line = kv.first.Mark().line + 1;
                const auto [first, fresh] = lineOf.emplace(kv.first.Scalar(), line);
                const std::string said = file + ":" + std::to_string(line) + ": '";
                // (A map under an anchor is walked at each alias: said once.)
                if (!fresh && notes.size() < 100 &&
                    std::none_of(notes.begin(), notes.end(), [&](const std::string& n) {
                        return n.rfind(said + kv.first.Scalar() + "'", 0) == 0;
                    }))
                    notes.push_back(file + ":" + std::to_string(line) + ": '" + kv.first.Scalar() +
                                    "' is given twice in one map (first at line " +
                                    std::to_string(first->second) +
                                    "); the first is read, as timeloop-model reads it");
            }
            noteDuplicateKeys(kv.second, file, budget, notes, depth + 1);
        }
    } else if (n.IsSequence()) {
        for (const auto& v : n)
            noteDuplicateKeys(v, file, budget, notes, depth + 1);
    }
}

struct Expander {
    const TimeloopText& top;
    std::map<std::string, YAML::Node> loaded;  // included files, expanded, by path
    std::vector<std::string>* notes = nullptr; // (for keys given twice)
    int depth = 0;
    long visited = 0, merged = 0;
    NodeArena arena{}; // (the nodes the expansion makes)

    // Counts what a merge key copies of m (see kMaxMergedNodes).
    void countMerged(const YAML::Node& m, const std::string& name) {
        merged += treeSize(m, kMaxMergedNodes - merged + 1);
        if (merged > kMaxMergedNodes)
            throw InputError(name, "merges (<<, <<<) more than 20,000 nodes; expected a "
                                   "smaller file (merges of merges?)");
    }

    // The included file, parsed and expanded once.
    YAML::Node file(const std::string& path, const std::string& where) {
        const auto it = loaded.find(path);
        if (it != loaded.end()) {
            if (!it->second.IsDefined())
                throw InputError(where, "'" + path + "' includes itself; expected no include loop");
            return it->second;
        }
        if (!top.included || !top.included->count(path))
            throw InputError(where, "includes '" + path + "', which was not rendered");
        loaded[path] = YAML::Node(YAML::NodeType::Undefined);
        bool changed = false;
        const YAML::Node raw = load(path, top.included->at(path));
        if (notes) {
            long budget = kMaxVisitedNodes / 10;
            noteDuplicateKeys(raw, path, budget, *notes);
        }
        YAML::Node root = expand(raw, path, changed);
        loaded[path].reset(root); // (not =, which would copy root's memory into the marker's)
        return root;
    }

    // The value at `key` (dotted) of an included file.
    YAML::Node select(const std::string& path, const std::string& key, const std::string& where) {
        YAML::Node n = file(path, where);
        std::size_t start = 0;
        while (start < key.size()) {
            const std::size_t dot = std::min(key.find('.', start), key.size());
            const std::string part = key.substr(start, dot - start);
            const YAML::Node next = isMap(n) ? n[part] : YAML::Node(YAML::NodeType::Undefined);
            if (!next.IsDefined())
                throw InputError(path, "has no '" + key + "' (included by " + where +
                                           "); expected that key in it");
            n.reset(next);
            start = dot + 1;
        }
        return n;
    }

    YAML::Node include(const YAML::Node& n, const std::string& where) {
        const std::string path = n["file"].as<std::string>("");
        const std::string key = n["key"].as<std::string>("");
        return select(path, key, where);
    }

    // n with includes in place and merges applied; `changed` says whether
    // anything was (an unchanged node is returned as it is, marks and all).
    YAML::Node expand(const YAML::Node& n, const std::string& name, bool& changed) {
        if (++depth > 200)
            throw InputError(name, "nests more than 200 levels deep; expected a smaller file");
        if (++visited > kMaxVisitedNodes)
            throw InputError(name, "holds more than 1,000,000 nodes once its aliases are "
                                   "expanded; expected a smaller file (aliases of aliases?)");
        struct Leave {
            int& d;
            ~Leave() { --d; }
        } leave{depth};
        const std::string where = at(name, n);
        if (n.Tag() == "!mapwright-include") {
            changed = true;
            return include(n, where);
        }
        if (n.Tag() == "!mapwright-include-all") {
            changed = true;
            YAML::Node out = arena.make(YAML::NodeType::Sequence);
            const std::string key = n["key"].as<std::string>("");
            for (const auto& f : n["files"]) {
                const YAML::Node v = select(f.as<std::string>(""), key, where);
                if (v.IsSequence()) // lists of lists read as one list, as the front end's
                    for (const auto& e : v)
                        out.push_back(e);
                else
                    out.push_back(v);
            }
            return out;
        }
        if (n.IsSequence()) {
            std::vector<YAML::Node> items;
            bool any = false;
            for (const auto& v : n)
                items.push_back(expand(v, name, any));
            if (!any)
                return n;
            changed = true;
            YAML::Node out = arena.make(YAML::NodeType::Sequence);
            out.SetTag(n.Tag());
            for (const auto& v : items)
                out.push_back(v);
            return out;
        }
        if (!n.IsMap())
            return n;
        std::vector<std::pair<YAML::Node, YAML::Node>> items;
        YAML::Node shallow, deep; // what << and <<< merge, where given
        bool hasShallow = false, hasDeep = false, any = false;
        for (const auto& kv : n) {
            const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
            if (key == "<<") {
                shallow = expand(kv.second, name, any);
                hasShallow = any = true;
            } else if (key == "<<<") {
                deep = expand(kv.second, name, any);
                hasDeep = any = true;
            } else {
                items.emplace_back(kv.first, expand(kv.second, name, any));
            }
        }
        if (!any)
            return n;
        changed = true;
        YAML::Node out = arena.make(YAML::NodeType::Map);
        out.SetTag(n.Tag());
        for (const auto& [k, v] : items) // (a key given twice: the first, as unexpanded)
            if (!std::as_const(out)[k.Scalar()].IsDefined())
                out[k.Scalar()] = v;
        if (hasShallow)
            for (const YAML::Node& m : mergedMaps(shallow, where, "<<"))
                for (const auto& kv : (countMerged(m, name), m))
                    if (!std::as_const(out)[kv.first.Scalar()].IsDefined())
                        out[kv.first.Scalar()] = copyOf(kv.second);
        if (hasDeep) {
            // A list of maps is combined first, earlier entries winning.
            YAML::Node base = arena.make(YAML::NodeType::Map);
            for (const YAML::Node& m : mergedMaps(deep, where, "<<<")) {
                countMerged(m, name);
                base.reset(deepMerge(base, m, arena));
            }
            out.reset(deepMerge(out, base, arena));
        }
        return out;
    }
};

} // namespace

YAML::Node expandEntry(const Spec::Entry& entry) {
    const TimeloopText file{entry.file, "", entry.included};
    Expander expander{file, {}, nullptr};
    bool changed = false;
    try {
        return expander.expand(entry.node, entry.file, changed);
    } catch (const YAML::Exception& e) {
        throw InputError(entry.file, std::string("cannot be read as YAML (") + e.what() + ")");
    }
}

YAML::Node parseText(const TimeloopText& file, std::map<std::string, std::string>* origins,
                     std::vector<std::string>* notes) {
    Expander expander{file, {}, notes};
    bool changed = false;
    try {
        const YAML::Node raw = load(file.name, file.text);
        if (notes) {
            long budget = kMaxVisitedNodes / 10;
            noteDuplicateKeys(raw, file.name, budget, *notes);
        }
        // A top-level key whose value is included comes from that file.
        if (origins && raw.IsMap())
            for (const auto& kv : raw)
                if (kv.first.IsScalar() && kv.second.Tag() == "!mapwright-include")
                    (*origins)[kv.first.Scalar()] = kv.second["file"].as<std::string>("");
        if (!raw.IsMap())
            return expander.expand(raw, file.name, changed);
        // Top-level keys: each expanded, but for the compound component
        // classes, which the reader notes and does not read (a top file
        // includes every class it knows; parsing them all is most of the time).
        YAML::Node out = expander.arena.make(YAML::NodeType::Map);
        std::set<std::string> seen; // (by name: yaml-cpp finds a node key by identity)
        for (const auto& kv : raw) {
            const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
            if (!seen.insert(underscores(key)).second)
                continue; // given twice: the first
            out[kv.first] = (key == "components" || key == "compound_components")
                                ? kv.second
                                : expander.expand(kv.second, file.name, changed);
        }
        return out;
    } catch (const YAML::Exception& e) {
        throw InputError(file.name, std::string("cannot be read as YAML (") + e.what() + ")");
    }
}

std::string underscores(std::string s) {
    std::replace(s.begin(), s.end(), '-', '_');
    return s;
}

const Spec::Entry* Spec::find(std::initializer_list<const char*> names) const {
    for (const char* n : names) {
        const auto it = keys.find(n);
        if (it != keys.end())
            return &it->second;
    }
    return nullptr;
}

Spec mergeFiles(const std::vector<TimeloopText>& files) {
    if (files.empty())
        throw InputError("Timeloop input", "no files given; expected YAML files such as "
                                           "arch.yaml problem.yaml mapping.yaml");
    Spec spec;
    for (const TimeloopText& f : files) {
        std::map<std::string, std::string> origins;
        const YAML::Node root = parseText(f, &origins, &spec.notes);
        if (root.IsNull() || !root.IsDefined())
            continue; // an empty file adds nothing
        if (!root.IsMap())
            throw InputError(f.name, "expected a YAML map of top-level keys (architecture, "
                                     "problem, mapping, ...)");
        for (const auto& kv : root) {
            const std::string key = underscores(kv.first.Scalar());
            const auto origin = origins.find(kv.first.Scalar());
            spec.keys[key] = {kv.second, origin == origins.end() ? f.name : origin->second,
                              f.included};
        }
    }
    return spec;
}

std::string at(const std::string& file, const YAML::Node& n) {
    const YAML::Mark mark = n.Mark();
    if (mark.line < 0)
        return file;
    return file + ":" + std::to_string(mark.line + 1);
}

YAML::Node child(const YAML::Node& map, const std::string& key) {
    if (!map.IsDefined() || !map.IsMap())
        return YAML::Node();
    const std::string wanted = underscores(key);
    for (const auto& kv : map)
        if (kv.first.IsScalar() && underscores(kv.first.Scalar()) == wanted)
            return kv.second;
    return YAML::Node();
}

YAML::Node firstChild(const YAML::Node& map, std::initializer_list<const char*> keys) {
    for (const char* k : keys) {
        const YAML::Node n = child(map, k);
        if (given(n))
            return n;
    }
    return YAML::Node();
}

std::string text(const YAML::Node& n, const std::string& where) {
    if (!n.IsScalar())
        throw InputError(where, "expected a single value, got a list or map");
    return n.Scalar();
}

std::int64_t parseCount(const std::string& digits, const std::string& where,
                        const std::string& what) {
    std::int64_t v = -1;
    const char* end = digits.data() + digits.size();
    const auto [stop, ec] = std::from_chars(digits.data(), end, v);
    if (digits.empty() || ec != std::errc() || stop != end || v < 0 || v > kMaxCount)
        throw InputError(where, what + " '" + digits + "': expected a whole number up to 10^12");
    return v;
}

std::int64_t countProduct(std::int64_t a, std::int64_t b, const std::string& where) {
    if (a != 0 && b > kMaxCount / a)
        throw InputError(where, "more than 10^12 instances; expected a smaller hierarchy");
    return a * b;
}

std::pair<std::string, std::int64_t> splitName(const std::string& full, const std::string& where) {
    const auto open = full.find('[');
    if (open == std::string::npos)
        return {full, 1};
    const auto dots = full.find("..", open);
    const auto close = full.find(']', open);
    if (dots == std::string::npos || close == std::string::npos || close < dots)
        return {full.substr(0, open), 1};
    const std::string range = "the range of '" + full + "'";
    const std::int64_t lo = parseCount(full.substr(open + 1, dots - open - 1), where, range);
    const std::int64_t hi = parseCount(full.substr(dots + 2, close - dots - 2), where, range);
    if (hi < lo)
        throw InputError(where, range + " is empty; expected [first..last] with first <= last");
    return {full.substr(0, open), hi - lo + 1};
}

std::string tableComponentName(const std::string& full, const std::string& where) {
    // Ranges hold dots of their own: drop them before taking the last part.
    std::string plain;
    int depth = 0;
    for (char c : full) {
        if (c == '[')
            ++depth;
        else if (c == ']')
            depth = std::max(0, depth - 1);
        else if (depth == 0)
            plain += c;
    }
    if (depth != 0 || plain.empty())
        throw InputError(where, "table name '" + full + "': expected path.component[a..b]");
    const auto dot = plain.rfind('.');
    return dot == std::string::npos ? plain : plain.substr(dot + 1);
}

bool isStorageClass(const std::string& cls) {
    const std::string c = lowercase(cls);
    for (const char* s : {"dram", "sram", "regfile", "smartbuffer", "storage"})
        if (c.find(s) != std::string::npos)
            return true;
    return false;
}
bool isComputeClass(const std::string& cls) {
    const std::string c = lowercase(cls);
    for (const char* s : {"mac", "compute"})
        if (c.find(s) != std::string::npos)
            return true;
    return false;
}

} // namespace mw::timeloop_yaml
