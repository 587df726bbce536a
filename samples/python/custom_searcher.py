"""A searcher written in Python, registered with the driver and compared
with GAMMA on the same budget and seeds: simulated annealing over the map
space's own moves, evaluating 64 neighbours at a time on the search's threads.

    PYTHONPATH=build/python python3 samples/python/custom_searcher.py
"""
import math
import pathlib
import statistics

import numpy as np

import mapwright as mw


class BatchAnnealing:
    """Each step proposes a batch of neighbours of the current mapping and
    moves to the best one when the Metropolis rule accepts it."""

    def run(self, ctx):
        space, rng = ctx.space, ctx.rng
        batch = int(ctx.param("batch", 64))
        current = space.sample_legal(rng)
        cost = ctx.evaluate(current)
        temperature = ctx.param("start", 0.5)  # on log cost
        while not ctx.stopped():
            neighbours = [space.move(current, rng) or current for _ in range(batch)]
            costs = ctx.evaluate_batch(neighbours)
            i = int(np.nanargmin(costs))
            if not math.isfinite(costs[i]):
                continue
            delta = math.log(costs[i]) - math.log(cost)
            if delta < 0 or rng.random() < math.exp(-delta / temperature):
                current, cost = neighbours[i], costs[i]
            temperature = max(1e-3, temperature * 0.995)
        ctx.set_stat("final_temperature", temperature)


SAMPLES = pathlib.Path(__file__).resolve().parents[1]
arch = mw.load_architecture(SAMPLES / "architectures/eyeriss_like.json")
layer = mw.load_network(SAMPLES / "workloads/resnet_conv3x3.json").problem()
space = mw.MapSpace(layer, arch, SAMPLES / "constraints/eyeriss_row_stationary.json")
mw.register_searcher("batch-annealing", BatchAnnealing)

budget, seeds = 20_000, range(1, 6)
print(f"{layer} on {arch}, Eyeriss constraints, {budget} evaluations, seeds {list(seeds)}")
for name in ["batch-annealing", "gamma"]:
    runs = [mw.search(space, name, budget=budget, seed=s, threads=2) for s in seeds]
    edp = [r.best_cost for r in runs]
    print(f"{name:16} median EDP {statistics.median(edp):.4e} J*cycle "
          f"(min {min(edp):.4e}, max {max(edp):.4e}), "
          f"{statistics.median(r.evaluations / r.seconds for r in runs):,.0f} evaluations/s")
