// REINFORCE (Williams 1992) with a moving-average reward baseline: a policy
// that builds a mapping decision by decision, rewarded by -ln(objective).
//
// One episode is a fixed schedule of decisions (about 60 for a conv layer on
// the Eyeriss-like array):
//   1. keep or bypass, per tensor at each real level >= 1 (fixed bits not asked);
//   2. tiling: per dimension, each free prime factor (bound over the fixed
//      factors), large primes first, picks one of MapSpace::factorSlots(d);
//   3. loop orders: per level with temporal loops, the outermost of the still
//      unplaced loops whose factor is > 1, step by step (unit loops have no
//      place; they go innermost).
// Masks keep every episode legal by construction: a keep is offered only if
// the level still holds the smallest tiles; a slot only if the prime fits its
// fan-out and every buffer at and outside its level (the model's tile rule,
// compressed sizes for sparse tensors); DRAM's temporal loop always fits.
// Steps with one valid action are taken without asking the policy. What the
// masks cannot see (e.g. a minimum-utilisation constraint) is repaired by
// space.repair in the driver's workers; the reward of the repaired mapping is
// credited to the sampled decisions (learn_repaired = 1 re-encodes the
// repaired mapping as decisions and learns from those instead). A mapping that
// cannot be repaired is not charged and gets the batch's worst reward minus
// illegal_penalty. Warm-start mappings are evaluated first, re-encoded.
//
// State (the Mlp's input): the keeps decided so far (+1 / -1 / 0), log2 of the
// factors placed so far per (dimension, slot) over log2 of the free bound, the
// loops already placed at the level being ordered, each buffer's fill
// (occupancy / capacity), and the step: its kind, dimension, level and tensor
// one-hot, plus log2(prime) / log2(bound) or the order position.
// Policy: Mlp [state, hidden, hidden, max choices], masked softmax over
// logit_scale x outputs (a small scale makes the first policy nearly uniform,
// as the small final-layer init of HAQ's actor intends).
//
// Each batch samples `batch` episodes on the calling thread with ctx.rng()
// (all episodes step by step, one forward pass per step), evaluates them with
// ctx.evaluateGenerated, then takes one SGD step on
//   loss = -sum_steps A log pi(a|s) - entropy x H(pi(.|s)),
// A = (r - b) / std(r of the batch), b a moving average of the batch-mean
// reward, averaged over the batch's episodes. With elite < 1 only the best
// fraction learns, against its threshold (risk-seeking policy gradient,
// Petersen et al., ICLR 2021). Duplicates are not charged but still rewarded;
// a policy that proposes nothing new for restart_after batches restarts from
// a fresh network (policy_restarts), and the search stops after 3 barren
// restarts in a row.
//
// Defaults and sources:
//   - hidden 64 x 2, batch 16: scaled down from ConfuciuX's REINFORCE (Kao et
//     al., MICRO 2020; maestro-project/confuciux src/ConfX/rl_confx.py: 128-wide
//     layers, Adam lr 1e-3, rewards normalised per episode) and the Mind
//     Mappings RL baseline (HAQ's DDPG, mit-han-lab/haq: 300 x 300 hidden,
//     actor lr 1e-4, critic lr 1e-3), so 5,000 evaluations give ~300 updates;
//   - baseline_alpha 0.5: HAQ's moving-average reward baseline
//     (lib/rl/ddpg.py, moving_alpha = 0.5);
//   - learning_rate 0.02, momentum 0.9, entropy 0.2, logit_scale 0.25: tuned
//     here on three conv layers on the Eyeriss-like array (9 seeds, 5,000
//     evaluations). The shared Mlp offers SGD with momentum, not Adam. The
//     entropy weight is large next to A2C / PPO2's usual 0.01 because it is
//     per decision while the advantage is normalised per episode; 0.01
//     converges to a duplicate-only policy within ~2,000 evaluations.
// The papers give no REINFORCE map-space baseline to copy: Mind Mappings runs
// DDPG, the map-space study compares no RL, GAMMA compares Nevergrad methods.
#include "learn/mlp.h"
#include "search/searchers.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

