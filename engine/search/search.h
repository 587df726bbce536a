#pragma once
// One driver for every searcher. It owns the budget (evaluations and/or
// seconds), the seed, the objective, the threads and the cancel flag, charges
// every cost-model evaluation, records the trace and streams progress.
// Searchers only propose mappings; they never call the cost model themselves.
#include "common/error.h"
#include "common/zeroed_array.h"
#include "mapspace/mapspace.h"
#include "model/evaluation.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mw {

// energy^a x cycles^b; EDP is a = b = 1.
// With densities set, the map-space study's sparsity-aware score: the mapping
// is scored at each imposed density d of one tensor as sum(cost_d / d), so one
// mapping serves a whole density range.
struct SearchObjective {
    double energyExponent = 1.0;
    double cycleExponent = 1.0;
    std::string densityTensor;     // e.g. "Inputs"; empty: score at the workload's densities
    std::vector<double> densities; // e.g. {1.0, 0.8, 0.5, 0.2, 0.1}
    double value(const Evaluation& e) const;
    // The same of bounds, energy (pJ) and cycles not yet whole: EDP takes the
    // cycles as they are, the weighted forms their whole part (as an
    // Evaluation would hold them). No Evaluation is built: the optimal
    // searcher computes hundreds of thousands of bounds a second.
    double value(double energy, double cycles) const;
    std::string name() const;
    // "edp", "energy", "cycles" (or "delay"), "weighted:A,B", optionally
    // followed by "@TENSOR" (densities 1.0, 0.8, 0.5, 0.2, 0.1) or
    // "@TENSOR=d1,d2,..."; throws InputError.
    static SearchObjective parse(const std::string& text);
};

struct SearchBudget {
    std::int64_t evaluations = 0; // 0: no limit
    double seconds = 0.0;         // 0: no limit
};

// The most threads one search runs (each is a system thread: more than the
// machine has only contend, and thousands exhaust the process table).
inline constexpr int kMaxSearchThreads = 256;
// The largest population and candidate batch a searcher's parameters may ask
// for: each member is a mapping of a few KiB, held twice over.
inline constexpr std::int64_t kMaxPopulation = 100'000;
inline constexpr std::int64_t kMaxBatch = 100'000;

struct SearchSettings {
    SearchBudget budget;
    std::uint64_t seed = 1;
    SearchObjective objective;
    int threads = 1;                      // 1 to kMaxSearchThreads
    double progressInterval = 0.05;       // seconds between progress reports
    std::map<std::string, double> params; // searcher hyperparameters (defaults in each searcher)
    std::vector<Mapping> warmStart;       // starting points (network warm start)
    bool deduplicate = true;              // equal legal mappings are charged once
    // Where learned searchers keep trained models; empty: $MAPWRIGHT_MODEL_DIR,
    // else ~/.cache/mapwright/models.
    std::string modelDir;
};

struct TracePoint {
    std::int64_t evaluation = 0; // 1-based index of the charged evaluation
    double seconds = 0.0;
    double cost = 0.0; // of this candidate; infinity when illegal
    double best = 0.0; // best so far; infinity before the first legal one
};

struct SearchProgress {
    std::int64_t evaluations = 0;
    double seconds = 0.0;
    double best = 0.0;
    bool finished = false;
    // A step of the run that is not search (training a surrogate, solving a
    // MIP, a first incumbent): what it is, how much of it is done (0..1; -1
    // when unknown) and its seconds left at its pace so far (-1: unknown).
    // Empty while the run searches.
    std::string phase;
    double phaseFraction = -1.0;
    double phaseSecondsLeft = -1.0;
};
// The seconds a step has left at its pace so far, `spent` seconds in and
// `fraction` done; -1 when nothing is done yet to reckon from.
inline double secondsLeftAtPace(double spent, double fraction) {
    return fraction > 0.0 ? spent * (1.0 - fraction) / fraction : -1.0;
}

// The time a progress callback takes is not the search's: it is left out of
// the time budget and of every reported second, so a caller that pauses a run
// by blocking in its callback (the GUI's Pause) stops the run's clock.
using ProgressFn = std::function<void(const SearchProgress&)>;

