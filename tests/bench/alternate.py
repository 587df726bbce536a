#!/usr/bin/env python3
"""Two builds' speed as a ratio, the way issue 34's targets are measured: runs
of the two binaries alternated in one session, in two sets (the base build
first in every pair of the first set, the new build first in the second),
and per set the median of the pairs' ratios (new / base). This project's VM
drifts by a few per cent from one set of pairs to the next, so a change is
kept only where both sets agree.

    tests/bench/alternate.py --base BASE_CLI --new NEW_CLI [--pairs 8]
        [--what model|bench-search:S|search:S] [--seconds S] [--budget 300000]
        [--layer layer2.1.conv2]

  model           `bench model --runs 1 --seconds S` (1): evaluations/s, distinct mappings
  bench-search:S  `bench search --searchers S --seconds S` (2): evaluations/s on one
                  thread (the target's own benchmark; a run also times two threads)
  search:S        `search --searcher S` on a layer of ResNet-50 (--layer,
                  layer2.1.conv2 unless told) on the Eyeriss-like sample
                  (seed 1, EDP, --budget evaluations):
                  evaluations/s from result.json, and the best found, which
                  must be the same for both builds (the issue's condition)

Prints each set's median pair ratio, the lowest and highest pair ratios
(an A/A run, one build against itself, shows what the machine's noise is at
the time), and both builds' median rates; exits 1 when a search's bests
differ between the builds.
"""
import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


class RunFailed(Exception):
    pass


def run(command):
    """command's standard output; RunFailed naming it and its last error line if it fails."""
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ["no message"])[-1]
        words = [command[0]] + list(itertools.takewhile(lambda w: not w.startswith("--"),
                                                        command[1:]))
        raise RunFailed("%s failed (exit %d): %s" % (" ".join(words), done.returncode, said))
    return done.stdout


def run_once(cli, what, args):
    """One run of `cli`: (evaluations per second, best found or None)."""
    if what == "model":
        out = run([cli, "bench", "model", "--runs", "1", "--seconds", str(args.seconds), "--json"])
        return json.loads(out)["evaluations_per_second"], None
    kind, _, searcher = what.partition(":")
    if kind == "bench-search":
        out = run([cli, "bench", "search", "--searchers", searcher, "--seconds",
                   str(args.seconds), "--json"])
        return json.loads(out)[0]["evaluations_per_second_1_thread"], None
    with tempfile.TemporaryDirectory() as out:
        run([cli, "search",
             "--arch", os.path.join(ROOT, "samples/architectures/eyeriss_like.json"),
             "--workload", os.path.join(ROOT, "samples/networks/resnet50.json"),
             "--layer", args.layer, "--searcher", searcher, "--budget", str(args.budget),
             "--seed", "1", "--objective", "edp", "--out", out])
        with open(os.path.join(out, "result.json")) as f:
            r = json.load(f)
        return r["evaluations"] / r["seconds"], r["best_objective"]


def run_set(args, first, second):
    """`pairs` pairs, `first` run first in each: per-binary rates and bests."""
    rates = {first: [], second: []}
    bests = set()
    for _ in range(args.pairs):
        for cli in (first, second):
            rate, best = run_once(cli, args.what, args)
            rates[cli].append(rate)
            if best is not None:
                bests.add((cli, best))
    return rates, bests


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="the build before (its mapwright-cli)")
    ap.add_argument("--new", required=True, help="the build measured against it")
    ap.add_argument("--what", default="model")
    ap.add_argument("--pairs", type=int, default=8, help="pairs per set (two sets)")
    ap.add_argument("--seconds", type=float,
                    help="per bench run (model: 1, bench-search: 2, its own default)")
    ap.add_argument("--budget", type=int, default=300000, help="evaluations per search")
    ap.add_argument("--layer", default="layer2.1.conv2")
    args = ap.parse_args()
    if args.what != "model" and args.what.partition(":")[0] not in ("bench-search", "search"):
        ap.error("--what: expected model, bench-search:SEARCHER or search:SEARCHER, not "
                 + args.what)
    if args.what.endswith(":"):
        ap.error("--what: name a searcher after the colon")
    if args.seconds is None:
        args.seconds = 1.0 if args.what == "model" else 2.0
    if not args.seconds > 0 or args.pairs < 1 or args.budget < 1:
        ap.error("--seconds, --pairs and --budget: expected positive numbers")
    base, new = os.path.abspath(args.base), os.path.abspath(args.new)
    if base == new:
        # (An A/A run, one binary twice: the second spelled through "." so
        # that the two runs of a pair are told apart.)
        new = os.path.join(os.path.dirname(new), ".", os.path.basename(new))
    for cli in (base, new):
        if not os.access(cli, os.X_OK):
            ap.error("%s: not an executable" % cli)
    all_bests = set()
    for label, first, second in (("base first", base, new), ("new first", new, base)):
        try:
            rates, bests = run_set(args, first, second)
        except RunFailed as e:
            print("alternate.py: %s" % e, file=sys.stderr)
            return 1
        all_bests |= bests
        ratios = [n / b for b, n in zip(rates[base], rates[new])]
        # (The pairs' spread beside the median: a set whose ratios scatter
        # met a change of the machine's speed and is worth measuring again.)
        print("%-10s  %2d pairs  median pair ratio %.3f  (pairs %.3f to %.3f; base %.0f/s, "
              "new %.0f/s)" % (label, args.pairs, statistics.median(ratios), min(ratios),
                                max(ratios), statistics.median(rates[base]),
                                statistics.median(rates[new])))
    if all_bests:
        found = {cli: {b for c, b in all_bests if c == cli} for cli in (base, new)}
        print("bests: base %s, new %s" % (sorted(found[base]), sorted(found[new])))
        if found[base] != found[new]:
            print("alternate.py: the builds found different bests for the same seed and budget",
                  file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
