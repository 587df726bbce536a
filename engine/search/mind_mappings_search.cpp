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

namespace mw {

namespace {

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

        const double alpha0 = ctx.param("learning_rate", 1.0);
        const int injectEvery = std::max(1, int(ctx.param("injection_interval", 10)));
        double temperature = ctx.param("temperature", 50.0);
        const double cooling = ctx.param("cooling", 0.75);
        const int coolEvery = std::max(1, int(ctx.param("cooling_interval", 50)));
        const int stepsPerEval = std::max(1, int(ctx.param("steps_per_evaluation", 20)));
        const int maxDoublings = int(ctx.param("step_doublings", 8));
        // The reference code's objective (param gradient_outputs = 1): see
        // SurrogateDescent. Off by default: it helps some layers and hurts
        // others (README, "Mind Mappings").
        const SurrogateDescent descent = ctx.param("gradient_outputs", 0) != 0
                                             ? SurrogateDescent::OutputSum
                                             : SurrogateDescent::LogEdp;

        const MappingCodec& codec = surrogate.codec();
        const int P = codec.problemFeatures();
        const int F = codec.features();
        Rng& rng = ctx.rng();
        Evaluation scratch;
        const auto width = static_cast<std::size_t>(F);
        std::vector<float> x(width), trial(width), grad(width);
        codec.encodeProblem(p, x.data());

        auto randomLegal = [&](Mapping& m) {
            if (space.sampleLegal(rng, m, scratch, 2000))
                return true;
            m = space.sample(rng);
            return space.repair(m, rng, scratch);
        };
        Mapping current;
        if (!randomLegal(current)) {
            ctx.stop("Mind Mappings: no legal starting mapping found");
            return;
        }
        codec.encode(current, x.data() + P);
        double currentCost = surrogate.predict(x.data());

        // Candidates by predicted cost; each is checked with the true model once.
        std::multimap<double, Mapping> pending;
        std::map<std::uint64_t, bool> seen;
        auto consider = [&](const Mapping& m, double predicted) {
            if (seen.emplace(space.hash(m), true).second) {
                pending.emplace(predicted, m);
                if (pending.size() > 256)
                    pending.erase(std::prev(pending.end()));
            }
        };
        consider(current, currentCost);
        std::int64_t steps = 0, injections = 0, checks = 0, idleCheckpoints = 0;
        // Steps without a new candidate that end the search (param idle_steps).
        const std::int64_t maxIdleCheckpoints =
            std::max<std::int64_t>(1, std::int64_t(ctx.param("idle_steps", 20000)) / stepsPerEval);
        // The comparison: what a surrogate step costs against a true
        // evaluation (both in microseconds, from the same clock).
        using Clock = std::chrono::steady_clock;
        const auto loopStart = Clock::now();
        double checkSeconds = 0.0;
        while (!ctx.stopped()) {
            ++steps;
            if (steps % injectEvery == 0) {
                Mapping fresh;
                if (randomLegal(fresh)) {
                    std::vector<float> y(x);
                    codec.encode(fresh, y.data() + P);
                    const double cost = surrogate.predict(y.data());
                    consider(fresh, cost);
                    // Odds on EDP / algorithmic minimum (the predictions are its log).
                    const double delta = std::exp(cost) - std::exp(currentCost);
                    if (delta < 0 || rng.uniform() < std::exp(-delta / temperature)) {
                        x = y;
                        current = fresh;
                        currentCost = cost;
                    }
                }
                if (++injections % coolEvery == 0)
                    temperature *= cooling;
            } else {
                surrogate.predict(x.data(), grad.data(), descent);
                Mapping next = current;
                double alpha = alpha0;
                for (int attempt = 0; attempt <= maxDoublings; ++attempt, alpha *= 2) {
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
                consider(current, currentCost);
            }
            // Every candidate is new to this search (seen filters them), so an
            // empty queue at many checkpoints in a row means the space is spent.
            if (steps % stepsPerEval == 0)
                idleCheckpoints = pending.empty() ? idleCheckpoints + 1 : 0;
            if (idleCheckpoints >= maxIdleCheckpoints) {
                ctx.stop("Mind Mappings: no new mapping in " +
                         std::to_string(maxIdleCheckpoints * stepsPerEval) +
                         " steps: the space looks exhausted");
                break;
            }
            if (steps % stepsPerEval == 0 && !pending.empty()) {
                const auto t0 = Clock::now();
                ctx.evaluate(pending.begin()->second);
                checkSeconds += std::chrono::duration<double>(Clock::now() - t0).count();
                ++checks;
                pending.erase(pending.begin());
                ctx.setStat("surrogate_steps", double(steps));
            }
        }
        if (!ctx.hasBest() && !trainingBest_.empty())
            answerFromTraining(ctx, "the budget ended before the surrogate's first check");
        const double loopSeconds = std::chrono::duration<double>(Clock::now() - loopStart).count();
        ctx.setStat("surrogate_steps", double(steps));
        ctx.setStat("injections", double(injections));
        if (steps > 0)
            ctx.setStat("surrogate_step_us", 1e6 * (loopSeconds - checkSeconds) / double(steps));
        if (checks > 0)
            ctx.setStat("true_evaluation_us", 1e6 * checkSeconds / double(checks));
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
        o.samples = int(ctx.param("samples", o.samples));
        o.epochs = int(ctx.param("epochs", o.epochs));
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