struct SearchResult {
    std::string searcher;
    bool found = false;
    Mapping best{};
    Evaluation bestEvaluation{};
    double bestCost = 0.0;
    std::int64_t evaluations = 0; // charged
    std::int64_t illegal = 0;     // charged but violating
    std::int64_t duplicates = 0;  // proposed again, not charged
    double seconds = 0.0;
    bool cancelled = false;
    std::string stopReason;
    std::vector<TracePoint> trace; // every improvement, plus a thinned record of the rest
    // Searcher-specific figures (e.g. surrogate steps, MIP solve seconds).
    std::map<std::string, double> stats;
    // What the run wants its user to know beside its stop reason (a refused
    // surrogate file, say), one line each.
    std::vector<std::string> notes;
    // The settings' params the searcher never read (a note says so too).
    std::vector<std::string> unreadParams;
};

class WorkerPool;
class Searcher;

// Costs of the mappings evaluated so far, by canonical hash: open addressing
// with linear probing in one flat array (a node-based map would cost a cache miss
// and an allocation per candidate), behind a filter of 4 bits per slot that
// answers most look-ups of new keys without touching the table (the table
// outgrows the caches within a second of search; the filter stays 32 times
// smaller).
// Its memory has a cap (`limitBytes`): a search of an hour proposes more
// mappings than a machine's memory can record. When the table would outgrow
// it, the keys held become an older generation, still found, and a new table
// takes the keys that follow; when that fills in turn, the older keys are
// forgotten. A key found in the older generation moves to the new one, so
// the keys a search keeps returning to stay. A forgotten mapping proposed
// again is evaluated and charged again. Which keys are held depends only on
// the order of the inserts, so runs stay reproducible.
class SeenCosts {
  public:
    SeenCosts(); // an empty table of a few slots (never none: see prefetch)
    bool find(std::uint64_t key, double& cost) const;
    // Adds key; when it is already present, returns false and its cost in `known`.
    bool insert(std::uint64_t key, double cost, double& known);
    // The most memory the record may take, both generations and their filters
    // (at least that of two tables of kMinCappedSlots). Before the first insert.
    void limitBytes(std::size_t bytes);
    static constexpr std::size_t kMinCappedSlots = std::size_t(1) << 16; // 2 x 1 MiB
    // Keys held once but forgotten since (0 until the cap is reached).
    std::size_t forgotten() const { return forgotten_; }
    int retirements() const { return retirements_; } // generations started
    // The cap as set (or the least it can be), or the memory the system gave
    // when it refused more (refused()); 0: none.
    std::size_t capBytes() const { return capBytes_; }
    bool refused() const { return refused_; }
    // For the tests: allocations that would take the tables past `bytes` in
    // all fail, as a system short of memory refuses them.
    void simulateSystemLimit(std::size_t bytes) { systemLimit_ = bytes; }
    // Makes room for `more` keys beyond those held, so that as many inserts
    // grow nothing. A growth rehashes every key: parallelFor(n, fn), when
    // given, runs fn(begin, end, worker) over ranges that cover [0, n), at
    // once on several threads (the driver's worker pool).
    using RangeFn = std::function<void(std::size_t, std::size_t, int)>;
    using ParallelFor = std::function<void(std::size_t, const RangeFn&)>;
    void reserve(std::size_t more, const ParallelFor& parallelFor = {});
    // The most keys the table will hold (its owner's evaluation budget), a
    // hint: once past its first kEarlySlots slots, the table grows straight
    // to the room for that many (at most kExpectedKeysCap) instead of
    // doubling there. Every doubling writes a fresh table (page faults: 5 %
    // of a 300k-evaluation annealing run) and moves every key; the early
    // growths still double, so a search that stops soon never pays for room
    // it does not use, and none waits for a large table before it starts.
    void expect(std::size_t keys) { expected_ = keys; }
    std::size_t slotCount() const { return slots_.size(); }
    static constexpr std::size_t kEarlySlots = std::size_t(1) << 17;      // a 2 MiB table
    static constexpr std::size_t kExpectedKeysCap = std::size_t(1) << 20; // a 32 MiB table
    // Starts loading key's slot and filter word into the cache (a hint:
    // nothing changes). Forced inline and unconditional on purpose: GCC 12
    // finds a call to a function holding only prefetches free of effects and
    // deletes it, whether out of line or merely not inlined early (which this
    // one, with three of them, was not: driver.cpp compiled to no prefetch at
    // all), and it deletes one behind a test of the table (a branch without
    // effects). (The test codegen_prefetches checks the built driver.)
    [[gnu::always_inline]] void prefetch(std::uint64_t key) const {
        __builtin_prefetch(&slots_[home(key, slots_.size())]);
        __builtin_prefetch(&filter_[filterWord(key, filter_.size())]);
        __builtin_prefetch(&olderFilter_[filterWord(key, olderFilter_.size())]);
    }

