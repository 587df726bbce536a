#pragma once
// Design-space sweeps: architecture parameters varied over a base design, each
// point a whole-network search, so architect and mapping are explored together.
//
// A parameter is "LEVEL.field" (a storage level's capacity_words, word_bits,
// block_size, banks, mesh_x, mesh_y, read_bandwidth, write_bandwidth,
// multiple_buffering, component, class, dram_type; a DRAM's "class" takes a DRAM
// type), "compute.field" (word_bits, multiplier_bits, adder_bits, arithmetic),
// "pe_mesh" ("XxY": the compute mesh and every level spread over it) or
// "technology_nm". A varied level is re-estimated at every point (its pinned
// energies and area unpinned), the MACs when compute.* varies, everything when
// the node does: every point prices its own design.
#include "arch/architecture.h"
#include "io/json_io.h"
#include "workload/presets.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace mw {

struct SweepAxis {
    std::string parameter;
    std::vector<std::string> values; // as written ("16384", "16x16", "HBM2")
};

// Evaluations per distinct layer a sweep may ask for (the command line's and
// a spec's budget alike).
constexpr std::int64_t kMaxSweepBudget = 1'000'000'000;

struct SweepSpec {
    Architecture base;
    Network network;
    std::vector<SweepAxis> axes;
    // The file the first specAxes axes come from (the others were added on
    // the command line): checkSweep's errors name it and the axis's path.
    std::string specFile;
    std::size_t specAxes = 0;
    // Points given one by one (a value per axis, in the axes' order); empty:
    // the cross product of the axes, the last axis varying fastest.
    std::vector<std::vector<std::string>> points;
    int sample = 0; // > 0: that many points of the product, drawn with sampleSeed
    std::uint64_t sampleSeed = 1;
    // Each point's network search: warm started between layers and from the
    // neighbouring point (see DesignPoint::predecessor).
    std::string searcher = "gamma";
    std::int64_t budget = 1000; // evaluations per distinct layer
    std::string objective = "edp";
    std::uint64_t seed = 1;
    std::map<std::string, double> params;
    Json constraints; // mapwright.constraints for every layer; null: none
    // What importing its files noted (a Timeloop problem's or ONNX model's
    // workload); said once, not stored.
    std::vector<std::string> notes;
};

// A sweep's constraints file: our JSON only, since a sweep keeps its
// constraints in its database and Timeloop's name one layer's factors; a
// Timeloop file (isTimeloopFileName) is refused in one line saying so.
Json readSweepConstraints(const std::string& path);

// The sweep as a self-contained JSON object (base architecture and network
// embedded): what a results database stores and --resume compares.
Json toJson(const SweepSpec& s);
// A "mapwright.sweep" object; "architecture", "workload" and "constraints" may
// be paths (relative to baseDir) or embedded objects. Errors name `where` (the
// file) and the JSON path. The points' shape is checked here, the searcher,
// objective and budget too unless !checkSettings (the command line may
// override them, and a results database's spec was checked when it ran), the
// axes' values by checkSweep (a --arch may change the base they apply to).
SweepSpec sweepSpecFromJson(const Json& j, const std::string& where, const std::string& baseDir,
                            bool checkSettings = true);
// The searcher, objective and budget of s; an error is placed at
// whereOf("searcher"), whereOf("budget") or whereOf("objective").
void checkSweepSettings(const SweepSpec& s,
                        const std::function<std::string(const std::string&)>& whereOf);
// "PARAM=V1,V2,..." as the command line gives it.
SweepAxis parseSweepAxis(const std::string& text);

// Checks every parameter and every value on the base design alone, and that
// the sweep has points: an InputError naming the parameter and value, before
// any work.
void checkSweep(const SweepSpec& s);

// Sets one parameter of `a` (see above) and unpins what it re-prices; the
// caller validates and re-estimates. InputError names "PARAM=VALUE".
void applySweepParameter(Architecture& a, const std::string& parameter, const std::string& value);

struct DesignPoint {
    int index = 0;                   // within the sweep: the database's point id
    std::vector<std::string> values; // one per axis
    // The point it is warm started from: the latest earlier point with the
    // same values on every axis but the first; -1 for none. Points form chains
    // along the first axis; a chain's points run in order, chains in parallel.
    int predecessor = -1;
    int chain = 0; // index of its chain's first point
};

// The sweep's points in order; InputError when there are none.
std::vector<DesignPoint> planSweep(const SweepSpec& s);

// The point's architecture, validated and estimated; InputError saying why
// the combination is not a design (the point is then recorded as invalid).
Architecture pointArchitecture(const SweepSpec& s, const DesignPoint& p);

// "--shard I/N": the points of whole chains, chain index modulo N, so a
// shard's results equal those of the whole sweep.
struct SweepShard {
    int index = 0;
    int count = 1;
    bool contains(const DesignPoint& p) const { return p.chain % count == index; }
};
SweepShard parseSweepShard(const std::string& text);

} // namespace mw
