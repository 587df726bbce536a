// CoSA (Huang et al., "CoSA: Scheduling by Constrained Optimization for Spatial
// Accelerators", ISCA 2021; digest seeds/digests/002_cosa.md): one mixed-integer
// program per layer, solved with COIN-OR CBC (the paper uses Gurobi), decoded
// into a mapping and charged as one evaluation. Against the paper's Sec. III:
//
// Variables (Sec. III-B, Table III)
// * x[d, n, slot] = 1 puts the n-th prime factor of dimension d's free bound
//   (the bound divided by the factors the constraints fix) in one slot the map
//   space offers: a level's temporal loop or its X or Y fan-out. Each prime
//   takes exactly one slot (Eq. 3 as the text intends); equal primes of one
//   dimension take non-decreasing slot indices (exact symmetry breaking).
// * The paper's constant B (which level keeps which tensor) is not part of a
//   Mapwright architecture, and keeping all three tensors everywhere cannot
//   fit (e.g. 1-word registers), so each level chooses one keep pattern: the
//   set of tensors it keeps. Fixed keeps are honoured; DRAM keeps
//   everything, dummy levels nothing.
// * Loop order (Eqs. 9-10): the paper ranks prime factors; we rank the
//   dimensions of a level (a permutation matrix), since a mapping merges one
//   dimension's factors at a level into one loop (the released decoder keeps
//   each dimension's innermost rank only). Ranked: the NoC level (the
//   outermost level that fans out, as the released code's global buffer) and
//   DRAM, under their order constraints (the constrained dimensions take the
//   outermost and innermost ranks); "rank_all_levels" = 1 ranks every level;
//   others keep the decode's order (the identity, as the constraint places
//   it). Products of binaries are linearised exactly (McCormick rows).
//
// Constraints
// * Capacity (Eqs. 1-2) in log2 space: the tile of tensor t at level l is the
//   product of the factors (temporal and spatial) of the dimensions t depends
//   on at levels >= l, the inclusive reading the released code and our model
//   use. The tiles a level keeps must fit together, as Timeloop checks them:
//   log2 of their sum, bounded from above by planes (SharedCapacity), within
//   1.4 % of the capacity. The released code splits a buffer by fixed
//   partition ratios, as we once did (shares of 1/2, 1/4 or 3/4). No share
//   held a global buffer filled 77 % by one tensor and 17-19 % by the other,
//   the optimum of five ResNet-50 layers under the row-stationary
//   constraints (CoSA missed layer3.0.conv1's by 25 %). A strided coordinate
//   (P*stride + R) adds log2(stride) while only the strided dimension spans
//   the tile; other halos are ignored, as in the paper (see tightening).
// * Spatial resources (Eq. 4): per level and mesh axis, log2 of the spatial
//   factors <= log2 of the fan-out; a minimum utilization bounds their sum.
//
// Objective (Eq. 12): -w_util Util + w_comp (cyc + w_energy E / (E0 ln 2)) + w_traf Traf,
// with the released code's weights w_util 0.1, w_comp 10; w_energy 1, w_traf 0.
// * Util (Eq. 5): log2 tiles of the kept tensors at every bounded level.
// * Comp (Eq. 6) enters as cyc >= log2 of the temporal iterations, and
//   cyc >= log2 of each level's per-instance words over its bandwidth.
// * E: the traffic of every level in pJ (cosa_traffic.cpp): the words filled
//   into each level (its tile, the fan-outs above it and Eq. 9's re-sending
//   loops above it, at every level) and read from its parent, and the MACs'
//   operand reads; a tangent of log2 E, so that the objective is log2 EDP to
//   first order. It replaces the paper's Traf, which counts log2 words at the
//   NoC level only and, under Eyeriss' row-stationary constraints, left the
//   scratchpads' loops empty (6x to 42x the optimum, README "CoSA's
//   formulation"). Traf (Eqs. 7-11: the tile below the NoC level, its unicast
//   fan-outs, its re-sending loops) stays as "w_traf".
//
// Decoding and solving
// * CBC, no worker threads, log off, preprocessing off, cuts at the root
//   (10 passes), local branching off ("local_branching"), the feasibility
//   pump off ("feasibility_pump"; see MipOptions). Each solve ends at
//   its proof or its share of "time_limit" s (default 10, capped at 95 % of
//   the driver's time budget), as the paper's code runs Gurobi (a time limit,
//   no node limit); stat time_limited = 1 says the clock ended one, and the
//   schedule may then vary with the machine's speed. "max_nodes" (default 0:
//   none) limits each solve's nodes, which makes a run reproducible where the
//   nodes end it first (the tests); the old default of 400 stopped solves
//   with time left (Simba-like layer4.0.downsample.0: two solves of 400
//   nodes in 7.4 of 9.5 s; README "CoSA's formulation"). The best incumbent
//   is kept when a limit hits; a node-limited solve that found nothing goes
//   on on the clock (stat node_limit_lifted). Each solve runs in the
//   mapwright-cbc helper process (search/mip_solver.h): a cancelled search
//   kills it within 20 ms; a solve that crashes CBC ("solver_crashes") is
//   retried without root cuts, then also without its MIP start.
// * Keeps fixed by the map space: one solve from CBC's own start; with 8 s or
//   more, a second from the greedy start ("mip_start" 2: fan-outs filled,
//   then primes moved from DRAM into the outermost level first while the
//   tiles fit; "two_starts"); the lower EDP estimate wins.
// * Keeps free: the MIP screens one-tensor-per-buffer keeps for the PEs'
//   storage, then alternates tilings and keeps (see run()).
// * Solutions of different solves are ranked by the MIP's own estimate of
//   their EDP (its cycles column times its energy parts; "rank_by_edp" = 0
//   ranks by the objective, whose energy tangent is taken at one first scale
//   and over-charges solutions far above it).
// * The decode is checked exactly. If a tile overflows (halos, the stride
//   approximation), that level's log capacity for the tensor is reduced by the
//   overflow and the MIP is solved again (up to "resolves" = 3 times, within
//   the time limit; the digest's Sec. 9.1 item 7); failing that, the map
//   space's repair makes it legal.
// * Keeps that save no parent accesses are then dropped (the paper's B has no
//   such entries): a level keeps t only if a loop t ignores re-sends its
//   child's tile from it, or its tile stays put across such a loop above it.
// * One evaluation is charged: the schedule. "refine" = 1 (off by default,
//   not the paper's method) evaluates up to "refine_max" (8) other decodes:
//   with inner operand keeps added (addOperandKeeps), with a tensor kept on
//   chip across the DRAM loops it ignores (hoistDramReuse, addDramReuse,
//   sinkDramLoop), before keep pruning, and CBC's other saved incumbents.
// Stats: solve_seconds, mip_nodes, time_limited, mip_variables, mip_integers,
// mip_constraints, mip_solves, proven_optimal, mip_objective, mip_bound,
// energy_estimate_pj, keep_rounds, keep_candidates, repaired, refine_evaluations.
#include "search/searchers.h"