  private:
    // Key and cost side by side: a probe touches one cache line (the table
    // outgrows the caches within seconds of search).
    struct Slot {
        std::uint64_t key; // 0 marks an empty slot
        double cost;
    };
    void grow(std::size_t tableSlots, const ParallelFor& parallelFor);
    // Starts a new generation (see the class comment).
    void retire(const ParallelFor& parallelFor);
    static bool lookUp(const ZeroedArray<Slot>& table, const ZeroedArray<std::uint64_t>& filter,
                       std::uint64_t key, double& cost);
    // Memory of a table of n slots and its filter (4 bits a slot).
    static std::size_t tableBytes(std::size_t n) { return n * sizeof(Slot) + n / 2; }
    // Where key's probe starts in a table of n slots (a power of 2). (No
    // parameter of this header may be called `slots`: Qt defines that
    // word away, and home() read `& (-1)` in the UI's files.)
    static std::size_t home(std::uint64_t key, std::size_t n) {
        return ((key | 1) * 0x9e3779b97f4a7c15ull) >> 20 & (n - 1);
    }
    // Two bits of one filter word per key (a blocked Bloom filter): both set
    // when key may be present, at least one clear when it is not.
    static std::uint64_t filterBits(std::uint64_t key);
    static std::size_t filterWord(std::uint64_t key, std::size_t words) {
        return ((key | 1) * 0xd6e8feb86659fd93ull) >> 24 & (words - 1);
    }
    ZeroedArray<std::uint64_t> filter_;
    ZeroedArray<Slot> slots_; // (zero bytes: empty slots)
    std::size_t size_ = 0;
    std::size_t expected_ = 0;
    // The older generation (empty but for a filter word of zeros until the
    // first retirement, so that look-ups and prefetches need no test).
    ZeroedArray<Slot> older_;
    ZeroedArray<std::uint64_t> olderFilter_;
    std::size_t olderSize_ = 0;
    std::size_t maxSlots_ = std::size_t(1) << 62; // (no cap until limitBytes)
    std::size_t capBytes_ = 0;
    std::size_t forgotten_ = 0;
    std::size_t movedForward_ = 0; // keys of the older generation moved to the new one
    int retirements_ = 0;
    bool refused_ = false;
    std::size_t systemLimit_ = 0; // (0: the system's own)
};

// What a generator found out about the candidate it returns: its canonical
// hash (from isKnown), and that it passed MapSpace::isLegalQuick (constraints
// included). Both must describe the mapping as returned.
// A generator may also vouch that the candidate is new: isKnown said so, and
// no other candidate it proposes is the same up to canonical form (the
// optimal searcher's leaves). The driver then charges it without keeping it
// in the record of evaluated mappings, which would otherwise grow by one
// cache miss per candidate (debug builds keep and check it).
struct CandidateNote {
    std::uint64_t hash = 0;
    bool hashed = false;
    bool quickLegal = false;
    bool vouchedNew = false;
};

// A searcher parameter out of its range: an InputError at "param NAME" that
// also carries the name, so that a caller which gave the parameter (a sweep's
// spec, an option) can say where it came from.
class ParamError : public InputError {
  public:
    ParamError(const std::string& name, std::string what)
        : InputError("param " + name, std::move(what)), name_(name) {}
    const std::string& name() const { return name_; }

  private:
    std::string name_;
};

class SearchContext {
  public:
    SearchContext(const MapSpace& space, const SearchSettings& settings, ProgressFn progress,
                  const std::atomic<bool>* cancel);
    ~SearchContext();

    const MapSpace& space() const { return space_; }
    const SearchSettings& settings() const { return settings_; }
    Rng& rng() { return rng_; }
    double param(const std::string& name, double fallback) const;
    // A hyperparameter that must lie in [lo, hi] (a rate, a share, a size):
    // a ParamError otherwise, before anything is sized by it.
    double param(const std::string& name, double fallback, double lo, double hi) const;
    // The same for a whole number (a population, a batch).
    std::int64_t countParam(const std::string& name, std::int64_t fallback, std::int64_t lo,
                            std::int64_t hi) const;

