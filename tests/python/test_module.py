"""The mapwright module against the command line and itself: loaders, the
map space and its encoding, single and batch evaluation, the driver with
built-in and Python searchers, errors, the environment."""
import json
import math
import subprocess

import numpy as np
import pytest

import mapwright as mw


def test_loaders_take_paths_and_dicts(source, eyeriss):
    as_dict = json.loads((source / "samples/architectures/eyeriss_like.json").read_text())
    again = mw.load_architecture(as_dict)
    assert again.name == eyeriss.name == "eyeriss-like"
    assert again.levels == eyeriss.levels
    assert eyeriss.macs == 168
    net = mw.load_network(source / "samples/networks/resnet50.json")
    assert len(net) == 54
    assert net.problem(0).dims["C"] == 3
    onnx = mw.load_network(source / "tests/data/onnx/resnet18.onnx")
    assert onnx.layers[6] == "layer2.0.conv2"
    assert onnx.problem("layer2.0.conv2").dims == {"N": 1, "G": 1, "C": 128, "M": 128, "P": 28,
                                                   "Q": 28, "R": 3, "S": 3}


def test_timeloop_input_evaluates_as_the_tutorial(source):
    case_dir = source / "tests/data/timeloop-user/06-mapper-convlayer-eyeriss"
    case = mw.load_timeloop(sorted(case_dir.glob("*.yaml")))
    assert case["problem"].dims["P"] > 1
    assert case["constraints"] is not None
    space = case["space"]
    m = space.sample_legal(mw.Rng(3))
    assert space.evaluate(m)["valid"]


def test_evaluate_matches_the_command_line(source, cli):
    arch = source / "samples/architectures/eyeriss_like.json"
    workload = source / "samples/workloads/eyeriss_tutorial_conv.json"
    mapping = source / "samples/mappings/eyeriss_tutorial_conv_timeloop.json"
    space = mw.MapSpace(mw.load_network(workload).problem(), mw.load_architecture(arch))
    ours = space.evaluate(space.mapping(mapping), detail=True)
    out = subprocess.run([cli, "evaluate", "--arch", arch, "--workload", workload, "--mapping",
                          mapping, "--json"], check=True, capture_output=True, text=True).stdout
    assert ours == json.loads(out)
    short = space.evaluate(space.mapping(mapping))
    assert short["energy_pJ"] == ours["energy_pJ"] and short["cycles"] == ours["cycles"]
    assert short["edp"] == ours["edp"] and short["valid"]


