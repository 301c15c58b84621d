#!/usr/bin/env bash
# Startup / recovery characterization grid and fault report (issue 4): builds
# the release binaries and the sample ladders, including the 4K-class ladders
# the grid uses (Samples/make-all.sh --4k), then runs Tools/characterize/grid.py (all options
# pass through; see `Tools/characterize/grid.py --help`; `Tools/characterize/grid.sh merge DIR... --out DIR`
# merges shard outputs). Prints Markdown tables on stdout.
set -euo pipefail
cd "$(dirname "$0")/../.."
# The venv Tools/install-deps.sh makes holds Dask distributed (--scheduler, docs/cluster.md).
py=/opt/hlsplay/python/bin/python3
[ -x "$py" ] || py=python3
if [ "${1:-}" = merge ]; then
    exec "$py" Tools/characterize/grid.py "$@"
fi
swift build -c release --static-swift-stdlib --product hlsplay >&2
swift build -c release --static-swift-stdlib --product hls-origin >&2
Samples/make-all.sh --4k >&2
exec "$py" Tools/characterize/grid.py "$@"
