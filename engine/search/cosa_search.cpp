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
//   fit (e.g. 1-word registers), so each level chooses one keep pattern: a
//   keep set with capacity shares (1; 1/2+1/2, 1/4+3/4; 1/3 each or 1/2 +
//   1/4 + 1/4), the analogue of the released code's partition ratios. Fixed
//   keeps are honoured; DRAM keeps everything, dummy levels nothing.
// * Loop order (Eqs. 9-10): the paper ranks prime factors; we rank the
//   dimensions of a level (a permutation matrix), since a mapping merges one
//   dimension's factors at a level into one loop (the released decoder keeps
//   each dimension's innermost rank only). Ranked: the NoC level (the
//   outermost level that fans out, as the released code's global buffer) and
//   DRAM; "rank_all_levels" = 1 ranks every level; others keep the identity
//   order. Products of binaries are linearised exactly (McCormick rows).
//
// Constraints
// * Capacity (Eqs. 1-2) in log2 space: the tile of tensor t at level l is the
//   product of the factors (temporal and spatial) of the dimensions t depends
//   on at levels >= l, the inclusive reading the released code and our model
//   use; it must fit the share of the level's pattern. A strided coordinate
//   (P*stride + R) adds log2(stride) while only the strided dimension spans
//   the tile; other halos are ignored, as in the paper (see tightening).
// * Spatial resources (Eq. 4): per level and mesh axis, log2 of the spatial
//   factors <= log2 of the fan-out; a minimum utilization bounds their sum.
//
// Objective (Eq. 12): -w_util Util + w_comp (cyc + w_energy Energy) + w_traf Traf,
// with the released code's weights w_util 0.1, w_comp 10, w_traf 1.
// * Util (Eq. 5): log2 tiles of the kept tensors at every bounded level.
// * Comp (Eq. 6) enters as cyc >= log2 of the temporal iterations.
// * Traf (Eqs. 7-11) at the NoC level: the tile below it (D_v), its unicast
//   spatial factors (L_v, A-masked Eq. 8) and the loops there that re-send
//   the tile (T_v, Eq. 9's indicator: the innermost loop the tensor depends
//   on and every loop outside it). The released code's DRAM term (every DRAM
//   loop) becomes the same T_v at DRAM plus the loops of on-chip levels above
//   the tensor's outermost on-chip keeper, which re-send it from DRAM too.
// * Extensions (the paper tunes its weights per architecture with
//   micro-benchmarks instead): "bandwidth" = 1 adds cyc >= log2(DRAM words /
//   DRAM bandwidth), the max(traffic, compute) the released code declares but
//   leaves unused; the words summed over tensors are a log-sum-exp, bounded
//   by its tangent planes. A tensor's DRAM words start from the elements it
//   touches; a stride that skips coordinates (1x1, stride 2) adds the
//   bounding box's extra only while the strided dimension spans the on-chip
//   tile (input.77 of ResNet-50 on Simba-like: 3.9x -> 2.0x of GAMMA).
//   "w_energy" = 1 adds log2 of an energy estimate, the same kind of
//   log-sum-exp over the MACs, each tensor's DRAM words and each tensor's
//   operand reads at its innermost keeper, so that cyc + Energy is log2 EDP
//   as far as the model sees it. bandwidth = 0 and w_energy = 0 give
//   the paper's objective.
//
// Decoding and solving
// * CBC, no worker threads, log off, preprocessing and cuts off and local
//   branching on (the LP bound of the log-space model is weak; the time is
//   better spent around incumbents). Node limit "max_nodes" per solve
//   (default 1,000), so the schedule does not depend on the machine's speed;
//   time limit "time_limit" s (default 10, capped by the driver's time budget)
//   as a cap: stat time_limited = 1 says it ended a solve, and the result may
//   then vary with speed. The best incumbent is kept when a limit hits.
//   Each solve runs in the mapwright-cbc helper process (search/mip_solver.h):
//   a cancelled search kills it within 20 ms, and a solve that crashes CBC
//   ("solver_crashes") is retried once with the other branching mode.
// * CBC tends to stay near its first incumbent, so by default ("two_runs")
//   95 % of the time is split between a run from CBC's own first incumbent,
//   with the compute weight doubled ("w_comp_first", default 2 w_comp), and
//   one from a greedy start ("mip_start": fan-outs filled, then primes moved
//   from DRAM into the outermost level (2) or innermost level (1) first while
//   the tiles fit). Our model picks the better decode (with equal weights, the
//   MIP objective does). The fan-outs of the greedy start are filled either
//   with the primes whose product comes closest to them or with the largest
//   primes that fit, whichever schedule our model rates better (two
//   evaluations, when the budget allows).
// * The decode is checked exactly. If a tile overflows (halos, the stride
//   approximation), that level's log capacity for the tensor is reduced by the
//   overflow and the MIP is solved again (up to "resolves" = 3 times, within
//   the time limit; the digest's Sec. 9.1 item 7); failing that, the map
//   space's repair makes it legal.
// * Keeps that save no parent accesses are then dropped (the paper's B has no
//   such entries): a level keeps t only if a loop t ignores re-sends its
//   child's tile from it, or its tile stays put across such a loop above it.
// * The converse: where the decode leaves an inner level keeping nothing
//   while a tile of a tensor fits there and would be reused (the loops
//   there or just above ignore it), that level keeps it too ("operand_keeps",
//   default 1). The MIP's log-space shares miss these: ResNet-50's conv2_x
//   3x3 on Simba-like had every MAC update its output in the accumulation
//   buffer, not a register (2.20x -> 1.58x of GAMMA-10K; with it all 24
//   layers are within 2x).
// * DRAM reuse ("dram_reuse", default 1): the MIP's traffic terms are
//   log-space estimates, and its decode often re-reads a tensor from DRAM
//   under a DRAM loop the tensor ignores. Three decodes per tensor keep it on
//   chip across such loops: the DRAM loops it depends on move whole into the
//   global buffer, which keeps it (hoistDramReuse); the loops it ignores move
//   inside at DRAM (addDramReuse); or the ignored loop's primes move into the
//   global buffer while its tiles fit (sinkDramLoop).
//   Our model judges them (ResNet-50 / Simba-like: input.83 1.75x -> 1.34x,
//   input.70 1.93x -> 1.36x of GAMMA-10K; geomean over 24 layers 1.36 -> 1.30).
// * One evaluation is charged. With "refine" != 0 (default) and evaluations
//   left, up to "refine_max" (8) other decodes are evaluated too: with operand
//   keeps added, with DRAM reuse, before keep pruning, the other run's
//   schedule, CBC's saved incumbents. Not a search.
// Stats: solve_seconds, mip_nodes, time_limited, mip_variables, mip_integers,
// mip_constraints, mip_solves, proven_optimal, mip_objective, mip_bound,
// repaired, refine_evaluations.
#include "search/searchers.h"

