#!/usr/bin/env python3
"""The Timeloop/Accelergy exercises as test data (tests/data/timeloop-exercises/).

    tests/parity/exercises.py copy
        Copies what the tests read from ../shared/reference/timeloop-exercises
        (the top file, compound components, the designs, their reference
        outputs, every layer shape) and writes, from Timeloop's own outputs and
        an independent reading here (Jinja2 + PyYAML, not mapwright's reader):
          - expected.json beside each dense design's reference stats;
          - layer_shapes.json: each layer file's dimensions, coefficients and
            data-space sizes (distinct coordinates), as Timeloop reads the
            rendered, merged problem.

    tests/parity/exercises.py oracle --timeloop ../shared/peer/timeloop-0fc43fb \\
        --cli build/app/mapwright-cli [--pairs 220] [--seed 1]
        Samples (design, layer shape) pairs over every layer family, imports
        each through the top file with mapwright-cli, searches it briefly, and
        runs the best mapping through timeloop-model with Timeloop's own
        inputs: the design's processed architecture (its front end's dump),
        the problem rendered and merged here, the reference ERT. Timeloop's
        figures and the mapping go to oracle.json; test_exercises checks the
        model against them without Timeloop.
"""
import argparse
import glob
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

import jinja2
import jinja2.sandbox
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SOURCE = os.path.join(ROOT, "..", "shared", "reference", "timeloop-exercises")
DATA = os.path.join(ROOT, "tests", "data", "timeloop-exercises")
DESIGNS = ["eyeriss_like", "simba_like", "simple_output_stationary", "simple_weight_stationary"]
SPARSE = ["sparse_tensor_core_like"]
# A dense design with a mapping.yaml, which the top file turns into constraints
# that join the nodes' own (test_exercises: mappingFileJoinsTheNodesConstraints).
MAPPED = "sparseloop/01.2.1-DUDU-dot-product"
REF = "ref_outputs/default_problem"
REF_FILES = ["parsed-processed-input.yaml", "timeloop-mapper.ERT.yaml",
             "timeloop-mapper.ART.yaml", "timeloop-mapper.map.yaml", "timeloop-mapper.stats.txt"]

sys.path.insert(0, HERE)
from regenerate import parse_stats  # noqa: E402


def deep_merge(own, base):
    """The front end's <<<: base's keys where own has none; maps merge and
    lists join (own first) where both have a key; own's value wins otherwise."""
    if isinstance(own, dict) and isinstance(base, dict):
        out = dict(own)
        for k, v in base.items():
            out[k] = deep_merge(own[k], v) if k in own else v
        return out
    if isinstance(own, list) and isinstance(base, list):
        return own + base
    return own


