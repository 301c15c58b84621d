#!/usr/bin/env bash
# Soak: one live hlsplay session through hls-origin's live mode (unshaped loopback
# link) for a long time, sampling the player's RSS, anonymous memory and open file
# descriptors; prints the least-squares slope of each per hour and the stall count.
#   Tools/characterize/soak.sh [--minutes M] [--interval S] [--content DIR] [--csv FILE] [--release]
# Default: 30 minutes, a sample every 5 s, Samples/build/ladder-2s, the debug build.
# Not for CI at its default length (Tools/characterize/soak.sh --minutes 1 is the smoke run).
set -euo pipefail
cd "$(dirname "$0")/../.."
config=debug
for a in "$@"; do [ "$a" = "--release" ] && config=release; done
if [ ! -x ".build/$config/hlsplay" ] || [ ! -x ".build/$config/hls-origin" ]; then
    swift build -c "$config" --product hlsplay >/dev/null
    swift build -c "$config" --product hls-origin >/dev/null
fi
[ -f Samples/build/ladder-2s/master.m3u8 ] || Samples/make-all.sh >/dev/null
exec python3 Tools/characterize/soak.py --build ".build/$config" "$@"
