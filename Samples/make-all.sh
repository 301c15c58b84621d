#!/usr/bin/env bash
# make-all.sh — builds every sample ladder into Samples/build/ (git-ignored).
#   ladder-2s  30 s, 2 s segments
#   ladder-6s  36 s, 6 s segments
#   short-2s    8 s, 2 s segments (fast end-to-end tests)
# Each ladder is skipped when already built with the same parameters.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build="$here/build"
mkdir -p "$build"
"$here/make-ladder.sh" "$build/short-2s"  --duration 8  --segment 2
"$here/make-ladder.sh" "$build/ladder-2s" --duration 30 --segment 2
"$here/make-ladder.sh" "$build/ladder-6s" --duration 36 --segment 6
"$here/make-variants.sh" "$build/variants"
