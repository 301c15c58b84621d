#!/usr/bin/env bash
# README command 1: install what is missing, build, make the sample ladder,
# and play the embedded default (the sample ladder from a loopback origin).
set -euo pipefail
cd "$(dirname "$0")/.."
Tools/install-deps.sh
swift build -c release --product hlsplay
Samples/make-all.sh
exec .build/release/hlsplay --headless "$@"
