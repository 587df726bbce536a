#include "common/error.h"
#include "model/cost_model.h"
#include "search/search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <limits>
#include <mutex>
#include <system_error>
#include <thread>

#include <sys/resource.h>
#include <unistd.h>

namespace mw {

// Fork-join over persistent threads: run(n, fn) calls fn(begin, end, worker)
// on ranges that together cover [0, n) once, the caller's thread taking part
// as worker 0.
class WorkerPool {
  public:
    explicit WorkerPool(int threads) {
        threads_.reserve(std::size_t(std::max(0, threads - 1))); // (no reallocation below)
        try {
            for (int w = 1; w < threads; ++w)
                threads_.emplace_back([this, w] { loop(w); });
        } catch (const std::system_error& e) {
            // The system refused a thread (its limit on processes): the
            // threads started stop and join, and the search is not run.
            stop();
            throw InputError("threads", "cannot start " + std::to_string(threads) + " threads (" +
                                            e.what() +
                                            "); expected fewer, within the system's limit");
        }
    }
    ~WorkerPool() { stop(); }
    int size() const { return static_cast<int>(threads_.size()) + 1; }

  private:
    void stop() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            quit_ = true;
            ++generation_;
            posted_.store(generation_, std::memory_order_release);
        }
        wake_.notify_all();
        for (auto& t : threads_)
            t.join();
        threads_.clear();
    }

  public:
    using Job = std::function<void(std::size_t, std::size_t, int)>;
    void run(std::size_t n, const Job& fn) {
        if (threads_.empty() || n < 2) {
            if (n > 0)
                fn(0, n, 0);
            return;
        }
        {
            std::lock_guard<std::mutex> lock(mutex_);
            job_ = &fn;
            count_ = n;
            next_.store(0);
            busy_.store(static_cast<int>(threads_.size()));
            ++generation_;
            posted_.store(generation_, std::memory_order_release);
        }
        wake_.notify_all();
        work(0);
        // The workers usually finish within microseconds of this thread:
        // spin before sleeping, as they do (a wake-up through the scheduler
        // costs more than a small batch).
        const auto spinUntil = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
        while (busy_.load(std::memory_order_acquire) != 0 &&
               std::chrono::steady_clock::now() < spinUntil)
            std::this_thread::yield();
        std::unique_lock<std::mutex> lock(mutex_);
        done_.wait(lock, [this] { return busy_.load(std::memory_order_acquire) == 0; });
        job_ = nullptr;
    }

  private:
    void work(int worker) {
        // Indices are claimed in chunks of a share of what is left (guided
        // scheduling): large ones first, so neighbouring results come from one
        // thread and the counter is touched rarely, single ones at the end, so
        // no thread waits long for another's last chunk before the serial
        // merge. Which thread runs an index does not change its result, so
        // runs stay reproducible.
        const std::size_t share = 2 * (threads_.size() + 1);
        std::size_t i = next_.load(std::memory_order_relaxed);
        while (i < count_) {
            const std::size_t chunk = std::max<std::size_t>(1, (count_ - i) / share);
            if (!next_.compare_exchange_weak(i, i + chunk, std::memory_order_relaxed))
                continue;                  // i now holds the counter's current value
            (*job_)(i, i + chunk, worker); // chunk <= count_ - i
            i = next_.load(std::memory_order_relaxed);
        }
    }
    void loop(int worker) {
        std::uint64_t seen = 0;
        for (;;) {
            // Batches follow each other within microseconds in the population
            // searchers: spin briefly before sleeping, so a worker is not
            // woken through the scheduler for every generation.
            const auto spinUntil =
                std::chrono::steady_clock::now() + std::chrono::microseconds(200);
            while (posted_.load(std::memory_order_acquire) == seen &&
                   std::chrono::steady_clock::now() < spinUntil)
                std::this_thread::yield();
            {
                std::unique_lock<std::mutex> lock(mutex_);
                wake_.wait(lock, [&] { return generation_ != seen; });
                seen = generation_;
                if (quit_)
                    return;
            }
            work(worker);
            if (busy_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
                // Under the lock, so the notification cannot fall between the
                // waiter's check and its sleep.
                std::lock_guard<std::mutex> lock(mutex_);
                done_.notify_one();
            }
        }
    }

    std::vector<std::thread> threads_;
    std::mutex mutex_;
    std::condition_variable wake_, done_;
    const Job* job_ = nullptr;
    std::size_t count_ = 0;
    std::atomic<std::size_t> next_{0};
    std::atomic<int> busy_{0}; // workers still on the current batch
    std::uint64_t generation_ = 0;
    std::atomic<std::uint64_t> posted_{0}; // generation_, readable without the lock
    bool quit_ = false;
};

