#!/usr/bin/env bash
# Startup / recovery characterization grid (issue 4): builds the release
# binaries and the sample ladders, then runs Tools/grid.py (all options pass
# through; see `Tools/grid.py --help`). Prints Markdown tables on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product hlsplay >&2
swift build -c release --product hls-origin >&2
Samples/make-all.sh >&2
exec python3 Tools/grid.py "$@"
