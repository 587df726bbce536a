"""`pip install .`: the mapwright package, its native part built by the
project's own CMake (the same build as the README's, GUI and tests left out)."""
import pathlib
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = pathlib.Path(self.build_temp).resolve() / "cmake"
        subprocess.check_call(["cmake", "-S", str(ROOT), "-B", str(build),
                               "-DCMAKE_BUILD_TYPE=Release", "-DMAPWRIGHT_BUILD_GUI=OFF",
                               "-DMAPWRIGHT_BUILD_TESTS=OFF", "-DMAPWRIGHT_PYTHON=ON",
                               f"-DPython_EXECUTABLE={sys.executable}"])
        subprocess.check_call(["cmake", "--build", str(build), "--target", "_mapwright",
                               "--parallel", "2"])
        # The module, its helper programs and the pure-Python files, as the
        # build tree assembles them.
        target = pathlib.Path(self.get_ext_fullpath(ext.name)).parent
        target.mkdir(parents=True, exist_ok=True)
        for f in (build / "python" / "mapwright").iterdir():
            shutil.copy2(f, target / f.name)


# setuptools' own build directory inside the CMake build tree's, apart from it.
setup(options={"build": {"build_base": "build/pip"}},
      packages=["mapwright"], package_dir={"mapwright": "app/python/mapwright"},
      ext_modules=[Extension("mapwright._mapwright", sources=[])],
      cmdclass={"build_ext": CMakeBuild})