#include "search/cosa_model.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace mw {

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
        // A node limit makes the schedule independent of the machine's speed;
        // the time limit stays as a cap. 1,000 nodes per solve take 3.5-8.5 s
        // per ResNet-50 layer on Simba-like (2 solves each, on the 2-core dev
        // VM; up to 10.4 s on its slow days, when the cap cuts a few layers
        // short: stat time_limited) and, with operand keeps, keep all 24
        // layers within 2x of GAMMA-10K (geomean 1.37; 800 nodes: 24, geomean
        // 1.41); 1,500 nodes did no better and ran into the time limit on 4
        // layers. With the time limit alone, a layer's result varied from run
        // to run (input.77: 2.5x and 3.9x of GAMMA).
        const int maxNodes = static_cast<int>(std::clamp(ctx.param("max_nodes", 1000), 0.0, 1e9));
        const int resolves = std::max(0, static_cast<int>(ctx.param("resolves", 3)));
        CosaModel model(space, ctx.param("w_util", 0.1), ctx.param("w_comp", 10.0),
                        ctx.param("w_traf", 1.0), ctx.param("w_energy", 1.0),
                        ctx.param("bandwidth", 1) != 0, ctx.param("rank_all_levels", 0) != 0);
        model.greedyStartMode = static_cast<int>(ctx.param("mip_start", 2));
        model.localBranching = ctx.param("local_branching", 1) != 0;

        Evaluation scratch;
        MipSolution sol;
        Mapping m{};
        std::vector<Mapping> alternatives; // earlier decodes, tried if evaluations remain
        double solveSeconds = 0.0;
        double solveNodes = 0.0;
        bool timeLimited = false;
        int solves = 0;
        int crashes = 0;
        auto solve = [&](double seconds) {
            const auto cancelled = [&] { return ctx.cancelRequested(); };
            MipSolution s = model.solve(seconds, maxNodes, cancelled);
            if (!s.failure.empty() && !cancelled()) {
                // The solver's crashes depend on its search path: the other
                // branching mode usually gets through the same model.
                ctx.setStat("solver_crashes", ++crashes);
                model.localBranching = !model.localBranching;
                s = model.solve(std::max(0.5, std::min(seconds, limit - elapsed())), maxNodes,
                                cancelled);
                model.localBranching = !model.localBranching;
            }
            solveSeconds += s.seconds;
            solveNodes += s.nodes;
            // A solve that ends before its node limit without proving anything
            // was stopped by the clock: its result depends on the machine's speed.
            if (s.failure.empty() && !s.optimal && !s.infeasible && !cancelled() &&
                (maxNodes <= 0 || s.nodes < maxNodes))
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
        };
        auto fail = [&](const MipSolution& s) {
            reportSolves();
            ctx.setStat("proven_optimal", 0);
            ctx.stop(s.infeasible ? "CoSA: the MIP is infeasible: " + model.infeasibleReason()
                     : !s.failure.empty() ? "CoSA: " + s.failure + " on this layer's MIP"
                                          : "CoSA: CBC found no feasible schedule within " +
                                                std::to_string(limit) + " s");
        };

        // Of the two ways to fill the fan-outs of the greedy start, the one
        // whose schedule our model prefers seeds CBC (two evaluations, when
        // the budget has room; both schedules are candidates anyway).
        if (model.greedyStartMode > 0 && ctx.remainingEvaluations() > 4) {
            double cost[2] = {SearchContext::kInfinity, SearchContext::kInfinity};
            for (int closest = 0; closest < 2; ++closest) {
                Mapping start{};
                // (The start fits the MIP's log-space capacities, which ignore
                // halos; a tile that still overflows is repaired for the comparison.)
                if (model.greedySchedule(closest == 1, start) &&
                    (space.isLegal(start, scratch) || space.repair(start, ctx.rng(), scratch))) {
                    model.pruneKeeps(start);
                    cost[closest] = ctx.evaluate(start);
                }
            }
            model.closestFill = !(cost[0] < cost[1]);
            ctx.setStat("start_fill_closest", model.closestFill ? 1 : 0);
        }
        // CBC tends to stay near its first incumbent, so the time is split
        // between a run from its own first incumbent and a run from the
        // greedy start; the better MIP objective wins, the other schedule is
        // a refinement candidate. The two runs may take 95 % of the time limit:
        // re-solves are rare (none on ResNet-50 / Simba-like) and get what the
        // runs leave; reserving 15 % for them cut 7 of its 24 layers short on
        // a slow day of the dev VM (input.73: 2.03x of GAMMA-10K, 1.61x with
        // its full node count), against 5 with 5 % (24 within 2x, geomean 1.37).
        const double first = resolves > 0 ? 0.95 * limit : limit;
        // A decode with inner operand keeps added, pruned again (see
        // addOperandKeeps); false when nothing was added or the step is off.
        const bool operandKeeps = ctx.param("operand_keeps", 1) != 0;
        auto addOperandKeeps = [&](Mapping& c) {
            if (!operandKeeps || !model.addOperandKeeps(c))
                return false;
            model.pruneKeeps(c);
            return true;
        };
        const int startMode = model.greedyStartMode;
        const bool twoRuns = startMode > 0 && ctx.param("two_runs", 1) != 0;
        // The paper tunes its weights per architecture. Here the first run
        // weighs compute twice as much ("w_comp_first", default 20: on
        // ResNet-50/Simba-like it brought 20 -> 22 of 24 layers within 2x of
        // GAMMA, chosen on those layers), and our model, not the two
        // incomparable MIP objectives, picks the run that goes on.
        const double wComp = ctx.param("w_comp", 10.0);
        const double wCompFirst = ctx.param("w_comp_first", 2.0 * wComp);
        if (twoRuns) {
            model.greedyStartMode = 0;
            model.setComputeWeight(wCompFirst);
        }
        // (Each run normally ends at its node limit; the first may take 60 % of
        // the time before the clock cuts it short, the second the rest.)
        sol = solve(twoRuns ? 0.6 * first : first);
        model.setComputeWeight(wComp);
        if (twoRuns) {
            model.greedyStartMode = startMode;
            MipSolution other = solve(first - elapsed());
            bool otherWins = other.feasible && (!sol.feasible || other.objective < sol.objective);
            if (other.feasible && sol.feasible && wCompFirst != wComp &&
                ctx.remainingEvaluations() > 4) {
                auto trueCost = [&](const MipSolution& x) {
                    Mapping c = model.decode(x.x);
                    model.pruneKeeps(c);
                    if (!space.isLegal(c, scratch) && !space.repair(c, ctx.rng(), scratch))
                        return SearchContext::kInfinity;
                    return ctx.evaluate(c);
                };
                const double firstCost = trueCost(sol);
                otherWins = trueCost(other) < firstCost;
            }
            if (otherWins)
                std::swap(sol, other);
            else
                model.setComputeWeight(wCompFirst); // the tightening re-solves its problem
            if (other.feasible) {
                Mapping c = model.decode(other.x);
                model.pruneKeeps(c);
                alternatives.push_back(c);
                if (addOperandKeeps(c))
                    alternatives.push_back(c);
            }
        }
        if (!sol.feasible)
            return fail(sol);
        Mapping raw = model.decode(sol.x);
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
            MipSolution s = solve(round + 1 == resolves ? left : left / 2);
            if (!s.feasible)
                break;
            sol = std::move(s);
            raw = model.decode(sol.x);
            legal = space.isLegal(raw, scratch);
        }
        // The keeps that give no reuse are dropped (never overflows); the
        // undropped decode is a refinement candidate.
        m = raw;
        model.pruneKeeps(m);
        alternatives.insert(alternatives.begin(), raw);
        // The decode with inner operand keeps added goes first among the
        // refinement candidates (see addOperandKeeps), then those that keep
        // a tensor on chip across the DRAM loops it ignores (addDramReuse).
        std::vector<Mapping> firstTried;
        if (Mapping withKeeps = m; addOperandKeeps(withKeeps))
            firstTried.push_back(withKeeps);
        if (ctx.param("dram_reuse", 1) != 0)
            for (int t = 0; t < T; ++t)
                for (auto reuse : {&CosaModel::hoistDramReuse, &CosaModel::addDramReuse,
                                   &CosaModel::sinkDramLoop})
                    if (Mapping c = m; (model.*reuse)(c, t)) {
                        model.pruneKeeps(c);
                        addOperandKeeps(c);
                        firstTried.push_back(c);
                    }
        alternatives.insert(alternatives.begin(), firstTried.begin(), firstTried.end());
        reportSolves();
        ctx.setStat("mip_solves", solves);
        ctx.setStat("proven_optimal", sol.optimal ? 1 : 0);
        ctx.setStat("mip_objective", sol.objective);
        ctx.setStat("mip_bound", sol.bound);
        ctx.setStat("repaired", legal ? 0 : 1);
        if (!legal && !space.repair(m, ctx.rng(), scratch)) {
            ctx.stop("CoSA: the MIP's schedule overflows a buffer and repair found no legal "
                     "mapping near it");
            return;
        }
        ctx.evaluate(m);

        // Refinement: the decode before keep pruning, the other run's schedule
        // and the solver's other saved incumbents, a few evaluations at most.
        if (ctx.param("refine", 1) == 0)
            return;
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
