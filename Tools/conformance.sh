#!/usr/bin/env bash
# Regenerates docs/conformance.md (hlsplay's parser over every playlist fixture).
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --product hlsplay >/dev/null
exec python3 Tools/conformance.py "$@"