namespace mw {

namespace {

using Slot = MapSpace::Slot;

enum class StepKind : std::uint8_t { Keep, Factor, Order };

struct Step {
    StepKind kind;
    int dim = -1;   // Factor
    int level = -1; // Keep, Order
    int tensor = -1;
    std::uint32_t prime = 1;
    int keepIndex = -1; // Keep: its feature
};

using Extents = std::array<std::array<std::int64_t, kMaxDims>, kMaxLevels>;

// An episode being built: the partial mapping and the decisions taken.
struct Episode {
    Mapping m{};
    Extents ext{}; // per level and dim: product of the factors at and inside the level
    std::array<std::uint32_t, kMaxLevels> placed{}; // per level: dims given an order position
    std::array<std::uint8_t, kMaxLevels> filled{};  // per level: order positions used
    std::vector<std::int16_t> actions;              // per step; -1: nothing to decide
};

// The decision schedule of a map space, its state encoding and its masks.
class Plan {
  public:
    explicit Plan(const MapSpace& space) : space_(space) {
        const Problem& p = space.problem();
        const Architecture& a = space.arch();
        const MapSpaceConstraints& c = space.constraints();
        D_ = p.numDims();
        L_ = a.numLevels();
        T_ = p.numTensors();
        base_ = makeTrivialMapping(p, a);
        for (int l = 0; l < L_; ++l) {
            fanX_[l] = a.fanoutX(l);
            fanY_[l] = a.fanoutY(l);
            const StorageLevel& s = a.levels[l];
            bounded_[l] = l > 0 && !s.unbounded() && space.levelHasTemporal(l);
            if (bounded_[l]) // the model's rule: used x multiple buffering <= capacity
                capacity_[l] = double(s.capacityWords) / s.multipleBuffering;
        }
        // Fixed parts, as MapSpace applies them.
        std::vector<std::int64_t> freeBound(std::size_t(D_), 0);
        for (int d = 0; d < D_; ++d) {
            std::int64_t fixed = 1;
            for (int l = 0; l < L_; ++l) {
                const LevelConstraint& lc = c.levels[l];
                LevelMapping& lm = base_.levels[l];
                if (lc.temporal[d] > 0) {
                    fixed *= lc.temporal[d];
                    lm.temporal[d] = std::uint32_t(lc.temporal[d]);
                }
                if (lc.spatialX[d] > 0) {
                    fixed *= lc.spatialX[d];
                    lm.spatialX[d] = std::uint32_t(lc.spatialX[d]);
                }
                if (lc.spatialY[d] > 0) {
                    fixed *= lc.spatialY[d];
                    lm.spatialY[d] = std::uint32_t(lc.spatialY[d]);
                }
            }
            freeBound[d] = p.dims[d].bound / fixed;
            logBound_[d] = freeBound[d] > 1 ? float(std::log2(double(freeBound[d]))) : 0.0f;
        }
        for (int l = 0; l < L_; ++l) {
            const LevelConstraint& lc = c.levels[l];
            LevelMapping& lm = base_.levels[l];
            lc.order.apply(lm.order, D_);
            lc.spatialOrder.apply(lm.spatialOrder, D_);
            lm.keepMask = lc.withFixedKeeps(lm.keepMask);
            if (l == 0)
                lm.keepMask = std::uint8_t((1u << T_) - 1);
            if (!space.levelHasTemporal(l))
                lm.keepMask = 0;
        }

        // Keep steps first, so the tiling masks know which tensors occupy each buffer.
        keepFeature_ = 0;
        int keeps = 0;
        for (int l = 1; l < L_; ++l) {
            if (!space.levelHasTemporal(l))
                continue;
            for (int t = 0; t < T_; ++t) {
                if ((c.levels[l].keepFixed >> t) & 1u)
                    continue;
                Step s{StepKind::Keep};
                s.level = l;
                s.tensor = t;
                s.keepIndex = keeps++;
                steps_.push_back(s);
            }
        }
        features_ = keeps;
        if (keeps > 0)
            actions_ = std::max(actions_, 2);
        // Tiling steps; single-slot dimensions are placed in the base.
        for (int d = 0; d < D_; ++d) {
            const auto& slots = space.factorSlots(d);
            factorFeature_[d] = features_;
            if (freeBound[d] > 1)
                features_ += int(slots.size());
            actions_ = std::max(actions_, int(slots.size()));
            std::vector<std::int64_t> primes = primeFactors(freeBound[d]);
            std::reverse(primes.begin(), primes.end()); // large primes first
            for (std::int64_t prime : primes) {
                if (slots.size() == 1) {
                    MapSpace::factorAt(base_, d, slots[0]) *= std::uint32_t(prime);
                    continue;
                }
                Step s{StepKind::Factor};
                s.dim = d;
                s.prime = std::uint32_t(prime);
                steps_.push_back(s);
            }
        }
        for (int l = L_ - 1; l >= 0; --l)
            for (int d = 0; d < D_; ++d) {
                const LevelMapping& lm = base_.levels[l];
                baseExt_[l][d] = (l + 1 < L_ ? baseExt_[l + 1][d] : 1) * lm.temporal[d] *
                                 lm.spatialX[d] * lm.spatialY[d];
            }
        // Order steps: one fewer than the loops that may be real at the level.
        orderFeature_ = features_;
        for (int l = 0; l < L_; ++l) {
            if (!space.levelHasTemporal(l) || c.levels[l].order.fixes(D_))
                continue;
            int real = 0;
            for (int d = 0; d < D_; ++d) {
                bool can = c.levels[l].temporal[d] > 1;
                for (const Slot& s : space.factorSlots(d))
                    can = can || (s.level == l && s.kind == 0 && freeBound[d] > 1);
                real += can;
            }
            if (real < 2)
                continue;
            orderLevels_.push_back(l);
            for (int i = 0; i + 1 < real; ++i) {
                Step s{StepKind::Order};
                s.level = l;
                steps_.push_back(s);
            }
            actions_ = std::max(actions_, D_);
        }
        features_ += D_;
        fillFeature_ = features_;
        for (int l = 0; l < L_; ++l)
            features_ += bounded_[l];
        positionFeature_ = features_; // kind, dim, level, tensor, and a scalar
        features_ += 3 + D_ + L_ + T_ + 1;
        actions_ = std::max(actions_, 2);
    }

