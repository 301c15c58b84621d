#!/usr/bin/env bash
# README command 1: install what is missing, build, make the sample ladder,
# and play the embedded default (the sample ladder from a loopback origin).
set -euo pipefail
cd "$(dirname "$0")/.."
Tools/install-deps.sh
# The flags of `make install` (docs/install.md), so the two share one release build.
swift build -c release --static-swift-stdlib --product hlsplay
Samples/make-all.sh
exec .build/release/hlsplay --headless "$@"
