"""The package's front doors that need no wheel: the console script's shim (`optune` after
`pip install .`, and `python -m optune`) runs the build tree's optune command; a build tree holds no
CMake package; and a package folder without its compiled part says what to do, not "circular import"."""
import os
import shutil
import subprocess
import sys

import optune
from optune import _command


def run_module(*arguments):
    return subprocess.run([sys.executable, "-m", "optune", *arguments], capture_output=True, text=True, timeout=60)


def test_the_shim_runs_the_build_trees_command_when_the_package_carries_none():
    assert not os.path.exists(os.path.join(os.path.dirname(optune.__file__), "bin"))
    assert os.path.samefile(_command.command_path(), os.environ["OPTUNE_BIN"])
    done = run_module("--help")
    assert done.returncode == 0 and "tune" in done.stdout and done.stdout.startswith("optune")
    done = run_module("space", "--op", "gemm", "--shape", "64,64,64", "--target", "cpu", "--format", "json")
    assert done.returncode == 0 and '"knobs"' in done.stdout
    # The command's own exit code and message come back: the shim is not in the way.
    done = run_module("tune", "--op", "gemm")
    assert done.returncode == 2 and done.stderr == "optune: error: tune: --shape or --suite is required (e.g. --shape " \
                                                   "512,512,512)\n"


def test_a_build_tree_holds_no_cmake_package():
    assert optune.cmake_dir() is None
    done = run_module("--cmake-dir")
    assert done.returncode == 2 and "holds no CMake package" in done.stderr


def test_a_package_without_its_compiled_part_says_what_to_do(tmp_path):
    package = tmp_path / "optune"
    package.mkdir()
    for name in os.listdir(os.path.dirname(optune.__file__)):
        if name.endswith(".py"):
            shutil.copy(os.path.join(os.path.dirname(optune.__file__), name), package)
    done = subprocess.run([sys.executable, "-c", "import optune"], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)})
    last_line = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 1 and "circular import" not in done.stderr
    assert last_line == (f"ImportError: optune's compiled part (_optune) is not in {package}: build it (cmake --build "
                         f"BUILD --target _optune, configured with -DOPTUNE_BUILD_PYTHON=ON) or install the package "
                         f"(pip install .)")
