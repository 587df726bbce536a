#include "estimate/estimator.h"

#include "common/error.h"
#include "common/json_fields.h"
#include "common/text_case.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

namespace mw {

namespace {

using json_fields::as;
using json_fields::member;
using json_fields::optional;
using json_fields::required;

// Columns of the SRAM figures and node factors.
enum { kRead = 0, kWrite = 1, kLeak = 2, kArea = 3 };
constexpr const char* kSramColumns[4] = {"read", "write", "leak", "area"};

bool contains(const std::string& s, const char* part) {
    return s.find(part) != std::string::npos;
}

std::string num(double v) {
    std::ostringstream os;
    os.precision(4);
    os << v;
    return os.str();
}

// Bits of an address into `depth` entries (at least 1).
int addressBits(double depth) {
    return std::max(1, static_cast<int>(std::ceil(std::log2(std::max(1.0, depth)))));
}

// What the estimator prices for a level: its component, else its class.
std::string componentOf(const StorageLevel& s) {
    if (!s.component.empty())
        return lowercase(s.component);
    switch (s.cls) {
    case LevelClass::DRAM:
        return "dram";
    case LevelClass::RegFile:
        return "regfile";
    case LevelClass::Dummy:
        return "dummy";
    case LevelClass::SRAM:
        break;
    }
    return "sram";
}

} // namespace

const std::vector<std::string>& Estimator::storageComponents() {
    static const std::vector<std::string> names = {"DRAM", "SRAM", "regfile", "smartbuffer_SRAM",
                                                   "smartbuffer_RF"};
    return names;
}

Estimator Estimator::fromJsonText(const std::string& text, const std::string& where) {
    const Json j = parseJsonText(text, where);
    const std::string root = where + ": $";
    if (optional<std::string>(j, "format", root, "") != "mapwright.estimator-data")
        throw InputError(root + ".format", "expected \"mapwright.estimator-data\"");
    Estimator e;
    const Json& sources = member(j, "sources", root);
    if (!sources.is_object())
        throw InputError(root + ".sources", "expected an object of source ids");
    for (auto it = sources.begin(); it != sources.end(); ++it)
        e.sources_[it.key()] = as<std::string>(it.value(), root + ".sources." + it.key());
    auto cited = [&](const Json& row, const std::string& path, bool needed) {
        if (!needed && !row.contains("source"))
            return;
        const std::string id = required<std::string>(row, "source", path);
        if (!e.sources_.count(id))
            throw InputError(path + ".source", "'" + id + "' is not in $.sources");
    };
    auto positive = [](const Json& row, const char* key, const std::string& path) {
        const double v = required<double>(row, key, path);
        if (!(v > 0))
            throw InputError(path + "." + key, "is " + num(v) + "; expected a positive number");
        return v;
    };
    auto byNodeDescending = [](const NodeRow& a, const NodeRow& b) { return a.nm > b.nm; };

    const Json& ns = member(j, "node_scaling", root);
    cited(ns, root + ".node_scaling", true);
    const Json& nodes = member(ns, "nodes", root + ".node_scaling");
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const std::string path = root + ".node_scaling.nodes[" + std::to_string(i) + "]";
        cited(nodes[i], path, false);
        NodeRow r;
        r.nm = positive(nodes[i], "nm", path);
        r.v[kRead] = r.v[kWrite] = r.v[kLeak] = positive(nodes[i], "energy", path);
        r.v[kArea] = positive(nodes[i], "area", path);
        e.nodes_.push_back(r);
    }
    std::sort(e.nodes_.begin(), e.nodes_.end(), byNodeDescending);
    if (e.nodes_.size() < 2)
        throw InputError(root + ".node_scaling.nodes", "expected at least two nodes");

