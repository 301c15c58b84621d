#!/usr/bin/env bash
# Many-sessions benchmark (docs/scale.md): builds release, makes the sample
# ladder if missing, then ramps N sessions in one hlsplay process against a fresh
# unshaped live hls-origin, demux-only and full decode, pinned to the 1080p rung.
# Arguments go to Tools/bench/sessions-bench.py (--help lists them), e.g.
#   Tools/bench/sessions-bench.sh --demux-sessions 100,200,300 --decode-sessions 1,2 --json out.json
set -euo pipefail
cd "$(dirname "$0")/../.."
swift build -c release --static-swift-stdlib --product hlsplay >/dev/null
swift build -c release --static-swift-stdlib --product hls-origin >/dev/null
[ -f Samples/build/ladder-2s/master.m3u8 ] || Samples/make-all.sh >/dev/null
exec python3 Tools/bench/sessions-bench.py "$@"
