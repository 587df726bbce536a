#!/usr/bin/env python3
"""Our CoSA against Timeloop's own mapper, both judged by Timeloop.

For each distinct layer of ResNet-50 (samples/networks/resnet50.json, the 24
that `mapwright-cli bench optimal` and `searchers_best.py --layers all` take)
on eyeriss_like under the Eyeriss row-stationary constraints:
 1. `mapwright-cli search --searcher cosa --seconds S --seed 1 --threads 1`;
 2. `mapwright-cli export-timeloop` with CoSA's best mapping, and
    timeloop-model on it: Timeloop's EDP for CoSA's schedule;
 3. timeloop-mapper (random-pruned, --threads threads, metric edp) on the same
    exported arch/problem/constraints/ERT/ART files, with victory condition
    and timeout set out of reach and stopped by SIGINT after --mapper-seconds
    of wall clock (it then writes its best mapping and timeloop-mapper.stats.txt);
 4. a markdown table of both EDPs (J*cycle) and the ratio mapper/CoSA (> 1:
    CoSA's schedule is better), the number of layers CoSA wins, the geometric
    mean ratio; --out writes the figures as JSON.

Both EDPs are Timeloop's: energy_pJ * cycles * 1e-12 J*cycle, energy from the
stats file's fJ/Compute total times the computes (Timeloop's own
"EDP(J*cycle)" line has three significant digits; it is kept as a check).

    tests/parity/cosa_vs_timeloop.py --timeloop ../shared/peer/timeloop-0fc43fb \\
        [--layers all|L1,L2] [--seconds 5] [--mapper-seconds 30] [--threads 2] \\
        [--cli build/app/mapwright-cli] [--out cosa_vs_timeloop.json] [--keep DIR]
"""
import argparse
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import regenerate  # noqa: E402  (run_timeloop, parse_stats)

ARCH = os.path.join(ROOT, "samples", "architectures", "eyeriss_like.json")
WORKLOAD = os.path.join(ROOT, "samples", "networks", "resnet50.json")
CONSTRAINTS = os.path.join(ROOT, "samples", "constraints", "eyeriss_row_stationary.json")

# Out of reach, so only SIGINT ends the search (0 does not disable Timeloop's
# timeout: this build then stops at once with "0 invalid mappings ... found").
MAPPER_YAML = """mapper:
  version: '0.4'
  algorithm: random_pruned
  optimization_metrics: [edp]
  num_threads: %d
  victory_condition: 1000000000
  timeout: 1000000000
  max_permutations_per_if_visit: 16
  live_status: false
"""


def timeloop_env():
    return {k: v for k, v in os.environ.items() if not k.startswith("TIMELOOP_")}


def printed_edp(stats_path):
    """Timeloop's own "EDP(J*cycle): 1.71e+02" summary line (3 significant digits)."""
    with open(stats_path) as f:
        m = re.search(r"^EDP\(J\*cycle\): ([0-9.eE+-]+)", f.read(), re.M)
    return float(m.group(1)) if m else None


def figures(stats, stats_path):
    """EDP in J*cycle from parse_stats (energy_pJ * cycles * 1e-12), with
    Timeloop's printed EDP as a check."""
    edp = stats["energy_pJ"] * stats["cycles"] * 1e-12
    shown = printed_edp(stats_path)
    out = {"edp_J_cycle": edp, "energy_pJ": stats["energy_pJ"], "cycles": stats["cycles"],
           "timeloop_printed_edp": shown}
    if shown is not None and abs(shown - edp) > 0.006 * edp:
        out["warning"] = "printed EDP %.3g differs from energy*cycles %.4g" % (shown, edp)
    return out


def run_cosa(args, layer, d):
    common = ["--arch", ARCH, "--workload", WORKLOAD, "--layer", layer,
              "--constraints", CONSTRAINTS]
    cosa_dir = os.path.join(d, "cosa")
    proc = subprocess.run([args.cli, "search"] + common +
                          ["--searcher", "cosa", "--seconds", str(args.seconds),
                           "--seed", str(args.seed), "--threads", "1", "--out", cosa_dir],
                          capture_output=True, text=True)
    result_path = os.path.join(cosa_dir, "result.json")
    mapping = os.path.join(cosa_dir, "best_mapping.json")
    if proc.returncode != 0 or not os.path.exists(mapping):
        return {"error": "search failed: " + (proc.stderr.strip().splitlines() or ["?"])[-1]}, None
    with open(result_path) as f:
        result = json.load(f)
    cosa = {"mapwright_edp": result.get("edp"), "search_seconds": result.get("seconds"),
            "stop_reason": result.get("stop_reason")}
    exp = os.path.join(d, "export")
    subprocess.run([args.cli, "export-timeloop"] + common +
                   ["--mapping", mapping, "--objective", "edp", "--out", exp],
                   check=True, capture_output=True)
    tl = regenerate.run_timeloop(args.timeloop, exp, 300)
    if tl is None:
        cosa["error"] = "timeloop-model did not finish"
    elif not tl["valid"]:
        cosa["error"] = "Timeloop refuses CoSA's mapping: " + tl["error"]
    else:
        cosa.update(figures(tl, os.path.join(exp, "timeloop-model.stats.txt")))
    return cosa, exp


