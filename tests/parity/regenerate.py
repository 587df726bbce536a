#!/usr/bin/env python3
"""Regenerates the Timeloop parity corpus in tests/data/parity/.

For every suite in suites.json (an architecture, a layer and how many cases
of each kind), `mapwright-cli parity-cases` writes the mappings as Timeloop
input; each is run through timeloop-model, and Timeloop's verdict (valid, or
the first error it prints) and figures (cycles, energy, per level and tensor
the scalar reads, fills, updates, utilized capacity and instances, energy)
are kept with the mapping in tests/data/parity/SUITE.json. test_parity then
checks the model against them without Timeloop.

    tests/parity/regenerate.py --timeloop ../shared/peer/timeloop-0fc43fb \
        --cli build/app/mapwright-cli [--suite NAME ...] [--jobs 2]
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def parse_stats(text):
    """Timeloop's timeloop-model.stats.txt: per level its cycles, leakage and
    per-tensor counts and energies; the MAC level; the summary."""
    levels = {}
    mac = {}
    level = None
    tensor = None
    in_mac = False
    summary = {}
    lines = text.splitlines()
    section = "levels"
    for line in lines:
        if line.startswith("Networks"):
            section = "networks"
        if line.startswith("Summary Stats"):
            section = "summary"
        if section == "levels":
            m = re.match(r"^=== (.+) ===$", line)
            if m:
                name = m.group(1)
                tensor = None
                if not levels and not mac:  # level 0 is the arithmetic level
                    in_mac = True
                    mac["name"] = name
                    level = None
                else:
                    in_mac = False
                    level = levels.setdefault(name, {"tensors": {}})
                continue
            m = re.match(r"^\s+([A-Za-z0-9_ ()/.-]+?)\s+:\s+(.*)$", line)
            t = re.match(r"^    ([A-Za-z0-9_]+):$", line)
            if t and level is not None:
                tensor = level["tensors"].setdefault(t.group(1), {})
                continue
            if not m:
                continue
            key, value = m.group(1).strip(), m.group(2).strip()
            num = re.match(r"^(-?[0-9.]+(?:e[+-]?[0-9]+)?)", value)
            if in_mac:
                if key in ("Utilized instances", "Computes (total)", "Cycles") and num:
                    mac[key] = int(num.group(1))
                elif key == "Energy (total)" and num:
                    mac[key] = float(num.group(1))
                continue
            if level is None:
                continue
            if tensor is None:
                if key == "Cycles" and num:
                    level["cycles"] = int(num.group(1))
                elif key == "Leakage energy (total)" and num:
                    level["leak_pJ"] = float(num.group(1))
                continue
            if key in ("Utilized capacity", "Utilized instances (max)",
                       "Scalar reads (per-instance)", "Scalar fills (per-instance)",
                       "Scalar updates (per-instance)") and num:
                tensor[key] = int(float(num.group(1)))
            elif key == "Energy (total)" and num:
                tensor[key] = float(num.group(1))
        elif section == "summary":
            m = re.match(r"^(Cycles|Energy|Utilization): ([0-9.]+)", line)
            if m:
                summary[m.group(1)] = float(m.group(2))
            m = re.match(r"^Computes = ([0-9]+)", line)
            if m:
                summary["computes"] = int(m.group(1))
            m = re.match(r"^    (\S+)\s+= ([0-9.]+)$", line)
            if m:
                summary.setdefault("fJ_per_compute", {})[m.group(1)] = float(m.group(2))
    out_levels = {}
    for name, lv in levels.items():
        tensors = {}
        for tname, tv in lv["tensors"].items():
            if "Scalar reads (per-instance)" not in tv:
                continue
            tensors[tname] = [tv["Scalar reads (per-instance)"], tv["Scalar fills (per-instance)"],
                              tv["Scalar updates (per-instance)"], tv["Utilized capacity"],
                              tv["Utilized instances (max)"], tv["Energy (total)"]]
        out_levels[name] = {"cycles": lv.get("cycles", 0), "leak_pJ": lv.get("leak_pJ", 0.0),
                            "tensors": tensors}
    fj = summary.get("fJ_per_compute", {})
    computes = summary.get("computes", mac.get("Computes (total)", 0))
    return {
        "valid": True,
        "cycles": int(summary.get("Cycles", mac.get("Cycles", 0))),
        "computes": computes,
        "energy_pJ": fj.get("Total", 0.0) * computes / 1000.0,
        "mac": {"utilized_instances": mac.get("Utilized instances", 0),
                "cycles": mac.get("Cycles", 0), "energy_pJ": mac.get("Energy (total)", 0.0)},
        "levels": out_levels,
    }


def distinct_layers(workload):
    """The names of a network's layers, each distinct shape once (the layers
    `mapwright-cli bench optimal` takes)."""
    with open(workload) as f:
        net = json.load(f)
    layers, seen = [], []
    for layer in net["layers"]:
        shape = json.dumps({k: v for k, v in layer.items() if k not in ("name", "source")},
                           sort_keys=True)
        if shape not in seen:
            seen.append(shape)
            layers.append(layer["name"])
    return layers


def error_class(message):
    text = message.lower()
    if ("expansion" in text or "fanout" in text or "fan-out" in text or "instances" in text
            or "spatial tiling level" in text):
        return "fanout"
    if "capacity" in text or "size" in text or "exceeds" in text:
        return "capacity"
    return "other"


def run_timeloop(timeloop, case_dir, timeout):
    exe = os.path.join(os.path.abspath(timeloop), "timeloop-model")
    files = ["arch.yaml", "problem.yaml", "mapping.yaml", "ERT.yaml"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIMELOOP_")}
    try:
        proc = subprocess.run([exe] + files, cwd=case_dir, capture_output=True, text=True,
                              timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None
    stats = os.path.join(case_dir, "timeloop-model.stats.txt")
    if proc.returncode == 0 and os.path.exists(stats):
        with open(stats) as f:
            return parse_stats(f.read())
    lines = [l.strip() for l in (proc.stderr + "\n" + proc.stdout).splitlines()]
    errors = [l for l in lines if "ERROR" in l or "couldn't" in l or "error" in l.lower()]
    message = errors[0] if errors else (lines[-1] if lines else "exit %d" % proc.returncode)
    level = None
    m = re.search(r"level ([A-Za-z0-9_]+)", message)
    if m:
        level = m.group(1)
    return {"valid": False, "error": message, "error_class": error_class(message),
            "error_level": level}


def tutorial_case(cli, name, work):
    """Imports a Timeloop tutorial case (tests/data/timeloop-tutorial) as JSON."""
    src = os.path.join(ROOT, "tests", "data", "timeloop-tutorial", name)
    out = os.path.join(work, "tutorial-" + name)
    subprocess.run([cli, "import-timeloop", os.path.join(src, "input.yaml"),
                    os.path.join(src, "ERT.yaml"), "--out", out], check=True,
                   capture_output=True)
    return os.path.join(out, "arch.json"), os.path.join(out, "workload.json")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--timeloop", required=True, help="folder holding timeloop-model")
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "app", "mapwright-cli"))
    ap.add_argument("--suites", default=os.path.join(ROOT, "tests", "parity", "suites.json"))
    ap.add_argument("--suite", action="append", help="only these suites")
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "parity"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--keep", help="keep the Timeloop run folders here")
    args = ap.parse_args()

    with open(args.suites) as f:
        suites = json.load(f)["suites"]
    os.makedirs(args.out, exist_ok=True)
    work = args.keep or tempfile.mkdtemp(prefix="mapwright-parity-")
    total = 0
    for suite in suites:
        if args.suite and suite["name"] not in args.suite:
            continue
        if "tutorial" in suite:
            arch, workload = tutorial_case(args.cli, suite["tutorial"], work)
        else:
            arch = os.path.join(ROOT, suite["arch"])
            workload = os.path.join(ROOT, suite["workload"])
        case_root = os.path.join(work, "cases-" + suite["name"])
        shutil.rmtree(case_root, ignore_errors=True)
        cmd = [args.cli, "parity-cases", "--arch", arch, "--workload", workload,
               "--out", case_root, "--seed", str(suite.get("seed", 1))]
        if suite.get("layer"):
            cmd += ["--layer", suite["layer"]]
        for key in ("random", "raw", "invalid"):
            cmd += ["--" + key, str(suite.get(key, 0))]
        if suite.get("searchers"):
            cmd += ["--searchers", ",".join(suite["searchers"]),
                    "--budget", str(suite.get("budget", 2000))]
            if suite.get("constraints"):
                cmd += ["--constraints", os.path.join(ROOT, suite["constraints"])]
            if "mind-mappings" in suite["searchers"]:
                # Surrogates are trained once per architecture and problem family.
                cmd += ["--model-dir", os.path.join(work, "surrogates")]
        subprocess.run(cmd, check=True, capture_output=True)
        with open(os.path.join(case_root, "cases.json")) as f:
            doc = json.load(f)
        cases = doc["cases"]
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            results = list(pool.map(
                lambda c: run_timeloop(args.timeloop, os.path.join(case_root, c["id"]),
                                       args.timeout), cases))
        kept = []
        for c, r in zip(cases, results):
            if r is None:  # Timeloop did not finish in time: no reference
                continue
            c["timeloop"] = r
            kept.append(c)
        out = {"format": "mapwright.parity-corpus", "suite": suite["name"],
               "generated_by": "tests/parity/regenerate.py", "timeloop": "0fc43fb",
               "architecture": doc["architecture"], "problem": doc["problem"], "cases": kept}
        with open(os.path.join(args.out, suite["name"] + ".json"), "w") as f:
            json.dump(out, f, separators=(",", ":"))
            f.write("\n")
        invalid = sum(1 for c in kept if not c["timeloop"]["valid"])
        total += len(kept)
        print("%-40s %4d cases (%d invalid in Timeloop)" % (suite["name"], len(kept), invalid))
        sys.stdout.flush()
    print("%d cases in all" % total)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
