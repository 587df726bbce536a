"""Evaluate a Timeloop input: its files merged as timeloop-model merges them,
its mapping through Mapwright's model, printed as Timeloop prints the nest.

    PYTHONPATH=build/python python3 samples/python/evaluate_timeloop.py [FILE.yaml ...]
"""
import pathlib
import sys

import mapwright as mw

HERE = pathlib.Path(__file__).resolve().parent
files = sys.argv[1:] or sorted((HERE.parent / "timeloop/eyeriss_like_conv").glob("*.yaml"))
case = mw.load_timeloop(files)
space, mapping = case["space"], case["mapping"]
print(case["problem"], "on", case["architecture"])
for note in case["notes"]:
    print("note:", note)
print(mapping.loop_nest())
ev = space.evaluate(mapping, detail=True)
print(f"cycles {ev['cycles']}, energy {ev['energy_pJ'] / 1e6:.3f} uJ, "
      f"utilization {100 * ev['utilization']:.1f} %, EDP {ev['edp']:.4e} J*cycle")
for level in ev["levels"]:
    print(f"  {level['name']:<26} {level['energy_pJ'] / 1e6:10.3f} uJ")