    int steps() const { return int(steps_.size()); }
    int actions() const { return actions_; }
    int features() const { return features_; }

    void reset(Episode& e) const {
        e.m = base_;
        e.ext = baseExt_;
        e.placed.fill(0);
        e.filled.fill(0);
        e.actions.assign(steps_.size(), -1);
    }

    // The valid actions of step k (mask) and, when feat is given, the state.
    // Returns how many actions are valid.
    int prepare(const Episode& e, int k, float* feat, std::uint8_t* mask) const {
        const Step& s = steps_[std::size_t(k)];
        std::fill(mask, mask + actions_, std::uint8_t(0));
        int valid = 0;
        switch (s.kind) {
        case StepKind::Keep: {
            // Keeping must leave room for the smallest tiles of the tensors kept so
            // far (fixed ones, and the free ones decided before this one).
            mask[0] = 1;
            valid = 1;
            const LevelConstraint& lc = space_.constraints().levels[s.level];
            std::uint32_t kept = lc.keepValue & lc.keepFixed;
            for (int t = 0; t < s.tensor; ++t)
                if (!((lc.keepFixed >> t) & 1u) && e.m.levels[s.level].keeps(t))
                    kept |= 1u << t;
            kept |= 1u << s.tensor;
            if (!bounded_[s.level] ||
                occupancy(e.ext[s.level], kept, -1, 1) <= capacity_[s.level]) {
                mask[1] = 1;
                ++valid;
            }
            break;
        }
        case StepKind::Factor: {
            const auto& slots = space_.factorSlots(s.dim);
            for (std::size_t i = 0; i < slots.size(); ++i)
                if (fits(e, slots[i], s.dim, s.prime)) {
                    mask[i] = 1;
                    ++valid;
                }
            if (valid == 0) { // nowhere fits: let repair sort it out
                std::fill(mask, mask + slots.size(), std::uint8_t(1));
                valid = int(slots.size());
            }
            break;
        }
        case StepKind::Order: {
            const LevelMapping& lm = e.m.levels[s.level];
            for (int d = 0; d < D_; ++d)
                if (lm.temporal[d] > 1 && !((e.placed[s.level] >> d) & 1u)) {
                    mask[d] = 1;
                    ++valid;
                }
            break;
        }
        }
        if (feat && valid > 1)
            encode(e, k, feat);
        return valid;
    }