    const Json& sn = member(j, "sram_node_scaling", root);
    cited(sn, root + ".sram_node_scaling", true);
    const Json& snodes = member(sn, "nodes", root + ".sram_node_scaling");
    for (std::size_t i = 0; i < snodes.size(); ++i) {
        const std::string path = root + ".sram_node_scaling.nodes[" + std::to_string(i) + "]";
        NodeRow r;
        r.nm = positive(snodes[i], "nm", path);
        for (int c = 0; c < 4; ++c)
            r.v[c] = positive(snodes[i], kSramColumns[c], path);
        e.sramNodes_.push_back(r);
    }
    std::sort(e.sramNodes_.begin(), e.sramNodes_.end(), byNodeDescending);
    if (e.sramNodes_.empty())
        throw InputError(root + ".sram_node_scaling.nodes", "expected at least one node");

    const Json& logic = member(j, "logic_45nm", root);
    if (!logic.is_object())
        throw InputError(root + ".logic_45nm", "expected an object of primitives");
    for (auto it = logic.begin(); it != logic.end(); ++it) {
        const std::string path = root + ".logic_45nm." + it.key();
        cited(it.value(), path, true);
        Logic l;
        l.energy = required<double>(it.value(), "energy", path);
        l.leak = optional<double>(it.value(), "leak", path, 0.0);
        l.area = optional<double>(it.value(), "area", path, 0.0);
        e.logic_[it.key()] = l;
        if (it.value().contains("write"))
            e.logic_[it.key() + ".write"] = {required<double>(it.value(), "write", path), 0, 0};
    }
    for (const char* needed :
         {"int_adder_32b", "int_multiplier_32b", "fp_adder_32b", "fp_multiplier_32b",
          "register_bit", "register_bit_lib", "comparator_32b", "address_adder_bit", "wire_bit_um"})
        if (!e.logic_.count(needed))
            throw InputError(root + ".logic_45nm", std::string("missing '") + needed + "'");

    const Json& sram = member(j, "sram_45nm", root);
    const std::string sp = root + ".sram_45nm";
    cited(sram, sp, true);
    e.sramMinWidth_ = positive(sram, "min_width_bits", sp);
    e.sramMinDepth_ = positive(sram, "min_depth", sp);
    e.sramDepthExponent_ = positive(sram, "depth_exponent_below_min", sp);
    const Json& points = member(sram, "points", sp);
    if (!points.is_array() || points.size() < 3)
        throw InputError(sp + ".points", "expected at least three CACTI points");
    // log(value) = c0 + c1 log(width) + c2 log(depth), least squares per column.
    const auto n = static_cast<Eigen::Index>(points.size());
    Eigen::MatrixXd x(n, 3);
    Eigen::MatrixXd y(n, 4);
    for (Eigen::Index i = 0; i < n; ++i) {
        const Json& p = points[static_cast<std::size_t>(i)];
        const std::string path = sp + ".points[" + std::to_string(i) + "]";
        x(i, 0) = 1.0;
        x(i, 1) = std::log(positive(p, "width", path));
        x(i, 2) = std::log(positive(p, "depth", path));
        for (int c = 0; c < 4; ++c)
            y(i, c) = std::log(positive(p, kSramColumns[c], path));
    }
    const Eigen::MatrixXd coef = x.colPivHouseholderQr().solve(y);
    for (int c = 0; c < 4; ++c)
        for (int k = 0; k < 3; ++k)
            e.sramCoef_[c][k] = coef(k, c);

    const Json& dram = member(j, "dram_pj_per_bit", root);
    if (!dram.is_array() || dram.empty())
        throw InputError(root + ".dram_pj_per_bit", "expected a list of DRAM types");
    for (std::size_t i = 0; i < dram.size(); ++i) {
        const std::string path = root + ".dram_pj_per_bit[" + std::to_string(i) + "]";
        cited(dram[i], path, true);
        e.dramPjPerBit_[lowercase(required<std::string>(dram[i], "type", path))] =
            positive(dram[i], "energy", path);
    }

