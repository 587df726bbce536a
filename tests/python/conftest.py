"""Where the module, the command line and the samples are (set by CTest)."""
import os
import pathlib

import pytest

SOURCE = pathlib.Path(os.environ.get("MAPWRIGHT_SOURCE_DIR", pathlib.Path(__file__).parents[2]))


@pytest.fixture(scope="session")
def source():
    return SOURCE


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("MAPWRIGHT_CLI")
    if not path:
        pytest.skip("MAPWRIGHT_CLI is not set (CTest sets it)")
    return path


@pytest.fixture(scope="session")
def eyeriss():
    import mapwright as mw

    return mw.load_architecture(SOURCE / "samples/architectures/eyeriss_like.json")


@pytest.fixture(scope="session")
def conv3x3():
    import mapwright as mw

    return mw.load_network(SOURCE / "samples/workloads/resnet_conv3x3.json").problem()


@pytest.fixture()
def space(conv3x3, eyeriss):
    import mapwright as mw

    return mw.MapSpace(conv3x3, eyeriss)