    void apply(Episode& e, int k, int action) const {
        const Step& s = steps_[std::size_t(k)];
        e.actions[std::size_t(k)] = std::int16_t(action);
        if (action < 0)
            return;
        switch (s.kind) {
        case StepKind::Keep:
            e.m.levels[s.level].setKeep(s.tensor, action == 1);
            break;
        case StepKind::Factor: {
            const Slot slot = space_.factorSlots(s.dim)[std::size_t(action)];
            MapSpace::factorAt(e.m, s.dim, slot) *= s.prime;
            for (int l = 0; l <= slot.level; ++l)
                e.ext[l][s.dim] *= s.prime;
            break;
        }
        case StepKind::Order:
            e.m.levels[s.level].order[e.filled[s.level]++] = std::uint8_t(action);
            e.placed[s.level] |= 1u << action;
            break;
        }
    }

    // Completes the orders: unplaced real loops, then the unit loops.
    void finish(Episode& e) const {
        for (int l : orderLevels_) {
            LevelMapping& lm = e.m.levels[l];
            for (int pass = 0; pass < 2; ++pass)
                for (int d = 0; d < D_; ++d)
                    if (!((e.placed[l] >> d) & 1u) && (lm.temporal[d] > 1) == (pass == 0)) {
                        lm.order[e.filled[l]++] = std::uint8_t(d);
                        e.placed[l] |= 1u << d;
                    }
            space_.constraints().levels[l].order.apply(lm.order, D_); // a partial order's places
        }
    }

    // Rebuilds e as the decisions that produce `target` (up to the order of
    // unit loops). False when target is not expressible in this schedule.
    bool encodeMapping(const Mapping& target, Episode& e) const {
        reset(e);
        std::array<std::array<std::uint32_t, 3 * kMaxLevels>, kMaxDims> left{};
        for (int d = 0; d < D_; ++d) {
            const auto& slots = space_.factorSlots(d);
            for (std::size_t i = 0; i < slots.size(); ++i)
                left[d][i] = MapSpace::factorAt(target, d, slots[i]) /
                             std::max<std::uint32_t>(1, MapSpace::factorAt(base_, d, slots[i]));
        }
        std::uint8_t mask[64];
        for (int k = 0; k < steps(); ++k) {
            const Step& s = steps_[std::size_t(k)];
            const int valid = prepare(e, k, nullptr, mask);
            int action = -1;
            switch (s.kind) {
            case StepKind::Keep:
                action = target.levels[s.level].keeps(s.tensor) ? 1 : 0;
                if (!mask[action])
                    return false;
                break;
            case StepKind::Factor:
                for (int i = 0; i < actions_ && action < 0; ++i)
                    if (mask[i] && left[s.dim][i] % s.prime == 0)
                        action = i;
                if (action < 0)
                    return false;
                left[s.dim][action] /= s.prime;
                break;
            case StepKind::Order:
                for (int i = 0; i < D_ && action < 0 && valid > 0; ++i) {
                    const int d = target.levels[s.level].order[i];
                    if (d < D_ && mask[d])
                        action = d;
                }
                break;
            }
            apply(e, k, action);
        }
        finish(e);
        for (int l = 0; l < L_; ++l)
            e.m.levels[l].spatialOrder = target.levels[l].spatialOrder;
        e.m.numLevels = target.numLevels;
        return space_.hash(e.m) == space_.hash(target);
    }

  private:
    // Words of the kept tiles of a level with extents ext (dim d times mult).
    double occupancy(std::array<std::int64_t, kMaxDims> ext, std::uint32_t keepMask, int d,
                     std::int64_t mult) const {
        if (d >= 0)
            ext[std::size_t(d)] *= mult;
        return double(space_.tileWords(ext.data(), static_cast<std::uint8_t>(keepMask)));
    }