    // Generates n candidates in parallel: gen(i, rng, out) fills candidate i
    // using an RNG stream of its own; returning false withdraws it (uncharged).
    // Each legal candidate is evaluated and charged, in index order, until the
    // budget runs out. costs[i]: the objective, +inf when illegal, NaN when not
    // evaluated. Returns how many were charged.
    using Generator = std::function<bool(std::size_t, Rng&, Mapping&)>;
    std::size_t evaluateGenerated(std::size_t n, const Generator& gen, Mapping* out, double* costs);
    // The same, for generators that already know something of their candidate
    // (see CandidateNote), so the driver does not work it out again.
    using NotingGenerator = std::function<bool(std::size_t, Rng&, Mapping&, CandidateNote&)>;
    std::size_t evaluateGenerated(std::size_t n, const NotingGenerator& gen, Mapping* out,
                                  double* costs);
    std::size_t evaluateBatch(const Mapping* candidates, std::size_t n, double* costs);
    double evaluate(const Mapping& m); // one candidate

    // A searcher's own work that is not evaluation (the optimal searcher's
    // bounds) on the run's threads: fn(begin, end, worker) over ranges that
    // together cover [0, n), the caller's thread taking part as worker 0.
    // fn must not call the context; which worker runs an index must not
    // change its result.
    void parallelFor(std::size_t n, const SeenCosts::RangeFn& fn);
    int workers() const; // the `worker` values parallelFor passes are below this

    bool stopped() const; // budget spent, time up, cancelled, or a searcher stop
    bool cancelRequested() const { return cancel_ && cancel_->load(std::memory_order_relaxed); }
    void stop(const std::string& reason);
    std::int64_t evaluations() const { return result_.evaluations; }
    std::int64_t remainingEvaluations() const; // INT64_MAX when unlimited

    // Uncharged legality check, as a mapper filters candidates before evaluating.
    bool isLegal(const Mapping& m);
    // Whether m (up to canonical form) was evaluated already. Safe to call from
    // generators: the record only changes between batches.
    // With a note, m's hash is kept in it for the driver (or, when the note
    // already holds it, taken from there: MapSpace::rehash).
    bool isKnown(const Mapping& m, CandidateNote* note = nullptr) const;

    // Runs another searcher on this context, its evaluations charged, traced
    // and bounded here, until it stops, has spent `evaluations` more (the
    // optimal searcher's first incumbent) or, with a patience, has gone that
    // many evaluations without improving the best; a stop it asked for is
    // undone. With a phase name, progress shows it as that phase, done as the
    // evaluations are spent.
    void runNested(Searcher& searcher, std::int64_t evaluations, const std::string& phase = {},
                   std::int64_t patience = 0);

    // Progress of a step that is not search (see SearchProgress::phase):
    // reported at the progress interval; a new name restarts the phase's
    // clock. endPhase() returns the run to plain search progress.
    void reportPhase(const std::string& phase, double fraction);
    void endPhase();

    // Charges and records candidates although the run has stopped: the
    // answer of a searcher whose budget went into preparation (Mind Mappings'
    // training), so that what it computed is not lost. Each candidate is one
    // evaluation beyond the budget; returns how many were legal.
    int adoptBeyondBudget(const std::vector<Mapping>& candidates);

    // Records a searcher-specific figure in the result (see SearchResult::stats).
    void setStat(const std::string& name, double value) { result_.stats[name] = value; }
    // Adds a line to the result's notes (see SearchResult::notes).
    void note(const std::string& line) { result_.notes.push_back(line); }

    bool hasBest() const { return result_.found; }
    const Mapping& best() const { return result_.best; }
    double bestCost() const { return result_.found ? result_.bestCost : kInfinity; }
    // Seconds of search so far: the clock the time budget runs on (the time
    // in progress callbacks is left out, see ProgressFn).
    double elapsed() const;

    // Ends the run: its result, with a note for each parameter the run never
    // read (a misspelt --param changes nothing, and says so).
    SearchResult finish();

    static constexpr double kInfinity = 1e300;

  private:
    void record(double cost, const Mapping& m, bool legal);
    // Evaluates m for the objective (at every imposed density when sparsity-
    // aware); e receives the evaluation of the space's own problem.
    bool score(const Mapping& m, Evaluation& e, double& cost,
               EvaluationCache* cache = nullptr) const;
    // elapsed() as of the last clock tick: cheaper, and a few ms behind at most.
    double roughElapsed() const;
    bool timeUp() const;
    void reportProgress(bool finished);

