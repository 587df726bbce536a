// Timeloop's architecture: the subtree/local tree as timeloop-model walks it
// (one subtree per level, storage outermost first, instances the product of
// the name ranges on the way down), each component's attributes as Timeloop
// reads them, energies from an ERT and areas from an ART where given, and
// the estimator for the rest (with the attributes Accelergy would see: a
// subtree's attributes are inherited by its components).
#include "estimate/estimator.h"
#include "io/timeloop/node_arena.h"
#include "io/timeloop/yaml.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace mw::timeloop_read {

namespace {

using namespace timeloop_yaml;

struct Component {
    std::string name;
    std::string cls;
    std::int64_t instances = 1;
    YAML::Node attributes;                       // its own, as Timeloop reads them
    std::map<std::string, YAML::Node> inherited; // the subtrees' attributes above it
    YAML::Node node;
    std::string file;
};

// Components of the tree rooted at `node`, outermost first.
void collectComponents(const YAML::Node& node, const std::string& file,
                       std::vector<Component>& out) {
    std::int64_t multiplier = 1;
    std::map<std::string, YAML::Node> inherited;
    YAML::Node cur = node;
    for (;;) {
        const YAML::Node subtrees = child(cur, "subtree");
        if (!given(subtrees))
            break;
        if (!subtrees.IsSequence() || subtrees.size() != 1)
            throw InputError(at(file, subtrees) + ": architecture.subtree",
                             "expected a list of exactly one subtree per level (as Timeloop "
                             "reads it); put sibling components in its 'local' list");
        cur = subtrees[0];
        const YAML::Node name = child(cur, "name");
        if (given(name)) {
            const std::string where = at(file, name);
            multiplier =
                countProduct(multiplier, splitName(text(name, where), where).second, where);
        }
        const YAML::Node attrs = child(cur, "attributes");
        if (given(attrs) && attrs.IsMap()) {
            std::set<std::string> here; // (a name given twice: the first)
            for (const auto& kv : attrs)
                if (here.insert(kv.first.Scalar()).second)
                    inherited[kv.first.Scalar()] = kv.second;
        }
        const YAML::Node local = child(cur, "local");
        if (!given(local))
            continue;
        if (!local.IsSequence())
            throw InputError(at(file, local) + ": architecture.local",
                             "expected a list of components");
        for (const auto& c : local) {
            const std::string where = at(file, c);
            if (!c.IsMap())
                throw InputError(where, "expected a component (name, class, attributes)");
            const YAML::Node enabled = child(c, "enabled");
            if (given(enabled) && !scalarAs<bool>(enabled, where + ".enabled", "true or false"))
                continue;
            const YAML::Node cname = child(c, "name");
            if (!given(cname))
                throw InputError(where, "a component without 'name'; expected name and class");
            const auto [base, count] = splitName(text(cname, where + ".name"), where);
            const YAML::Node cls = child(c, "class");
            if (!given(cls))
                throw InputError(where + ": component '" + base + "'",
                                 "missing 'class'; expected a storage class (DRAM, SRAM, regfile, "
                                 "smartbuffer_SRAM, smartbuffer_RF, dummy_storage) or a compute "
                                 "class (intmac, fpmac)");
            out.push_back({base, text(cls, where + ".class"),
                           countProduct(multiplier, count, where), child(c, "attributes"),
                           inherited, c, file});
        }
    }
}

bool isNetworkClass(const std::string& cls) {
    const std::string c = lowercase(cls);
    for (const char* s : {"xy_noc", "legacy", "reductiontree", "simplemulticast", "noc"})
        if (c.find(s) != std::string::npos)
            return true;
    return false;
}

// "45nm", "45 nm", 45 -> 45; the placeholders Timeloop's files carry where
// an ERT prices the component (-1, "SET ME", must_specify) -> 0; else an error.
double parseTechnology(const YAML::Node& n, const std::string& where) {
    std::string t = lowercase(text(n, where));
    t.erase(std::remove(t.begin(), t.end(), ' '), t.end());
    if (t == "-1" || t == "setme" || t == "must_specify" || t.empty())
        return 0.0;
    if (t.size() > 2 && t.compare(t.size() - 2, 2, "nm") == 0)
        t.resize(t.size() - 2);
    try {
        std::size_t used = 0;
        const double nm = std::stod(t, &used);
        if (used == t.size() && nm > 0 && nm < 1e4)
            return nm;
    } catch (const std::exception&) {
    }
    throw InputError(where, "is '" + n.Scalar() + "'; expected a process node such as 45nm");
}

EnergyTable readErt(const Spec::Entry& e) {
    EnergyTable table;
    const YAML::Node tables = child(e.node, "tables");
    if (!given(tables) || !tables.IsSequence())
        throw InputError(at(e.file, e.node) + ": ERT",
                         "missing 'tables'; expected Timeloop's energy reference table");
    for (const auto& t : tables) {
        const std::string where = at(e.file, t) + ": ERT";
        const std::string name = tableComponentName(text(child(t, "name"), where + ".name"), where);
        const YAML::Node actions = child(t, "actions");
        if (!given(actions) || !actions.IsSequence())
            throw InputError(where + "." + name, "expected a list of 'actions'");
        for (const auto& action : actions) {
            const std::string aw = at(e.file, action) + ": ERT." + name;
            const std::string an = text(child(action, "name"), aw + ".name");
            double energy = 0.0;
            const YAML::Node en = child(action, "energy");
            if (given(en)) {
                energy = scalarAs<double>(en, aw + "." + an + ".energy", "a number");
            } else {
                const YAML::Node args = child(action, "arguments");
                if (given(args) && args.IsSequence()) // older ERTs list variants
                    for (const auto& arg : args)
                        if (given(child(arg, "energy")))
                            energy = std::max(energy, scalarAs<double>(child(arg, "energy"),
                                                                       aw + "." + an, "a number"));
            }
            if (!(energy >= 0))
                throw InputError(aw + "." + an + ".energy", "expected a non-negative number");
            auto& slot = table[name][an];
            slot = std::max(slot, energy); // Timeloop keeps the costliest variant
        }
    }
    return table;
}

std::map<std::string, double> readArt(const Spec::Entry& e) {
    std::map<std::string, double> areas;
    const YAML::Node tables = child(e.node, "tables");
    if (!given(tables) || !tables.IsSequence())
        throw InputError(at(e.file, e.node) + ": ART",
                         "missing 'tables'; expected Timeloop's area reference table");
    for (const auto& t : tables) {
        const std::string where = at(e.file, t) + ": ART";
        const std::string name = tableComponentName(text(child(t, "name"), where + ".name"), where);
        const double area =
            scalarAs<double>(child(t, "area"), where + "." + name + ".area", "a number (um^2)");
        if (!(area >= 0))
            throw InputError(where + "." + name + ".area", "expected a non-negative number");
        areas[name] = area;
    }
    return areas;
}

// The first of Timeloop's names for an action the table gives (topology.hpp's
// priority lists), or null.
const double* action(const std::map<std::string, double>* actions,
                     std::initializer_list<const char*> names) {
    if (!actions)
        return nullptr;
    for (const char* n : names) {
        const auto it = actions->find(n);
        if (it != actions->end())
            return &it->second;
    }
    return nullptr;
}

} // namespace