    // Whether prime may go to slot s of dimension d: fan-outs and buffers still fit.
    bool fits(const Episode& e, const Slot& s, int d, std::uint32_t prime) const {
        if (s.kind != 0) {
            const LevelMapping& lm = e.m.levels[s.level];
            std::int64_t used = prime;
            for (int x = 0; x < D_; ++x)
                used *= s.kind == 1 ? lm.spatialX[x] : lm.spatialY[x];
            if (used > (s.kind == 1 ? fanX_[s.level] : fanY_[s.level]))
                return false;
        }
        // The factor grows the tiles of its level and of every level outside it.
        for (int l = 1; l <= s.level; ++l)
            if (bounded_[l] && occupancy(e.ext[l], e.m.levels[l].keepMask, d, prime) > capacity_[l])
                return false;
        return true;
    }

    void encode(const Episode& e, int k, float* feat) const {
        std::fill(feat, feat + features_, 0.0f);
        for (int j = 0; j < k; ++j) {
            const Step& s = steps_[std::size_t(j)];
            if (s.kind == StepKind::Keep)
                feat[keepFeature_ + s.keepIndex] = e.m.levels[s.level].keeps(s.tensor) ? 1.f : -1.f;
        }
        for (int d = 0; d < D_; ++d) {
            if (logBound_[d] <= 0.0f)
                continue;
            const auto& slots = space_.factorSlots(d);
            for (std::size_t i = 0; i < slots.size(); ++i) {
                const std::uint32_t f =
                    MapSpace::factorAt(e.m, d, slots[i]) /
                    std::max<std::uint32_t>(1, MapSpace::factorAt(base_, d, slots[i]));
                if (f > 1)
                    feat[factorFeature_[d] + int(i)] = float(std::log2(double(f))) / logBound_[d];
            }
        }
        int f = fillFeature_;
        for (int l = 0; l < L_; ++l)
            if (bounded_[l])
                feat[f++] = float(std::min(1.0, occupancy(e.ext[l], e.m.levels[l].keepMask, -1, 1) /
                                                    capacity_[l]));
        const Step& s = steps_[std::size_t(k)];
        float* pos = feat + positionFeature_;
        pos[int(s.kind)] = 1.0f;
        pos += 3;
        if (s.dim >= 0)
            pos[s.dim] = 1.0f;
        pos += D_;
        if (s.level >= 0)
            pos[s.level] = 1.0f;
        pos += L_;
        if (s.tensor >= 0)
            pos[s.tensor] = 1.0f;
        pos += T_;
        if (s.kind == StepKind::Factor)
            pos[0] = float(std::log2(double(s.prime))) / logBound_[s.dim];
        if (s.kind == StepKind::Order) {
            pos[0] = float(e.filled[s.level]) / float(D_);
            for (int d = 0; d < D_; ++d)
                if ((e.placed[s.level] >> d) & 1u)
                    feat[orderFeature_ + d] = 1.0f;
        }
    }

