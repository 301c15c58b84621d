#!/usr/bin/env bash
# Regenerates docs/conformance.md: hlsplay's parser, then the player through hls-origin with sample
# media, over every playlist fixture (about 4 min; see Tools/characterize/conformance.py for the options).
set -euo pipefail
cd "$(dirname "$0")/../.."
swift build --product hlsplay >/dev/null
swift build --product hls-origin >/dev/null
exec python3 Tools/characterize/conformance.py "$@"