def test_timeloop_files_where_one_file_is_read(source, cli, tmp_path):
    """Timeloop's constraints and mapping where those are taken: what
    import-timeloop converts them to; a Timeloop problem as a network;
    Timeloop YAML where only JSON is read: the command line's one line,
    saying how to convert it."""
    user = source / "tests/data/timeloop-user/06-mapper-convlayer-eyeriss"
    imported = tmp_path / "imported"
    subprocess.run([cli, "import-timeloop", user / "arch.yaml", user / "problem.yaml",
                    user / "constraints.yaml", "--out", imported], check=True,
                   capture_output=True)
    arch = mw.load_architecture(imported / "arch.json")
    problem = mw.load_network(imported / "workload.json").problem()
    from_yaml = mw.MapSpace(problem, arch, user / "constraints.yaml")
    from_json = mw.MapSpace(problem, arch, imported / "constraints.json")
    free = mw.MapSpace(problem, arch)
    for seed in range(5):
        m = from_json.sample_legal(mw.Rng(seed))
        assert from_yaml.is_legal(m)
        same = from_yaml.sample_legal(mw.Rng(seed))
        assert same.timeloop_yaml() == m.timeloop_yaml()
        assert not from_yaml.is_legal(free.sample_legal(mw.Rng(seed)))
    # The mapper's map.yaml as a mapping of the space: import-timeloop's.
    tutorial = source / "tests/data/timeloop-tutorial/06-mapper-convlayer-eyeriss"
    subprocess.run([cli, "import-timeloop", user / "arch.yaml", user / "problem.yaml",
                    tutorial / "map.yaml", "--out", tmp_path / "mapped"], check=True,
                   capture_output=True)
    mapped = mw.MapSpace(mw.load_network(tmp_path / "mapped/workload.json").problem(),
                         mw.load_architecture(tmp_path / "mapped/arch.json"))
    assert mapped.mapping(tutorial / "map.yaml") == mapped.mapping(tmp_path / "mapped/mapping.json")
    assert mapped.evaluate(mapped.mapping(tutorial / "map.yaml"))["cycles"] == 5505024
    # A node design's constraints read against a GEMM: rewritten for it, the
    # convolution's names dropped with a warning (the command line's note).
    exercises = source / "tests/data/timeloop-exercises"
    nodes = exercises / "example_designs/simple_weight_stationary/arch.yaml"
    gemm = exercises / "layer_shapes/MM/ResNet50_repr/M512-K128-N1024.yaml"
    subprocess.run([cli, "import-timeloop", nodes, gemm, "--out", tmp_path / "gemm"], check=True,
                   capture_output=True)
    gemm_problem = mw.load_network(tmp_path / "gemm/workload.json").problem()
    gemm_arch = mw.load_architecture(tmp_path / "gemm/arch.json")
    with pytest.warns(UserWarning, match="name 'Outputs', which the problem does not have"):
        from_nodes = mw.MapSpace(gemm_problem, gemm_arch, nodes)
    imported_space = mw.MapSpace(gemm_problem, gemm_arch, tmp_path / "gemm/constraints.json")
    for seed in range(3):
        assert (from_nodes.sample_legal(mw.Rng(seed)).timeloop_yaml()
                == imported_space.sample_legal(mw.Rng(seed)).timeloop_yaml())
    # A layer shape as a one-layer network; what its import noted, as a warning.
    with pytest.warns(UserWarning, match="HStride"):
        shape = mw.load_network(
            source / "tests/data/timeloop-exercises/layer_shapes/mobilenet_v3/04.yaml")
    assert len(shape) == 1
    assert shape.problem(0).dims["G"] == 64 and shape.problem(0).dims["P"] == 56
    with pytest.raises(ValueError) as e:
        mw.load_architecture(user / "arch.yaml")
    assert "is not JSON (Timeloop YAML?)" in str(e.value)
    out = subprocess.run([cli, "search", "--arch", user / "arch.yaml", "--workload",
                          imported / "workload.json", "--searcher", "random", "--budget", "10",
                          "--out", tmp_path / "out"], capture_output=True, text=True)
    assert out.returncode != 0
    assert out.stderr.strip() == "error: " + str(e.value)


@pytest.fixture()
def constrained(source):
    """The tutorial's Eyeriss with its constraints: fixed factors, orders and
    keep choices, and dimensions left one slot."""
    case_dir = source / "tests/data/timeloop-user/06-mapper-convlayer-eyeriss"
    return mw.load_timeloop(sorted(case_dir.glob("*.yaml")))["space"]


@pytest.mark.parametrize("which", ["space", "constrained"])
def test_encoding_round_trips(which, request):
    space = request.getfixturevalue(which)
    rng = mw.Rng(7)
    bounds = space.encoding_bounds
    assert len(bounds) == space.encoding_size == len(space.encoding_names)
    for _ in range(200):
        m = space.sample(rng)
        v = space.encode(m)
        assert ((0 <= v) & (v < bounds)).all()
        back = space.decode(v)
        assert back == m
        assert space.evaluate(back) == space.evaluate(m)
    # Any vector within the bounds is a mapping of the space.
    gen = np.random.default_rng(1)
    for _ in range(200):
        v = gen.integers(0, bounds)
        assert space.encode(space.decode(v)).shape == v.shape


def test_batch_equals_one_by_one(space):
    rows = space.sample_encoded(3000, seed=5, legal=False)
    assert rows.shape == (3000, space.encoding_size)
    again = space.sample_encoded(3000, seed=5, legal=False, threads=1)
    assert (rows == again).all()  # the same whatever the threads
    batch = space.evaluate_batch(rows, threads=2)
    assert batch["valid"].dtype == np.bool_
    for i in range(0, 3000, 97):
        one = space.evaluate(space.decode(rows[i]))
        assert one["valid"] == batch["valid"][i]
        if one["valid"]:
            assert one["energy_pJ"] == batch["energy_pJ"][i]
            assert one["cycles"] == batch["cycles"][i]
            assert one["edp"] == batch["edp"][i]
        else:
            assert math.isnan(batch["edp"][i])
    legal = space.evaluate_batch(space.sample_encoded(500, seed=2))
    assert legal["valid"].all()


def test_moves_and_repair_stay_in_the_space(space):
    rng = mw.Rng(11)
    m = space.sample_legal(rng)
    for kind in ["random", "tile", "swap", "parallelism", "bypass", "grow", "drop"]:
        moved = space.move(m, rng, kind)
        assert moved is None or isinstance(moved, mw.Mapping)
    fixed = space.repair(space.sample(rng), rng)
    assert fixed is not None and space.is_legal(fixed)


