#pragma once
// Per-action energies and per-instance areas of storage levels, MACs and
// on-chip wires, by technology node, from published figures:
// estimator_data.json holds every number with its source (Aladdin, CACTI and
// NeuroSim results as Accelergy's plug-ins tabulate them, Stillmaker-Baas
// node scaling, DRAM pJ/bit by type). The recipes that combine them follow
// the Accelergy classes of the same names, so that a design without an ERT is
// priced as Accelergy would price it (the README lists the agreement).
#include "arch/architecture.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace mw {

struct StorageEstimate {
    ActionEnergies energy; // per vector access (block) and per cycle
    double area = 0.0;     // um^2 per instance
    std::string basis;     // how it was priced, in a few words
};

struct ComputeEstimate {
    double energy = 0.0; // pJ per MAC
    double leak = 0.0;   // pJ per instance per cycle
    double area = 0.0;   // um^2 per instance
    std::string basis;
};

// One of the primitive components Accelergy's plug-ins price, the parts that
// compound component classes are built of: energy per action (pJ) and area
// per instance (um^2).
struct PrimitiveEstimate {
    std::map<std::string, double> energy; // by action name
    double area = 0.0;
    std::string basis;
};

class Estimator {
  public:
    // The figures compiled into the engine from estimator_data.json.
    static const Estimator& builtIn();
    static const char* builtInDataText();
    // From the data file's JSON text; errors name `where` and the JSON path.
    static Estimator fromJsonText(const std::string& text, const std::string& where);

    // Logic energy and area at `nm` relative to 45 nm. A node outside the
    // table (7 to 130 nm) is an InputError naming `where`.
    double energyScale(double nm, const std::string& where) const;
    double areaScale(double nm, const std::string& where) const;

    // The level's circuit (s.component, else by class) at node nm; `where`
    // names the level in errors (an unknown component or DRAM type).
    StorageEstimate storage(const StorageLevel& s, double nm, const std::string& where) const;
    ComputeEstimate compute(const ComputeLevel& c, double nm, const std::string& where) const;
    // A primitive class (aladdin_adder, intadder, aladdin_multiplier,
    // intmultiplier, aladdin_register, aladdin_comparator, SRAM, DRAM, dummy)
    // with its attributes (attr(name) gives one, or NaN when not given), as
    // the plug-ins Accelergy picks for it price it; false when `cls` is none
    // of them. `where` names the component in errors.
    bool primitive(const std::string& cls, const std::function<double(const char*)>& attr,
                   const std::string& dramType, double nm, PrimitiveEstimate& out,
                   const std::string& where) const;
    // Moving one bit over one mm of on-chip wire.
    double wirePjPerBitMm(double nm, const std::string& where) const;

    std::vector<std::string> dramTypes() const;
    // The storage components the estimator prices (Timeloop/Accelergy class names).
    static const std::vector<std::string>& storageComponents();
    const std::map<std::string, std::string>& sources() const { return sources_; }

  private:
    struct Logic {
        double energy = 0, leak = 0, area = 0;
    };
    struct NodeRow {
        double nm = 0;
        double v[4] = {0, 0, 0, 0}; // per column: read, write, leak, area
    };
    double nodeFactor(const std::vector<NodeRow>& rows, double nm, int column) const;
    double sramScale(double nm, int column, const std::string& where) const;
    double sramFit(int column, double width, double depth) const;
    StorageEstimate smartBuffer(const StorageLevel& s, double nm, bool sram,
                                const std::string& where) const;
    double significandBits(Arithmetic a, int bits, const std::string& where) const;

    std::map<std::string, std::string> sources_;
    std::vector<NodeRow> nodes_;     // SB17 logic factors, largest node first
    std::vector<NodeRow> sramNodes_; // CACTI's own node factors, largest first
    std::map<std::string, Logic> logic_;
    double sramCoef_[4][3] = {}; // log value = c0 + c1 log w + c2 log d
    double sramMinWidth_ = 32, sramMinDepth_ = 64, sramDepthExponent_ = 0.78;
    std::map<std::string, double> dramPjPerBit_;
    std::map<int, double> fpSignificand_, bfSignificand_; // by total bits
};

// Sets every energy and area of `a` whose source is Estimated; imported and
// typed values stay. Errors name the level and field.
void applyEstimates(Architecture& a, const Estimator& est = Estimator::builtIn());

// What the estimator says of a whole architecture, beside the values in use
// (which may be pinned): the GUI's and `mapwright-cli estimate`'s report.
struct ArchitectureEstimate {
    std::vector<StorageEstimate> levels; // one per storage level
    ComputeEstimate compute;
    // Per storage level: pJ to move one block one hop between neighbouring
    // children of its fan-out (0 where it does not fan out). Reported, not
    // charged: Timeloop charges no network energy without a network spec.
    std::vector<double> hopEnergy;
    std::vector<double> hopMm; // the hop's length: the side of one child's tile
    // Totals over all instances, with the values in use (pinned or estimated).
    double onChipArea = 0.0;  // um^2: every level but DRAM, and the MACs
    double storageArea = 0.0; // um^2 of on-chip storage alone
    double macArea = 0.0;     // um^2 of the MACs
};
ArchitectureEstimate estimateArchitecture(const Architecture& a,
                                          const Estimator& est = Estimator::builtIn());

} // namespace mw
