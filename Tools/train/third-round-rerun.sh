#!/usr/bin/env bash
# third-round-rerun.sh — the third on/off round's real sessions collected again and compared with
# `hlsplay simulate`, session by session (docs/stall-prediction.md, "Again after the session core";
# results-v2.json key virtualSimVsRealStartGateRerun).
#   Tools/train/third-round-rerun.sh [DATA] [BIN]
# DATA: session logs and manifest (default /tmp/hlsplay-onoff3-rerun); BIN: release hlsplay and hls-origin
# (default .build/release). About 53 min of real sessions, six at a time: run nothing else meanwhile.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
data=${1:-/tmp/hlsplay-onoff3-rerun}
bin=${2:-$here/../../.build/release}
py=/opt/hlsplay/python/bin/python3
[ -x "$py" ] || py=python3
"$py" -B "$here/heldout_round.py" run "$here/specs/held-out-third-round.json" --data "$data" --bin "$bin" --jobs 6
"$py" -B "$here/vsim.py" compare --data "$data" --bin "$bin" --phases onoff --results "$here/results-v2.json" \
      --results-key virtualSimVsRealStartGateRerun