def test_builtin_searchers_through_the_driver(space):
    first = mw.search(space, "gamma", budget=2000, seed=4)
    again = mw.search(space, "gamma", budget=2000, seed=4, threads=2)
    assert first.found and first.evaluations == 2000
    assert first.best_cost == again.best_cost  # one seed, one trace, any threads
    assert first.trace.shape[1] == 4
    assert first.best_evaluation["edp"] == pytest.approx(first.best_cost)
    assert first.best_cost >= space.lower_bound()["objective"]
    assert set(mw.searchers()) >= {"random", "random-pruned", "annealing", "genetic", "gamma",
                                   "cosa", "mind-mappings", "reinforce", "exhaustive",
                                   "optimal"}


def test_progress_cancels_and_keeps_the_best(space):
    seen = []

    def progress(p):
        seen.append(p["evaluations"])
        return p["evaluations"] >= 3000

    # random: random-pruned would stop itself on its victory condition.
    r = mw.search(space, "random", budget=10**9, seconds=30, seed=2, progress=progress)
    assert r.cancelled and r.found
    assert seen and seen[-1] >= 3000 and r.evaluations < 10**8


class HillClimber:
    """A searcher written in Python: one move at a time, kept when better."""

    def run(self, ctx):
        space, rng = ctx.space, ctx.rng
        current = space.sample_legal(rng)
        cost = ctx.evaluate(current)
        while not ctx.stopped():
            batch = [space.move(current, rng) or current for _ in range(32)]
            costs = ctx.evaluate_batch(batch)
            best = int(np.nanargmin(costs))
            if costs[best] < cost:
                current, cost = batch[best], costs[best]
        ctx.set_stat("final_cost", cost)


def test_python_searcher_registered_and_compared(space):
    mw.register_searcher("hill-climber", HillClimber)
    assert "hill-climber" in mw.searchers()
    r = mw.search(space, "hill-climber", budget=1500, seed=3)
    assert r.searcher == "hill-climber"
    assert r.evaluations == 1500 and r.found
    assert r.stats["final_cost"] >= r.best_cost
    again = mw.search(space, HillClimber(), budget=1500, seed=3)
    assert again.best_cost == r.best_cost  # reproducible from its seed
    with pytest.raises(ValueError, match="is a built-in searcher"):
        mw.register_searcher("gamma", HillClimber)


def test_python_searcher_errors_surface(space):
    class Broken:
        def run(self, ctx):
            raise RuntimeError("searcher bug")

    with pytest.raises(RuntimeError, match="searcher bug"):
        mw.search(space, Broken(), budget=10)


def test_bad_input_raises_the_command_lines_messages(source, cli, space, tmp_path):
    bad = tmp_path / "arch.json"
    bad.write_text('{"format": "mapwright.architecture", "levels": []}')
    with pytest.raises(ValueError) as e:
        mw.load_architecture(bad)
    out = subprocess.run([cli, "evaluate", "--arch", bad, "--workload",
                          source / "samples/workloads/resnet_conv3x3.json", "--mapping", bad],
                         capture_output=True, text=True)
    assert out.returncode != 0
    assert out.stderr.strip() == "error: " + str(e.value)
    # A constraints file that is not one: the same line, naming the file.
    constraints = tmp_path / "constraints.json"
    constraints.write_text('{"format": "mapwright.constraints", "levels": {"DRAM": {}}}')
    arch = source / "samples/architectures/eyeriss_like.json"
    workload = source / "samples/workloads/resnet_conv3x3.json"
    with pytest.raises(ValueError) as e:
        mw.MapSpace(mw.load_network(workload).problem(), mw.load_architecture(arch), constraints)
    out = subprocess.run([cli, "search", "--arch", arch, "--workload", workload, "--searcher",
                          "random", "--budget", "10", "--constraints", constraints, "--out",
                          tmp_path / "out.json"], capture_output=True, text=True)
    assert out.returncode != 0
    assert out.stderr.strip() == "error: " + str(e.value)
    assert str(e.value).startswith(str(constraints))
    with pytest.raises(ValueError, match="unknown searcher 'tabu'"):
        mw.search(space, "tabu", budget=10)
    with pytest.raises(ValueError, match="give budget=N"):
        mw.search(space, "gamma")
    with pytest.raises(ValueError, match=r"encoded mapping\[0\] .*; expected 0\.\."):
        space.decode(np.full(space.encoding_size, 999))
    with pytest.raises(ValueError, match="expected a path or a dict"):
        mw.load_network(42)
    with pytest.raises(ValueError, match="not an ONNX model"):
        (tmp_path / "x.onnx").write_bytes(b"nonsense")
        mw.load_network(tmp_path / "x.onnx")