def run_mapper(args, exp, d):
    mdir = os.path.join(d, "mapper")
    shutil.rmtree(mdir, ignore_errors=True)
    os.makedirs(mdir)
    files = ["arch.yaml", "problem.yaml", "constraints.yaml", "mapper.yaml", "ERT.yaml",
             "ART.yaml"]
    for name in files:
        if name != "mapper.yaml":
            shutil.copy(os.path.join(exp, name), mdir)
    with open(os.path.join(mdir, "mapper.yaml"), "w") as f:
        f.write(MAPPER_YAML % args.threads)
    exe = os.path.join(os.path.abspath(args.timeloop), "timeloop-mapper")
    start = time.monotonic()
    with open(os.path.join(mdir, "stdout.log"), "w") as out, \
            open(os.path.join(mdir, "stderr.log"), "w") as err:
        # The wrapper script execs the binary, so this pid is timeloop-mapper's.
        proc = subprocess.Popen([exe] + files, cwd=mdir, stdout=out, stderr=err,
                                env=timeloop_env(), start_new_session=True)
        stopped = "exited by itself"
        try:
            try:
                proc.wait(timeout=args.mapper_seconds)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGINT)
                stopped = "SIGINT after %g s" % args.mapper_seconds
                try:
                    proc.wait(timeout=args.grace)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                    stopped = "killed: no exit within %g s of SIGINT" % args.grace
        except BaseException:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            raise
    wall = time.monotonic() - start
    mapper = {"wall_seconds": round(wall, 2), "stopped": stopped, "exit": proc.returncode}
    stats_path = os.path.join(mdir, "timeloop-mapper.stats.txt")
    if not os.path.exists(stats_path):
        with open(os.path.join(mdir, "stdout.log")) as f:
            text = f.read()
        mapper["error"] = ("no valid mapping found" if "no valid mappings found" in text
                           else "no timeloop-mapper.stats.txt (exit %d)" % proc.returncode)
        return mapper
    with open(stats_path) as f:
        stats = regenerate.parse_stats(f.read())
    mapper.update(figures(stats, stats_path))
    return mapper


def cell(entry):
    if "edp_J_cycle" in entry:
        return "%.4g" % entry["edp_J_cycle"]
    return "— (%s)" % entry.get("error", "?")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--timeloop", required=True, help="folder holding timeloop-model and "
                    "timeloop-mapper")
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "app", "mapwright-cli"))
    ap.add_argument("--seconds", type=float, default=5.0, help="CoSA's time budget")
    ap.add_argument("--seed", default="1", help="CoSA's seed")
    ap.add_argument("--mapper-seconds", type=float, default=30.0,
                    help="timeloop-mapper's wall clock before SIGINT")
    ap.add_argument("--threads", type=int, default=2, help="timeloop-mapper's num_threads")
    ap.add_argument("--grace", type=float, default=120.0,
                    help="seconds to let timeloop-mapper finish after SIGINT")
    ap.add_argument("--layers", default="all", help="all (the 24 distinct ones) or L1,L2")
    ap.add_argument("--out", help="write the figures to this JSON file")
    ap.add_argument("--keep", help="keep the run folders here")
    args = ap.parse_args()
    args.cli = os.path.abspath(args.cli)

    layers = regenerate.distinct_layers(WORKLOAD) if args.layers == "all" else args.layers.split(",")
    work = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(prefix="mapwright-cvt-")
    rows = []
    header = ("| layer | CoSA (Timeloop EDP, J·cycle) | timeloop-mapper random-pruned %g s "
              "(J·cycle) | ratio mapper/CoSA |" % args.mapper_seconds)
    print(header)
    print("|---|---:|---:|---:|", flush=True)
    for layer in layers:
        d = os.path.join(work, layer)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        cosa, exp = run_cosa(args, layer, d)
        if exp is not None:
            mapper = run_mapper(args, exp, d)
        else:
            mapper = {"error": "not run (no export)"}
        ratio = None
        if "edp_J_cycle" in cosa and "edp_J_cycle" in mapper:
            ratio = mapper["edp_J_cycle"] / cosa["edp_J_cycle"]
        rows.append({"layer": layer, "cosa": cosa, "mapper": mapper, "ratio": ratio})
        print("| %s | %s | %s | %s |" % (layer, cell(cosa), cell(mapper),
                                         "%.3f" % ratio if ratio is not None else "—"),
              flush=True)
        for who, e in (("CoSA", cosa), ("mapper", mapper)):
            if "warning" in e:
                print("  warning (%s, %s): %s" % (layer, who, e["warning"]), file=sys.stderr)
    ratios = [r["ratio"] for r in rows if r["ratio"] is not None]
    better = sum(1 for x in ratios if x > 1.0)
    geomean = math.exp(sum(math.log(x) for x in ratios) / len(ratios)) if ratios else None
    print()
    print("CoSA better on %d of %d layers compared (%d layers in all)"
          % (better, len(ratios), len(rows)))
    print("geomean ratio mapper/CoSA: %s" % ("%.3f" % geomean if geomean else "—"))
    if args.out:
        doc = {"format": "mapwright.cosa-vs-timeloop-mapper",
               "generated_by": "tests/parity/cosa_vs_timeloop.py", "timeloop": "0fc43fb",
               "architecture": os.path.relpath(ARCH, ROOT),
               "workload": os.path.relpath(WORKLOAD, ROOT),
               "constraints": os.path.relpath(CONSTRAINTS, ROOT),
               "edp_unit": "J*cycle (energy_pJ * cycles * 1e-12)",
               "cosa": {"seconds": args.seconds, "seed": args.seed, "threads": 1},
               "mapper": {"algorithm": "random_pruned", "metric": "edp",
                          "threads": args.threads, "seconds": args.mapper_seconds},
               "layers": rows, "cosa_better": better, "compared": len(ratios),
               "geomean_ratio_mapper_over_cosa": geomean}
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
