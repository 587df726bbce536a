// Mind Mappings (Hegde et al., ASPLOS'21): projected gradient descent on a
// learned surrogate of the cost model, adapted to our level-by-level map space.
//   Phase 1: the surrogate (search/surrogate.h) is trained once per
//   architecture and problem family and cached; one shipped with Mapwright
//   serves where none was trained here; a missing one is trained on the spot
//   (shown as the run's phase) unless param train = 0. A budget that ends
//   before the search has checked a mapping ends the run with the layer's
//   best training mappings (see answerFromTraining).
//   Phase 2 (paper Sec. 4.2, App. A; reference code's refinements):
//     start from a random legal mapping; each step moves the continuous
//     encoding against the gradient of the predicted log(EDP / the paper's
//     algorithmic minimum),
//     learning rate 1 (the paper's alpha) in z-scored units, and projects it
//     to the nearest legal mapping; when the projection does not move, the
//     step doubles (up to 8 times); every 10 steps a random legal mapping is
//     injected and accepted with simulated-annealing odds (T0 = 50, x0.75
//     every 50 injections; costs in EDP / algorithmic minimum, as the
//     paper's).
//     The state keeps the unprojected vector (the reference code's CNN mode).
//     "gradient_outputs" = 1 descends the sum of the standardised outputs, as
//     the reference code does, instead of the predicted log EDP.
//   Chains: "chains" descents (default 2, whatever the threads, so that a
//     seed gives the same run on any; they step in parallel where there are
//     threads). Chain 0 is the one-chain search step for step; the others
//     have RNG streams of their own, and with "portfolio" = 1 (default)
//     every other chain descends the other objective, since neither wins on
//     every layer (README, "Mind Mappings").
//   The true model is charged only to re-check candidates: every
//   `steps_per_evaluation` surrogate steps (default 20) the best predicted
//   mapping not yet checked is evaluated. Stats record surrogate steps and
//   true evaluations separately. `idle_steps` steps (default 20,000) without
//   a new candidate end the search: the space is spent.
#include "common/error.h"
#include "search/searchers.h"
#include "search/surrogate.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <unordered_set>

namespace mw {

namespace {

// The descent's settings (paper Sec. 4.2 and App. A; the file's header).
struct Descent {
    double alpha0 = 1.0;
    int injectEvery = 10;
    double temperature0 = 50.0;
    double cooling = 0.75;
    int coolEvery = 50;
    int maxDoublings = 8;
};

// One descent on the surrogate: its own copy of the network (a prediction
// writes scratch), its own RNG stream, and the candidates it found, by
// predicted cost, each checked with the true model once.
struct Chain {
    Chain(const Surrogate& net, SurrogateDescent follows, const Rng& stream, double t0)
        : surrogate(net), descent(follows), rng(stream), temperature(t0) {}

    Surrogate surrogate;
    SurrogateDescent descent;
    Rng rng;
    std::vector<float> x, trial, grad; // problem and mapping features, raw
    Mapping current{};
    double currentCost = 0.0;
    double temperature;
    std::int64_t steps = 0, injections = 0, idleCheckpoints = 0;
    double stepSeconds = 0.0;
    std::multimap<double, Mapping> pending;
    std::unordered_set<std::uint64_t> seen;
    Evaluation scratch;

    bool randomLegal(const MapSpace& space, Mapping& m) {
        if (space.sampleLegal(rng, m, scratch, 2000))
            return true;
        m = space.sample(rng);
        return space.repair(m, rng, scratch);
    }

    void consider(const MapSpace& space, const Mapping& m, double predicted) {
        if (seen.insert(space.hash(m)).second) {
            pending.emplace(predicted, m);
            if (pending.size() > 256)
                pending.erase(std::prev(pending.end()));
        }
    }

