#!/usr/bin/env bash
# README command 2: the whole test suite (installs what is missing and makes
# the sample media first).
set -euo pipefail
cd "$(dirname "$0")/.."
Tools/install-deps.sh
Samples/make-all.sh
# The characterization tool's shard partition, merge and log readings
# (Tools/grid.py; no network, a few seconds).
python3 -B -m unittest discover -s Tools/tests
swift build --build-tests
if [ "$#" -eq 0 ]; then
    # The fast parts of the hardening runs (docs/hardening.md): a sample of
    # corrupt media under AddressSanitizer (known reproducers replayed too),
    # and a short libFuzzer run of the playlist parser and attribute lists.
    Tools/asan/corrupt-media.sh 300
    Tools/fuzz/run.sh 20
fi
swift test --skip-build --disable-xctest "$@"