#include "search/cosa_model.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mw {

namespace cosa {

std::vector<std::vector<int>> specialisedKeeps(const MapSpace& space, const CosaModel& model,
                                               const std::vector<int>& base) {
    const int L = space.arch().numLevels(), T = space.problem().numTensors();
    const int outer = model.outermostBuffer();
    std::vector<int> group;
    for (int l = outer + 1; outer >= 0 && l < L; ++l) {
        const LevelConstraint& lc = space.constraints().levels[static_cast<std::size_t>(l)];
        if (space.levelHasTemporal(l) &&
            !space.arch().levels[static_cast<std::size_t>(l)].unbounded() &&
            (lc.keepFixed & ((1u << T) - 1)) != ((1u << T) - 1))
            group.push_back(l);
    }
    std::vector<std::vector<int>> out;
    if (group.size() < 2)
        return out;
    // Slots: the group's levels; values: a tensor or -1 (nothing), each
    // tensor at most once.
    std::vector<int> pick(group.size(), -1);
    const int want = std::min<int>(T, int(group.size()));
    std::function<void(std::size_t, unsigned)> place = [&](std::size_t i, unsigned used) {
        if (i == group.size()) {
            if (std::popcount(used) != want)
                return;
            std::vector<int> masks = base;
            for (std::size_t j = 0; j < group.size(); ++j) {
                const LevelConstraint& lc =
                    space.constraints().levels[static_cast<std::size_t>(group[j])];
                const unsigned mask = pick[j] < 0 ? 0u : 1u << pick[j];
                masks[static_cast<std::size_t>(group[j])] = lc.withFixedKeeps(mask);
            }
            if (std::find(out.begin(), out.end(), masks) == out.end())
                out.push_back(masks);
            return;
        }
        for (int t = -1; t < T; ++t) {
            if (t >= 0 && ((used >> t) & 1u))
                continue;
            pick[i] = t;
            place(i + 1, t >= 0 ? used | (1u << t) : used);
        }
    };
    place(0, 0u);
    return out;
}

} // namespace cosa

