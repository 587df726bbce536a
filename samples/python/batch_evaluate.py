"""A million encoded mappings evaluated from NumPy, against the model's own
rate (bench_model, measured in this process), on one thread and on all; and
the cost of one evaluate() call from Python.

    PYTHONPATH=build/python python3 samples/python/batch_evaluate.py [N]
"""
import os
import pathlib
import statistics
import sys
import time

import mapwright as mw

SAMPLES = pathlib.Path(__file__).resolve().parents[1]
n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
arch = mw.load_architecture(SAMPLES / "architectures/eyeriss_like.json")
layer = mw.load_network(SAMPLES / "workloads/resnet_conv3x3.json").problem()
space = mw.MapSpace(layer, arch)

t0 = time.perf_counter()
rows = space.sample_encoded(n, seed=1, legal=True)  # distinct legal mappings, as bench model uses
print(f"{n} legal mappings sampled and encoded in {time.perf_counter() - t0:.1f} s "
      f"({space.encoding_size} integers each)")


def rate(threads):
    t = time.perf_counter()
    out = space.evaluate_batch(rows, threads=threads)
    seconds = time.perf_counter() - t
    assert out["valid"].all()
    return n / seconds


def single_call_us(count=1000):
    """One evaluate() call from Python, on distinct mappings, in microseconds."""
    mappings = [space.decode(r) for r in rows[:count]]
    t = time.perf_counter()
    for m in mappings:
        space.evaluate(m)
    return (time.perf_counter() - t) / count * 1e6


cores = os.cpu_count() or 1
# Alternated with the model's own benchmark, since this kind of machine drifts.
model, one, every = [], [], []
single = statistics.median(single_call_us() for _ in range(5))
for _ in range(3):
    model.append(mw.bench_model(arch, runs=3)["evaluations_per_second"])
    one.append(rate(1))
    every.append(rate(cores))
m, o, a = statistics.median(model), statistics.median(one), statistics.median(every)
print(f"bench model (one thread):     {m / 1e6:.3f} M evaluations/s")
print(f"evaluate_batch, 1 thread:     {o / 1e6:.3f} M/s = {100 * o / m:.0f} % of the model's rate")
print(f"evaluate_batch, {cores} threads:    {a / 1e6:.3f} M/s = {a / o:.2f} x one thread")
print(f"evaluate(), one call:         {single:.2f} us")