namespace {
double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}
// now() as of the system's last clock tick (a few ms behind at most), for
// checks a few ms cannot matter to: is the time budget spent, is a progress
// report due. Linux's coarse monotonic clock is steady_clock's at its last
// tick, and reads in 5 ns against 23 on this project's VM (an annealing step,
// which checks both, takes about 2 us).
double roughNow() {
#ifdef CLOCK_MONOTONIC_COARSE
    timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) == 0)
        return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
#endif
    return now();
}
// The memory this process may use: the machine's, or less where a
// container's control group or the address-space limit (ulimit -v) says so;
// 0 where nothing says.
std::uint64_t memoryAvailable() {
    std::uint64_t bytes = 0;
    auto atMost = [&bytes](std::uint64_t limit) {
        if (limit > 0 && (bytes == 0 || limit < bytes))
            bytes = limit;
    };
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGE_SIZE)
    const long pages = sysconf(_SC_PHYS_PAGES), pageBytes = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && pageBytes > 0)
        atMost(std::uint64_t(pages) * std::uint64_t(pageBytes));
#endif
    // cgroup v2, then v1 (a container sees its own group at these paths; "max"
    // and v1's near-2^63 mean no limit, and read as nothing or as more than
    // the machine's).
    for (const char* path :
         {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
        std::ifstream in(path);
        std::uint64_t limit = 0;
        if (in >> limit)
            atMost(limit);
    }
    rlimit as{};
    if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY)
        atMost(std::uint64_t(as.rlim_cur));
    return bytes;
}
// The cap of the record of evaluated mappings (SeenCosts::limitBytes), in
// MiB: an eighth of the memory available, as the GUI runs several searches
// at once (1 GiB where nothing says).
std::int64_t defaultRecordMiB() {
    const std::uint64_t available = memoryAvailable();
    return available == 0 ? 1024 : std::max<std::int64_t>(4, std::int64_t(available / 8 >> 20));
}
// The merge asks for the table slots of this many candidates ahead of the one
// it looks up.
constexpr std::size_t kMergeAhead = 4;
constexpr std::size_t kMaxTrace = 20000; // beyond this, non-improving points are thinned
// Debug builds (the sanitizer stage of CI among them) keep candidates vouched
// new in the record too, and stop on one that was not.
// They also check that a hash a generator noted (made from a parent's by
// MapSpace::rehash) is the candidate's own.
#ifdef NDEBUG
constexpr bool kCheckVouched = false;
constexpr bool kCheckNotedHash = false;
#else
constexpr bool kCheckVouched = true;
constexpr bool kCheckNotedHash = true;
#endif
} // namespace

