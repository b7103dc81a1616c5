#!/usr/bin/env bash
# Fails when docs/reference.md is not what scripts/cli_reference.sh prints for this build's optune,
# so a changed option or subcommand cannot leave the command reference behind.
# Usage: tests/docs/check_reference.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=${1:?usage: check_reference.sh BUILD_DIR SOURCE_DIR}
source=${2:?usage: check_reference.sh BUILD_DIR SOURCE_DIR}
fresh=$(mktemp)
trap 'rm -f "$fresh"' EXIT
bash "$source/scripts/cli_reference.sh" "$build" > "$fresh"
if ! diff -u "$source/docs/reference.md" "$fresh"; then
  echo "docs/reference.md is stale: run scripts/cli_reference.sh build > docs/reference.md"
  exit 1
fi
