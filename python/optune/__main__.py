"""``python -m optune ARGS``: the optune command, as the console script runs it.
``python -m optune --cmake-dir`` prints the folder of optune's CMake package inside the installed
package, for a CMake project's ``-Doptune_DIR=...`` (as ``python -m pybind11 --cmakedir``)."""
import sys

from . import cmake_dir
from ._command import main

if sys.argv[1:] == ["--cmake-dir"]:
    folder = cmake_dir()
    if folder is None:
        print("optune: this module is a build tree's and holds no CMake package; install optune (pip install ., "
              "or cmake --install BUILD --prefix PREFIX and -DCMAKE_PREFIX_PATH=PREFIX)", file=sys.stderr)
        sys.exit(2)
    print(folder)
    sys.exit(0)
sys.exit(main())
