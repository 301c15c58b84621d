#!/usr/bin/env bash
# make-all.sh [--4k] — builds every sample ladder into Samples/build/ (git-ignored).
#   ladder-2s  30 s, 2 s segments
#   ladder-6s  36 s, 6 s segments
#   short-2s    8 s, 2 s segments (fast end-to-end tests)
# --4k also builds the characterization grid's ladders (Tools/characterize/grid.sh passes it;
# CI does not: the 4K rung costs minutes of encoding):
#   ladder4k-2s, ladder4k-6s  the same four rungs (hard-linked from ladder-2s /
#                             ladder-6s) + v4 3840x2160 near 30 Mbit/s
# Each ladder is skipped when already built with the same parameters.
set -euo pipefail
usage() { echo "usage: $0 [--4k]" >&2; exit 64; }
WITH_4K=0
while [ $# -gt 0 ]; do
  case $1 in
    --4k) WITH_4K=1; shift ;;
    *) usage ;;
  esac
done
here=$(cd "$(dirname "$0")" && pwd)
build="$here/build"
mkdir -p "$build"
"$here/make-ladder.sh" "$build/short-2s"  --duration 8  --segment 2
"$here/make-ladder.sh" "$build/ladder-2s" --duration 30 --segment 2
"$here/make-ladder.sh" "$build/ladder-6s" --duration 36 --segment 6
"$here/make-variants.sh" "$build/variants"
if [ "$WITH_4K" -eq 1 ]; then
  "$here/make-ladder.sh" "$build/ladder4k-2s" --duration 30 --segment 2 --4k --reuse "$build/ladder-2s"
  "$here/make-ladder.sh" "$build/ladder4k-6s" --duration 36 --segment 6 --4k --reuse "$build/ladder-6s"
fi
