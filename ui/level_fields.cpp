#include "ui/level_fields.h"

#include "estimate/estimator.h"

#include <QLocale>

#include <cmath>
#include <utility>

namespace mw::ui {

namespace {

QStringList levelClasses() {
    return {"DRAM", "SRAM", "regfile", "dummy"};
}

QStringList components() {
    QStringList out{componentLabel("")};
    for (const auto& c : Estimator::storageComponents())
        out << QString::fromStdString(c);
    return out;
}

QStringList dramTypes() {
    QStringList out;
    for (const auto& t : Estimator::builtIn().dramTypes())
        out << QString::fromStdString(t);
    return out;
}

QStringList arithmetics() {
    return {"int", "fp", "bf"};
}

} // namespace

QString componentLabel(const std::string& component) {
    return component.empty() ? QStringLiteral("by class") : QString::fromStdString(component);
}

const Field<StorageLevel> kStorageFields[] = {
    {"name", "Name", "Unique level name; mappings refer to it",
     [](StorageLevel& s) -> FieldRef { return &s.name; }},
    {"class", "Class", "DRAM (outermost, unbounded), SRAM, regfile, or dummy (fan-out only)",
     [](StorageLevel& s) -> FieldRef { return &s.cls; }, nullptr, levelClasses},
    {"component", "Circuit",
     "The circuit the estimator prices: by class (DRAM, a CACTI SRAM, an Aladdin register "
     "file), or an Accelergy class such as smartbuffer_SRAM (an array with address generators)",
     [](StorageLevel& s) -> FieldRef { return &s.component; }, nullptr, components},
    {"dram_type", "DRAM type", "The DRAM's energy per bit (DRAM levels only)",
     [](StorageLevel& s) -> FieldRef { return &s.dramType; }, nullptr, dramTypes},
    {"capacity", "Capacity (words)", "Words per instance",
     [](StorageLevel& s) -> FieldRef { return &s.capacityWords; }},
    {"word_bits", "Word width (bits)", "Bits per word",
     [](StorageLevel& s) -> FieldRef { return &s.wordBits; }},
    {"block_size", "Block size (words)", "Words per vector access",
     [](StorageLevel& s) -> FieldRef { return &s.blockSize; }},
    {"cluster_size", "Cluster size (instances)",
     "Instances that share one access of block x cluster words (Timeloop's cluster_size): "
     "each utilized cluster pays the access once",
     [](StorageLevel& s) -> FieldRef { return &s.clusterSize; }},
    {"banks", "Banks", "Independent banks (recorded; the estimate does not depend on them)",
     [](StorageLevel& s) -> FieldRef { return &s.numBanks; }},
    {"technology_nm", "Technology (nm)",
     "The process node this level is estimated at; 0 = the architecture's",
     [](StorageLevel& s) -> FieldRef { return &s.technologyNm; }},
    {"mesh_x", "Mesh X", "Instances along X; must divide the child's mesh X",
     [](StorageLevel& s) -> FieldRef { return &s.meshX; }},
    {"mesh_y", "Mesh Y", "Instances along Y; must divide the child's mesh Y",
     [](StorageLevel& s) -> FieldRef { return &s.meshY; }},
    {"read_bandwidth", "Read bandwidth (words/cycle)",
     "Words per cycle per instance; 0 = unlimited",
     [](StorageLevel& s) -> FieldRef { return &s.readBandwidth; }},
    {"write_bandwidth", "Write bandwidth (words/cycle)",
     "Words per cycle per instance; 0 = unlimited",
     [](StorageLevel& s) -> FieldRef { return &s.writeBandwidth; }},
    {"multiple_buffering", "Multiple buffering", "At least 1; 2 = double buffering",
     [](StorageLevel& s) -> FieldRef { return &s.multipleBuffering; }},
    {"min_utilization", "Minimum utilization",
     "Share of its words (after multiple buffering) the kept tiles must fill: 0 = none, 1 = "
     "full (Timeloop's min_utilization)",
     [](StorageLevel& s) -> FieldRef { return &s.minUtilization; }},
    {"read_energy", "Read energy (pJ)", "Per vector access of block-size words",
     [](StorageLevel& s) -> FieldRef { return &s.energy.read; },
     [](StorageLevel& s) { return &s.sources.read; }},
    {"write_energy", "Write energy (pJ)", "Per vector fill from the parent level",
     [](StorageLevel& s) -> FieldRef { return &s.energy.write; },
     [](StorageLevel& s) { return &s.sources.write; }},
    {"update_energy", "Update energy (pJ)", "Per vector of partial results written back",
     [](StorageLevel& s) -> FieldRef { return &s.energy.update; },
     [](StorageLevel& s) { return &s.sources.update; }},
    {"leak_energy", "Leak energy (pJ/cycle)", "Per instance per cycle",
     [](StorageLevel& s) -> FieldRef { return &s.energy.leak; },
     [](StorageLevel& s) { return &s.sources.leak; }},
    {"area", "Area (µm²)", "Per instance", [](StorageLevel& s) -> FieldRef { return &s.area; },
     [](StorageLevel& s) { return &s.sources.area; }},
};
const std::size_t kNumStorageFields = std::size(kStorageFields);

const Field<ComputeLevel> kComputeFields[] = {
    {"name", "Name", "Name of the compute level",
     [](ComputeLevel& c) -> FieldRef { return &c.name; }},
    {"mesh_x", "Mesh X", "MAC units along X", [](ComputeLevel& c) -> FieldRef { return &c.meshX; }},
    {"mesh_y", "Mesh Y", "MAC units along Y", [](ComputeLevel& c) -> FieldRef { return &c.meshY; }},
    {"word_bits", "Word width (bits)", "Datapath width",
     [](ComputeLevel& c) -> FieldRef { return &c.wordBits; }},
    {"arithmetic", "Arithmetic", "int, fp (IEEE: fp8, fp16, fp32, fp64) or bf (bfloat16)",
     [](ComputeLevel& c) -> FieldRef { return &c.arithmetic; }, nullptr, arithmetics},
    {"multiplier_bits", "Multiplier width (bits)", "The operands multiplied",
     [](ComputeLevel& c) -> FieldRef { return &c.multiplierBits; }},
    {"adder_bits", "Adder width (bits)", "The accumulator (fp32 for an fp16 multiplier, say)",
     [](ComputeLevel& c) -> FieldRef { return &c.adderBits; }},
    {"technology_nm", "Technology (nm)",
     "The process node the MACs are estimated at; 0 = the architecture's",
     [](ComputeLevel& c) -> FieldRef { return &c.technologyNm; }},
    {"mac_energy", "MAC energy (pJ)", "Per multiply-accumulate",
     [](ComputeLevel& c) -> FieldRef { return &c.macEnergy; },
     [](ComputeLevel& c) { return &c.energySource; }},
    {"mac_leak", "Leak (pJ/cycle)", "Per MAC per cycle (reported; not charged, as in Timeloop)",
     [](ComputeLevel& c) -> FieldRef { return &c.leak; },
     [](ComputeLevel& c) { return &c.leakSource; }},
    {"mac_area", "Area (µm²)", "Per MAC", [](ComputeLevel& c) -> FieldRef { return &c.area; },
     [](ComputeLevel& c) { return &c.areaSource; }},
};
const std::size_t kNumComputeFields = std::size(kComputeFields);

const Field<StorageLevel>* storageField(const QString& key) {
    for (const auto& f : kStorageFields)
        if (key == QLatin1String(f.key))
            return &f;
    return nullptr;
}

const Field<ComputeLevel>* computeField(const QString& key) {
    for (const auto& f : kComputeFields)
        if (key == QLatin1String(f.key))
            return &f;
    return nullptr;
}

QString number(double v) {
    return QString::number(v, 'g', QLocale::FloatingPointShortest);
}

namespace {

QString shown(const std::string& v) {
    return QString::fromStdString(v);
}
QString shown(LevelClass v) {
    return QString::fromLatin1(toString(v));
}
QString shown(Arithmetic v) {
    return QString::fromLatin1(toString(v));
}
QString shown(int v) {
    return QString::number(v);
}
QString shown(std::int64_t v) {
    return QString::number(v);
}
QString shown(double v) {
    return number(v);
}

// Each parseInto reads `text` into `value` and returns whether the value changed;
// on bad text it sets `problem` and leaves `value` alone.
bool parseInto(std::string& value, const QString& text, QString& problem) {
    const std::string s = text.trimmed().toStdString();
    if (s.empty()) {
        problem = QStringLiteral("is empty; expected a name");
        return false;
    }
    if (s == value)
        return false;
    value = s;
    return true;
}

bool parseInto(LevelClass& value, const QString& text, QString& problem) {
    LevelClass c;
    if (!parseLevelClass(text.trimmed().toStdString(), c)) {
        problem = QStringLiteral("'%1' is not a level class; expected DRAM, SRAM, regfile or dummy")
                      .arg(text.trimmed());
        return false;
    }
    if (c == value)
        return false;
    value = c;
    return true;
}

bool parseInto(Arithmetic& value, const QString& text, QString& problem) {
    Arithmetic a;
    if (!parseArithmetic(text.trimmed().toStdString(), a)) {
        problem =
            QStringLiteral("'%1' is not an arithmetic; expected int, fp or bf").arg(text.trimmed());
        return false;
    }
    if (a == value)
        return false;
    value = a;
    return true;
}

template <class Int> bool parseInteger(Int& value, const QString& text, QString& problem) {
    const QString t = text.trimmed();
    bool ok = false;
    const qlonglong n = t.toLongLong(&ok);
    if (!ok) {
        bool real = false;
        t.toDouble(&real);
        problem = QStringLiteral("'%1' is not %2").arg(t, real ? "a whole number" : "a number");
        return false;
    }
    if (!std::in_range<Int>(n)) {
        problem = QStringLiteral("'%1' is out of range").arg(t);
        return false;
    }
    if (static_cast<Int>(n) == value)
        return false;
    value = static_cast<Int>(n);
    return true;
}

bool parseInto(int& value, const QString& text, QString& problem) {
    return parseInteger(value, text, problem);
}
bool parseInto(std::int64_t& value, const QString& text, QString& problem) {
    return parseInteger(value, text, problem);
}

bool parseInto(double& value, const QString& text, QString& problem) {
    const QString t = text.trimmed();
    bool ok = false;
    const double v = t.toDouble(&ok);
    if (!ok || !std::isfinite(v)) { // NaN would slip through the engine's range checks
        problem = QStringLiteral("'%1' is not %2").arg(t, ok ? "a finite number" : "a number");
        return false;
    }
    if (v == value)
        return false;
    value = v;
    return true;
}

} // namespace

QString shownField(const FieldRef& ref) {
    return std::visit([](auto* value) { return shown(*value); }, ref);
}

bool parseField(const FieldRef& ref, const QString& text, QString& problem) {
    return std::visit([&](auto* value) { return parseInto(*value, text, problem); }, ref);
}

} // namespace mw::ui