def _in_a_subprocess(code, source, env=None):
    """code run by a fresh interpreter (a crash there fails the test, not pytest)."""
    import os
    import sys

    prelude = (
        "import mapwright as mw, numpy as np, json\n"
        f"A = {str(source / 'samples/architectures/eyeriss_like.json')!r}\n"
        f"W = {str(source / 'samples/workloads/resnet_conv3x3.json')!r}\n"
        "s = mw.MapSpace(mw.load_network(W).problem(), mw.load_architecture(A))\n"
    )
    run_env = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, "-c", prelude + code], capture_output=True,
                          text=True, timeout=120, env=run_env)


def test_bad_input_does_not_crash_the_interpreter(source, tmp_path):
    # Each was a segfault, an abort or a hang (the audit of 2026-12-01).
    cases = {
        # A SearchContext kept past its run pointed at the driver's freed one.
        "kept = []\n"
        "class K:\n"
        "    def run(self, ctx):\n"
        "        ctx.evaluate(ctx.space.sample_legal(ctx.rng)); kept.append(ctx)\n"
        "mw.search(s, K(), budget=3)\n"
        "kept[0].rng.random()\n"
        "kept[0].best": "SearchContext: is used after its run ended",
        "mw.search(None, 'gamma', budget=10)": "space: is None; expected a MapSpace",
        "s.sample_encoded(4, threads=100000)": "threads: is 100000; expected 1 to 256",
        "d = json.load(open(A)); d['x'] = d; mw.load_architecture(d)":
            "is nested deeper than 256 levels",
        "mw.bench_model(mw.load_architecture(A), runs=1, seconds=float('inf'))":
            "seconds: is inf; expected more than 0",
        "mw.gui(screenshot='x.png')": "there is no display",
    }
    env = {"DISPLAY": "", "QT_QPA_PLATFORM": "", "WAYLAND_DISPLAY": ""}
    for code, message in cases.items():
        # (An empty variable is set; the display check wants it unset.)
        out = _in_a_subprocess(
            "import os\nfor k in ('DISPLAY', 'QT_QPA_PLATFORM', 'WAYLAND_DISPLAY'):\n"
            "    os.environ.pop(k, None)\n" + code, source, env)
        assert out.returncode == 1, (code, out.returncode, out.stderr[-400:])
        assert "ValueError: " in out.stderr and message in out.stderr, (code, out.stderr[-400:])


