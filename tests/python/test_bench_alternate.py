"""tests/bench/alternate.py, the two-build speed ratio issue 34's figures come
from: it reads what the command line writes (an A/A run of one build, short),
it fails when two builds find different bests (stand-ins for the builds), it
takes `bench search`'s one-thread rate (stand-ins again), and it refuses what
it cannot measure with one line."""
import subprocess
import sys


def alternate(source, *args):
    return subprocess.run([sys.executable, source / "tests/bench/alternate.py", *args],
                          capture_output=True, text=True, timeout=600)


def test_model_ratio_of_one_build_with_itself(source, cli):
    out = alternate(source, "--base", cli, "--new", cli, "--pairs", "1", "--seconds", "0.05")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert [line.split()[0] + " " + line.split()[1] for line in lines] == \
        ["base first", "new first"]
    for line in lines:
        ratio = float(line.split("median pair ratio")[1].split()[0])
        assert 0.2 < ratio < 5.0, line


def test_search_reports_the_bests_of_both_builds(source, cli):
    out = alternate(source, "--base", cli, "--new", cli, "--what", "search:annealing",
                    "--pairs", "1", "--budget", "2000")
    assert out.returncode == 0, out.stderr
    bests = [line for line in out.stdout.splitlines() if line.startswith("bests:")]
    assert len(bests) == 1
    base, new = bests[0][len("bests: base "):].split(", new ")
    assert base == new and base.startswith("[") and float(base.strip("[]")) > 0


def test_what_it_cannot_measure_is_refused_in_one_line(source, cli):
    for what, expected in (("gemm", "--what: expected model, bench-search:SEARCHER"),
                           ("search:", "--what: name a searcher after the colon")):
        out = alternate(source, "--base", cli, "--new", cli, "--what", what)
        assert out.returncode == 2
        assert expected in out.stderr.splitlines()[-1]
    out = alternate(source, "--base", "no/such/cli", "--new", cli)
    assert out.returncode == 2
    assert out.stderr.splitlines()[-1].endswith("no/such/cli: not an executable")


def test_a_failed_run_is_named_in_one_line(source, cli):
    out = alternate(source, "--base", cli, "--new", cli, "--what", "search:no-such-searcher",
                    "--pairs", "1")
    assert out.returncode == 1
    last = out.stderr.splitlines()[-1]
    assert last.startswith("alternate.py: ") and " search failed (exit 2): " in last
    assert "no-such-searcher" in last


def stand_in(folder, name, script):
    """An executable shell script standing in for a build's mapwright-cli."""
    path = folder / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)
    return str(path)


def fake_cli(folder, name, best):
    """A stand-in for mapwright-cli whose `search` writes a result.json with `best`."""
    return stand_in(folder, name,
                    "while [ \"$1\" != --out ]; do shift; done\n"
                    "printf '{\"evaluations\": 1000, \"seconds\": 0.5, \"best_objective\": %s}' "
                    "> \"$2/result.json\"\n" % best)


def test_builds_that_find_different_bests_fail(source, tmp_path):
    same = alternate(source, "--base", fake_cli(tmp_path, "a", 2.5),
                     "--new", fake_cli(tmp_path, "b", 2.5), "--what", "search:annealing",
                     "--pairs", "1")
    assert same.returncode == 0, same.stderr
    assert "median pair ratio 1.000" in same.stdout
    differ = alternate(source, "--base", fake_cli(tmp_path, "c", 2.5),
                       "--new", fake_cli(tmp_path, "d", 2.25), "--what", "search:annealing",
                       "--pairs", "1")
    assert differ.returncode == 1
    assert "bests: base [2.5], new [2.25]" in differ.stdout
    assert differ.stderr.strip() == \
        "alternate.py: the builds found different bests for the same seed and budget"


def fake_bench_cli(folder, name, rate):
    """A stand-in for mapwright-cli whose `bench search` on GAMMA (two seconds
    unless told, as alternate.py asks) reports `rate` on one thread and another
    on all threads, and which fails on any other command line."""
    return stand_in(folder, name,
                    "[ \"$*\" = 'bench search --searchers gamma --seconds 2.0 --json' ] || "
                    "{ echo \"error: unexpected $*\" >&2; exit 2; }\n"
                    "printf '[{\"searcher\": \"gamma\", \"evaluations_per_second_1_thread\": %s, "
                    "\"evaluations_per_second_all_threads\": 7}]'\n" % rate)


def test_bench_search_ratio_is_of_the_one_thread_rates(source, tmp_path):
    out = alternate(source, "--base", fake_bench_cli(tmp_path, "a", 200),
                    "--new", fake_bench_cli(tmp_path, "b", 300), "--what", "bench-search:gamma",
                    "--pairs", "2")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 2 and not any(line.startswith("bests:") for line in lines)
    for line in lines:
        assert "2 pairs  median pair ratio 1.500  (pairs 1.500 to 1.500; base 200/s, new 300/s)" \
            in line, line
