#!/usr/bin/env bash
# The command line is a front end: it parses, calls optune::app and prints. Its files include
# optune headers of app/ only (and its own, and the argument and formatting libraries); whatever
# else it needs comes through app's interface. Prints each include that breaks the rule; exit 1.
set -euo pipefail
root="${1:-$(dirname "${BASH_SOURCE[0]}")/../..}"
found=$(grep -Hn '^#include "optune/' "$root"/cli/*.cpp "$root"/cli/*.hpp | grep -v '#include "optune/app/' || true)
if [ -n "$found" ]; then
  echo "cli/ includes optune headers outside app/:"
  echo "$found"
  exit 1
fi
count=$(ls "$root"/cli/*.cpp | wc -l)
echo "cli/: $count sources include optune/app/ headers only"