    const MapSpace& space_;
    int D_ = 0, L_ = 0, T_ = 0;
    Mapping base_{};
    Extents baseExt_{};
    std::array<int, kMaxLevels> fanX_{}, fanY_{};
    std::array<bool, kMaxLevels> bounded_{};
    std::array<double, kMaxLevels> capacity_{};
    std::array<float, kMaxDims> logBound_{};
    std::array<int, kMaxDims> factorFeature_{};
    int keepFeature_ = 0, orderFeature_ = 0, fillFeature_ = 0, positionFeature_ = 0;
    std::vector<Step> steps_;
    std::vector<int> orderLevels_;
    int actions_ = 0, features_ = 0;
};

// Masked softmax of scale * logits into probs; returns the entropy.
double maskedSoftmax(const float* logits, const std::uint8_t* mask, int n, double scale,
                     double* probs) {
    double top = -std::numeric_limits<double>::infinity();
    for (int i = 0; i < n; ++i)
        if (mask[i])
            top = std::max(top, scale * logits[i]);
    double sum = 0.0;
    for (int i = 0; i < n; ++i) {
        probs[i] = mask[i] ? std::exp(scale * logits[i] - top) : 0.0;
        sum += probs[i];
    }
    double entropy = 0.0;
    for (int i = 0; i < n; ++i) {
        probs[i] /= sum;
        if (probs[i] > 0.0)
            entropy -= probs[i] * std::log(probs[i]);
    }
    return entropy;
}

class ReinforceSearch : public Searcher {
  public:
    void run(SearchContext& ctx) override {
        const MapSpace& space = ctx.space();
        const auto batch = static_cast<std::size_t>(ctx.countParam("batch", 16, 2, 4096));
        const int hidden = int(ctx.countParam("hidden", 64, 4, 4096));
        const float learningRate = float(ctx.param("learning_rate", 0.02));
        const float momentum = float(ctx.param("momentum", 0.9));
        const double entropyWeight = ctx.param("entropy", 0.2);
        const double baselineAlpha = ctx.param("baseline_alpha", 0.5);
        const double logitScale = ctx.param("logit_scale", 0.25);
        const double elite = ctx.param("elite", 1.0);
        const double illegalPenalty = ctx.param("illegal_penalty", 1.0);
        const bool learnRepaired = ctx.param("learn_repaired", 0) != 0;
        const int restartAfter = std::max(1, int(ctx.param("restart_after", 8)));

        const Plan plan(space);
        const int A = plan.actions(), F = plan.features();
        if (A > 64) {
            ctx.stop("too many choices per decision for the policy");
            return;
        }
        Mlp net({F, hidden, hidden, A}, ctx.rng());
        double baseline = 0.0;
        bool haveBaseline = false;

        std::int64_t episodes = 0, updates = 0, restarts = 0, repairs = 0;
        int barren = 0, barrenRestarts = 0;
        std::vector<Episode> eps(batch), learn(batch);
        std::vector<Mapping> sampled(batch), out(batch);
        std::vector<double> costs(batch);
        std::vector<char> failed(batch);
        std::vector<std::uint8_t> masks(batch * std::size_t(A));
        std::vector<float> feat(static_cast<std::size_t>(F));
        std::vector<double> probs(static_cast<std::size_t>(A));

        // Warm-start mappings: evaluated once and learnt from as a first batch.
        std::vector<Mapping> warm;
        {
            Evaluation scratch;
            for (Mapping m : ctx.settings().warmStart)
                if (space.repair(m, ctx.rng(), scratch))
                    warm.push_back(m);
        }

        while (!ctx.stopped()) {
            std::size_t n = batch;
            const bool warmBatch = !warm.empty();
            if (warmBatch) {
                n = std::min(batch, warm.size());
                for (std::size_t i = 0; i < n; ++i)
                    sampled[i] = warm[i];
                warm.erase(warm.begin(), warm.begin() + std::ptrdiff_t(n));
                for (std::size_t i = 0; i < n; ++i)
                    plan.reset(eps[i]); // no sampled decisions
            } else {
                rollout(plan, net, ctx.rng(), logitScale, eps, masks, feat, probs);
                for (std::size_t i = 0; i < n; ++i)
                    sampled[i] = eps[i].m;
            }
            std::fill(failed.begin(), failed.end(), 0);
            const std::size_t charged = ctx.evaluateGenerated(
                n,
                [&](std::size_t i, Rng& rng, Mapping& m) {
                    thread_local Evaluation scratch;
                    m = sampled[i];
                    if (space.isLegal(m, scratch) || space.repair(m, rng, scratch))
                        return true;
                    failed[i] = 1;
                    return false;
                },
                out.data(), costs.data());
            episodes += std::int64_t(n);

            // Rewards.
            std::vector<double> reward(n, std::numeric_limits<double>::quiet_NaN());
            double worst = std::numeric_limits<double>::infinity();
            for (std::size_t i = 0; i < n; ++i)
                if (costs[i] > 0.0 && costs[i] < SearchContext::kInfinity) {
                    reward[i] = -std::log(costs[i]);
                    worst = std::min(worst, reward[i]);
                }
            if (std::isinf(worst))
                worst = haveBaseline ? baseline : std::numeric_limits<double>::quiet_NaN();
            for (std::size_t i = 0; i < n; ++i)
                if (failed[i] || (costs[i] >= SearchContext::kInfinity))
                    reward[i] = worst - illegalPenalty;

            // Trajectories to learn from: the sampled decisions, or (learn_repaired,
            // and always for warm starts) the decisions that build the mapping evaluated.
            std::vector<std::size_t> used;
            for (std::size_t i = 0; i < n; ++i) {
                if (std::isnan(reward[i]))
                    continue;
                const bool repaired = !failed[i] && !std::isnan(costs[i]) &&
                                      space.hash(out[i]) != space.hash(sampled[i]);
                repairs += repaired;
                if (warmBatch || (repaired && learnRepaired)) {
                    if (!failed[i] && plan.encodeMapping(out[i], learn[i])) {
                        used.push_back(i);
                        continue;
                    }
                    if (warmBatch)
                        continue;
                }
                learn[i] = eps[i];
                used.push_back(i);
            }
            if (used.size() >= 2) {
                double mean = 0.0;
                for (std::size_t i : used)
                    mean += reward[i];
                mean /= double(used.size());
                double var = 0.0;
                for (std::size_t i : used)
                    var += (reward[i] - mean) * (reward[i] - mean);
                const double sd = std::sqrt(var / double(used.size()));
                if (!haveBaseline) {
                    baseline = mean;
                    haveBaseline = true;
                } else {
                    baseline += baselineAlpha * (mean - baseline);
                }
                if (sd > 1e-12) {
                    std::vector<double> advantage(n, 0.0);
                    std::vector<std::size_t> learnFrom = used;
                    double ref = baseline;
                    if (elite < 1.0) {
                        // Risk-seeking: only the best fraction, against its threshold.
                        std::vector<double> r;
                        for (std::size_t i : used)
                            r.push_back(reward[i]);
                        std::sort(r.begin(), r.end(), std::greater<>());
                        const std::size_t keep = std::clamp<std::size_t>(
                            std::size_t(std::ceil(elite * double(r.size()))), 1, r.size() - 1);
                        ref = r[keep];
                        learnFrom.clear();
                        for (std::size_t i : used)
                            if (reward[i] > ref)
                                learnFrom.push_back(i);
                    }
                    for (std::size_t i : learnFrom)
                        advantage[i] = (reward[i] - ref) / sd;
                    if (!learnFrom.empty()) {
                        update(plan, net, learn, learnFrom, advantage, logitScale, entropyWeight,
                               learningRate, momentum, masks, feat, probs, used.size());
                        ++updates;
                    }
                }
            }

            // Restart a policy that only proposes what was seen already.
            if (charged == 0 && !ctx.stopped()) {
                if (++barren >= restartAfter) {
                    barren = 0;
                    if (++barrenRestarts > 3) {
                        ctx.stop("the policy proposes no new mappings");
                        break;
                    }
                    net = Mlp({F, hidden, hidden, A}, ctx.rng());
                    haveBaseline = false;
                    ++restarts;
                }
            } else if (charged > 0) {
                barren = 0;
                barrenRestarts = 0;
            }
        }
        ctx.setStat("episodes", double(episodes));
        ctx.setStat("policy_updates", double(updates));
        ctx.setStat("policy_restarts", double(restarts));
        ctx.setStat("repaired", double(repairs));
    }

