#!/usr/bin/env python3
"""The searchers' best mappings, run through Timeloop: each searcher on every
sample architecture (gamma_cloud aside) and ResNet-50 layers conv1,
layer2.1.conv2, layer3.0.downsample.0 and layer4.0.conv2 (the converter's
input.2/.46/.77/.128),
its best mapping exported with export-timeloop and evaluated by timeloop-model;
prints whether cycles, energy (0.5 %) and every level's per-tensor reads,
fills and updates agree.

    tests/parity/searchers_best.py --timeloop ../shared/peer/timeloop-0fc43fb \\
        [--searchers gamma,annealing] [--budget 3000] [--cli build/app/mapwright-cli]
        [--archs eyeriss_like,...] [--layers all|L1,L2] [--constraints C.json]
        [--seconds S]

--layers all takes every distinct layer of ResNet-50; --constraints searches
under a constraints file (for the architectures it fits); --seconds gives a
time budget instead of --budget (the optimal searcher proves within one).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import regenerate  # noqa: E402  (run_timeloop, parse_stats)

ARCHS = ["accel_a", "accel_b", "eyeriss_like", "gamma_edge", "simba_like", "tensor_core_like"]
LAYERS = ["conv1", "layer2.1.conv2", "layer3.0.downsample.0", "layer4.0.conv2"]


def first_difference(ours, tl):
    if tl is None:
        return "Timeloop did not finish"
    if not tl["valid"]:
        return "Timeloop refuses it: " + tl["error"]
    if ours["cycles"] != tl["cycles"]:
        return "cycles %d vs %d" % (ours["cycles"], tl["cycles"])
    if abs(ours["energy_pJ"] - tl["energy_pJ"]) > 0.005 * tl["energy_pJ"]:
        return "energy %.1f vs %.1f pJ" % (ours["energy_pJ"], tl["energy_pJ"])
    for level in ours["levels"]:
        for t, tv in level["tensors"].items():
            theirs = tl["levels"][level["name"]]["tensors"][t][:3]
            if [tv["reads"], tv["fills"], tv["updates"]] != theirs:
                return "%s/%s %s vs %s" % (level["name"], t,
                                           [tv["reads"], tv["fills"], tv["updates"]], theirs)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--timeloop", required=True, help="folder holding timeloop-model")
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "app", "mapwright-cli"))
    ap.add_argument("--searchers", default="gamma,annealing")
    ap.add_argument("--budget", default="3000")
    ap.add_argument("--seed", default="1")
    ap.add_argument("--archs", default=",".join(ARCHS))
    ap.add_argument("--layers", default=",".join(LAYERS))
    ap.add_argument("--constraints")
    ap.add_argument("--seconds")
    args = ap.parse_args()
    agree = total = 0
    work = tempfile.mkdtemp(prefix="mapwright-best-")
    workload = os.path.join(ROOT, "samples", "networks", "resnet50.json")
    layers = args.layers.split(",")
    if args.layers == "all":  # each distinct shape once
        layers = regenerate.distinct_layers(workload)
    budget = ["--seconds", args.seconds] if args.seconds else ["--budget", args.budget]
    constraints = ["--constraints", args.constraints] if args.constraints else []
    for arch_name in args.archs.split(","):
        arch = os.path.join(ROOT, "samples", "architectures", arch_name + ".json")
        for layer in layers:
            for searcher in args.searchers.split(","):
                d = os.path.join(work, "%s-%s-%s" % (arch_name, layer, searcher))
                common = ["--arch", arch, "--workload", workload, "--layer", layer]
                subprocess.run([args.cli, "search"] + common + budget + constraints +
                               ["--searcher", searcher, "--seed", args.seed, "--out", d],
                               check=True, capture_output=True)
                mapping = os.path.join(d, "best_mapping.json")
                ours = json.loads(subprocess.run(
                    [args.cli, "evaluate"] + common + ["--mapping", mapping, "--json"],
                    capture_output=True, text=True).stdout)
                subprocess.run([args.cli, "export-timeloop"] + common +
                               ["--mapping", mapping, "--out", os.path.join(d, "timeloop")],
                               check=True, capture_output=True)
                tl = regenerate.run_timeloop(args.timeloop, os.path.join(d, "timeloop"), 120)
                diff = first_difference(ours, tl)
                total += 1
                agree += diff is None
                result = json.load(open(os.path.join(d, "result.json")))
                print("%-17s %-19s %-14s %-12s %s" % (arch_name, layer, searcher,
                                                      result.get("stop_reason", "")[:12],
                                                      diff or "agree"), flush=True)
    print("%d of %d agree" % (agree, total))


if __name__ == "__main__":
    main()
