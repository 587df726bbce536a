#include "io/timeloop.h"

#include "common/error.h"
#include "io/json_io.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <sstream>
#include <tuple>

namespace mw {

namespace {

constexpr std::int64_t kMaxCount = 1'000'000'000'000;

std::string at(const std::string& file, const YAML::Node& n) {
    const YAML::Mark mark = n.Mark();
    if (mark.line < 0)
        return file;
    return file + ":" + std::to_string(mark.line + 1);
}

YAML::Node parseYaml(const TimeloopText& file) {
    try {
        return YAML::Load(file.text);
    } catch (const YAML::ParserException& e) {
        throw InputError(file.name + ":" + std::to_string(e.mark.line + 1),
                         "malformed YAML (" + e.msg + ")");
    } catch (const YAML::Exception& e) {
        throw InputError(file.name, std::string("cannot be read as YAML (") + e.what() + ")");
    }
}

template <typename T> T scalarAs(const YAML::Node& n, const std::string& where, const char* what) {
    try {
        return n.as<T>();
    } catch (const YAML::Exception&) {
        throw InputError(where, std::string("expected ") + what);
    }
}

// A count within Timeloop's files: digits only, at most 10^12 (a count past
// that is a typo, and products of counts must not overflow).
std::int64_t parseCount(const std::string& digits, const std::string& where,
                        const std::string& what) {
    std::int64_t v = -1;
    const char* end = digits.data() + digits.size();
    const auto [stop, ec] = std::from_chars(digits.data(), end, v);
    if (digits.empty() || ec != std::errc() || stop != end || v < 0 || v > kMaxCount)
        throw InputError(where, what + " '" + digits + "': expected a whole number up to 10^12");
    return v;
}

// "ifmap_spad[1..168]" -> ("ifmap_spad", 168)
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

// a x b, both counts up to 10^12, refused beyond 10^12.
std::int64_t countProduct(std::int64_t a, std::int64_t b, const std::string& where) {
    if (a != 0 && b > kMaxCount / a)
        throw InputError(where, "more than 10^12 instances; expected a smaller hierarchy");
    return a * b;
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

struct Component {
    std::string name;
    std::string cls;
    std::int64_t instances;
    YAML::Node attributes;
    YAML::Node node;
};

void collectComponents(const YAML::Node& tree, std::int64_t multiplier, const std::string& path,
                       std::vector<Component>& out) {
    for (const auto& sub : tree) {
        std::int64_t mult = multiplier;
        if (sub["name"])
            mult = countProduct(
                mult, splitName(sub["name"].as<std::string>(), at(path, sub["name"])).second,
                at(path, sub["name"]));
        if (sub["local"])
            for (const auto& c : sub["local"]) {
                if (c["enabled"] && !c["enabled"].as<bool>())
                    continue;
                const auto [name, count] =
                    splitName(c["name"].as<std::string>(), at(path, c["name"]));
                out.push_back({name, c["class"] ? c["class"].as<std::string>() : "",
                               countProduct(mult, count, at(path, c["name"])), c["attributes"], c});
            }
        if (sub["subtree"])
            collectComponents(sub["subtree"], mult, path, out);
    }
}

bool isCompute(const Component& c) {
    const std::string cls = lower(c.cls);
    if (c.attributes && (c.attributes["depth"] || c.attributes["memory_depth"]))
        return false;
    return cls.find("mac") != std::string::npos || cls.find("compute") != std::string::npos ||
           cls.find("alu") != std::string::npos || cls.find("multiplier") != std::string::npos;
}

// Energies per action from the ERT, keyed by component name without path or range.
std::map<std::string, std::map<std::string, double>> readErt(const YAML::Node& root,
                                                             const std::string& path) {
    std::map<std::string, std::map<std::string, double>> table;
    const YAML::Node ert = root["ERT"] ? root["ERT"] : root;
    if (!ert["tables"])
        throw InputError(path, "missing 'ERT.tables'; expected Timeloop's energy reference table");
    for (const auto& t : ert["tables"]) {
        // "system_top_level.DRAM[1..1]" -> "DRAM"
        std::string name = splitName(t["name"].as<std::string>(), at(path, t["name"])).first;
        const auto dot = name.rfind('.');
        if (dot != std::string::npos)
            name = name.substr(dot + 1);
        for (const auto& action : t["actions"]) {
            const std::string an = action["name"].as<std::string>();
            double e = 0.0;
            if (action["energy"])
                e = scalarAs<double>(action["energy"], at(path, action), "a number for energy");
            else if (action["arguments"] && action["arguments"].IsSequence())
                for (const auto& arg : action["arguments"]) // older ERTs list variants
                    if (arg["energy"])
                        e = std::max(e, arg["energy"].as<double>());
            auto& slot = table[name][an];
            slot = std::max(slot, e);
        }
    }
    return table;
}

Architecture readArchitecture(const YAML::Node& root, const std::string& file,
                              const std::map<std::string, std::map<std::string, double>>& ert) {
    const YAML::Node archNode = root["architecture"];
    if (!archNode)
        throw InputError(file, "missing 'architecture'");
    std::vector<Component> comps;
    if (archNode["subtree"])
        collectComponents(archNode["subtree"], 1, file, comps);
    else
        throw InputError(at(file, archNode), "architecture: expected a v0.4 'subtree' hierarchy");

    Architecture a;
    a.name = "timeloop-import";
    bool haveCompute = false;
    for (const auto& c : comps) {
        const std::string where = at(file, c.node) + ": component '" + c.name + "'";
        auto attr = [&](const char* key) -> YAML::Node {
            return c.attributes ? c.attributes[key] : YAML::Node();
        };
        auto num = [&](const char* key, double fallback) {
            const YAML::Node n = attr(key);
            if (!n || n.IsNull())
                return fallback;
            return scalarAs<double>(n, where + "." + key, "a number");
        };
        // A whole-number attribute in [lo, hi]; outside it, an error naming the key.
        auto whole = [&](const char* key, double fallback, double lo, double hi) {
            const double v = num(key, fallback);
            if (!(v >= lo && v <= hi) || v != std::floor(v)) {
                std::ostringstream os;
                os << "is " << v << "; expected a whole number from " << lo << " to " << hi;
                throw InputError(where + "." + key, os.str());
            }
            return static_cast<std::int64_t>(v);
        };
        if (c.instances > std::numeric_limits<int>::max())
            throw InputError(where, std::to_string(c.instances) +
                                        " instances; expected at most 2^31 - 1 per component");
        const double instances = double(c.instances);
        // The instances as a meshX x meshY grid, meshX dividing them.
        auto mesh = [&] {
            const int x = static_cast<int>(whole("meshX", instances, 1, instances));
            if (c.instances % x != 0)
                throw InputError(where + ".meshX", "does not divide the instance count " +
                                                       std::to_string(c.instances));
            return std::pair<int, int>(x, static_cast<int>(c.instances / x));
        };
        const auto ertIt = ert.find(c.name);
        auto energy = [&](const char* action) {
            if (ertIt == ert.end())
                return 0.0;
            const auto e = ertIt->second.find(action);
            return e == ertIt->second.end() ? 0.0 : e->second;
        };
        if (isCompute(c)) {
            if (haveCompute)
                throw InputError(where, "a second compute level; expected one");
            haveCompute = true;
            a.compute.name = c.name;
            std::tie(a.compute.meshX, a.compute.meshY) = mesh();
            a.compute.wordBits = static_cast<int>(whole("datawidth", num("width", 16), 1, 1024));
            a.compute.macEnergy = energy("compute");
            continue;
        }
        if (haveCompute)
            throw InputError(where, "storage below the compute level is not supported");
        StorageLevel s;
        s.name = c.name;
        const std::string cls = lower(c.cls);
        if (cls == "dram")
            s.cls = LevelClass::DRAM;
        else if (cls.find("dummy") != std::string::npos)
            s.cls = LevelClass::Dummy;
        else if (cls.find("rf") != std::string::npos || cls.find("regfile") != std::string::npos)
            s.cls = LevelClass::RegFile;
        else
            s.cls = LevelClass::SRAM;
        const double width = whole("width", num("memory_width", 16), 1, 1 << 20);
        const std::int64_t wordBits =
            whole("datawidth", num("word-bits", num("word_bits", width)), 1, 1024);
        const std::int64_t block = whole(
            "block-size", num("block_size", std::floor(width / double(wordBits))), 0, 1 << 20);
        const std::int64_t depth = whole("depth", num("memory_depth", 0), 0, 1e12);
        s.wordBits = static_cast<int>(wordBits);
        s.blockSize = std::max(1, static_cast<int>(block));
        s.capacityWords =
            (s.cls == LevelClass::DRAM || s.cls == LevelClass::Dummy) ? 0 : depth * s.blockSize;
        std::tie(s.meshX, s.meshY) = mesh();
        s.readBandwidth = num("read_bandwidth", 0.0);
        s.writeBandwidth = num("write_bandwidth", 0.0);
        s.multipleBuffering = num("multiple_buffering", 1.0);
        s.energy.read = energy("read");
        s.energy.write = energy("write");
        s.energy.update = energy("update");
        s.energy.leak = energy("leak");
        a.levels.push_back(s);
    }
    if (!haveCompute)
        throw InputError(file + ": architecture",
                         "has no compute level; expected a component of a MAC class");
    try {
        validateArchitecture(a);
    } catch (const InputError& e) {
        throw e.within(file);
    }
    return a;
}

Problem readProblem(const YAML::Node& root, const std::string& file) {
    const YAML::Node prob = root["problem"];
    if (!prob)
        throw InputError(file, "missing 'problem'");
    const YAML::Node shape = prob["shape"];
    const YAML::Node inst = prob["instance"];
    if (!shape || !inst)
        throw InputError(at(file, prob), "problem: expected 'shape' and 'instance'");
    std::map<std::string, std::int64_t> coef;
    if (shape["coefficients"])
        for (const auto& c : shape["coefficients"])
            coef[c["name"].as<std::string>()] = c["default"] ? c["default"].as<std::int64_t>() : 1;
    for (auto& [k, v] : coef)
        if (inst[k])
            v = scalarAs<std::int64_t>(inst[k], at(file, inst[k]) + ": problem.instance." + k,
                                       "an integer");
    std::vector<Dimension> dims;
    for (const auto& d : shape["dimensions"]) {
        const std::string name = d.as<std::string>();
        const YAML::Node b = inst[name];
        std::int64_t bound = 1;
        if (b)
            bound = scalarAs<std::int64_t>(b, at(file, b) + ": problem.instance." + name,
                                           "an integer bound");
        if (bound <= 0)
            throw InputError(at(file, b) + ": problem.instance." + name,
                             "is " + std::to_string(bound) + "; expected a positive integer");
        dims.push_back({name, bound});
    }
    std::vector<TensorSpec> tensors;
    for (const auto& ds : shape["data_spaces"]) {
        TensorSpec spec;
        spec.name = ds["name"].as<std::string>();
        const YAML::Node rw = ds["read_write"] ? ds["read_write"] : ds["read-write"];
        spec.readWrite = rw && rw.as<bool>();
        for (const auto& rank : ds["projection"]) {
            std::vector<std::pair<std::string, std::int64_t>> terms;
            if (rank.IsScalar()) { // shorthand: a bare dimension name
                terms.emplace_back(rank.as<std::string>(), 1);
            } else {
                for (const auto& term : rank) {
                    std::string dim;
                    std::int64_t c = 1;
                    if (term.IsScalar()) {
                        dim = term.as<std::string>();
                    } else {
                        dim = term[0].as<std::string>();
                        for (std::size_t k = 1; k < term.size(); ++k) {
                            const std::string cn = term[k].as<std::string>();
                            auto it = coef.find(cn);
                            if (it == coef.end())
                                throw InputError(at(file, term) + ": problem.data_spaces." +
                                                     spec.name,
                                                 "unknown coefficient '" + cn + "'");
                            c *= it->second;
                        }
                    }
                    terms.emplace_back(dim, c);
                }
            }
            spec.ranks.push_back(terms);
        }
        tensors.push_back(spec);
    }
    const std::string name = shape["name"] ? shape["name"].as<std::string>() : "problem";
    std::vector<std::pair<std::string, std::int64_t>> coefs(coef.begin(), coef.end());
    try {
        return makeProblem(name, dims, tensors, coefs);
    } catch (const InputError& e) {
        throw e.within(file);
    }
}

// "R=3,P=16", "C1 M8 R1" or "C=1 M=8": dimension name followed by a factor.
std::vector<std::pair<std::string, std::int64_t>>
parseFactors(const std::string& text, const Problem& p, const std::string& where) {
    std::vector<std::pair<std::string, std::int64_t>> out;
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() &&
               (std::isspace(static_cast<unsigned char>(text[i])) || text[i] == ','))
            ++i;
        if (i >= text.size())
            break;
        std::size_t j = i;
        while (j < text.size() && !std::isdigit(static_cast<unsigned char>(text[j])) &&
               text[j] != '=' && !std::isspace(static_cast<unsigned char>(text[j])) &&
               text[j] != ',')
            ++j;
        const std::string name = text.substr(i, j - i);
        if (j < text.size() && text[j] == '=')
            ++j;
        std::size_t k = j;
        while (k < text.size() && std::isdigit(static_cast<unsigned char>(text[k])))
            ++k;
        if (k == j)
            throw InputError(where,
                             "factors '" + text + "': expected a number after '" + name + "'");
        if (p.dimIndex(name) < 0)
            throw InputError(where, "factors '" + text + "': unknown dimension '" + name + "'");
        out.emplace_back(name, parseCount(text.substr(j, k - j), where, "factor of " + name));
        i = k;
    }
    return out;
}

// Timeloop permutations list dimensions innermost first.
std::vector<int> parsePermutation(const std::string& text, const Problem& p,
                                  const std::string& where) {
    std::vector<int> innerFirst;
    std::istringstream words(text);
    std::string w;
    std::vector<std::string> tokens;
    while (words >> w)
        tokens.push_back(w);
    if (tokens.size() == 1 && p.dimIndex(tokens[0]) < 0) { // "MPCQRSN": one letter each
        tokens.clear();
        for (char c : text)
            if (!std::isspace(static_cast<unsigned char>(c)))
                tokens.emplace_back(1, c);
    }
    for (const auto& t : tokens) {
        const int d = p.dimIndex(t);
        if (d < 0)
            throw InputError(where, "permutation '" + text + "': unknown dimension '" + t + "'");
        if (std::find(innerFirst.begin(), innerFirst.end(), d) == innerFirst.end())
            innerFirst.push_back(d);
    }
    return innerFirst;
}

void applyOrder(std::array<std::uint8_t, kMaxDims>& order, const std::vector<int>& innerFirst,
                int numDims) {
    // Unlisted dimensions go outermost, keeping their natural order.
    std::vector<int> outerFirst;
    for (int d = 0; d < numDims; ++d)
        if (std::find(innerFirst.begin(), innerFirst.end(), d) == innerFirst.end())
            outerFirst.push_back(d);
    for (auto it = innerFirst.rbegin(); it != innerFirst.rend(); ++it)
        outerFirst.push_back(*it);
    for (int i = 0; i < numDims; ++i)
        order[i] = static_cast<std::uint8_t>(outerFirst[i]);
}

Mapping readMapping(const YAML::Node& list, const std::string& file, const Problem& p,
                    const Architecture& a) {
    Mapping m = makeTrivialMapping(p, a);
    for (const auto& dir : list) {
        const std::string where = at(file, dir) + ": mapping";
        if (!dir["target"] || !dir["type"])
            throw InputError(where, "each directive needs 'target' and 'type'");
        const std::string target = dir["target"].as<std::string>();
        const std::string type = dir["type"].as<std::string>();
        const int l = a.levelIndex(target);
        if (l < 0)
            throw InputError(where + ".target", "'" + target + "' is not a storage level");
        LevelMapping& lm = m.levels[l];
        if (type == "temporal" || type == "spatial") {
            const bool spatial = type == "spatial";
            std::vector<int> innerFirst;
            if (dir["permutation"])
                innerFirst = parsePermutation(dir["permutation"].as<std::string>(), p, where);
            if (dir["factors"])
                for (const auto& [name, f] :
                     parseFactors(dir["factors"].as<std::string>(), p, where + ".factors")) {
                    if (f <= 0)
                        throw InputError(where + ".factors", "factor of " + name + " is " +
                                                                 std::to_string(f) +
                                                                 "; expected a positive integer");
                    const int d = p.dimIndex(name);
                    if (f > p.dims[d].bound)
                        throw InputError(where + ".factors", "factor of " + name + " is " +
                                                                 std::to_string(f) +
                                                                 " but its bound is " +
                                                                 std::to_string(p.dims[d].bound));
                    if (!spatial)
                        lm.temporal[d] = static_cast<std::uint32_t>(f);
                }
            if (!spatial) {
                applyOrder(lm.order, innerFirst, p.numDims());
                continue;
            }
            // Spatial: dimensions before `split` in the permutation go to X, the rest to Y.
            const std::size_t split =
                dir["split"] ? dir["split"].as<std::size_t>() : innerFirst.size() + p.numDims();
            std::map<int, std::int64_t> factor;
            if (dir["factors"])
                for (const auto& [name, f] :
                     parseFactors(dir["factors"].as<std::string>(), p, where + ".factors"))
                    factor[p.dimIndex(name)] = f;
            std::vector<int> perm = innerFirst;
            for (int d = 0; d < p.numDims(); ++d)
                if (std::find(perm.begin(), perm.end(), d) == perm.end())
                    perm.push_back(d);
            for (std::size_t k = 0; k < perm.size(); ++k) {
                const int d = perm[k];
                const auto f = static_cast<std::uint32_t>(factor.count(d) ? factor[d] : 1);
                lm.spatialX[d] = k < split ? f : 1;
                lm.spatialY[d] = k < split ? 1 : f;
            }
            applyOrder(lm.spatialOrder, innerFirst, p.numDims());
        } else if (type == "bypass" || type == "datatype") {
            auto names = [&](const char* key) {
                std::vector<int> ts;
                if (dir[key])
                    for (const auto& n : dir[key]) {
                        const int t = p.tensorIndex(n.as<std::string>());
                        if (t < 0)
                            throw InputError(where + "." + key,
                                             "unknown data space '" + n.as<std::string>() + "'");
                        ts.push_back(t);
                    }
                return ts;
            };
            for (int t : names("keep"))
                lm.setKeep(t, true);
            for (int t : names("bypass"))
                lm.setKeep(t, false);
        } else {
            throw InputError(where + ".type",
                             "is '" + type + "'; expected temporal, spatial, bypass or datatype");
        }
    }
    return m;
}

std::string dimsText(const Problem& p, const std::vector<int>& dims) {
    bool single = true;
    for (const auto& d : p.dims)
        single = single && d.name.size() == 1;
    std::string s;
    for (int d : dims) {
        if (!single && !s.empty())
            s += ' ';
        s += p.dims[d].name;
    }
    return s;
}

} // namespace