    const MapSpace& space_;
    SearchSettings settings_;
    // Per parameter (settings_.params in order), whether param() read it
    // (from any thread).
    std::unique_ptr<std::atomic<bool>[]> paramRead_;
    ProgressFn progress_;
    const std::atomic<bool>* cancel_;
    Rng rng_;
    SearchResult result_;
    std::unique_ptr<WorkerPool> pool_;
    SeenCosts seen_;
    std::int64_t batches_ = 0;
    std::int64_t nestedLimit_ = INT64_MAX; // evaluations a nested searcher may reach
    std::int64_t nestedStart_ = 0;         // evaluations when the nested searcher began
    std::int64_t nestedPatience_ = 0;      // see runNested (0: none)
    std::int64_t lastImprovement_ = 0;     // evaluations when the best last improved
    std::string phase_;                    // see reportPhase
    double phaseFraction_ = -1.0;
    double phaseStart_ = 0.0; // elapsed() when the phase began
    // Candidates proposed in a row without a charge (all seen before): a space
    // with fewer legal mappings than the budget ends the search here.
    std::int64_t unchargedStreak_ = 0;
    // The streak that ends it (param exhausted_after): a million repeats, about
    // a second of hashing, means the searcher cannot find a new mapping.
    std::int64_t exhaustedAfter_ = 1'000'000;
    std::int64_t traceStride_ = 1; // a power of 2 (a mask, not a division, per charge)
    double lastProgress_ = -1.0;
    double start_ = 0.0;
    double inProgressCalls_ = 0.0; // seconds spent in progress_, not the search's
    bool stopRequested_ = false;
    Evaluation scratch_;
    struct CandidateSlot {
        bool proposed = false;
        bool evaluated = false;
        bool legal = false;
        bool withinSpace = false; // constraints and own fan-outs hold (the model checks the rest)
        bool hashed = false;      // hash holds the candidate's canonical hash
        bool vouchedNew = false;  // CandidateNote::vouchedNew
        bool kept = false;        // to be kept in (and checked against) the record
        std::uint64_t hash = 0;
        double cost = 0.0;
    };
    std::vector<CandidateSlot> slots_;
    std::vector<Problem> densityProblems_; // the problem at each imposed density
    std::vector<CostModel> densityModels_; // and its model
    // One evaluation per worker, each on cache lines of its own: side by side,
    // the end of one and the start of the next would share a line that both
    // workers write at every evaluation.
    struct alignas(128) WorkerScratch {
        Evaluation evaluation;
        // The worker's last mapping: a searcher's next candidate is often its
        // neighbour, and only the levels where they differ are re-costed.
        EvaluationCache cache;
    };
    std::vector<WorkerScratch> workerScratch_;
};

class Searcher {
  public:
    virtual ~Searcher() = default;
    virtual void run(SearchContext& ctx) = 0;
};

const std::vector<std::string>& searcherNames();
// A searcher from outside the engine's list (one written in Python), which a
// front end offers beside the built-in ones.
struct SearcherFactory {
    std::string name;
    std::function<std::unique_ptr<Searcher>()> make;
};
std::unique_ptr<Searcher> makeSearcher(const std::string& name); // throws InputError

SearchResult runSearch(const MapSpace& space, const std::string& searcher,
                       const SearchSettings& settings, ProgressFn progress = {},
                       const std::atomic<bool>* cancel = nullptr);
// A searcher made elsewhere (one written in Python, say), run by the same
// driver under the same budget, seed, objective and trace; `name` labels it.
SearchResult runSearch(const MapSpace& space, Searcher& searcher, const std::string& name,
                       const SearchSettings& settings, ProgressFn progress = {},
                       const std::atomic<bool>* cancel = nullptr);

// The optimum a run of the optimal searcher proved (its best mapping's cost),
// or 0 when the run proved nothing (another searcher, or a stop before the
// proof); other runs' distance from it is cost / optimum - 1.
double provenOptimum(const SearchResult& r);

// Reference line that no legal mapping beats: every element the computation
// touches moved once through the outermost level, every MAC busy (see
// search.cpp for the exact definition).
struct LowerBound {
    double energy = 0.0; // pJ
    double cycles = 0.0;
    double edp = 0.0; // J x cycles
    double objective = 0.0;
};
LowerBound lowerBound(const Problem& p, const Architecture& a, const SearchObjective& o);

} // namespace mw