    // From a random legal mapping; false when none is found.
    bool start(const MapSpace& space, const Problem& p) {
        const MappingCodec& codec = surrogate.codec();
        const auto width = static_cast<std::size_t>(codec.features());
        x.assign(width, 0.0f);
        trial.assign(width, 0.0f);
        grad.assign(width, 0.0f);
        codec.encodeProblem(p, x.data());
        if (!randomLegal(space, current))
            return false;
        codec.encode(current, x.data() + codec.problemFeatures());
        currentCost = surrogate.predict(x.data());
        consider(space, current, currentCost);
        return true;
    }

    void step(const MapSpace& space, const Descent& d) {
        const MappingCodec& codec = surrogate.codec();
        const int P = codec.problemFeatures();
        const int F = codec.features();
        ++steps;
        if (steps % d.injectEvery == 0) {
            Mapping fresh;
            if (randomLegal(space, fresh)) {
                std::vector<float> y(x);
                codec.encode(fresh, y.data() + P);
                const double cost = surrogate.predict(y.data());
                consider(space, fresh, cost);
                // Odds on EDP / algorithmic minimum (the predictions are its log).
                const double delta = std::exp(cost) - std::exp(currentCost);
                if (delta < 0 || rng.uniform() < std::exp(-delta / temperature)) {
                    x = y;
                    current = fresh;
                    currentCost = cost;
                }
            }
            if (++injections % d.coolEvery == 0)
                temperature *= d.cooling;
            return;
        }
        surrogate.predict(x.data(), grad.data(), descent);
        Mapping next = current;
        double alpha = d.alpha0;
        for (int attempt = 0; attempt <= d.maxDoublings; ++attempt, alpha *= 2) {
            trial = x;
            for (int i = P; i < F; ++i)
                trial[std::size_t(i)] -= float(alpha) * grad[std::size_t(i)];
            if (codec.project(trial.data(), space, next, rng, scratch) &&
                space.hash(next) != space.hash(current))
                break;
        }
        x.swap(trial);
        std::vector<float> snapped(x);
        codec.encode(next, snapped.data() + P);
        current = next;
        currentCost = surrogate.predict(snapped.data());
        consider(space, current, currentCost);
    }

    // `n` steps, then the best predicted candidate not yet checked; false
    // when there is none (every candidate is new to the chain, since `seen`
    // filters them, so many such checkpoints in a row mean the space is spent).
    bool advance(const MapSpace& space, const Descent& d, int n, Mapping& out) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < n; ++i)
            step(space, d);
        stepSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (pending.empty()) {
            ++idleCheckpoints;
            return false;
        }
        idleCheckpoints = 0;
        out = pending.begin()->second;
        pending.erase(pending.begin());
        return true;
    }
};