TimeloopCase importTimeloop(const std::string& inputYaml, const std::string& ertYaml,
                            const std::string& mappingYaml) {
    return importTimeloopTexts(
        {inputYaml, readTextFile(inputYaml)}, {ertYaml, readTextFile(ertYaml)},
        mappingYaml.empty() ? TimeloopText{}
                            : TimeloopText{mappingYaml, readTextFile(mappingYaml)});
}

TimeloopCase importTimeloopTexts(const TimeloopText& input, const TimeloopText& ertText,
                                 const TimeloopText& mappingText) {
    const std::string& inputYaml = input.name;
    const YAML::Node root = parseYaml(input);
    TimeloopCase c;
    // Where a YAML error points: the file being read when it was thrown.
    const std::string* reading = &ertText.name;
    try {
        const YAML::Node ertRoot = parseYaml(ertText);
        const auto ert = readErt(ertRoot, ertText.name);
        reading = &inputYaml;
        c.arch = readArchitecture(root, inputYaml, ert);
        c.problem = readProblem(root, inputYaml);
        c.mapping = makeTrivialMapping(c.problem, c.arch);
        if (!mappingText.name.empty()) {
            reading = &mappingText.name;
            const YAML::Node mroot = parseYaml(mappingText);
            const YAML::Node list = mroot["mapping"] ? mroot["mapping"] : mroot;
            if (!list.IsSequence())
                throw InputError(mappingText.name, "expected a 'mapping' list of directives");
            c.mapping = readMapping(list, mappingText.name, c.problem, c.arch);
            c.hasMapping = true;
        } else if (root["mapping"] && root["mapping"].IsSequence() && root["mapping"].size() > 0) {
            c.mapping = readMapping(root["mapping"], inputYaml, c.problem, c.arch);
            c.hasMapping = true;
        }
    } catch (const YAML::Exception& e) {
        throw InputError(*reading + (e.mark.line >= 0 ? ":" + std::to_string(e.mark.line + 1) : ""),
                         "unexpected YAML content (" + e.msg + ")");
    }
    return c;
}