  private:
    // Samples one decision sequence per episode, all episodes step by step.
    static void rollout(const Plan& plan, Mlp& net, Rng& rng, double logitScale,
                        std::vector<Episode>& eps, std::vector<std::uint8_t>& masks,
                        std::vector<float>& feat, std::vector<double>& probs) {
        const int A = plan.actions(), F = plan.features();
        const std::size_t B = eps.size();
        for (Episode& e : eps)
            plan.reset(e);
        std::vector<std::size_t> cols;
        Eigen::MatrixXf x(F, Eigen::Index(B));
        for (int k = 0; k < plan.steps(); ++k) {
            cols.clear();
            for (std::size_t i = 0; i < B; ++i) {
                std::uint8_t* mask = &masks[i * std::size_t(A)];
                const int valid = plan.prepare(eps[i], k, feat.data(), mask);
                if (valid > 1) {
                    x.col(Eigen::Index(cols.size())) =
                        Eigen::Map<const Eigen::VectorXf>(feat.data(), F);
                    cols.push_back(i);
                } else {
                    int only = -1;
                    for (int a = 0; a < A && valid == 1; ++a)
                        if (mask[a])
                            only = a;
                    plan.apply(eps[i], k, only);
                }
            }
            if (cols.empty())
                continue;
            const Eigen::MatrixXf& y = net.forward(x.leftCols(Eigen::Index(cols.size())));
            for (std::size_t c = 0; c < cols.size(); ++c) {
                const std::uint8_t* mask = &masks[cols[c] * std::size_t(A)];
                maskedSoftmax(y.col(Eigen::Index(c)).data(), mask, A, logitScale, probs.data());
                double u = rng.uniform();
                int action = -1;
                for (int a = 0; a < A; ++a) {
                    if (!mask[a])
                        continue;
                    action = a;
                    u -= probs[std::size_t(a)];
                    if (u < 0.0)
                        break;
                }
                plan.apply(eps[cols[c]], k, action);
            }
        }
        for (Episode& e : eps)
            plan.finish(e);
    }

