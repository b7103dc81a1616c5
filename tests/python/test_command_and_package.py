"""A package folder without its compiled part says what to do, not "circular import"."""
import os
import shutil
import subprocess
import sys

import optune


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