def resolve_merges(node):
    if isinstance(node, list):
        return [resolve_merges(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: resolve_merges(v) for k, v in node.items() if k != "<<<"}
    if "<<<" in node:
        base = node["<<<"]
        if isinstance(base, list):
            merged = {}
            for b in base:
                merged = deep_merge(merged, resolve_merges(b))
            base = merged
        out = deep_merge(out, resolve_merges(base))
    return out


def render(path):
    """A layer file as the front end reads it: rendered (include_text only),
    parsed, merged."""
    folder = os.path.dirname(path)

    def include_text(p):
        with open(os.path.join(folder, p)) as f:
            return f.read()

    env = jinja2.sandbox.SandboxedEnvironment(undefined=jinja2.StrictUndefined)
    with open(path) as f:
        text = env.from_string(f.read()).render(include_text=include_text)
    return resolve_merges(yaml.safe_load(text))


def problem_figures(problem):
    """Dimensions, coefficients and data-space sizes as Timeloop reads them
    (case-sensitive instance keys; unknown ones ignored)."""
    shape, inst = problem["shape"], problem["instance"]
    dims = {d: int(inst.get(d, 1)) for d in shape["dimensions"]}
    coefs = {}
    for c in shape.get("coefficients", []):
        coefs[c["name"]] = int(inst.get(c["name"], c.get("default", 1)))
    sizes = {}
    for ds in shape["data_spaces"]:
        # The distinct coordinates each rank takes (a stride above a kernel's
        # extent leaves gaps), multiplied over the ranks.
        size = 1
        for rank in ds["projection"]:
            terms = [rank] if isinstance(rank, str) else rank
            values = {0}
            for term in terms:
                term = [term] if isinstance(term, str) else term
                coef = 1
                for name in term[1:]:
                    coef *= coefs[name]
                values = {v + coef * i for v in values for i in range(dims[term[0]])}
            size *= len(values)
        sizes[ds["name"]] = size
    return {"dims": dims, "coefficients": coefs, "sizes": sizes,
            "densities": bool(inst.get("densities"))}


def copy_tree():
    src = os.path.join(SOURCE, "workspace", "example_designs")
    dst_designs = os.path.join(DATA, "example_designs")
    shutil.rmtree(DATA, ignore_errors=True)
    os.makedirs(dst_designs)
    shutil.copy(os.path.join(SOURCE, "LICENSE"), DATA)
    designs = os.path.join(src, "example_designs")
    shutil.copy(os.path.join(designs, "top.yaml.jinja2"), dst_designs)
    for folder in ["_components", "_include"]:
        shutil.copytree(os.path.join(designs, folder), os.path.join(dst_designs, folder))
    for d in DESIGNS + SPARSE:
        out = os.path.join(dst_designs, d)
        os.makedirs(os.path.join(out, REF))
        for f in ["arch.yaml", "problem.yaml"]:
            if os.path.exists(os.path.join(designs, d, f)):
                shutil.copy(os.path.join(designs, d, f), out)
        if d in SPARSE:
            continue
        for f in REF_FILES:
            shutil.copy(os.path.join(designs, d, REF, f), os.path.join(out, REF))
        with open(os.path.join(designs, d, REF, "timeloop-mapper.stats.txt")) as f:
            figures = parse_stats(f.read())
        with open(os.path.join(out, REF, "expected.json"), "w") as f:
            json.dump(figures, f, indent=1, sort_keys=True)
    out = os.path.join(dst_designs, MAPPED)
    os.makedirs(os.path.join(out, REF))
    for f in ["arch.yaml", "problem.yaml", "mapping.yaml"]:
        shutil.copy(os.path.join(designs, MAPPED, f), out)
    shutil.copy(os.path.join(designs, MAPPED, REF, "parsed-processed-input.yaml"),
                os.path.join(out, REF))
    shutil.copytree(os.path.join(src, "layer_shapes"), os.path.join(DATA, "layer_shapes"))
    layers = {}
    root = os.path.join(DATA, "layer_shapes")
    for path in sorted(glob.glob(os.path.join(root, "**", "*.yaml"), recursive=True)):
        rel = os.path.relpath(path, root)
        if rel == "problem_base.yaml":
            continue
        layers[rel] = problem_figures(render(path)["problem"])
    with open(os.path.join(DATA, "layer_shapes.json"), "w") as f:
        json.dump({"layers": layers}, f, indent=0, sort_keys=True)
    print("copied %d designs and %d layer shapes into %s" % (len(DESIGNS + SPARSE), len(layers),
                                                             DATA))


def sample_pairs(count, seed):
    """Round-robin over layer families (a family: the layer_shapes folder),
    then over designs, so every family and design is covered evenly."""
    rng = random.Random(seed)
    root = os.path.join(DATA, "layer_shapes")
    families = {}
    for path in sorted(glob.glob(os.path.join(root, "**", "*.yaml"), recursive=True)):
        rel = os.path.relpath(path, root)
        if rel != "problem_base.yaml":
            families.setdefault(rel.split(os.sep)[0], []).append(rel)
    for files in families.values():
        rng.shuffle(files)
    pairs, i = [], 0
    names = sorted(families)
    while len(pairs) < count:
        family = names[i % len(names)]
        files = families[family]
        layer = files[(i // len(names)) % len(files)]
        pairs.append((DESIGNS[i % len(DESIGNS)], layer))
        i += 1
    return pairs


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def oracle(args):
    timeloop = os.path.join(os.path.abspath(args.timeloop), "timeloop-model")
    designs = os.path.join(DATA, "example_designs")
    work = tempfile.mkdtemp(prefix="mapwright-exercises-")
    cases, skipped = [], []
    for n, (design, layer) in enumerate(sample_pairs(args.pairs, args.seed)):
        case = os.path.join(work, "%03d" % n)
        ref = os.path.join(designs, design, REF)
        imp = run([args.cli, "import-timeloop", os.path.join(designs, "top.yaml.jinja2"),
                   "--set", "architecture=" + design,
                   "--set", "problem=../layer_shapes/" + layer,
                   os.path.join(ref, "timeloop-mapper.ERT.yaml"),
                   os.path.join(ref, "timeloop-mapper.ART.yaml"), "--out", case])
        if imp.returncode != 0:
            skipped.append((design, layer, "import: " + imp.stderr.strip()))
            continue
        search = [args.cli, "search", "--arch", os.path.join(case, "arch.json"),
                  "--workload", os.path.join(case, "workload.json"),
                  "--searcher", args.searcher, "--budget", str(args.budget),
                  "--seed", str(args.seed + n), "--out", os.path.join(case, "search")]
        if os.path.exists(os.path.join(case, "constraints.json")):
            search += ["--constraints", os.path.join(case, "constraints.json")]
        s = run(search)
        best = os.path.join(case, "search", "best_mapping.json")
        if s.returncode != 0 or not os.path.exists(best):
            skipped.append((design, layer, "search: " + (s.stderr or s.stdout).strip()[-300:]))
            continue
        tl = os.path.join(case, "timeloop")
        e = run([args.cli, "export-timeloop", "--arch", os.path.join(case, "arch.json"),
                 "--workload", os.path.join(case, "workload.json"), "--mapping", best,
                 "--out", tl])
        if e.returncode != 0:
            skipped.append((design, layer, "export: " + e.stderr.strip()))
            continue
        # Timeloop's own inputs: the front end's architecture for the design,
        # the problem as rendered and merged here, the reference ERT; only
        # the mapping is ours.
        with open(os.path.join(ref, "parsed-processed-input.yaml")) as f:
            dump = yaml.safe_load(f)
        problem = render(os.path.join(DATA, "layer_shapes", layer))["problem"]
        problem["instance"].pop("densities", None)
        with open(os.path.join(tl, "oracle_arch.yaml"), "w") as f:
            yaml.safe_dump({"architecture": dump["architecture"]}, f)
        with open(os.path.join(tl, "oracle_problem.yaml"), "w") as f:
            yaml.safe_dump({"problem": problem}, f)
        shutil.copy(os.path.join(ref, "timeloop-mapper.ERT.yaml"), os.path.join(tl, "ert.yaml"))
        env = {k: v for k, v in os.environ.items() if not k.startswith("TIMELOOP_")}
        r = run([timeloop, "oracle_arch.yaml", "oracle_problem.yaml", "mapping.yaml", "ert.yaml"],
                cwd=tl, env=env, timeout=120)
        stats = os.path.join(tl, "timeloop-model.stats.txt")
        if r.returncode != 0 or not os.path.exists(stats):
            skipped.append((design, layer, "timeloop: " + (r.stderr or r.stdout).strip()[-300:]))
            continue
        with open(stats) as f:
            figures = parse_stats(f.read())
        with open(best) as f:
            mapping = json.load(f)
        cases.append({"design": design, "layer": layer, "mapping": mapping,
                      "timeloop": figures})
        print("%3d %-26s %-40s cycles %d" % (n, design, layer, figures["cycles"]), flush=True)
    with open(os.path.join(DATA, "oracle.json"), "w") as f:
        json.dump({"searcher": args.searcher, "budget": args.budget, "seed": args.seed,
                   "cases": cases}, f, indent=0, sort_keys=True)
    for s in skipped:
        print("skipped:", *s)
    print("%d cases in oracle.json, %d skipped" % (len(cases), len(skipped)))


def fuzz_seeds():
    """Seeds for fuzz_timeloop_nodes (the designs' node lists with a problem
    and the top file's variables; layer shapes with their <<< merges) and
    fuzz_template (the top file rendered by the helper, with the files it
    includes), as tests/fuzz/seeds/{timeloop_nodes,template}/."""
    designs = os.path.join(DATA, "example_designs")
    nodes = os.path.join(ROOT, "tests", "fuzz", "seeds", "timeloop_nodes")
    template = os.path.join(ROOT, "tests", "fuzz", "seeds", "template")
    for d in (nodes, template):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    variables = "variables: {version: 0.4, technology: \"SET ME\", global_cycle_seconds: 1e-9}\n"
    with open(os.path.join(designs, "_include", "default_problem.yaml")) as f:
        problem = f.read()
    for d in DESIGNS + SPARSE:
        with open(os.path.join(designs, d, "arch.yaml")) as f:
            arch = f.read()
        with open(os.path.join(nodes, d + ".yaml"), "w") as f:
            f.write(arch + "\n#FILE\n" + problem + "\n#FILE\n" + variables)
    env = jinja2.sandbox.SandboxedEnvironment(undefined=jinja2.StrictUndefined)
    for layer in ["alexnet/0.yaml", "resnet18/01.yaml", "gpt2/000.yaml", "mobilenet_v3/05.yaml"]:
        path = os.path.join(DATA, "layer_shapes", layer)
        folder = os.path.dirname(path)
        with open(path) as f:
            text = env.from_string(f.read()).render(
                include_text=lambda p: open(os.path.join(folder, p)).read())
        with open(os.path.join(designs, "simba_like", "arch.yaml")) as f:
            arch = f.read()
        with open(os.path.join(nodes, "layer-" + layer.replace("/", "-")), "w") as f:
            f.write(text + "\n#FILE\n" + arch)
    helper = os.path.join(ROOT, "app", "mapwright_jinja.py")
    jobs = [(d, None) for d in DESIGNS] + [("eyeriss_like", "../layer_shapes/resnet18/01.yaml")]
    request = {"jobs": [{"file": os.path.join(designs, "top.yaml.jinja2"),
                         "data": dict({"architecture": d}, **({"problem": p} if p else {}))}
                        for d, p in jobs]}
    reply = json.loads(subprocess.run([sys.executable, helper], input=json.dumps(request),
                                      capture_output=True, text=True, check=True).stdout)
    for (d, p), job in zip(jobs, reply["jobs"]):
        short = {path: os.path.relpath(path, DATA) for path in job["files"]}

        def shorten(text):
            for path, rel in short.items():
                text = text.replace(path, rel)
            return text
        parts = [shorten(job["files"][job["top"]])]
        for path, text in job["files"].items():
            if path != job["top"] and path.endswith(".yaml"):
                parts.append("#FILE " + short[path] + "\n" + shorten(text))
        name = d + ("-" + os.path.basename(p) if p else "") + ".yaml"
        with open(os.path.join(template, name), "w") as f:
            f.write("\n".join(parts))
    print("wrote fuzz seeds into", nodes, "and", template)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("copy")
    sub.add_parser("fuzz-seeds")
    o = sub.add_parser("oracle")
    o.add_argument("--timeloop", required=True)
    o.add_argument("--cli", default=os.path.join(ROOT, "build", "app", "mapwright-cli"))
    o.add_argument("--pairs", type=int, default=220)
    o.add_argument("--seed", type=int, default=1)
    o.add_argument("--searcher", default="random-pruned")
    o.add_argument("--budget", type=int, default=3000)
    args = ap.parse_args()
    if args.command == "copy":
        copy_tree()
    elif args.command == "fuzz-seeds":
        fuzz_seeds()
    else:
        oracle(args)


if __name__ == "__main__":
    main()
