"""Random search in 30 lines: legal samples, evaluated in batches on every
core, the best kept; then GAMMA on the same budget for comparison.

    PYTHONPATH=build/python python3 samples/python/random_search.py
"""
import pathlib

import numpy as np

import mapwright as mw

SAMPLES = pathlib.Path(__file__).resolve().parents[1]
arch = mw.load_architecture(SAMPLES / "architectures/eyeriss_like.json")
layer = mw.load_network(SAMPLES / "workloads/resnet_conv3x3.json").problem()
space = mw.MapSpace(layer, arch)

budget, batch, best, best_row = 20_000, 2_000, np.inf, None
for seed in range(budget // batch):
    rows = space.sample_encoded(batch, seed=seed, legal=False)  # plain samples, as Timeloop's random mapper
    edp = space.evaluate_batch(rows)["edp"]
    i = int(np.nanargmin(edp)) if not np.isnan(edp).all() else None
    if i is not None and edp[i] < best:
        best, best_row = edp[i], rows[i]

print(f"random search: best EDP {best:.4e} J*cycle after {budget} samples")
print(space.decode(best_row).loop_nest())
gamma = mw.search(space, "gamma", budget=budget, seed=1)
print(f"gamma:         best EDP {gamma.best_cost:.4e} J*cycle after {gamma.evaluations} evaluations")
print(f"lower bound:   {space.lower_bound()['edp']:.4e} J*cycle")