def test_bad_values_are_named(source, space, tmp_path):
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe{")
    with pytest.raises(ValueError, match="binary.json:1:.*malformed JSON"):
        mw.load_architecture(binary)  # (was a ValueError with no text)
    arch = json.load(open(source / "samples/architectures/eyeriss_like.json"))
    arch["levels"][1]["capacity_words"] = 2**70
    with pytest.raises(ValueError, match=r"architecture\.levels\[1\]\.capacity_words: is "
                                         r"1180591620717411303424; expected an integer within"):
        mw.load_architecture(arch)
    arch["levels"][1]["capacity_words"] = np.array([1, 2])
    with pytest.raises(ValueError, match="capacity_words: is a ndarray; expected a JSON value"):
        mw.load_architecture(arch)
    with pytest.raises(ValueError, match=r"params\.t0: is \"hot\"; expected a finite number"):
        mw.search(space, "annealing", budget=10, params={"t0": "hot"})
    # A flag may be a bool (1 or 0, as the command line's).
    assert mw.search(space, "annealing", budget=10, params={"parallel_moves": True}).found

    class FractionalRows:
        def run(self, ctx):
            ctx.evaluate_batch(np.full((2, ctx.space.encoding_size), 0.9))

    with pytest.raises(ValueError, match=r"evaluate_batch rows \(flat index 0\): is 0\.9"):
        mw.search(space, FractionalRows(), budget=5)
    with pytest.raises(ValueError, match="seconds: is nan"):
        mw.search(space, "random", budget=10, seconds=float("nan"))
    with pytest.raises(ValueError, match="constraints: .*expected a JSON object"):
        mw.MapSpace(space.problem, space.architecture, 5)
    with pytest.raises(ValueError, match="mapping: .*expected a JSON object"):
        space.mapping(None)
    with pytest.raises(ValueError, match=r"encoded mapping \(flat index 0\): is 0\.9"):
        space.decode(np.full(space.encoding_size, 0.9))  # (was read as 0)
    with pytest.raises(ValueError, match="evaluate_batch rows .*: is 0\\.5"):
        space.evaluate_batch(np.full((2, space.encoding_size), 0.5))
    assert space.decode(np.zeros(space.encoding_size)) == space.decode(
        np.zeros(space.encoding_size, dtype=np.int64))
    with pytest.raises(ValueError, match="threads: is -2"):
        space.evaluate_batch(np.zeros((1, space.encoding_size), dtype=np.int64), threads=-2)
    with pytest.raises(ValueError, match="runs: is 0; expected 1 to 1000"):
        mw.bench_model(space.architecture, runs=0)
    with pytest.raises(ValueError, match="batch: is -5; expected 1 to 1000000"):
        mw.load_network(source / "samples/workloads/resnet_conv3x3.json", batch=-5)
    with pytest.raises(ValueError, match="n: is 0"):
        mw.Rng(1).below(0)
    net = mw.load_network(source / "samples/networks/resnet50.json")
    assert net.problem(np.int64(3)).name == net.problem(3).name
    with pytest.raises(ValueError, match="layer: is a float; expected a layer's name or index"):
        net.problem(1.0)
    with pytest.raises(ValueError, match="layer: is a bool"):
        net.problem(True)
    with pytest.raises(ValueError, match="objective: is 'speed'"):
        mw.MappingEnv(space, objective="speed")
    with pytest.raises(ValueError, match="invalid_reward: is nan"):
        mw.MappingEnv(space, invalid_reward=float("nan"))
    # A mapping of another space: refused by the driver (was charged as illegal).
    other = mw.MapSpace(net.problem(3), space.architecture)
    foreign = other.trivial()
    assert (foreign == None) is False  # noqa: E711 (was a TypeError)

    class Foreign:
        def run(self, ctx):
            ctx.evaluate(foreign)

    with pytest.raises(ValueError, match="mapping: belongs to another map space"):
        mw.search(space, Foreign(), budget=5)
    # A constraints dict's dimension the problem lacks is warned of, as a file's is.
    with pytest.warns(UserWarning, match="'Z' is not a dimension of the problem"):
        mw.MapSpace(space.problem, space.architecture,
                    {"format": "mapwright.constraints",
                     "levels": [{"level": "DRAM", "order": ["*", "Z"]}]})


def test_environment_builds_a_mapping(space):
    env = mw.MappingEnv(space)
    obs, info = env.reset(seed=1)
    assert obs.shape == env.observation_space.shape
    gen = np.random.default_rng(0)
    done, steps, reward = False, 0, 0.0
    while not done:
        mask = info["action_mask"]
        action = int(gen.choice(np.flatnonzero(mask)))
        obs, reward, done, truncated, info = env.step(action)
        steps += 1
    assert steps == space.encoding_size
    ev = info["evaluation"]
    if ev["valid"]:
        assert reward == pytest.approx(-math.log(ev["edp"]))
    else:
        assert reward == env.invalid_reward


def test_gui_runs_a_python_searcher(tmp_path, monkeypatch):
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    mw.register_searcher("hill-climber", HillClimber)
    shot = tmp_path / "search.png"
    try:
        best = mw.gui(run=["hill-climber", "gamma"], budget=400, screenshot=shot)
    except ValueError as e:
        if "built without the GUI" in str(e):
            pytest.skip(str(e))
        raise
    assert best["hill-climber"] is not None and best["gamma"] is not None
    assert shot.stat().st_size > 10000
    # A run, budget or view it cannot take is refused before a window opens
    # (each was dropped: the run missing from the result, {} for the budget).
    with pytest.raises(ValueError, match="run: 'tabu' is not a searcher"):
        mw.gui(run=["tabu", "random"], budget=10, screenshot=shot)
    with pytest.raises(ValueError, match="budget: is -5"):
        mw.gui(run=["random"], budget=-5, screenshot=shot)
    class Raises:
        def run(self, ctx):
            raise KeyError("searcher bug")

    mw.register_searcher("raises", Raises)
    with pytest.raises(RuntimeError, match="gui: .*searcher bug"):
        mw.gui(run=["raises", "random"], budget=10, screenshot=shot)
    with pytest.raises(ValueError, match="view: is 'nonsense'; expected one of"):
        mw.gui(run=["random"], budget=10, screenshot=shot, view="nonsense")
