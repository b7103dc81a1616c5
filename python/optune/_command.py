"""The ``optune`` command of an installed package (``pip install .`` makes it a console script) and
``python -m optune``: both run the optune executable the package carries, ``optune/bin/optune``,
which finds its worker, the kernel headers and the OpenCL sources beside itself
(app/src/install_paths.cpp: <prefix>/bin, <prefix>/include, <prefix>/share/optune, the prefix
being the package's folder). A build tree's module carries no executable and runs its build's."""
import os
import sys

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def command_path():
    """The optune executable this package runs: its own, else the one of the build the module came from."""
    packaged = os.path.join(_PACKAGE_DIR, "bin", "optune")
    if os.path.isfile(packaged):
        return packaged
    from . import _optune  # only the compiled part knows its build's folder

    return os.path.join(_optune.build_bin_dir, "optune")


def main(arguments=None):
    """Runs the optune executable with ``arguments`` (the command line's, by default) in this process's
    place, so that its exit code, its output and Ctrl-C are the command's own."""
    arguments = sys.argv[1:] if arguments is None else list(arguments)
    path = command_path()
    if not os.access(path, os.X_OK):
        print(f"optune: no optune executable at {path}: build it (cmake --build BUILD --target optune) or "
              f"reinstall the package (pip install .)", file=sys.stderr)
        return 2
    # argv[0] "optune": the command's usage lines name it so, whichever path ran it.
    os.execv(path, ["optune"] + arguments)
