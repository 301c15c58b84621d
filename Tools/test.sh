#!/usr/bin/env bash
# README command 2: the whole test suite (installs what is missing and makes
# the sample media first).
set -euo pipefail
cd "$(dirname "$0")/.."
Tools/install-deps.sh
Samples/make-all.sh
swift build --build-tests
swift test --skip-build --disable-xctest "$@"