    const Json& fp = member(j, "fp_significand_bits", root);
    const std::string fpp = root + ".fp_significand_bits";
    cited(fp, fpp, true);
    for (const auto& [key, table] :
         {std::pair{"fp", &e.fpSignificand_}, {"bf", &e.bfSignificand_}}) {
        const Json& rows = member(fp, key, fpp);
        if (!rows.is_object())
            throw InputError(fpp + "." + key, "expected {total bits: significand bits}");
        for (auto it = rows.begin(); it != rows.end(); ++it) {
            int bits = 0;
            try {
                bits = std::stoi(it.key());
            } catch (const std::exception&) {
                throw InputError(fpp + "." + key + "." + it.key(), "expected a number of bits");
            }
            (*table)[bits] = as<double>(it.value(), fpp + "." + key + "." + it.key());
        }
    }
    return e;
}

const Estimator& Estimator::builtIn() {
    // Built once, read-only afterwards; C++ guarantees a thread-safe first use.
    static const Estimator e = fromJsonText(builtInDataText(), "estimator_data.json");
    return e;
}

std::vector<std::string> Estimator::dramTypes() const {
    std::vector<std::string> out;
    for (const auto& [type, pj] : dramPjPerBit_) {
        std::string t = type;
        std::transform(t.begin(), t.end(), t.begin(),
                       [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
        out.push_back(t);
    }
    return out;
}

// A factor of `rows` (largest node first) at nm, linear in nm between the
// tabulated neighbours.
double Estimator::nodeFactor(const std::vector<NodeRow>& rows, double nm, int column) const {
    if (nm >= rows.front().nm)
        return rows.front().v[column];
    for (std::size_t i = 0; i + 1 < rows.size(); ++i) {
        const NodeRow& a = rows[i];
        const NodeRow& b = rows[i + 1];
        if (nm <= a.nm && nm >= b.nm) {
            const double t = (a.nm - nm) / (a.nm - b.nm);
            return a.v[column] + t * (b.v[column] - a.v[column]);
        }
    }
    return rows.back().v[column];
}

double Estimator::energyScale(double nm, const std::string& where) const {
    const double hi = nodes_.front().nm, lo = nodes_.back().nm;
    if (!(nm >= lo && nm <= hi))
        throw InputError(where, "technology node " + num(nm) + " nm is outside the estimator's " +
                                    num(lo) + " to " + num(hi) +
                                    " nm; expected a node in that range");
    return nodeFactor(nodes_, nm, kRead) / nodeFactor(nodes_, 45.0, kRead);
}

double Estimator::areaScale(double nm, const std::string& where) const {
    energyScale(nm, where); // the same range check
    return nodeFactor(nodes_, nm, kArea) / nodeFactor(nodes_, 45.0, kArea);
}

// SRAM follows CACTI's own technology files between the nodes it was run at
// (linear in nm, as the CACTI plug-in interpolates) and logic scaling beyond.
double Estimator::sramScale(double nm, int column, const std::string& where) const {
    const NodeRow& big = sramNodes_.front();
    const NodeRow& small = sramNodes_.back();
    auto logic = [&](double n) {
        return column == kArea ? areaScale(n, where) : energyScale(n, where);
    };
    if (nm >= big.nm)
        return big.v[column] * logic(nm) / logic(big.nm);
    if (nm <= small.nm)
        return small.v[column] * logic(nm) / logic(small.nm);
    energyScale(nm, where);
    return nodeFactor(sramNodes_, nm, column);
}

double Estimator::sramFit(int column, double width, double depth) const {
    const double* c = sramCoef_[column];
    return std::exp(c[0] + c[1] * std::log(width) + c[2] * std::log(depth));
}

// A smart buffer as the Timeloop/Accelergy exercises define smartbuffer_SRAM
// and smartbuffer_RF, evaluated as Accelergy evaluates that definition: the
// array padded to the smallest one characterised and scaled down, plus one
// address adder per access (two leaking, two in area). The definition names
// its scale attribute `area_scale`, which Accelergy also applies to the whole
// component: the array's area is scaled twice, the adders' once.
StorageEstimate Estimator::smartBuffer(const StorageLevel& s, double nm, bool sram,
                                       const std::string& where) const {
    const double w = double(s.wordBits) * s.blockSize;
    const double d = std::max(1.0, double(s.capacityWords) / s.blockSize);
    const double W = std::max(w, sramMinWidth_), D = std::max(d, sramMinDepth_);
    const double dynamic = (w / W) * std::pow(d / D, sramDepthExponent_);
    const double fixed = (w / W) * (d / D);
    const double eLogic = energyScale(nm, where), aLogic = areaScale(nm, where);
    const Logic& adder = logic_.at("address_adder_bit");
    const int bits = addressBits(d);
    StorageEstimate e;
    if (sram) {
        e.energy.read = sramFit(kRead, W, D) * sramScale(nm, kRead, where) * dynamic;
        e.energy.write = sramFit(kWrite, W, D) * sramScale(nm, kWrite, where) * dynamic;
        e.energy.leak = sramFit(kLeak, W, D) * sramScale(nm, kLeak, where) * fixed;
        e.area = sramFit(kArea, W, D) * sramScale(nm, kArea, where) * fixed * fixed;
        e.basis = "smart buffer: CACTI SRAM " + num(W) + " b x " + num(D);
    } else {
        const Logic& reg = logic_.at("register_bit_lib");
        const double regWrite = logic_.at("register_bit_lib.write").energy;
        const Logic& cmp = logic_.at("comparator_32b");
        e.energy.read = (W * reg.energy + D * cmp.energy) * dynamic * eLogic;
        e.energy.write = (W * regWrite + D * cmp.energy) * dynamic * eLogic;
        e.energy.leak = (W * D * reg.leak + D * cmp.leak) * fixed * eLogic;
        e.area = (W * D * reg.area + D * cmp.area) * fixed * fixed * aLogic;
        e.basis = "smart buffer: Aladdin register file " + num(W) + " b x " + num(D);
    }
    if (W != w || D != d)
        e.basis += " scaled to " + num(w) + " b x " + num(d);
    e.basis += ", " + std::to_string(bits) + "-bit address adders";
    e.energy.read += bits * adder.energy * eLogic;
    e.energy.write += bits * adder.energy * eLogic;
    e.energy.leak += 2 * bits * adder.leak * eLogic;
    e.area += 2 * bits * adder.area * aLogic * fixed;
    e.energy.update = e.energy.write;
    return e;
}

StorageEstimate Estimator::storage(const StorageLevel& level, double nm,
                                   const std::string& where) const {
    if (level.clusterSize > 1) {
        // A cluster is one array whose rows hold clusterSize instances'
        // blocks: an access is priced at the cluster's width (as Accelergy
        // prices the component), area and leakage shared by its instances.
        StorageLevel array = level;
        array.clusterSize = 1;
        array.blockSize = level.blockSize * level.clusterSize;
        array.capacityWords = level.capacityWords * level.clusterSize;
        StorageEstimate e = storage(array, nm, where);
        e.area /= level.clusterSize;
        e.energy.leak /= level.clusterSize;
        e.basis += ", shared by a cluster of " + std::to_string(level.clusterSize);
        return e;
    }
    const StorageLevel& s = level;
    const std::string kind = componentOf(s);
    StorageEstimate e;
    if (s.cls == LevelClass::Dummy || contains(kind, "dummy")) {
        e.basis = "dummy level (no storage)";
        return e;
    }
    const double w = double(s.wordBits) * s.blockSize;
    if (s.cls == LevelClass::DRAM || contains(kind, "dram")) {
        const auto it = dramPjPerBit_.find(lowercase(s.dramType));
        if (it == dramPjPerBit_.end()) {
            std::string known;
            for (const auto& t : dramTypes())
                known += (known.empty() ? "" : ", ") + t;
            throw InputError(where + ".dram_type",
                             "is '" + s.dramType + "'; expected one of " + known);
        }
        e.energy.read = e.energy.write = e.energy.update = it->second * w;
        e.basis = s.dramType + " " + num(it->second) + " pJ/bit x " + num(w) + " bits (off chip)";
        return e;
    }
    if (contains(kind, "smartbuffer") && contains(kind, "sram"))
        return smartBuffer(s, nm, true, where);
    if (contains(kind, "smartbuffer") && (contains(kind, "rf") || contains(kind, "regfile")))
        return smartBuffer(s, nm, false, where);
    const double d = std::max(1.0, double(s.capacityWords) / s.blockSize);
    if (contains(kind, "regfile") || kind == "rf") {
        // Aladdin's register file: one word's registers and one comparator
        // (of the address's width) per entry switch on an access; the area
        // counts the same (as Accelergy's regfile).
        const Logic& reg = logic_.at("register_bit");
        const Logic& cmp = logic_.at("comparator_32b");
        const double cmpWidth = addressBits(d) / 32.0;
        const double eLogic = energyScale(nm, where), aLogic = areaScale(nm, where);
        e.energy.read = e.energy.write = e.energy.update =
            (w * reg.energy + d * cmp.energy * cmpWidth) * eLogic;
        e.energy.leak = (w * reg.leak + d * cmp.leak * cmpWidth) * eLogic;
        e.area = (w * reg.area + d * cmp.area * cmpWidth) * aLogic;
        e.basis = "Aladdin register file " + num(w) + " b x " + num(d);
        return e;
    }
    if (contains(kind, "sram") || contains(kind, "storage")) {
        // CACTI points fitted in log space; arrays below the smallest size
        // CACTI is run at are priced there and scaled down (CACTI-RULE).
        const double W = std::max(w, sramMinWidth_), D = std::max(d, sramMinDepth_);
        const double dynamic = (0.7 * w / W + 0.3) * std::pow(d / D, sramDepthExponent_);
        const double fixed = (w / W) * (d / D);
        e.energy.read = sramFit(kRead, W, D) * sramScale(nm, kRead, where) * dynamic;
        e.energy.write = sramFit(kWrite, W, D) * sramScale(nm, kWrite, where) * dynamic;
        e.energy.update = e.energy.write;
        e.energy.leak = sramFit(kLeak, W, D) * sramScale(nm, kLeak, where) * fixed;
        e.area = sramFit(kArea, W, D) * sramScale(nm, kArea, where) * fixed;
        e.basis = "CACTI SRAM fit " + num(w) + " b x " + num(d);
        return e;
    }
    std::string known;
    for (const auto& c : storageComponents())
        known += (known.empty() ? "" : ", ") + c;
    throw InputError(where + ".component", "is '" + s.component +
                                               "'; expected a class the estimator prices (" +
                                               known + ") or typed energies");
}

double Estimator::significandBits(Arithmetic a, int bits, const std::string& where) const {
    const auto& table = a == Arithmetic::BFloat ? bfSignificand_ : fpSignificand_;
    const auto it = table.find(bits);
    if (it == table.end()) {
        std::string known;
        for (const auto& [b, s] : table)
            known += (known.empty() ? "" : ", ") + std::to_string(b);
        throw InputError(where, std::string(toString(a)) + std::to_string(bits) +
                                    " is not a format the estimator knows; expected " +
                                    toString(a) + " with " + known + " bits");
    }
    return it->second;
}

ComputeEstimate Estimator::compute(const ComputeLevel& c, double nm,
                                   const std::string& where) const {
    const int mulBits = c.multiplierWidth(), addBits = c.adderWidth();
    const bool fp = c.arithmetic != Arithmetic::Int;
    const Logic& add = logic_.at(fp ? "fp_adder_32b" : "int_adder_32b");
    const Logic& mul = logic_.at(fp ? "fp_multiplier_32b" : "int_multiplier_32b");
    const double eLogic = energyScale(nm, where), aLogic = areaScale(nm, where);
    // Adders scale with their width; multipliers with the square of the
    // significand they multiply (an integer's width; a float's mantissa with
    // its hidden bit), from Aladdin's 32-bit units.
    const double addScale = addBits / 32.0;
    double mulScale = mulBits / 32.0;
    if (fp) {
        const double sig = significandBits(c.arithmetic, mulBits, where + ".multiplier_bits");
        mulScale = sig / fpSignificand_.at(32);
    }
    mulScale *= mulScale;
    ComputeEstimate e;
    e.energy = (add.energy * addScale + mul.energy * mulScale) * eLogic;
    e.leak = (add.leak * addScale + mul.leak * mulScale) * eLogic;
    e.area = (add.area * addScale + mul.area * mulScale) * aLogic;
    const std::string type = toString(c.arithmetic);
    e.basis = "Aladdin " + type + std::to_string(mulBits) + " multiplier + " + type +
              std::to_string(addBits) + " adder";
    return e;
}

bool Estimator::primitive(const std::string& cls, const std::function<double(const char*)>& attr,
                          const std::string& dramType, double nm, PrimitiveEstimate& out,
                          const std::string& where) const {
    const std::string c = lowercase(cls);
    // An attribute, or its fallback where the component does not give it.
    auto get = [&](std::initializer_list<const char*> names, double fallback) {
        for (const char* n : names) {
            const double v = attr(n);
            if (!std::isnan(v))
                return v;
        }
        return fallback;
    };
    auto logic = [&](const char* name, double energyFactor, double areaFactor,
                     std::initializer_list<const char*> actions) {
        const Logic& l = logic_.at(name);
        const double e = energyScale(nm, where), a = areaScale(nm, where);
        for (const char* action : actions)
            out.energy[action] = l.energy * energyFactor * e;
        out.energy["leak"] = l.leak * energyFactor * e;
        out.area = l.area * areaFactor * a;
    };
    if (c == "aladdin_adder" || c == "intadder") {
        // Aladdin's 32-bit adder, linear in its width (the library plug-in's
        // aladdin_adder and the table plug-in's intadder alike, 32 bits when
        // no width is given).
        const double w = get({"width", "n_bits", "precision"}, 32) / 32.0;
        logic("int_adder_32b", w, w, {"read", "add", "compute"});
        out.basis = "Aladdin adder, " + num(32 * w) + " bits";
        return true;
    }
    if (c == "aladdin_multiplier" || c == "intmultiplier") {
        const double w = get({"width"}, 32);
        const double f = get({"width_a"}, w) * get({"width_b"}, w) / (32.0 * 32.0);
        logic("int_multiplier_32b", f, f, {"read", "multiply", "compute"});
        out.basis = "Aladdin multiplier, " + num(get({"width_a"}, w)) + " x " +
                    num(get({"width_b"}, w)) + " bits";
        return true;
    }
    if (c == "aladdin_register") {
        // The library plug-in's register: a read costs Aladdin's per bit, a
        // write and leakage are not characterised (0).
        const double w = get({"width"}, 1);
        const Logic& r = logic_.at("register_bit_lib");
        const double e = energyScale(nm, where);
        out.energy["read"] = r.energy * w * e;
        out.energy["write"] = out.energy["update"] = logic_.at("register_bit_lib.write").energy;
        out.energy["leak"] = r.leak;
        out.area = r.area * w * areaScale(nm, where);
        out.basis = "Aladdin register, " + num(w) + " bits";
        return true;
    }
    if (c == "aladdin_comparator") {
        // The library plug-in prices any comparator as Aladdin's 32-bit one.
        logic("comparator_32b", 1.0, 1.0, {"compare", "read"});
        out.basis = "Aladdin comparator";
        return true;
    }
    if (c == "sram" || c == "dram" || c.find("dummy") != std::string::npos) {
        StorageLevel s;
        s.component = c == "sram" ? "SRAM" : c == "dram" ? "DRAM" : "dummy_storage";
        s.cls = c == "sram" ? LevelClass::SRAM : c == "dram" ? LevelClass::DRAM : LevelClass::Dummy;
        s.wordBits = static_cast<int>(std::max(1.0, get({"width", "datawidth"}, 16)));
        s.capacityWords = static_cast<std::int64_t>(std::max(1.0, get({"depth"}, 1)));
        s.dramType = dramType;
        const StorageEstimate e = storage(s, nm, where);
        out.energy["read"] = e.energy.read;
        out.energy["write"] = e.energy.write;
        out.energy["update"] = e.energy.update;
        out.energy["leak"] = e.energy.leak;
        out.area = e.area;
        out.basis = e.basis;
        return true;
    }
    return false;
}

double Estimator::wirePjPerBitMm(double nm, const std::string& where) const {
    return 1000.0 * logic_.at("wire_bit_um").energy * energyScale(nm, where);
}

namespace {

std::string levelWhere(const Architecture& a, std::size_t l) {
    const std::string arch =
        a.name.empty() ? std::string("architecture") : "architecture '" + a.name + "'";
    return arch + ".levels[" + std::to_string(l) + "] (" + a.levels[l].name + ")";
}

std::string archWhere(const Architecture& a) {
    return a.name.empty() ? std::string("architecture") : "architecture '" + a.name + "'";
}

} // namespace

void applyEstimates(Architecture& a, const Estimator& est) {
    est.energyScale(a.technologyNm, archWhere(a) + ".technology_nm"); // unknown nodes first
    for (std::size_t l = 0; l < a.levels.size(); ++l) {
        StorageLevel& s = a.levels[l];
        const StorageEstimate e = est.storage(s, a.nodeOf(s), levelWhere(a, l));
        auto set = [](double& value, ValueSource src, double estimate) {
            if (src == ValueSource::Estimated)
                value = estimate;
        };
        set(s.energy.read, s.sources.read, e.energy.read);
        set(s.energy.write, s.sources.write, e.energy.write);
        set(s.energy.update, s.sources.update, e.energy.update);
        set(s.energy.leak, s.sources.leak, e.energy.leak);
        set(s.area, s.sources.area, e.area);
    }
    const ComputeEstimate c =
        est.compute(a.compute, a.nodeOf(a.compute), archWhere(a) + ".compute");
    if (a.compute.energySource == ValueSource::Estimated)
        a.compute.macEnergy = c.energy;
    if (a.compute.leakSource == ValueSource::Estimated)
        a.compute.leak = c.leak;
    if (a.compute.areaSource == ValueSource::Estimated)
        a.compute.area = c.area;
}

ArchitectureEstimate estimateArchitecture(const Architecture& a, const Estimator& est) {
    ArchitectureEstimate r;
    const int L = a.numLevels();
    for (int l = 0; l < L; ++l)
        r.levels.push_back(est.storage(a.levels[l], a.nodeOf(a.levels[l]), levelWhere(a, l)));
    r.compute = est.compute(a.compute, a.nodeOf(a.compute), archWhere(a) + ".compute");
    for (const StorageLevel& s : a.levels)
        if (s.cls != LevelClass::DRAM)
            r.storageArea += s.area * double(s.instances());
    r.macArea = a.compute.area * double(a.compute.instances());
    r.onChipArea = r.storageArea + r.macArea;
    // A hop between neighbouring children spans one child's tile: the child
    // level's instance and everything below it, in the values in use.
    const double wire = est.wirePjPerBitMm(a.technologyNm, archWhere(a) + ".technology_nm");
    r.hopEnergy.assign(static_cast<std::size_t>(L), 0.0);
    r.hopMm.assign(static_cast<std::size_t>(L), 0.0);
    int wordBits = a.compute.wordBits; // the word the hop moves: the nearest real level's
    for (int l = 0; l < L; ++l) {
        if (a.levels[l].cls != LevelClass::Dummy)
            wordBits = a.levels[l].wordBits;
        if (a.fanoutX(l) * a.fanoutY(l) <= 1)
            continue;
        const double children =
            double(l + 1 < L ? a.levels[l + 1].instances() : a.compute.instances());
        double tile = a.compute.area * double(a.compute.instances()) / children;
        for (int k = l + 1; k < L; ++k)
            tile += a.levels[k].area * double(a.levels[k].instances()) / children;
        r.hopMm[l] = std::sqrt(std::max(0.0, tile)) / 1000.0;
        r.hopEnergy[l] = wordBits * r.hopMm[l] * wire;
    }
    return r;
}

} // namespace mw