namespace {

// The attributes of a storage or compute component that Timeloop's model
// reads (buffer.cpp, arithmetic.cpp), as read above. Others go to Accelergy's
// estimators, which take names of their own; only one within two letters of
// these is more likely a slip than an estimator's ("read_bandwith", a
// "data_width" that left the word at 16 bits).
const std::vector<std::string>& timeloopAttributes() {
    static const std::vector<std::string> names = {"word_bits",
                                                   "word_width",
                                                   "datawidth",
                                                   "block_size",
                                                   "n_words",
                                                   "cluster_size",
                                                   "width",
                                                   "memory_width",
                                                   "data_storage_width",
                                                   "entries",
                                                   "depth",
                                                   "memory_depth",
                                                   "data_storage_depth",
                                                   "sizeKB",
                                                   "meshX",
                                                   "meshY",
                                                   "bandwidth",
                                                   "read_bandwidth",
                                                   "write_bandwidth",
                                                   "multiple_buffering",
                                                   "min_utilization",
                                                   "n_banks",
                                                   "num_banks",
                                                   "shared_bandwidth",
                                                   "technology",
                                                   "type",
                                                   "multiplier_width",
                                                   "adder_width"};
    return names;
}

// Notes an attribute of c that is near, but not, one Timeloop reads: it
// ignores it, and so do we, but the user meant something. Returns them as
// a hint for an error the component then causes ("'data_width' (did you
// mean 'datawidth'?)"; empty: none).
std::string noteNearMisses(const YAML::Node& attributes, const std::string& where,
                           std::vector<std::string>& notes) {
    std::string hint;
    if (!attributes.IsMap())
        return hint;
    const auto& names = timeloopAttributes();
    // Accelergy's own, near ones of Timeloop's (an SRAM's ports, an
    // adder's operand widths).
    static const std::vector<std::string> estimators = {"n_ports", "width_a", "width_b"};
    for (const auto& kv : attributes) {
        const std::string key = underscores(kv.first.Scalar()); // (as child() reads them)
        if (std::find(names.begin(), names.end(), key) != names.end() ||
            std::find(estimators.begin(), estimators.end(), key) != estimators.end())
            continue;
        const std::string meant = didYouMean(key, names);
        if (meant.empty())
            continue;
        notes.push_back(where + "." + kv.first.Scalar() + ": is not an attribute Timeloop reads" +
                        meant + "; ignored, as Timeloop ignores it");
        hint += (hint.empty() ? "'" : ", '") + kv.first.Scalar() + "'" + meant;
    }
    return hint;
}

// readArchitecture; `slips` receives each component's near misses (see
// noteNearMisses) by where its errors are placed.
Architecture readComponents(const Spec& spec, std::vector<std::string>& notes,
                            std::map<std::string, std::string>& slips);

} // namespace

