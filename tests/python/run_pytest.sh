#!/usr/bin/env bash
# Runs the Python module's tests (tests/python) with pytest from a virtual environment made here,
# against the module of a build: run_pytest.sh BUILD_DIR. CTest calls it (PythonModule).
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
venv="$build/python-test-venv"
if [ ! -x "$venv/bin/pytest" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q pytest pandas
fi
export PYTHONPATH="$build/python" OPTUNE_BIN="$build/bin/optune"
cd "$(mktemp -d)"
# The run locks of these tests' runs: their own folder, so that other tests running beside them
# (ctest -j) on this machine's one CPU device do not refuse them.
export OPTUNE_LOCK_DIR="$PWD/locks"
exec "$venv/bin/pytest" -q -p no:cacheprovider "$here"
