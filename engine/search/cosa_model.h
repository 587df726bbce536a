#pragma once
// CoSA's mixed-integer program for one layer (see cosa_search.cpp for the
// formulation against the paper): built in cosa_formulation.cpp, its
// solutions decoded into mappings, and mappings encoded as MIP starts, in
// cosa_decode.cpp. Internal to the CoSA searcher.
#include "mapspace/mapspace.h"
#include "search/mip_solver.h"

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mw::cosa {

// The term of a rank with the largest |coefficient| above 1 (in P*stride + R,
// the P term) as (dimension, stride); (-1, 1) when every coefficient is 1.
std::pair<int, std::int64_t> stridedTerm(const Rank& rank);

constexpr double kEps = 1e-6; // slack on log-space rows that are often exactly tight
constexpr double kInf = kMipInfinity;

// Tensors sharing a buffer fit when the sum of their tiles does: in log2
// space, log2(2^a + 2^b) <= log2 capacity. That sum is the largest over
// s in [0, 1] of s a + (1 - s) b + H(s) (H the binary entropy in bits), so
// a few of those planes, each a linear row, bound it from below to within
// `slack` bits; rows that add the slack bound it from above and never admit
// an overflow. Three or more tensors chain the pairs.
struct SharedCapacity {
    std::vector<double> weight;  // s of each plane, 0 and 1 included
    std::vector<double> entropy; // H(s)
    double slack = 0.0;          // the most any point lies above every plane (bits)
    SharedCapacity();
    // log2(2^a + 2^b) as the rows bound it from above: the largest plane plus the slack.
    double upper(double a, double b) const;
};

class CosaModel {
  public:
    // constant + sum coefficient x column, in log2 units.
    struct Affine {
        double constant = 0.0;
        std::vector<std::pair<int, double>> terms;
    };
    CosaModel(const MapSpace& space, double wUtil, double wComp, double wTraf, double wEnergy,
              bool rankAll);

    // Per (level, tensor) log2 capacity reductions learnt from overflowing decodes.
    std::vector<std::vector<double>> tighten;
    // The weight of the compute term (Eq. 12's w_comp); build() reads it.
    void setComputeWeight(double w) { wComp_ = w; }
    // The energy (pJ) around which the objective's energy term is exact to
    // first order (see cosa_traffic.cpp); 0 for a first estimate.
    void setEnergyScale(double pJ) { energyScale_ = pJ; }
    // The MIP's estimate of a solution's energy (pJ; the MACs' own left out).
    double energyEstimate(const std::vector<double>& sol) const;
    // log2 of the MIP's estimate of a solution's energy-delay product: its
    // cycles column plus log2 of energyEstimate and the MACs' energy. The
    // objective's energy term is a tangent of log2 E taken at one first
    // scale, so it over-charges solutions far above that scale; this ranks
    // solutions of different builds (keep choices) as EDP does.
    double logEdpEstimate(const std::vector<double>& sol) const;
    // Seed CBC with a greedy schedule (MIP start): 0 none, 1 innermost level
    // filled first, 2 outermost on-chip level filled first.
    int greedyStartMode = 2;
    // A MIP start from a mapping (its factors, ranks and keeps); when unset,
    // the greedy start (greedyStartMode) if any.
    std::optional<Mapping> startMapping;
    // Per level, the keep mask every solution must have (-1: free; empty: all free).
    std::vector<int> keepMasks;
    // When set, the solution must place every prime and rank as this mapping
    // does: only the keeps (and what follows from them) are left to choose.
    std::optional<Mapping> fixedTiling;
    // Whether some level's keeps are left to the MIP (not fixed by the map space).
    bool keepsFree() const;
    // CBC's local branching around incumbents ("local_branching").
    bool localBranching = true;
    // CBC's cuts at the root (MipOptions::rootCuts).
    bool rootCuts = true;
    // CBC's strong branching candidates per node (-1: its default).
    int strongBranching = -1;
    // CBC's feasibility pump (MipOptions::feasibilityPump).
    bool feasibilityPump = false;
    // How the greedy start fills a fan-out: with the primes whose product
    // comes closest to it (true), or the largest primes first that fit.
    bool closestFill = true;

    // The greedy start's schedule for a fill policy, or false if there is none.
    bool greedySchedule(bool closest, Mapping& out);

    // Builds the MIP (once) and solves it in the CBC helper, from the greedy
    // start when greedyStartMode asks for one (see solveMip).
    MipSolution solve(double seconds, int maxNodes, const std::function<bool()>& cancelled);

    // The mapping a MIP solution encodes.
    Mapping decode(const std::vector<double>& sol) const;

    // Whether t's tile at level l stays put across a loop above l: among the
    // loops above l, innermost first, one t ignores comes before any t depends on.
    bool stationaryAbove(const Mapping& m, int l, int t) const;

    // Drops every keep that saves no parent accesses. Keeping t at level l
    // between its parent keeper and its child keeper c (or the MACs) pays off
    // when fills(c) > fills(l), i.e. when (a) among the loops l serves (the
    // temporal loops of levels l..c-1) one that t ignores sits outside one t
    // depends on, or (b) l's tile stays put across a loop above it that t
    // ignores (inside the innermost loop above l that t depends on) while c's
    // tile changes under l; the MACs read their operand at every iteration, so
    // for them any loop t ignores counts. Otherwise each word passes through l
    // once and keeping it there only adds accesses. Dropping never overflows.
    void pruneKeeps(Mapping& m) const;

    // The converse of pruneKeeps for the MACs' operands: the MIP chooses keep
    // patterns by log-space shares, and its decode often leaves a small inner
    // level (a 1-word register) keeping nothing while its loops would let it
    // hold a tensor across several MACs. For each tensor, the innermost level
    // inside its innermost keeper where a tile of it still fits and gives
    // reuse (a loop there or below that it ignores, or one above before any it
    // depends on) keeps it too. Returns whether anything was added; the caller
    // prunes again and our model judges the result.
    bool addOperandKeeps(Mapping& m) const;

    // The outermost level below DRAM with a capacity and loops of its own (the
    // global buffer), or -1.
    int outermostBuffer() const;

    // Per dimension, the extent of the tiles at level l: the product of the
    // factors at l and inside it.
    void extentsFrom(const Mapping& m, int l, std::int64_t* ext) const;

    // The MIP's traffic terms are log-space estimates, and its decode often
    // re-reads a tensor from DRAM under a DRAM loop the tensor ignores (on
    // ResNet-50 / Simba-like, the inputs of 1x1 and 3x3 layers 4 to 10 times
    // over). This decode lets t stay on chip across such loops: the DRAM loops
    // t ignores move inside those it depends on (in their order), and the
    // outermost bounded level where t's tile still fits keeps it. Returns
    // whether anything changed; the caller prunes keeps and our model judges
    // the result (another tensor may now be re-read instead).
    bool addDramReuse(Mapping& m, int t) const;

    // The other way to keep t on chip across a DRAM loop it ignores, with the
    // DRAM order left as it is: the DRAM loops t depends on inside that loop
    // move, whole, into the outermost buffer's temporal loops (outermost
    // there), and that buffer keeps t, if the larger tiles fit (3x3 layers: a
    // global buffer holding all inputs and outputs while DRAM steps through
    // the weights). Returns whether it applied (m is unchanged otherwise).
    bool hoistDramReuse(Mapping& m, int t) const;

    // And the third: fewer trips of the DRAM loop t ignores. Its prime factors
    // move, smallest first, from DRAM into the outermost buffer (its loop
    // outermost there) while that buffer's tiles still fit, so t is read from
    // DRAM fewer times over (1x1 layers: fewer input re-reads for a global
    // buffer full of weights). Returns whether any moved.
    bool sinkDramLoop(Mapping& m, int t) const;

    // Why nothing fits, for the stop message: the first bounded level whose
    // smallest possible tiles already overflow, or a generic reason.
    std::string infeasibleReason() const;

  private:
    struct RankBlock {
        std::vector<int> dims;           // dimensions with a loop (or possible loop) here
        std::vector<std::vector<int>> o; // o[i][z]: dims[i] has rank z (0 = innermost)
        std::vector<int> h;              // h[i]: dims[i] has a loop here
    };

    // log2 of tensor t's tile at level l in mapping m, as the MIP counts it.
    double tileLog(const Mapping& m, int l, int t) const;
    // Whether m's tiles fit level l when it keeps the tensors of mask, as the MIP counts them.
    bool tilesFit(const Mapping& m, int l, unsigned mask) const;

    // A feasible start for CBC: fill every fan-out (see closestFill), give each level the keep
    // pattern with the most tensors that still fits, then move primes from their outermost temporal
    // loop inwards, innermost level first, while the kept tiles fit. The start's
    // mapping is left in *start when there is one.
    void greedyStart(std::vector<int>& cols, std::vector<double>& values,
                     Mapping* start = nullptr) const;

    // Integer column values that encode mapping m's factor placement and ranks.
    void startFrom(const Mapping& m, std::vector<int>& cols, std::vector<double>& values) const;
    // ... and its keeps: per level, the pattern of m's keep mask, if m's
    // tiles fit it. False when some level has none.
    bool keepStart(const Mapping& m, std::vector<int>& cols, std::vector<double>& values) const;

    // pJ per word of tensor t's accesses at level l (updates for partial results).
    double wordEnergy(int l, int t) const;
    double avail(int l) const;
    // log2 of level l's capacity for tensor t, after tightening.
    double capLog(int l, int t) const;
    // Whether tiles of these log2 sizes (per tensor; as tileLog counts them)
    // fit level l when it keeps the tensors of mask, as the MIP's rows say.
    bool fitsCapacity(int l, unsigned mask, const std::array<double, kMaxTensors>& logs) const;
    bool depends(int t, int d) const { return (p_.tensors[t].dimMask >> d) & 1u; }
    std::int64_t fixedAt(int l, int d) const;
    // log2 of the fixed factors of t's dimensions at levels l and inward.
    double fixedTileLog(int l, int t) const;
    // x terms of dimension d at slots of level >= l (kinds: bit 0 temporal, 1 X, 2 Y).
    void addDimTerms(std::vector<std::pair<int, double>>& terms, int d, int fromLevel, int toLevel,
                     unsigned kinds, double scale = 1.0) const;
    // A 0/1 indicator that dimension d spans more than 1 at levels >= l:
    // lower-bounded by every x (when `lower`), upper-bounded by their sum (when `upper`).
    int spanIndicator(int d, int l, bool lower, bool upper);

    void build();
    // Level l's rows that the tiles of every keep pattern of two or more
    // tensors fit together (SharedCapacity), given each tensor's log2 tile
    // (halo and tightening included).
    void sharedCapacityRows(int l, const std::vector<Affine>& sized);

    // A 0/1 indicator, >= every temporal prime of d at level k (one per (k, d)).
    int hasLoop(int k, int d);

    // A column w >= sum(terms) - U (1 - gate), U the terms' largest sum, with
    // this cost: the log2 of a loop (a sum over its primes' columns), counted
    // only when the 0/1 gate is 1.
    int gated(const std::vector<std::pair<int, double>>& terms, int gate, double cost);

    // The permutation of level l's loops (o, h); with w_traf, the paper's
    // re-send iterations there (Eqs. 9-10).
    void buildRanks(int l);

    // Traffic and energy at every level (cosa_traffic.cpp).
    static constexpr int kAlways = -2;
    // Whether level k has a loop of dimension d: a column, kAlways (a fixed
    // factor above 1) or -1 (never).
    int loopIndicator(int k, int d);
    // Whether level l keeps t: 1 - keep = constant + terms (a sum of pattern columns).
    Affine keepOf(int l, int t) const;
    // log2 of the words of t that fill level c over the whole run, summed
    // over its instances: c's tile, times the fan-outs above it, times every
    // loop above c that changes the tile (a loop t depends on, or one it
    // ignores with such a loop inside it, at its own level or below).
    Affine fillsLog(int c, int t);
    // A column e >= 2^(a - log2 E0) (tangents at every integer point) when
    // the gate (an integer expression >= 0) is 0; unconstrained otherwise.
    // Returns -1 when a cannot matter (below 2^-16 E0 or gated off).
    int expPart(const Affine& a, const Affine& gate, double cost);
    // cyc >= a - log2(bandwidth) when the gate is 0.
    void bandwidthRow(const Affine& a, const Affine& gate, double bandwidth);
    void buildTraffic();

    const MapSpace& space_;
    const Problem& p_;
    const Architecture& a_;
    double wUtil_, wComp_, wTraf_, wEnergy_;
    double minLogE_ = 0.0;
    double energyScale_ = 0.0;
    std::vector<int> energyCols_;
    int cyc_ = -1;
    std::vector<int> hasLoop_;       // [level * kMaxDims + dim]
    std::vector<Affine> operandLog_; // [t]
    // [t]: (level, column): the column is 1 when the level is t's innermost keeper.
    std::vector<std::vector<std::pair<int, int>>> innermost_;
    int noc_ = -1;
    std::vector<std::vector<std::int64_t>> primes_;
    std::vector<char> ranked_;
    SharedCapacity shared_;
    MipProblem mip_;
    std::vector<std::vector<std::vector<int>>> xVars_; // [d][n][slot]
    // [l]: (col, keep mask): the column is 1 when level l keeps the mask's tensors.
    std::vector<std::vector<std::pair<int, unsigned>>> patternVars_;
    std::vector<RankBlock> ranks_;
};

// [lowest, highest] of an affine expression over its columns' bounds.
std::pair<double, double> range(const CosaModel::Affine& a, const MipProblem& mip);

// Keep masks for screening (per level; -1 where a level's keeps are left to
// the MIP or it has none): each bounded level below the outermost buffer (the
// PEs' storage, e.g. Eyeriss' three scratchpads) keeps one tensor of its own
// or nothing, every tensor going to one of them when there are levels enough
// (otherwise every level keeping one), the other levels as in `base`; keeps
// the map space fixes win. Empty when fewer than two such levels are free.
std::vector<std::vector<int>> specialisedKeeps(const MapSpace& space, const CosaModel& model,
                                               const std::vector<int>& base);

} // namespace mw::cosa
