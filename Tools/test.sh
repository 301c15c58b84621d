#!/usr/bin/env bash
# README command 2: the whole test suite (installs what is missing and makes
# the sample media first). Tools/test.sh --fast [swift test options]: the
# developer's loop: every test but those tagged .realTime or .long (see the README).
set -euo pipefail
cd "$(dirname "$0")/.."
fast=0
if [ "${1:-}" = "--fast" ]; then fast=1; shift; fi
Tools/install-deps.sh
Samples/make-all.sh
swift build --build-tests
if [ "$fast" -eq 0 ]; then
    # The release binaries, once, with the flags `make install` uses (the Swift standard library
    # linked in: docs/install.md): the hostile corpus (Tools/hardening/hostile, HostileCorpusTests)
    # plays every case with the release hlsplay, the one users run, and Tools/tests/test_install.py
    # installs these binaries and runs them without the toolchain.
    swift build -c release --static-swift-stdlib --product hlsplay
    swift build -c release --static-swift-stdlib --product hls-origin
else
    # test_install.py's make install would build the release binaries: not in the developer's loop.
    export HLSPLAY_SKIP_SLOW=1
fi
# The Tools scripts' shared module (Tools/lib: starting hls-origin and hlsplay with the debug
# binaries just built, reading logs), the characterization grid's shard partition, merge
# and log readings, the training results file and trace groups (about 20 s), the ABR evaluation's
# committed sample re-derived into docs/abr.md and re-run in virtual time, in one process and on a
# two-worker Dask cluster (about 30 s), its ladder
# recipe's --loop (a small looped ladder encoded and probed, about 30 s), and the session-log
# JSON Schema (docs/schema) against simulated and real logs (about 40 s), GStreamer as the ABR
# evaluation's peer player in real runs (about a minute), and make install into a
# temporary DESTDIR with the release binaries just built (about a minute; skipped under --fast).
# The virtual environment install-deps.sh makes ($HLSPLAY_PYTHON_ENV, default /opt/hlsplay/python: DuckDB
# and Dask distributed from PyPI, and Debian's python3-* packages — jsonschema, NumPy, SciPy, scikit-learn,
# pandas, gi for GStreamer — through --system-site-packages), else Debian's interpreter; a python3 earlier
# on PATH (pyenv, another virtualenv) may lack them.
py="${HLSPLAY_PYTHON_ENV:-/opt/hlsplay/python}/bin/python3"
[ -x "$py" ] || py=/usr/bin/python3
[ -x "$py" ] || py=python3
"$py" -B -m unittest discover -s Tools/tests
if [ "$fast" -eq 0 ]; then
    # README "Experiments": the one command that re-derives a published table (docs/abr.md's sample
    # block) from a fresh run and diffs it; about 15 s here, the build and the ladder being made above.
    Tools/reproduce.sh abr-sample
    Tools/reproduce.sh abr-sample-predictor  # the sample of a spec with arms (predictor on / off)
fi
if [ "$fast" -eq 1 ]; then
    # The tags are read from the built tests (Tools/tagged-tests.py, one listing for both), not listed here.
    skips=$("$py" -B Tools/tagged-tests.py realTime long)
    mapfile -t skip <<< "$skips"
    exec swift test --skip-build --disable-xctest "${skip[@]}" "$@"
fi
if [ "$#" -eq 0 ]; then
    # The fast parts of the hardening runs (docs/hardening.md): a sample of
    # corrupt media under AddressSanitizer and UBSan (known reproducers replayed
    # too), and the fuzz regression files replayed, then 20 s of libFuzzer on each
    # of the playlist parser, attribute lists and playlist-to-request path (≈ 65 s).
    Tools/hardening/asan/corrupt-media.sh 300
    Tools/hardening/fuzz/run.sh 20
fi
if [ "$#" -eq 0 ]; then
    # The fault matrix (docs/fault-matrix.md) runs on its own after the rest: its cases play
    # in real time several at once, and beside the shaping and fidelity tests they skew timings.
    swift test --skip-build --disable-xctest --skip FaultMatrixTests
    swift test --skip-build --disable-xctest --filter FaultMatrixTests
else
    swift test --skip-build --disable-xctest "$@"
fi
