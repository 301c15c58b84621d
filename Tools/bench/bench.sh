#!/usr/bin/env bash
# Benchmark: hlsplay vs ffmpeg -f null on the same 1080p segments (CPU per
# media second), and hlsplay's peak RSS. Prints the figures side by side.
set -euo pipefail
cd "$(dirname "$0")/../.."
Tools/install-deps.sh
swift build -c release --static-swift-stdlib --product hlsplay >/dev/null
swift build -c release --static-swift-stdlib --product hls-origin >/dev/null
Samples/make-all.sh >/dev/null
exec python3 Tools/bench/bench.py "$@"