std::string timeloopArchitectureYaml(const Architecture& a) {
    YAML::Emitter out;
    out << YAML::BeginMap << YAML::Key << "architecture" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "version" << YAML::Value << YAML::SingleQuoted << "0.4";
    out << YAML::Key << "subtree" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << "system";
    out << YAML::Key << "attributes" << YAML::Value << YAML::BeginMap << YAML::Key << "version"
        << YAML::Value << YAML::SingleQuoted << "0.4" << YAML::Key << "technology" << YAML::Value
        << "40nm" << YAML::EndMap;
    out << YAML::Key << "local" << YAML::Value << YAML::BeginSeq;
    for (const auto& s : a.levels) {
        out << YAML::BeginMap;
        out << YAML::Key << "name" << YAML::Value
            << s.name + "[1.." + std::to_string(s.instances()) + "]";
        const char* cls = s.cls == LevelClass::DRAM      ? "DRAM"
                          : s.cls == LevelClass::Dummy   ? "dummy_storage"
                          : s.cls == LevelClass::RegFile ? "regfile"
                                                         : "SRAM";
        out << YAML::Key << "class" << YAML::Value << cls;
        out << YAML::Key << "attributes" << YAML::Value << YAML::BeginMap;
        if (s.cls == LevelClass::Dummy) {
            out << YAML::Key << "width" << YAML::Value << 1 << YAML::Key << "depth" << YAML::Value
                << 1 << YAML::Key << "datawidth" << YAML::Value << 1;
        } else {
            out << YAML::Key << "width" << YAML::Value << s.wordBits * s.blockSize;
            out << YAML::Key << "datawidth" << YAML::Value << s.wordBits;
            out << YAML::Key << "block_size" << YAML::Value << s.blockSize;
            if (!s.unbounded())
                out << YAML::Key << "depth" << YAML::Value << s.capacityWords / s.blockSize;
        }
        if (s.readBandwidth > 0)
            out << YAML::Key << "read_bandwidth" << YAML::Value << s.readBandwidth;
        if (s.writeBandwidth > 0)
            out << YAML::Key << "write_bandwidth" << YAML::Value << s.writeBandwidth;
        out << YAML::Key << "multiple_buffering" << YAML::Value << s.multipleBuffering;
        out << YAML::Key << "meshX" << YAML::Value << s.meshX;
        out << YAML::Key << "meshY" << YAML::Value << s.meshY;
        out << YAML::EndMap << YAML::EndMap;
    }
    out << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value
        << a.compute.name + "[1.." + std::to_string(a.compute.instances()) + "]";
    out << YAML::Key << "class" << YAML::Value << "intmac";
    out << YAML::Key << "attributes" << YAML::Value << YAML::BeginMap << YAML::Key << "datawidth"
        << YAML::Value << a.compute.wordBits << YAML::Key << "meshX" << YAML::Value
        << a.compute.meshX << YAML::Key << "meshY" << YAML::Value << a.compute.meshY
        << YAML::EndMap;
    out << YAML::EndMap;
    out << YAML::EndSeq << YAML::EndMap << YAML::EndSeq << YAML::EndMap << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

std::string timeloopProblemYaml(const Problem& p) {
    YAML::Emitter out;
    out << YAML::BeginMap << YAML::Key << "problem" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "version" << YAML::Value << YAML::SingleQuoted << "0.4";
    out << YAML::Key << "shape" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << (p.name.empty() ? "problem" : p.name);
    out << YAML::Key << "dimensions" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const auto& d : p.dims)
        out << d.name;
    out << YAML::EndSeq;
    // Coefficients other than 1 become named coefficients of the shape.
    std::vector<std::pair<std::string, std::int64_t>> coefs;
    auto coefName = [&](std::int64_t value) {
        for (const auto& [n, v] : coefs)
            if (v == value)
                return n;
        coefs.emplace_back("c" + std::to_string(value), value);
        return coefs.back().first;
    };
    out << YAML::Key << "data_spaces" << YAML::Value << YAML::BeginSeq;
    for (const auto& ds : p.tensors) {
        out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << ds.name;
        out << YAML::Key << "projection" << YAML::Value << YAML::BeginSeq;
        for (int r = 0; r < ds.numRanks; ++r) {
            out << YAML::Flow << YAML::BeginSeq;
            for (int i = 0; i < ds.ranks[r].numTerms; ++i) {
                const auto& term = ds.ranks[r].terms[i];
                out << YAML::Flow << YAML::BeginSeq << p.dims[term.dim].name;
                if (term.coef != 1)
                    out << coefName(term.coef);
                out << YAML::EndSeq;
            }
            out << YAML::EndSeq;
        }
        out << YAML::EndSeq;
        if (ds.readWrite)
            out << YAML::Key << "read_write" << YAML::Value << true;
        out << YAML::EndMap;
    }
    out << YAML::EndSeq;
    if (!coefs.empty()) {
        out << YAML::Key << "coefficients" << YAML::Value << YAML::BeginSeq;
        for (const auto& [n, v] : coefs)
            out << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << n
                << YAML::Key << "default" << YAML::Value << v << YAML::EndMap;
        out << YAML::EndSeq;
    }
    out << YAML::EndMap;
    out << YAML::Key << "instance" << YAML::Value << YAML::BeginMap;
    for (const auto& d : p.dims)
        out << YAML::Key << d.name << YAML::Value << d.bound;
    out << YAML::EndMap << YAML::EndMap << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

std::string timeloopMappingYaml(const Problem& p, const Architecture& a, const Mapping& m) {
    YAML::Emitter out;
    out << YAML::BeginMap << YAML::Key << "mapping" << YAML::Value << YAML::BeginSeq;
    const int D = p.numDims();
    for (int l = a.numLevels() - 1; l >= 0; --l) {
        const LevelMapping& lm = m.levels[l];
        const std::string& target = a.levels[l].name;
        std::vector<int> keep, bypass;
        for (int t = 0; t < p.numTensors(); ++t)
            (lm.keeps(t) ? keep : bypass).push_back(t);
        out << YAML::BeginMap << YAML::Key << "target" << YAML::Value << target;
        out << YAML::Key << "type" << YAML::Value << "datatype";
        out << YAML::Key << "keep" << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (int t : keep)
            out << p.tensors[t].name;
        out << YAML::EndSeq << YAML::Key << "bypass" << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (int t : bypass)
            out << p.tensors[t].name;
        out << YAML::EndSeq << YAML::EndMap;

        std::vector<int> innerFirst;
        for (int i = D - 1; i >= 0; --i)
            innerFirst.push_back(lm.order[i]);
        std::string factors;
        for (int d = 0; d < D; ++d)
            factors += (d ? " " : "") + p.dims[d].name + "=" + std::to_string(lm.temporal[d]);
        out << YAML::BeginMap << YAML::Key << "target" << YAML::Value << target;
        out << YAML::Key << "type" << YAML::Value << "temporal";
        out << YAML::Key << "factors" << YAML::Value << factors;
        out << YAML::Key << "permutation" << YAML::Value << dimsText(p, innerFirst);
        out << YAML::EndMap;

        bool anySpatial = false;
        for (int d = 0; d < D; ++d) {
            anySpatial = anySpatial || lm.spatialX[d] > 1 || lm.spatialY[d] > 1;
            if (lm.spatialX[d] > 1 && lm.spatialY[d] > 1)
                throw InputError("mapping", "level " + target + ": dimension " + p.dims[d].name +
                                                " fans out on both X (" +
                                                std::to_string(lm.spatialX[d]) + ") and Y (" +
                                                std::to_string(lm.spatialY[d]) +
                                                "); Timeloop gives each dimension one spatial "
                                                "factor per level, on X or Y");
        }
        if (!anySpatial)
            continue;
        // X loops first (innermost first), then Y loops, then unit dimensions;
        // split counts the X loops.
        std::vector<int> xs, ys, unit;
        for (int i = D - 1; i >= 0; --i) {
            const int d = lm.spatialOrder[i];
            if (lm.spatialX[d] > 1)
                xs.push_back(d);
            else if (lm.spatialY[d] > 1)
                ys.push_back(d);
            else
                unit.push_back(d);
        }
        std::string sf;
        for (int d = 0; d < D; ++d)
            sf += (d ? " " : "") + p.dims[d].name + "=" +
                  std::to_string(lm.spatialX[d] * lm.spatialY[d]);
        std::vector<int> perm = xs;
        perm.insert(perm.end(), ys.begin(), ys.end());
        perm.insert(perm.end(), unit.begin(), unit.end());
        out << YAML::BeginMap << YAML::Key << "target" << YAML::Value << target;
        out << YAML::Key << "type" << YAML::Value << "spatial";
        out << YAML::Key << "factors" << YAML::Value << sf;
        out << YAML::Key << "permutation" << YAML::Value << dimsText(p, perm);
        out << YAML::Key << "split" << YAML::Value << xs.size();
        out << YAML::EndMap;
    }
    out << YAML::EndSeq << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

std::string timeloopErtYaml(const Architecture& a) {
    YAML::Emitter out;
    out << YAML::BeginMap << YAML::Key << "ERT" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "version" << YAML::Value << YAML::SingleQuoted << "0.4";
    out << YAML::Key << "tables" << YAML::Value << YAML::BeginSeq;
    auto action = [&](const char* name, double e) {
        out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << name << YAML::Key
            << "arguments" << YAML::Value << YAML::Null << YAML::Key << "energy" << YAML::Value << e
            << YAML::EndMap;
    };
    for (const auto& s : a.levels) {
        if (s.cls == LevelClass::Dummy)
            continue;
        out << YAML::BeginMap << YAML::Key << "name" << YAML::Value
            << "system." + s.name + "[1.." + std::to_string(s.instances()) + "]";
        out << YAML::Key << "actions" << YAML::Value << YAML::BeginSeq;
        action("read", s.energy.read);
        action("write", s.energy.write);
        action("update", s.energy.update);
        action("leak", s.energy.leak);
        out << YAML::EndSeq << YAML::EndMap;
    }
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value
        << "system." + a.compute.name + "[1.." + std::to_string(a.compute.instances()) + "]";
    out << YAML::Key << "actions" << YAML::Value << YAML::BeginSeq;
    action("compute", a.compute.macEnergy);
    out << YAML::EndSeq << YAML::EndMap;
    out << YAML::EndSeq << YAML::EndMap << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

void exportTimeloop(const Problem& p, const Architecture& a, const Mapping& m,
                    const std::string& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec)
        throw InputError(dir, "cannot create the output directory (" + ec.message() + ")");
    const std::filesystem::path d(dir);
    writeTextFile((d / "arch.yaml").string(), timeloopArchitectureYaml(a));
    writeTextFile((d / "problem.yaml").string(), timeloopProblemYaml(p));
    writeTextFile((d / "mapping.yaml").string(), timeloopMappingYaml(p, a, m));
    writeTextFile((d / "ERT.yaml").string(), timeloopErtYaml(a));
}

} // namespace mw