SearchContext::SearchContext(const MapSpace& space, const SearchSettings& settings,
                             ProgressFn progress, const std::atomic<bool>* cancel)
    : space_(space), settings_(settings),
      paramRead_(new std::atomic<bool>[settings.params.size()]()), progress_(std::move(progress)),
      cancel_(cancel), rng_(settings.seed) {
    if (settings_.budget.evaluations < 0 || !(settings_.budget.seconds >= 0) ||
        settings_.budget.seconds == std::numeric_limits<double>::infinity())
        throw InputError("budget", "must be a finite number, not negative");
    if (settings_.budget.evaluations == 0 && settings_.budget.seconds == 0)
        throw InputError("budget", "set an evaluation budget, a time budget, or both");
    if (settings_.threads < 1 || settings_.threads > kMaxSearchThreads)
        throw InputError("threads", "is " + std::to_string(settings_.threads) + "; expected 1 to " +
                                        std::to_string(kMaxSearchThreads));
    if (!settings_.objective.densityTensor.empty()) {
        const int t = space_.problem().tensorIndex(settings_.objective.densityTensor);
        if (t < 0)
            throw InputError("--objective", "'" + settings_.objective.densityTensor +
                                                "' is not a tensor of " + space_.problem().name);
        for (double d : settings_.objective.densities) {
            Problem q = space_.problem();
            q.tensors[std::size_t(t)].density = d;
            densityProblems_.push_back(q);
        }
        // (After the problems are in place: each model refers to its problem.)
        for (const Problem& q : densityProblems_)
            densityModels_.emplace_back(q, space_.arch());
    }
    // (Proposals in a row that bring nothing new; a count, so its cast is defined.)
    exhaustedAfter_ = countParam("exhausted_after", exhaustedAfter_, 1, 1'000'000'000'000'000);
    pool_ = std::make_unique<WorkerPool>(settings_.threads);
    if (settings_.budget.evaluations > 0) // (charged evaluations bound the keys recorded)
        seen_.expect(std::size_t(settings_.budget.evaluations));
    seen_.limitBytes(std::size_t(countParam("record_mib", defaultRecordMiB(), 4, 1ll << 40)) << 20);
    start_ = now();
    result_.bestCost = kInfinity;
}

SearchContext::~SearchContext() = default;

double SearchContext::param(const std::string& name, double fallback) const {
    const auto it = settings_.params.find(name);
    if (it == settings_.params.end())
        return fallback;
    paramRead_[std::size_t(std::distance(settings_.params.begin(), it))].store(
        true, std::memory_order_relaxed);
    return it->second;
}

namespace {

// A parameter's value as an error shows it (%g: 0.05, 1e+09).
std::string shownNumber(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", v);
    return text;
}

} // namespace

double SearchContext::param(const std::string& name, double fallback, double lo, double hi) const {
    const double v = param(name, fallback);
    if (!(v >= lo && v <= hi)) // (NaN fails too)
        throw ParamError(name, "is " + shownNumber(v) + "; expected a value from " +
                                   shownNumber(lo) + " to " + shownNumber(hi));
    return v;
}

std::int64_t SearchContext::countParam(const std::string& name, std::int64_t fallback,
                                       std::int64_t lo, std::int64_t hi) const {
    const double v = param(name, double(fallback));
    if (!(v >= double(lo) && v <= double(hi)) || v != std::floor(v))
        throw ParamError(name, "is " + shownNumber(v) + "; expected a whole number from " +
                                   std::to_string(lo) + " to " + std::to_string(hi));
    return std::int64_t(v);
}

double SearchContext::elapsed() const {
    return now() - start_ - inProgressCalls_;
}

double SearchContext::roughElapsed() const {
    return roughNow() - start_ - inProgressCalls_;
}

bool SearchContext::timeUp() const {
    return settings_.budget.seconds > 0 && roughElapsed() >= settings_.budget.seconds;
}

std::int64_t SearchContext::remainingEvaluations() const {
    std::int64_t left =
        settings_.budget.evaluations == 0
            ? std::numeric_limits<std::int64_t>::max()
            : std::max<std::int64_t>(0, settings_.budget.evaluations - result_.evaluations);
    if (nestedLimit_ != std::numeric_limits<std::int64_t>::max())
        left = std::min(left, std::max<std::int64_t>(0, nestedLimit_ - result_.evaluations));
    return left;
}

void SearchContext::runNested(Searcher& searcher, std::int64_t evaluations,
                              const std::string& phase, std::int64_t patience) {
    if (stopped())
        return;
    const std::int64_t outer = nestedLimit_, outerStart = nestedStart_,
                       outerPatience = nestedPatience_;
    nestedLimit_ = std::min(outer, result_.evaluations + evaluations);
    nestedStart_ = result_.evaluations;
    nestedPatience_ = patience;
    if (!phase.empty())
        reportPhase(phase, 0.0);
    searcher.run(*this);
    if (!phase.empty())
        endPhase();
    nestedLimit_ = outer;
    nestedStart_ = outerStart;
    nestedPatience_ = outerPatience;
    stopRequested_ = false;
    result_.stopReason.clear();
    unchargedStreak_ = 0; // its repeats say nothing of the caller's
}

bool SearchContext::stopped() const {
    return stopRequested_ || remainingEvaluations() == 0 || timeUp() ||
           (cancel_ && cancel_->load(std::memory_order_relaxed));
}

void SearchContext::stop(const std::string& reason) {
    if (!stopRequested_)
        result_.stopReason = reason;
    stopRequested_ = true;
}

bool SearchContext::isLegal(const Mapping& m) {
    return space_.isLegal(m, scratch_);
}

bool SearchContext::isKnown(const Mapping& m, CandidateNote* note) const {
    if (!settings_.deduplicate)
        return false;
    // (A note that already holds m's hash saves hashing it again.)
    const std::uint64_t h = note && note->hashed ? note->hash : space_.hash(m);
    if (note) {
        note->hash = h;
        note->hashed = true;
    }
    double cost;
    return seen_.find(h, cost);
}

void SearchContext::record(double cost, const Mapping& m, bool legal) {
    ++result_.evaluations;
    if (!legal)
        ++result_.illegal;
    const bool improved = legal && (!result_.found || cost < result_.bestCost);
    if (improved) {
        result_.found = true;
        result_.bestCost = cost;
        result_.best = m;
        space_.model().evaluate(m, result_.bestEvaluation); // rare
        lastImprovement_ = result_.evaluations;
    }
    if (nestedPatience_ > 0 && !stopRequested_ &&
        result_.evaluations - std::max(nestedStart_, lastImprovement_) >= nestedPatience_)
        stop("no improvement in " + std::to_string(nestedPatience_) + " evaluations");
    // Keep every improvement; thin the rest once the trace is long, by index,
    // so the same seed gives the same trace.
    if (improved || (result_.evaluations & (traceStride_ - 1)) == 0 || result_.evaluations == 1) {
        result_.trace.push_back(
            {result_.evaluations, elapsed(), legal ? cost : kInfinity, result_.bestCost});
        if (result_.trace.size() > kMaxTrace) {
            traceStride_ *= 2;
            std::vector<TracePoint> kept;
            double best = kInfinity;
            for (const auto& t : result_.trace) {
                const bool imp = t.best < best;
                best = std::min(best, t.best);
                if (imp || (t.evaluation & (traceStride_ - 1)) == 0 || t.evaluation == 1)
                    kept.push_back(t);
            }
            result_.trace.swap(kept);
        }
    }
}

void SearchContext::reportPhase(const std::string& phase, double fraction) {
    if (phase != phase_) {
        // A new step starts the clock its time left is reckoned on; a step
        // that goes on under another name (epoch 2 after epoch 1) keeps it.
        if (phase_.empty() || fraction < phaseFraction_)
            phaseStart_ = elapsed();
        phase_ = phase;
        lastProgress_ = -1.0; // a new phase shows at once
    }
    phaseFraction_ = std::clamp(fraction, 0.0, 1.0);
    reportProgress(false);
}

void SearchContext::endPhase() {
    if (phase_.empty())
        return;
    phase_.clear();
    phaseFraction_ = -1.0;
    lastProgress_ = -1.0;
    reportProgress(false);
}

int SearchContext::adoptBeyondBudget(const std::vector<Mapping>& candidates) {
    int legal = 0;
    for (const Mapping& m : candidates) {
        double cost = kInfinity;
        const bool ok = space_.isLegal(m, scratch_) && score(m, scratch_, cost);
        record(ok ? cost : kInfinity, m, ok);
        legal += ok;
    }
    reportProgress(false);
    return legal;
}

void SearchContext::reportProgress(bool finished) {
    if (!progress_)
        return;
    if (!finished && lastProgress_ >= 0 &&
        roughElapsed() - lastProgress_ < settings_.progressInterval)
        return;
    lastProgress_ = roughElapsed(); // (on the clock it is compared with)
    const double t = elapsed();
    SearchProgress p;
    p.evaluations = result_.evaluations;
    p.seconds = t;
    p.best = result_.found ? result_.bestCost : kInfinity;
    p.finished = finished;
    if (!finished && !phase_.empty()) {
        p.phase = phase_;
        // A nested searcher's phase is done as its evaluations are spent.
        p.phaseFraction =
            nestedLimit_ != std::numeric_limits<std::int64_t>::max() && nestedLimit_ > nestedStart_
                ? double(result_.evaluations - nestedStart_) / double(nestedLimit_ - nestedStart_)
                : phaseFraction_;
        p.phaseSecondsLeft = secondsLeftAtPace(t - phaseStart_, p.phaseFraction);
    }
    const double called = now();
    progress_(p);
    inProgressCalls_ += now() - called;
}

std::size_t SearchContext::evaluateGenerated(std::size_t n, const Generator& gen, Mapping* out,
                                             double* costs) {
    return evaluateGenerated(
        n, [&gen](std::size_t i, Rng& rng, Mapping& m, CandidateNote&) { return gen(i, rng, m); },
        out, costs);
}

std::size_t SearchContext::evaluateGenerated(std::size_t n, const NotingGenerator& gen,
                                             Mapping* out, double* costs) {
    for (std::size_t i = 0; i < n; ++i)
        costs[i] = std::numeric_limits<double>::quiet_NaN();
    if (stopped())
        return 0;
    const std::uint64_t batch = static_cast<std::uint64_t>(batches_++);
    const std::int64_t remaining = remainingEvaluations();
    slots_.assign(n, CandidateSlot{});
    auto& slots = slots_;
    if (workerScratch_.size() < static_cast<std::size_t>(pool_->size()))
        workerScratch_.resize(static_cast<std::size_t>(pool_->size()));
    const bool dedup = settings_.deduplicate;
    const std::atomic<bool>* cancel = cancel_;
    const double deadline =
        settings_.budget.seconds > 0 ? start_ + inProgressCalls_ + settings_.budget.seconds : 0.0;
    // Candidates past the evaluation budget are not generated: a batch never
    // overspends, and the charge order is the index order.
    // (A few extra stand in for duplicates, which are not charged.)
    const std::int64_t wanted = static_cast<std::int64_t>(n);
    const std::size_t limit = remaining >= wanted
                                  ? n
                                  : static_cast<std::size_t>(std::min<std::int64_t>(
                                        wanted, remaining + static_cast<std::int64_t>(n / 4 + 8)));
    // Once duplicates are common (a converging population), a candidate is
    // looked up before it is evaluated: a known one costs a hash, not a model
    // call. seen_ only changes at merge time, so workers may read it. The
    // outcome is the same either way; only the time differs.
    const bool lookUpFirst = dedup && result_.duplicates * 16 > result_.evaluations;
    // In a batch too small for the merge to fetch ahead (annealing's one
    // neighbour a step), the merge follows the evaluation at once: a hash
    // known before the evaluation starts loading its slot, which then
    // arrives while the model runs.
    const bool hashFirst = limit <= kMergeAhead;
    // Each worker generates its whole range of candidates, then evaluates
    // them: the model's code and data stay in the caches and the branch
    // predictor across a run of evaluations instead of being displaced by
    // breeding and hashing between each two.
    auto generateAndEvaluate = [&](std::size_t begin, std::size_t end, int worker) {
        for (std::size_t i = begin; i < end; ++i) {
            // (The clock is read every 8th candidate: it costs as much as a hash.
            // Not at candidate 0: stopped() above has just read it.)
            if ((cancel && cancel->load(std::memory_order_relaxed)) ||
                (deadline > 0 && i != 0 && (i & 7) == 0 && now() >= deadline))
                continue;
            Rng rng = Rng::stream(settings_.seed, batch + 1, i);
            CandidateSlot& s = slots[i];
            CandidateNote note;
            if (!gen(i, rng, out[i], note))
                continue;
            s.proposed = true;
            s.vouchedNew = note.vouchedNew;
            s.kept = dedup && (kCheckVouched || !note.vouchedNew);
            s.withinSpace = note.quickLegal || space_.withinSpace(out[i]);
            if (kCheckNotedHash && note.hashed && note.hash != space_.hash(out[i])) {
                std::fprintf(stderr, "internal error: a candidate's noted hash is not its own "
                                     "(CandidateNote::hash)\n");
                std::abort();
            }
            if (lookUpFirst || note.hashed) {
                s.hash = note.hashed ? note.hash : space_.hash(out[i]);
                s.hashed = true;
                if (hashFirst && s.kept)
                    seen_.prefetch(s.hash);
            }
            if (lookUpFirst && !s.vouchedNew && s.withinSpace && seen_.find(s.hash, s.cost))
                s.legal = s.evaluated = true; // a duplicate: its merge charges nothing
        }
        WorkerScratch& scratch = workerScratch_[static_cast<std::size_t>(worker)];
        Evaluation& e = scratch.evaluation;
        // (hashFirst: a candidate not hashed yet is hashed before the model
        // runs, for the same reason.)
        for (std::size_t i = begin; i < end; ++i) {
            CandidateSlot& s = slots[i];
            if (!s.proposed || s.evaluated)
                continue;
            if (hashFirst && s.kept && s.withinSpace && !s.hashed) {
                s.hash = space_.hash(out[i]);
                s.hashed = true;
                seen_.prefetch(s.hash);
            }
            s.legal = s.withinSpace && score(out[i], e, s.cost, &scratch.cache);
            s.evaluated = true;
            if (s.legal && s.kept && !s.hashed) // duplicates are found at merge time
                s.hash = space_.hash(out[i]);
            // The merge will look the hash up: start loading its slot now,
            // while the merge is still ahead (for the caller's own candidates
            // it then finds them in its cache).
            if (s.legal && s.kept)
                seen_.prefetch(s.hash);
        }
    };
    // (Passed through a one-reference wrapper: the lambda's captures exceed
    // std::function's inline room, and a heap block a batch was one
    // allocation per annealing step.)
    pool_->run(limit, [&generateAndEvaluate](std::size_t begin, std::size_t end, int worker) {
        generateAndEvaluate(begin, end, worker);
    });
    // Room in the table for every candidate of the batch, made before the
    // merge so that it grows nothing, and with the idle pool sharing out any
    // growth (the serial merge is what keeps threads from scaling).
    std::size_t toKeep = 0;
    for (std::size_t i = 0; i < limit; ++i)
        toKeep += slots[i].kept;
    if (toKeep > 0)
        seen_.reserve(toKeep, [this](std::size_t count, const SeenCosts::RangeFn& fn) {
            pool_->run(count, fn);
        });
    std::size_t charged = 0;
    // The merge probes the table once per candidate, each probe a likely cache
    // miss once the table is large: ask for a few candidates ahead.
    for (std::size_t i = 0; i < std::min(limit, kMergeAhead); ++i)
        if (slots[i].legal && slots[i].kept)
            seen_.prefetch(slots[i].hash);
    for (std::size_t i = 0; i < limit; ++i) {
        if (i + kMergeAhead < limit && slots[i + kMergeAhead].legal && slots[i + kMergeAhead].kept)
            seen_.prefetch(slots[i + kMergeAhead].hash);
        CandidateSlot& s = slots[i];
        if (!s.proposed)
            continue;
        if (!s.evaluated || remainingEvaluations() == 0) {
            costs[i] = std::numeric_limits<double>::quiet_NaN();
            continue;
        }
        const double cost = s.legal ? s.cost : kInfinity;
        // Only legal mappings are remembered: an illegal one fails the model's first
        // checks, and random searchers propose millions of them.
        double known;
        if (s.legal && s.kept && !seen_.insert(s.hash, cost, known)) {
            if (kCheckVouched && s.vouchedNew) {
                std::fprintf(stderr, "internal error: a candidate vouched new was evaluated "
                                     "before (CandidateNote::vouchedNew)\n");
                std::abort();
            }
            ++result_.duplicates; // seen before: not charged again
            ++unchargedStreak_;
            costs[i] = known;
            continue;
        }
        costs[i] = cost;
        record(cost, out[i], s.legal);
        unchargedStreak_ = 0;
        ++charged;
    }
    if (unchargedStreak_ >= exhaustedAfter_)
        stop("no new mapping in " + std::to_string(exhaustedAfter_) +
             " proposals in a row: the space looks exhausted (" +
             std::to_string(result_.evaluations) + " distinct mappings evaluated)");
    for (std::size_t i = limit; i < n; ++i)
        costs[i] = std::numeric_limits<double>::quiet_NaN();
    reportProgress(false);
    return charged;
}

void SearchContext::parallelFor(std::size_t n, const SeenCosts::RangeFn& fn) {
    pool_->run(n, fn);
}

int SearchContext::workers() const {
    return pool_->size();
}

std::size_t SearchContext::evaluateBatch(const Mapping* candidates, std::size_t n, double* costs) {
    std::vector<Mapping> out(n);
    return evaluateGenerated(
        n,
        [candidates](std::size_t i, Rng&, Mapping& m) {
            m = candidates[i];
            return true;
        },
        out.data(), costs);
}

bool SearchContext::score(const Mapping& m, Evaluation& e, double& cost,
                          EvaluationCache* cache) const {
    if (cache)
        space_.model().evaluate(m, e, *cache);
    else
        space_.model().evaluate(m, e);
    if (!e.valid)
        return false;
    if (densityProblems_.empty()) {
        cost = settings_.objective.value(e);
        return true;
    }
    // Sum of cost_d / d: sparser points cost less in absolute terms, so each
    // is normalised by its density and the dense point does not dominate.
    Evaluation at;
    cost = 0.0;
    for (std::size_t k = 0; k < densityModels_.size(); ++k) {
        densityModels_[k].evaluate(m, at);
        if (!at.valid)
            return false;
        cost += settings_.objective.value(at) / settings_.objective.densities[k];
    }
    return true;
}

double SearchContext::evaluate(const Mapping& m) {
    double cost = std::numeric_limits<double>::quiet_NaN();
    evaluateBatch(&m, 1, &cost);
    return cost;
}

SearchResult SearchContext::finish() {
    result_.seconds = elapsed();
    std::size_t k = 0;
    for (const auto& [name, value] : settings_.params)
        if (!paramRead_[k++].load(std::memory_order_relaxed)) {
            result_.unreadParams.push_back(name);
            result_.notes.push_back(
                "parameter '" + name +
                "' was not read by this run (misspelt, or another searcher's); it "
                "changed nothing");
        }
    // How much of the model's work neighbouring candidates shared.
    std::int64_t reused = 0, counted = 0;
    for (const WorkerScratch& w : workerScratch_) {
        reused += w.cache.levelsReused;
        counted += w.cache.levelsCounted;
    }
    if (reused + counted > 0)
        result_.stats["model_levels_reused"] = double(reused) / double(reused + counted);
    if (seen_.forgotten() > 0) {
        result_.stats["record_forgotten"] = double(seen_.forgotten());
        result_.notes.push_back(
            "the record of evaluated mappings reached " +
            (seen_.refused()
                 ? "the " + std::to_string(seen_.capBytes() >> 20) + " MiB the system would give it"
                 : "its cap of " + std::to_string(seen_.capBytes() >> 20) +
                       " MiB (--param record_mib)") +
            "; it kept the most recent mappings and forgot " + std::to_string(seen_.forgotten()) +
            " older ones: one of them proposed again was charged again");
    }
    result_.cancelled = cancel_ && cancel_->load();
    if (result_.stopReason.empty())
        result_.stopReason = result_.cancelled             ? "cancelled"
                             : remainingEvaluations() == 0 ? "evaluation budget spent"
                             : timeUp()                    ? "time budget spent"
                                                           : "searcher finished";
    if (result_.cancelled)
        result_.stopReason = "cancelled";
    reportProgress(true);
    return result_;
}

SearchResult runSearch(const MapSpace& space, const std::string& searcher,
                       const SearchSettings& settings, ProgressFn progress,
                       const std::atomic<bool>* cancel) {
    auto s = makeSearcher(searcher);
    return runSearch(space, *s, searcher, settings, std::move(progress), cancel);
}

SearchResult runSearch(const MapSpace& space, Searcher& searcher, const std::string& name,
                       const SearchSettings& settings, ProgressFn progress,
                       const std::atomic<bool>* cancel) {
    SearchContext ctx(space, settings, std::move(progress), cancel);
    searcher.run(ctx);
    SearchResult r = ctx.finish();
    r.searcher = name;
    return r;
}

} // namespace mw