class MindMappingsSearch : public Searcher {
  public:
    void run(SearchContext& ctx) override {
        trainingBest_.clear();
        const MapSpace& space = ctx.space();
        const Problem& p = space.problem();
        Surrogate surrogate;
        const auto started = std::chrono::steady_clock::now();
        if (!ready(ctx, surrogate))
            return;
        ctx.setStat(
            "surrogate_ready_seconds",
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());

        Descent d;
        d.alpha0 = ctx.param("learning_rate", d.alpha0);
        d.injectEvery = int(ctx.countParam("injection_interval", d.injectEvery, 1, 1'000'000'000));
        d.temperature0 = ctx.param("temperature", d.temperature0, 0.0, 1e9);
        d.cooling = ctx.param("cooling", d.cooling, 0.0, 1.0);
        d.coolEvery = std::max(1, int(ctx.param("cooling_interval", d.coolEvery)));
        d.maxDoublings = int(ctx.param("step_doublings", d.maxDoublings));
        const int stepsPerEval = std::max(1, int(ctx.param("steps_per_evaluation", 20)));
        // Two chains by default, whatever the threads (a seed gives the same
        // run on one thread or two; on two, each chain has its own).
        const int chainCount = int(ctx.countParam("chains", 2, 1, kMaxSearchThreads));
        // What each chain descends (see SurrogateDescent): "gradient_outputs"
        // 0 (default) the predicted log EDP, 1 the reference code's output
        // sum. Neither wins everywhere (README, "Mind Mappings"), so with two
        // chains or more, "portfolio" = 1 (default) has every other chain
        // descend the one the others do not.
        const bool outputSum = ctx.param("gradient_outputs", 0) != 0;
        const bool portfolio = ctx.param("portfolio", 1) != 0;

        std::vector<Chain> chains;
        chains.reserve(std::size_t(chainCount));
        for (int c = 0; c < chainCount; ++c) {
            const bool odd = portfolio && c % 2 == 1;
            chains.emplace_back(
                surrogate,
                outputSum != odd ? SurrogateDescent::OutputSum : SurrogateDescent::LogEdp,
                c == 0 ? ctx.rng() : Rng::stream(ctx.settings().seed, 0x4d4d, c), d.temperature0);
            if (!chains.back().start(space, p)) {
                ctx.stop("Mind Mappings: no legal starting mapping found");
                return;
            }
        }
        // Steps without a new candidate that end the search (param idle_steps).
        const std::int64_t maxIdleCheckpoints =
            std::max<std::int64_t>(1, std::int64_t(ctx.param("idle_steps", 20000)) / stepsPerEval);

        // The chains step in parallel, each on its own, and every
        // `stepsPerEval` steps each hands its best predicted mapping not yet
        // checked to the true model (the driver evaluates them in chain order).
        std::vector<Mapping> candidates(chains.size());
        std::vector<double> costs(chains.size());
        using Clock = std::chrono::steady_clock;
        std::int64_t checks = 0;
        // Each batch's time after its steps: the slowest chain's, or all of
        // them shared among the threads, whichever is longer.
        double checkSeconds = 0.0;
        const double parallel = double(
            std::min<std::size_t>(chains.size(), std::size_t(std::max(1, ctx.settings().threads))));
        std::vector<double> before(chains.size());
        while (!ctx.stopped()) {
            for (std::size_t i = 0; i < chains.size(); ++i)
                before[i] = chains[i].stepSeconds;
            const auto t0 = Clock::now();
            checks += std::int64_t(ctx.evaluateGenerated(
                chains.size(),
                [&](std::size_t i, Rng&, Mapping& out) {
                    return chains[i].advance(space, d, stepsPerEval, out);
                },
                candidates.data(), costs.data()));
            double slowest = 0.0, all = 0.0;
            for (std::size_t i = 0; i < chains.size(); ++i) {
                slowest = std::max(slowest, chains[i].stepSeconds - before[i]);
                all += chains[i].stepSeconds - before[i];
            }
            checkSeconds += std::chrono::duration<double>(Clock::now() - t0).count() -
                            std::max(slowest, all / parallel);
            bool idle = true;
            for (const Chain& c : chains)
                idle = idle && c.idleCheckpoints >= maxIdleCheckpoints;
            if (idle) {
                ctx.stop("Mind Mappings: no new mapping in " +
                         std::to_string(maxIdleCheckpoints * stepsPerEval) +
                         " steps: the space looks exhausted");
                break;
            }
        }
        if (!ctx.hasBest() && !trainingBest_.empty())
            answerFromTraining(ctx, "the budget ended before the surrogate's first check");
        std::int64_t steps = 0, injections = 0;
        double stepSeconds = 0.0;
        for (const Chain& c : chains) {
            steps += c.steps;
            injections += c.injections;
            stepSeconds += c.stepSeconds;
        }
        ctx.setStat("chains", double(chains.size()));
        ctx.setStat("surrogate_steps", double(steps));
        ctx.setStat("injections", double(injections));
        // The comparison: what a surrogate step costs against a true
        // check (microseconds of one thread; on several, a check's time
        // includes handing it to the driver and waiting for the other chains).
        if (steps > 0)
            ctx.setStat("surrogate_step_us", 1e6 * stepSeconds / double(steps));
        if (checks > 0)
            ctx.setStat("true_evaluation_us",
                        1e6 * std::max(0.0, checkSeconds) * parallel / double(checks));
    }

  private:
    // Finds the surrogate for this architecture and problem family: the one
    // trained here before (the model folder), else the one shipped with
    // Mapwright, else trains one (unless param train = 0) and keeps it in
    // the model folder. A file that cannot serve (stale, another family) is
    // said in the run's notes and passed over. False: the run has ended,
    // with the best of its training evaluations when there are any.
    bool ready(SearchContext& ctx, Surrogate& surrogate) {
        const MapSpace& space = ctx.space();
        const Problem& p = space.problem();
        const Architecture& a = space.arch();
        const std::string path = Surrogate::cachePath(ctx.settings().modelDir, p, a);
        const std::string bundled = Surrogate::bundledPath(p, a);
        for (const std::string& candidate : {path, bundled}) {
            if (candidate.empty() || !std::filesystem::exists(candidate))
                continue;
            try {
                surrogate = Surrogate::load(candidate, p, a);
                ctx.setStat("surrogate_bundled", candidate == bundled ? 1 : 0);
                return true;
            } catch (const InputError& refused) {
                ctx.note(std::string("Mind Mappings: refused ") + refused.what());
            }
        }
        if (ctx.param("train", 1) == 0) {
            ctx.stop("Mind Mappings: no usable surrogate for this architecture and problem "
                     "family in " +
                     path +
                     "; train it with 'mapwright-cli train-surrogate' or allow training "
                     "(param train=1)");
            return false;
        }
        SurrogateOptions o;
        o.samples = int(ctx.countParam("samples", o.samples, 1, 10'000'000));
        o.epochs = int(ctx.countParam("epochs", o.epochs, 1, 100'000));
        o.widthDivisor = int(ctx.param("width_divisor", o.widthDivisor));
        o.paperLayers = ctx.param("paper_layers", 0) != 0;
        o.threads = ctx.settings().threads;
        o.seed = std::uint64_t(ctx.param("surrogate_seed", 1));
        SurrogateReport report;
        try {
            surrogate =
                Surrogate::train(p, a, o, report, [&](const std::string& phase, double fraction) {
                    ctx.reportPhase(phase, fraction);
                    return !ctx.stopped();
                });
        } catch (const std::runtime_error&) {
            trainingBest_ = report.targetBest;
            trainingEvaluations_ = report.targetEvaluations;
            answerFromTraining(ctx, "the budget ended while it trained");
            return false;
        }
        ctx.endPhase();
        surrogate.save(path);
        ctx.setStat("surrogate_bundled", 0);
        ctx.setStat("surrogate_trained_seconds", report.generateSeconds + report.trainSeconds);
        ctx.setStat("surrogate_rank_correlation", report.rankCorrelation);
        trainingBest_ = report.targetBest;
        trainingEvaluations_ = report.targetEvaluations;
        return true;
    }

    // A run whose budget went into training ends with the best mappings of
    // this layer that training evaluated (the driver charges them beyond the
    // budget, one evaluation each), and says so.
    void answerFromTraining(SearchContext& ctx, const std::string& why) {
        ctx.endPhase();
        const int legal = ctx.adoptBeyondBudget(trainingBest_);
        ctx.setStat("training_answer", 1);
        ctx.stop("Mind Mappings: surrogate not ready: best of " +
                 std::to_string(trainingEvaluations_) + " training evaluations (" + why +
                 (legal == 0 ? "; none of them is legal in this map space" : "") + ")");
    }

    std::vector<Mapping> trainingBest_; // this layer's best training mappings
    int trainingEvaluations_ = 0;
};

} // namespace

std::unique_ptr<Searcher> makeMindMappingsSearch() {
    return std::make_unique<MindMappingsSearch>();
}

} // namespace mw
