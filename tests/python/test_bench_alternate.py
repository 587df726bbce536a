"""tests/bench/alternate.py, the two-build speed ratio issue 34's figures come
from: it reads what the command line writes (an A/A run of one build, short),
and it refuses what it cannot measure with one line."""
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