    // One policy-gradient step on the given trajectories.
    static void update(const Plan& plan, Mlp& net, const std::vector<Episode>& traj,
                       const std::vector<std::size_t>& used, const std::vector<double>& advantage,
                       double logitScale, double entropyWeight, float learningRate, float momentum,
                       std::vector<std::uint8_t>& masks, std::vector<float>& feat,
                       std::vector<double>& probs, std::size_t episodes) {
        const int A = plan.actions(), F = plan.features();
        // Replay each trajectory to collect its decided states.
        std::vector<float> states;
        std::vector<std::uint8_t> stepMasks;
        std::vector<int> actions;
        std::vector<double> adv;
        Episode e;
        masks.resize(std::max(masks.size(), std::size_t(A)));
        for (std::size_t i : used) {
            plan.reset(e);
            const Episode& t = traj[i];
            for (int k = 0; k < plan.steps(); ++k) {
                const int a = t.actions[std::size_t(k)];
                const int valid = plan.prepare(e, k, feat.data(), masks.data());
                if (valid > 1 && a >= 0 && masks[std::size_t(a)]) {
                    states.insert(states.end(), feat.begin(), feat.end());
                    stepMasks.insert(stepMasks.end(), masks.begin(), masks.begin() + A);
                    actions.push_back(a);
                    adv.push_back(advantage[i]);
                }
                plan.apply(e, k, a);
            }
        }
        if (actions.empty())
            return;
        const auto N = Eigen::Index(actions.size());
        const Eigen::Map<const Eigen::MatrixXf> x(states.data(), F, N);
        const Eigen::MatrixXf& y = net.forward(x);
        Eigen::MatrixXf dy = Eigen::MatrixXf::Zero(A, N);
        for (Eigen::Index c = 0; c < N; ++c) {
            const std::uint8_t* mask = &stepMasks[std::size_t(c) * std::size_t(A)];
            const double h = maskedSoftmax(y.col(c).data(), mask, A, logitScale, probs.data());
            for (int a = 0; a < A; ++a) {
                if (!mask[a])
                    continue;
                const double p = probs[std::size_t(a)];
                // d/dz of -adv * log pi(action) - entropy * H.
                double g = -adv[std::size_t(c)] * ((a == actions[std::size_t(c)]) - p);
                if (p > 0.0)
                    g += entropyWeight * p * (std::log(p) + h);
                dy(a, c) = float(logitScale * g);
            }
        }
        net.backward(dy);
        net.step(learningRate, momentum, 1.0f / float(episodes));
    }
};

} // namespace

std::unique_ptr<Searcher> makeReinforceSearch() {
    return std::make_unique<ReinforceSearch>();
}

} // namespace mw
