"""Mapwright's engine from Python: architectures, workloads and networks (our
JSON, ONNX, Timeloop YAML), map spaces (sampling, the searchers' moves, repair,
a fixed-length integer encoding), the cost model one mapping at a time or a
NumPy batch on several threads, and every searcher through the search driver,
including searchers written in Python.

    import mapwright as mw
    arch = mw.load_architecture("samples/architectures/eyeriss_like.json")
    layer = mw.load_network("samples/networks/resnet50.json").problem(10)
    space = mw.MapSpace(layer, arch)
    result = mw.search(space, "gamma", budget=5000, seed=1)
    print(result.best_evaluation, result.best.loop_nest())

Bad input raises ValueError with the one-line message the command line prints.
"""

from ._mapwright import (  # noqa: F401
    Architecture,
    MapSpace,
    Mapping,
    Network,
    Problem,
    Rng,
    SearchContext,
    SearchResult,
    bench_model,
    gui,
    load_architecture,
    load_network,
    load_timeloop,
    register_searcher,
    search,
    searchers,
)
from .env import MappingEnv  # noqa: F401

__all__ = [
    "Architecture",
    "MapSpace",
    "Mapping",
    "MappingEnv",
    "Network",
    "Problem",
    "Rng",
    "SearchContext",
    "SearchResult",
    "bench_model",
    "gui",
    "load_architecture",
    "load_network",
    "load_timeloop",
    "register_searcher",
    "search",
    "searchers",
]