namespace {

using cosa::CosaModel;

class CosaSearch : public Searcher {
  public:
    void run(SearchContext& ctx) override {
        const auto start = std::chrono::steady_clock::now();
        auto elapsed = [&] {
            return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        };
        const MapSpace& space = ctx.space();
        const int L = space.arch().numLevels();
        const int T = space.problem().numTensors();
        double limit = ctx.param("time_limit", 10.0);
        if (ctx.settings().budget.seconds > 0)
            limit = std::min(limit, 0.95 * ctx.settings().budget.seconds);
        // No node limit by default: the clock ends each solve (see the header).
        const int maxNodes = static_cast<int>(std::clamp(ctx.param("max_nodes", 0), 0.0, 1e9));
        const int resolves = std::max(0, static_cast<int>(ctx.param("resolves", 3)));
        CosaModel model(space, ctx.param("w_util", 0.1), ctx.param("w_comp", 10.0),
                        ctx.param("w_traf", 0.0), ctx.param("w_energy", 1.0),
                        ctx.param("rank_all_levels", 0) != 0);
        model.greedyStartMode = static_cast<int>(ctx.param("mip_start", 2));
        const bool localBranching = ctx.param("local_branching", 0) != 0;
        model.localBranching = localBranching;
        model.strongBranching = static_cast<int>(ctx.param("strong_branching", -1));
        model.feasibilityPump = ctx.param("feasibility_pump", 0) != 0;

        Evaluation scratch;
        double solveSeconds = 0.0;
        double solveNodes = 0.0;
        bool timeLimited = false;
        int solves = 0;
        int crashes = 0;
        auto solve = [&](double seconds, int nodeLimit) {
            // Polled while CBC works: the run shows the solve as its phase,
            // done as the time limit is spent (a proof or a node limit may end it sooner).
            const auto cancelled = [&] {
                ctx.reportPhase("solving the MIP", elapsed() / limit);
                return ctx.cancelRequested();
            };
            const int mode = model.greedyStartMode;
            const std::optional<Mapping> from = model.startMapping;
            MipSolution s = model.solve(seconds, nodeLimit, cancelled);
            // CBC 2.10's crashes (assertions, seen on three Simba-like
            // ResNet-50 layers) depend on its search path: the same model
            // without root cuts, or then also without the MIP start and with
            // the other branching mode, gets through. (Without the start but
            // with the cuts, layer4.0.conv3 crashed again 4 s in, and the
            // last retry's second left found nothing.)
            for (int retry = 0; retry < 2 && !s.failure.empty() && !cancelled(); ++retry) {
                ctx.setStat("solver_crashes", ++crashes);
                if (retry == 1) {
                    model.greedyStartMode = 0;
                    model.startMapping.reset();
                    model.localBranching = !localBranching;
                }
                model.rootCuts = false;
                solveSeconds += s.seconds;
                s = model.solve(std::max(0.5, std::min(seconds, limit - elapsed())), nodeLimit,
                                cancelled);
            }
            if (!s.feasible && !s.infeasible && s.failure.empty() && !cancelled() &&
                !model.fixedTiling && seconds - s.seconds > 0.2) {
                // No schedule within the node limit: go on without one, on the
                // clock, for twice as long at most (a keep step that finds
                // nothing leaves its tiling's keeps as they were).
                ctx.setStat("node_limit_lifted", 1);
                solveSeconds += s.seconds;
                solveNodes += s.nodes;
                s = model.solve(std::min(seconds - s.seconds, std::max(1.0, 2.0 * s.seconds)), 0,
                                cancelled);
                timeLimited = timeLimited || (!s.optimal && !s.infeasible);
            }
            model.greedyStartMode = mode;
            model.startMapping = from;
            model.rootCuts = true;
            model.localBranching = localBranching;
            solveSeconds += s.seconds;
            solveNodes += s.nodes;
            // A solve that ends before its node limit without proving anything
            // was stopped by the clock: its result depends on the machine's speed.
            if (s.failure.empty() && !s.optimal && !s.infeasible && !cancelled() &&
                (nodeLimit <= 0 || s.nodes < nodeLimit))
                timeLimited = true;
            if (solves++ == 0) {
                ctx.setStat("mip_variables", s.variables);
                ctx.setStat("mip_integers", s.integers);
                ctx.setStat("mip_constraints", s.constraints);
            }
            return s;
        };
        auto reportSolves = [&] {
            ctx.setStat("solve_seconds", solveSeconds);
            ctx.setStat("mip_nodes", solveNodes);
            ctx.setStat("time_limited", timeLimited ? 1 : 0);
            ctx.setStat("mip_solves", solves);
        };
        auto fail = [&](const MipSolution& s) {
            reportSolves();
            ctx.setStat("proven_optimal", 0);
            ctx.stop(s.infeasible ? "CoSA: the MIP is infeasible: " + model.infeasibleReason()
                     : !s.failure.empty() ? "CoSA: " + s.failure + " on this layer's MIP"
                                          : "CoSA: CBC found no feasible schedule within " +
                                                std::to_string(limit) + " s");
        };

        // One MIP over tiling, order, fan-out and keeps. Where the map space
        // leaves keeps free, CBC finds keeps a poor lever (its LP relaxation
        // says little about a gated tensor), so the solve then alternates
        // ("keep_rounds" per chain): the tiling for the keeps of the best
        // solution so far, then the keeps for that tiling, each a MIP of the
        // same objective, until the objective stops improving. The paper's B
        // (which level keeps which tensor) is a given of its architecture;
        // this is the MIP choosing it. A chain starts from the best screened
        // keeps (below), two more from the greedy schedule's: every tensor it
        // fits, and those that give reuse; the lower EDP estimate wins.
        // Re-solves after an overflow get what is left.
        const double runs = resolves > 0 ? 0.9 * limit : limit;
        const int keepRounds =
            model.keepsFree() ? std::max(0, static_cast<int>(ctx.param("keep_rounds", 3))) : 0;
        MipSolution sol;
        Mapping solMapping{};
        double energyScale = 0.0;
        // Solutions of different builds (keep choices, starts) are ranked by
        // the MIP's own EDP estimate ("rank_by_edp", default 1), or by the MIP
        // objective (0). Each rank is taken in the build that solved it.
        const bool rankByEdp = ctx.param("rank_by_edp", 1) != 0;
        auto rankOf = [&](const MipSolution& s) {
            return rankByEdp ? model.logEdpEstimate(s.x) : s.objective;
        };
        double solRank = SearchContext::kInfinity;
        auto masksOf = [&](const Mapping& m) {
            std::vector<int> masks(static_cast<std::size_t>(L), -1);
            for (int l = 1; l < L; ++l) { // (keep pruning may drop a keep the space fixes)
                const LevelConstraint& lc = space.constraints().levels[static_cast<std::size_t>(l)];
                masks[static_cast<std::size_t>(l)] =
                    lc.withFixedKeeps(m.levels[static_cast<std::size_t>(l)].keepMask);
            }
            return masks;
        };
        // The best solution so far, its schedule and energy (decoded in the
        // build that solved it).
        auto adopt = [&](MipSolution& s, const Mapping& decoded, double energy, double rank) {
            solMapping = decoded;
            energyScale = energy;
            solRank = rank;
            sol = std::move(s);
        };
        int rounds = 0;
        // One chain from a schedule's keeps, until `until` s; improves sol.
        auto chain = [&](const Mapping& from, double until) {
            Mapping current = from;
            double objective = SearchContext::kInfinity;
            for (int round = 0; round < keepRounds && !ctx.cancelRequested(); ++round) {
                const double left = until - elapsed();
                if (left < 0.2)
                    break;
                model.keepMasks = masksOf(current);
                model.startMapping = current;
                MipSolution tiled = solve(0.8 * left / double(keepRounds - round), maxNodes);
                if (!tiled.feasible)
                    break;
                ++rounds;
                // (Each solution decodes in the build that solved it.)
                const Mapping tiling = model.decode(tiled.x);
                const double tiledEnergy = model.energyEstimate(tiled.x);
                const double tiledRank = rankOf(tiled);
                model.keepMasks.clear();
                model.fixedTiling = tiling;
                model.startMapping = tiling;
                MipSolution kept = solve(std::max(0.1, 0.25 * (until - elapsed())), maxNodes);
                const double keptRank = kept.feasible ? rankOf(kept) : SearchContext::kInfinity;
                model.fixedTiling.reset();
                const bool keepsWin = kept.feasible && kept.objective <= tiled.objective;
                MipSolution& better = keepsWin ? kept : tiled;
                if (!(better.objective < objective - 1e-6))
                    break;
                objective = better.objective;
                const Mapping decoded = keepsWin ? model.decode(kept.x) : tiling;
                const double energy = keepsWin ? model.energyEstimate(kept.x) : tiledEnergy;
                const double rank = keepsWin ? keptRank : tiledRank;
                current = decoded;
                model.pruneKeeps(current);
                if (!sol.feasible || rank < solRank)
                    adopt(better, decoded, energy, rank);
            }
        };
        Mapping greedy{};
        if (keepRounds > 0 && model.greedySchedule(model.closestFill, greedy)) {
            Mapping pruned = greedy;
            model.pruneKeeps(pruned);
            double start = elapsed();
            // Screening ("keep_screen", default 1): the alternation only
            // moves keeps near its start, and the greedy keeps are rarely
            // near the best (ResNet-50 on Eyeriss-like: the MIP rates the
            // row-stationary keeps' schedule of layer2.0.conv1 at 244
            // J*cycle, its chains' best at 3,377). Each assignment of one
            // tensor of its own to each level of the PEs' storage
            // (specialisedKeeps) gets an equal share of "screen_share" (0.6)
            // of the time, at most "screen_nodes" (60) nodes, from CBC's own
            // start; a chain starts from the one of least EDP estimate. The
            // shares are clock-bound (stat time_limited).
            const std::vector<std::vector<int>> candidates =
                ctx.param("keep_screen", 1) != 0 ? specialisedKeeps(space, model, masksOf(pruned))
                                                 : std::vector<std::vector<int>>{};
            if (!candidates.empty()) {
                const int screenNodes =
                    static_cast<int>(std::clamp(ctx.param("screen_nodes", 60), 1.0, 1e9));
                const double screenShare = std::clamp(ctx.param("screen_share", 0.6), 0.0, 0.7);
                const double screenUntil = start + screenShare * (runs - start);
                // CBC's own start: the greedy start's tiles, made for other
                // keeps, are poor ones, and a short solve seldom leaves them.
                const int mode = model.greedyStartMode;
                model.greedyStartMode = 0;
                model.startMapping.reset();
                // The best screened solution is a schedule in its own right:
                // adopted, and a chain's start.
                for (std::size_t i = 0; i < candidates.size() && !ctx.cancelRequested(); ++i) {
                    const double left = screenUntil - elapsed();
                    if (left < 0.1)
                        break;
                    model.keepMasks = candidates[i];
                    MipSolution s = solve(left / double(candidates.size() - i), screenNodes);
                    if (!s.feasible)
                        continue;
                    const double rank = rankOf(s);
                    if (!sol.feasible || rank < solRank)
                        adopt(s, model.decode(s.x), model.energyEstimate(s.x), rank);
                }
                model.greedyStartMode = mode;
                model.keepMasks.clear();
                ctx.setStat("keep_candidates", double(candidates.size()));
                if (sol.feasible)
                    chain(solMapping, start + (0.3 + screenShare) * (runs - start));
                start = elapsed();
            }
            const bool both = masksOf(pruned) != masksOf(greedy) && ctx.param("keep_chains", 2) > 1;
            chain(pruned, both ? start + 0.6 * (runs - start) : runs);
            if (both)
                chain(greedy, runs);
        }
        if (!sol.feasible) { // keeps fixed, or no greedy start
            // CBC's path depends on its start, and neither start wins
            // everywhere (ResNet-50 / Simba-like layer4.0.conv2: 39x the
            // lower bound from the greedy start; Eyeriss-like's
            // layer3.0.downsample.0 under the row-stationary constraints:
            // 1.69x the optimum from it, 1.21x from none): with "two_starts"
            // (default 1) a solve from CBC's own start gets up to 60 % of the
            // time, one from the greedy start what is left, and the better
            // MIP objective wins.
            // Under 8 s (the default 5 s of a constrained bench run) one
            // node-limited solve is all the time holds: CBC's own start.
            const bool twoStarts =
                model.greedyStartMode > 0 && ctx.param("two_starts", 1) != 0 && limit >= 8.0;
            const int mode = model.greedyStartMode;
            model.greedyStartMode = 0;
            MipSolution own =
                solve(twoStarts ? 0.6 * (runs - elapsed()) : runs - elapsed(), maxNodes);
            model.greedyStartMode = mode;
            if (own.feasible)
                adopt(own, model.decode(own.x), model.energyEstimate(own.x), rankOf(own));
            else
                sol = std::move(own);
            if (twoStarts && !ctx.cancelRequested() && runs - elapsed() > 0.3) {
                MipSolution other = solve(runs - elapsed(), maxNodes);
                if (other.feasible && (!sol.feasible || rankOf(other) < solRank))
                    adopt(other, model.decode(other.x), model.energyEstimate(other.x),
                          rankOf(other));
            }
            if (!sol.feasible)
                return fail(sol);
        }
        ctx.setStat("keep_rounds", rounds);
        // Re-solves keep the chosen keeps; CBC's other incumbents belong to
        // another build.
        if (rounds > 0) {
            model.keepMasks = masksOf(solMapping);
            sol.more.clear();
        }
        model.startMapping.reset();
        ctx.setStat("energy_estimate_pj", energyScale);
        Mapping raw = solMapping;
        bool legal = space.isLegal(raw, scratch);
        // Tightening: shrink what overflowed by how much it overflowed; solve again.
        for (int round = 0; !legal && round < resolves; ++round) {
            bool capacityOnly = true;
            for (int i = 0; i < scratch.numViolations; ++i) {
                const Violation& v = scratch.violations[i];
                if (v.kind != ViolationKind::Capacity || v.level < 0 || v.level >= L) {
                    capacityOnly = false;
                    continue;
                }
                const double over =
                    std::log2(double(v.needed) / std::max(1.0, double(v.available)));
                for (int t = 0; t < T; ++t)
                    if (v.tensor == t || (v.tensor < 0 && raw.levels[v.level].keeps(t)))
                        model.tighten[static_cast<std::size_t>(v.level)]
                                     [static_cast<std::size_t>(t)] += std::max(over, 0.0) + 1e-3;
            }
            const double left = limit - elapsed();
            if (!capacityOnly || left < 0.1)
                break;
            MipSolution s = solve(round + 1 == resolves ? left : left / 2, maxNodes);
            if (!s.feasible)
                break;
            sol = std::move(s);
            raw = model.decode(sol.x);
            legal = space.isLegal(raw, scratch);
            solMapping = raw;
        }
        // The keeps that give no reuse are dropped (never overflows).
        Mapping m = raw;
        model.pruneKeeps(m);
        reportSolves();
        ctx.setStat("proven_optimal", sol.optimal ? 1 : 0);
        ctx.setStat("mip_objective", sol.objective);
        ctx.setStat("mip_bound", sol.bound);
        ctx.setStat("repaired", legal ? 0 : 1);
        ctx.endPhase();
        if (!legal && !space.repair(m, ctx.rng(), scratch)) {
            ctx.stop("CoSA: the MIP's schedule overflows a buffer and repair found no legal "
                     "mapping near it");
            return;
        }
        ctx.evaluate(m);

        // Refinement ("refine" = 1; off by default, not the paper's method):
        // a few other decodes, evaluated by our model: with inner operand
        // keeps added, with DRAM reuse, before keep pruning, and CBC's other
        // saved incumbents.
        if (ctx.param("refine", 0) == 0)
            return;
        std::vector<Mapping> alternatives;
        auto addOperandKeeps = [&](Mapping& c) {
            if (!model.addOperandKeeps(c))
                return false;
            model.pruneKeeps(c);
            return true;
        };
        if (Mapping withKeeps = m; addOperandKeeps(withKeeps))
            alternatives.push_back(withKeeps);
        for (int t = 0; t < T; ++t)
            for (auto reuse :
                 {&CosaModel::hoistDramReuse, &CosaModel::addDramReuse, &CosaModel::sinkDramLoop})
                if (Mapping c = m; (model.*reuse)(c, t)) {
                    model.pruneKeeps(c);
                    addOperandKeeps(c);
                    alternatives.push_back(c);
                }
        alternatives.push_back(raw);
        for (const auto& other : sol.more) {
            Mapping c = model.decode(other);
            model.pruneKeeps(c);
            alternatives.push_back(c);
        }
        const auto refineMax = static_cast<std::size_t>(std::max(0.0, ctx.param("refine_max", 8)));
        std::size_t tried = 0;
        for (Mapping& c : alternatives) {
            if (tried >= refineMax || ctx.stopped())
                break;
            if (!space.isLegal(c, scratch) && !space.repair(c, ctx.rng(), scratch))
                continue;
            if (ctx.isKnown(c))
                continue;
            ctx.evaluate(c);
            ++tried;
        }
        ctx.setStat("refine_evaluations", double(tried));
    }
};

} // namespace

std::unique_ptr<Searcher> makeCosaSearch() {
    return std::make_unique<CosaSearch>();
}

} // namespace mw