Architecture readArchitecture(const Spec& spec, std::vector<std::string>& notes) {
    // A component's error says what it ignored: a slip ("data_width") is
    // often its cause, and the notes are lost with the import.
    std::map<std::string, std::string> slips;
    try {
        return readComponents(spec, notes, slips);
    } catch (const InputError& e) {
        for (const auto& [where, hint] : slips)
            if (e.where().rfind(where, 0) == 0)
                throw InputError(e.where(), e.detail() +
                                                "; not read, as Timeloop does not "
                                                "read it: " +
                                                hint);
        throw;
    }
}

namespace {

Architecture readComponents(const Spec& spec, std::vector<std::string>& notes,
                            std::map<std::string, std::string>& slips) {
    const Spec::Entry* archEntry = spec.find({"architecture", "arch"});
    if (!archEntry)
        throw InputError(spec.keys.empty() ? std::string("Timeloop input")
                                           : spec.keys.begin()->second.file,
                         "missing 'architecture'; expected the accelerator as architecture: "
                         "{subtree: ...}");
    const std::string& file = archEntry->file;
    const YAML::Node& archNode = archEntry->node;
    if (given(child(archNode, "nodes")))
        throw InputError(at(file, archNode) + ": architecture.nodes",
                         "the !Container/!Component list of Timeloop's Python front end is not "
                         "read; expected the subtree/local tree that timeloop-model reads");
    if (!given(child(archNode, "subtree")))
        throw InputError(at(file, archNode) + ": architecture",
                         "missing 'subtree'; expected a v0.4 subtree/local hierarchy");
    std::vector<Component> comps;
    collectComponents(archNode, file, comps);

    const Spec::Entry* ertEntry = spec.find({"ERT"});
    const Spec::Entry* artEntry = spec.find({"ART"});
    EnergyTable ert = ertEntry ? readErt(*ertEntry) : EnergyTable{};
    std::map<std::string, double> art =
        artEntry ? readArt(*artEntry) : std::map<std::string, double>{};

    // What the tables leave out, priced from the user's compound component
    // classes as Accelergy would price it (their ERT and ART, made here).
    std::vector<ComponentToPrice> toPrice;
    NodeArena arena; // (the maps of inherited attributes)
    for (const auto& c : comps) {
        if (ert.count(c.name)) // an ERT's energies are the case's own (its areas too)
            continue;
        ComponentToPrice p;
        p.name = c.name;
        const YAML::Node subclass = child(c.node, "subclass");
        p.cls = given(subclass) && subclass.IsScalar() ? subclass.Scalar() : c.cls;
        YAML::Node inherited = arena.make(YAML::NodeType::Map);
        for (const auto& [k, v] : c.inherited)
            inherited[k] = v;
        p.where = at(c.file, c.node) + ": component '" + c.name + "'";
        p.attributes.push(inherited, p.where + ".attributes");
        p.attributes.push(c.attributes, p.where + ".attributes");
        const YAML::Node tech = p.attributes.find("technology");
        if (tech.IsDefined() && tech.IsScalar())
            p.nm = parseTechnology(tech, p.where + ".technology");
        toPrice.push_back(std::move(p));
    }
    const PricedComponents priced = priceFromClasses(spec, toPrice, notes);
    for (const auto& [name, actions] : priced.energy)
        ert.emplace(name, actions);
    for (const auto& [name, area] : priced.area)
        art.emplace(name, area);

    Architecture a;
    a.name = "timeloop-import";
    bool haveCompute = false;
    // Each component's node (0: none given, or a placeholder), where it was
    // given, and whether the estimator must price its energies.
    struct Node {
        std::string component;
        double nm = 0.0;
        std::string where;
        bool needsEnergy = false;
    };
    std::vector<Node> nodes;
    // Components some value of which is estimated, and which: "energy",
    // "area" or both (a note that named only the component read as if its
    // energies were estimated where only its area was).
    std::vector<std::pair<std::string, std::string>> estimated;
    auto whatIs = [](bool energy, bool area) {
        return std::string(energy && area ? "energy and area" : energy ? "energy" : "area");
    };
    for (const auto& c : comps) {
        const std::string where = at(c.file, c.node) + ": component '" + c.name + "'";
        auto attr = [&](std::initializer_list<const char*> keys) {
            return firstChild(c.attributes, keys);
        };
        auto num = [&](std::initializer_list<const char*> keys, double fallback) {
            const YAML::Node n = attr(keys);
            if (!given(n))
                return fallback;
            try {
                return scalarAs<double>(n, where + "." + *keys.begin(), "a number");
            } catch (const InputError&) {
                if (!n.IsScalar())
                    throw;
                // (An expression that did not evaluate stays its text: shown,
                // its start if long.)
                const std::string& text = n.Scalar();
                throw InputError(where + "." + *keys.begin(),
                                 "is '" + (text.size() > 60 ? text.substr(0, 57) + "..." : text) +
                                     "'; expected a number, or an expression of numbers and the "
                                     "variables and attributes above it");
            }
        };
        // A whole-number attribute in [lo, hi]; outside it, an error naming the key.
        auto whole = [&](std::initializer_list<const char*> keys, double fallback, double lo,
                         double hi) {
            const double v = num(keys, fallback);
            if (!(v >= lo && v <= hi) || v != std::floor(v)) {
                std::ostringstream os;
                os << "is " << v << "; expected a whole number from " << lo << " to " << hi;
                throw InputError(where + "." + *keys.begin(), os.str());
            }
            return static_cast<std::int64_t>(v);
        };
        // An attribute of the estimator's: the component's own, else inherited.
        auto estimatorAttr = [&](const char* key) {
            const YAML::Node own = child(c.attributes, key);
            if (given(own))
                return own;
            const auto it = c.inherited.find(key);
            return it == c.inherited.end() ? YAML::Node() : it->second;
        };
        if (c.instances > std::numeric_limits<int>::max())
            throw InputError(where, std::to_string(c.instances) +
                                        " instances; expected at most 2^31 - 1 per component");
        const std::int64_t instances = c.instances;
        // The instances as a meshX x meshY grid (meshY the rest when not given).
        auto mesh = [&] {
            const std::int64_t x = whole({"meshX"}, double(instances), 1, double(instances));
            if (instances % x != 0)
                throw InputError(where + ".meshX", "is " + std::to_string(x) +
                                                       ", which does not divide the " +
                                                       std::to_string(instances) + " instances");
            const std::int64_t y = whole({"meshY"}, double(instances / x), 1, double(instances));
            if (x * y != instances)
                throw InputError(where + ".meshY", "meshX x meshY is " + std::to_string(x * y) +
                                                       "; expected the " +
                                                       std::to_string(instances) + " instances");
            return std::pair<int, int>(static_cast<int>(x), static_cast<int>(y));
        };
        const YAML::Node techNode = estimatorAttr("technology");
        const bool dummy = lowercase(c.cls).find("dummy") != std::string::npos;
        Node node{c.name, 0.0, where + ".technology", false};
        if (given(techNode) && !dummy) {
            node.where = at(c.file, techNode) + ": component '" + c.name + "'.technology";
            node.nm = parseTechnology(techNode, node.where);
        }
        const auto ertIt = ert.find(c.name);
        const auto* actions = ertIt == ert.end() ? nullptr : &ertIt->second;
        const auto artIt = art.find(c.name);
        const bool inArt = artIt != art.end();

        if (isStorageClass(c.cls) || isComputeClass(c.cls))
            if (std::string hint = noteNearMisses(c.attributes, where, notes); !hint.empty())
                slips[where] = std::move(hint);
        if (isStorageClass(c.cls)) {
            if (haveCompute)
                throw InputError(where, "storage below the compute level; expected the MACs "
                                        "innermost, as Timeloop does");
            StorageLevel s;
            s.name = c.name;
            s.component = c.cls;
            const std::string cls = lowercase(c.cls);
            const YAML::Node tech = child(c.attributes, "technology");
            if (cls.find("dram") != std::string::npos ||
                (given(tech) && tech.IsScalar() && tech.Scalar() == "DRAM"))
                s.cls = LevelClass::DRAM;
            else if (dummy)
                s.cls = LevelClass::Dummy;
            else if (cls.find("regfile") != std::string::npos ||
                     cls.find("rf") != std::string::npos)
                s.cls = LevelClass::RegFile;
            else
                s.cls = LevelClass::SRAM;
            if (given(attr({"shared_bandwidth"})))
                throw InputError(where + ".shared_bandwidth",
                                 "is not modelled; expected read_bandwidth and write_bandwidth");
            s.wordBits =
                static_cast<int>(whole({"word_bits", "word_width", "datawidth"}, 16, 1, 1024));
            // Block and cluster sizes as Timeloop derives them from the width
            // (buffer.cpp): given both, they must make the width; given one,
            // the width gives the other; given neither, one block is the width.
            const YAML::Node blockNode = attr({"block_size", "n_words"});
            const YAML::Node clusterNode = attr({"cluster_size"});
            std::int64_t block =
                given(blockNode) ? whole({"block_size", "n_words"}, 1, 1, 1 << 20) : 1;
            std::int64_t cluster = given(clusterNode) ? whole({"cluster_size"}, 1, 1, 1 << 20) : 1;
            const YAML::Node widthNode = attr({"width", "memory_width", "data_storage_width"});
            if (given(widthNode) && s.cls != LevelClass::Dummy) {
                const std::int64_t width =
                    whole({"width", "memory_width", "data_storage_width"}, 0, 1, 1 << 24);
                auto refuse = [&](const std::string& expected) {
                    throw InputError(where + ".width",
                                     "is " + std::to_string(width) + " bits; expected " + expected);
                };
                if (width % (s.wordBits * block) != 0)
                    refuse("a multiple of block_size x word bits (" + std::to_string(block) +
                           " x " + std::to_string(s.wordBits) + ")");
                if (given(blockNode) && given(clusterNode)) {
                    if (block * cluster * s.wordBits != width)
                        refuse("block_size x cluster_size x word bits (" + std::to_string(block) +
                               " x " + std::to_string(cluster) + " x " +
                               std::to_string(s.wordBits) + ")");
                } else if (given(clusterNode)) {
                    block = width / cluster / s.wordBits;
                    if (block < 1)
                        refuse("at least cluster_size x word bits (" + std::to_string(cluster) +
                               " x " + std::to_string(s.wordBits) + ")");
                } else if (given(blockNode)) {
                    cluster = width / (s.wordBits * block);
                } else {
                    block = width / s.wordBits;
                }
            }
            s.blockSize = static_cast<int>(block);
            s.clusterSize = static_cast<int>(cluster);
            if (s.cls == LevelClass::SRAM || s.cls == LevelClass::RegFile) {
                if (given(attr({"entries"})))
                    s.capacityWords = whole({"entries"}, 0, 1, 1e12);
                else if (given(attr({"depth", "memory_depth", "data_storage_depth"})))
                    s.capacityWords =
                        whole({"depth", "memory_depth", "data_storage_depth"}, 0, 1, 1e12) *
                        s.blockSize;
                else if (given(attr({"sizeKB"})))
                    s.capacityWords = whole({"sizeKB"}, 0, 1, 1e9) * 1024 * 8 / s.wordBits;
                else
                    throw InputError(where, "missing attribute 'depth'; expected the number of "
                                            "rows (or 'entries', the words it holds)");
            }
            std::tie(s.meshX, s.meshY) = mesh();
            const double bandwidth = num({"bandwidth"}, 0.0);
            s.readBandwidth = num({"read_bandwidth"}, bandwidth / 2);
            s.writeBandwidth = num({"write_bandwidth"}, bandwidth / 2);
            s.multipleBuffering = num({"multiple_buffering"}, 1.0);
            s.minUtilization = num({"min_utilization"}, 0.0);
            // Timeloop's default is two banks (buffer.cpp).
            s.numBanks = static_cast<int>(whole({"n_banks", "num_banks"}, 2, 1, 1 << 20));
            const YAML::Node type = estimatorAttr("type");
            if (s.cls == LevelClass::DRAM && given(type))
                s.dramType = text(type, where + ".type");
            // Timeloop's action names, in its order of preference.
            const double* read = action(actions, {"random_read", "read"});
            const double* fill = action(actions, {"random_fill", "random_write", "fill", "write"});
            const double* update =
                action(actions, {"random_update", "random_write", "update", "write"});
            const double* leak = action(actions, {"leak"});
            auto take = [](const double* v, double& value, ValueSource& src) {
                if (v) {
                    value = *v;
                    src = ValueSource::Imported;
                }
            };
            take(read, s.energy.read, s.sources.read);
            take(fill, s.energy.write, s.sources.write);
            take(update, s.energy.update, s.sources.update);
            take(leak, s.energy.leak, s.sources.leak);
            if (actions && !leak) { // an ERT entry without leak: Timeloop charges none
                s.energy.leak = 0.0;
                s.sources.leak = ValueSource::Imported;
            }
            if (inArt) {
                s.area = artIt->second;
                s.sources.area = ValueSource::Imported;
            }
            if (s.cls != LevelClass::Dummy && (!actions || !read || !fill || !update || !inArt))
                estimated.emplace_back(c.name,
                                       whatIs(!actions || !read || !fill || !update, !inArt));
            // DRAM is priced by its type, a dummy not at all: neither needs a node.
            node.needsEnergy = s.cls != LevelClass::Dummy && s.cls != LevelClass::DRAM &&
                               (!read || !fill || !update);
            s.technologyNm = node.nm;
            nodes.push_back(node);
            a.levels.push_back(s);
            continue;
        }
        if (isComputeClass(c.cls)) {
            if (haveCompute)
                throw InputError(where, "a second compute level; expected one");
            haveCompute = true;
            ComputeLevel& m = a.compute;
            m.name = c.name;
            std::tie(m.meshX, m.meshY) = mesh();
            m.wordBits = static_cast<int>(whole({"word_bits", "datawidth"}, 16, 1, 1024));
            const std::string cls = lowercase(c.cls);
            m.arithmetic = cls.find("bf") != std::string::npos   ? Arithmetic::BFloat
                           : cls.find("fp") != std::string::npos ? Arithmetic::Float
                                                                 : Arithmetic::Int;
            // The widths Accelergy prices: its own attributes, else the word.
            const double width = num({"width", "datawidth", "word_bits"}, m.wordBits);
            m.multiplierBits = static_cast<int>(whole({"multiplier_width"}, width, 1, 1024));
            m.adderBits = static_cast<int>(whole({"adder_width"}, width, 1, 1024));
            const double* compute =
                action(actions, {"mac_random", "mult_random", "mac", "mult", "compute"});
            if (compute) {
                m.macEnergy = *compute;
                m.energySource = ValueSource::Imported;
            }
            if (const double* leak = action(actions, {"leak"})) {
                m.leak = *leak;
                m.leakSource = ValueSource::Imported;
            }
            if (inArt) {
                m.area = artIt->second;
                m.areaSource = ValueSource::Imported;
            }
            if (!compute || !inArt)
                estimated.emplace_back(c.name, whatIs(!compute, !inArt));
            node.needsEnergy = !compute;
            m.technologyNm = node.nm;
            nodes.push_back(node);
            continue;
        }
        if (isNetworkClass(c.cls)) {
            notes.push_back("network '" + c.name + "' (class " + c.cls +
                            ") ignored: the model charges no network energy or latency");
            continue;
        }
        throw InputError(where + ".class",
                         "is '" + c.cls +
                             "', which is neither storage nor compute; expected a "
                             "class naming DRAM, SRAM, regfile, smartbuffer or storage, or mac, "
                             "intmac, fpmac or compute");
    }
    if (!haveCompute)
        throw InputError(file + ": architecture",
                         "has no compute level; expected a component of a MAC class");
    if (ertEntry)
        for (const auto& [name, acts] : ert)
            if (name != a.compute.name && a.levelIndex(name) < 0)
                notes.push_back("ERT entry '" + name + "' matches no level; ignored");

    // The design's node is the one most components give (real designs mix
    // nodes: each component keeps its own where it differs). A component
    // without one (none given, or a placeholder such as "SET ME") needs it
    // only where the estimator prices its energies.
    std::map<double, int> votes;
    for (const Node& n : nodes)
        if (n.nm > 0)
            ++votes[n.nm];
    double design = 0.0;
    for (const auto& [nm, count] : votes)
        if (design == 0.0 || count > votes[design])
            design = nm;
    for (const Node& n : nodes)
        if (n.nm == 0 && n.needsEnergy)
            throw InputError(n.where,
                             "gives no process node (none, or a placeholder such as \"SET ME\"), "
                             "and no ERT entry prices component '" +
                                 n.component + "'; expected a node such as 45nm, or an ERT");
    if (design > 0) {
        a.technologyNm = design;
    } else if (!estimated.empty()) {
        notes.push_back("no technology given: areas estimated at 45 nm");
    }
    for (StorageLevel& s : a.levels)
        if (s.technologyNm == a.technologyNm)
            s.technologyNm = 0.0;
    if (a.compute.technologyNm == a.technologyNm)
        a.compute.technologyNm = 0.0;
    if (!estimated.empty()) {
        std::string list;
        for (const auto& [n, what] : estimated) {
            const int l = a.levelIndex(n);
            const double nm = l >= 0 ? a.nodeOf(a.levels[l]) : a.nodeOf(a.compute);
            list += (list.empty() ? "" : ", ") + n + " (" + what +
                    (nm != a.technologyNm ? ", at " + std::to_string(int(nm)) + " nm" : "") + ")";
        }
        notes.push_back("estimated at " + std::to_string(int(a.technologyNm)) +
                        " nm (no ERT or ART entry): " + list);
    }
    try {
        validateArchitecture(a);
        applyEstimates(a);
    } catch (const InputError& e) {
        throw e.within(file);
    }
    return a;
}

} // namespace

} // namespace mw::timeloop_read
