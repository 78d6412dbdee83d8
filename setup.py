"""setuptools glue for `pip install .` (pyproject.toml): the extension opscope._opscope and, where
Debian's libtorch-dev is installed, the PyTorch observer libopscope_torch.so are built by this
project's CMake (-DOPSCOPE_PYTHON=ON, for the interpreter running pip), then packaged with the
.py files of python/opscope and python/opscope_boot. Needs cmake, ninja and a C compiler
(scripts/install-deps.sh); nothing is downloaded."""
import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


def cmake_version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        return re.search(r"project\(opscope VERSION ([0-9.]+)", f.read()).group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        subprocess.check_call(["cmake", "-S", ROOT, "-B", build, "-G", "Ninja",
                               "-DCMAKE_BUILD_TYPE=Release", "-DOPSCOPE_TESTS=OFF",
                               "-DOPSCOPE_PYTHON=ON", "-DPython3_EXECUTABLE=" + sys.executable])
        subprocess.check_call(["cmake", "--build", build, "-j", jobs, "--target", "opscope_python"])
        built = os.path.join(build, "python", "opscope")
        if not os.path.exists(os.path.join(built, "_opscope.so")):
            raise RuntimeError("CMake did not build the extension (is python3-dev installed?)")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(os.path.join(built, "_opscope.so"), target)
        torch = os.path.join(built, "libopscope_torch.so")
        if os.path.exists(torch):
            shutil.copy2(torch, os.path.dirname(target))


setup(
    version=cmake_version(),
    package_dir={"": "python"},
    packages=["opscope", "opscope_boot"],
    ext_modules=[Extension("opscope._opscope", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
)
