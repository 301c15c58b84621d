#!/usr/bin/env bash
# collect.sh — the real runs behind models/stall-logistic-v2.json and docs/stall-prediction.md.
#   Tools/train/collect.sh [DATA] [BIN] [BIN_NEW]
# DATA:    session logs, derived traces, manifest (default /tmp/hlsplay-train)
# BIN:     folder with release hlsplay and hls-origin (default .build/release; `swift build -c release`)
# BIN_NEW: optional; a build with other PolicyController constants, run as a third arm
#          ("on-tuned") of the on/off comparison. The published figures used BIN = the
#          release build before the constants changed and BIN_NEW = after.
# Takes about 50 min of wall clock on 2 cores (6 sessions at a time, 90 s of media each).
# What runs (traces, offsets, media seconds, ladder, arms, sessions at once) is the spec's:
# Tools/train/specs/stall-v2.json; each phase run writes DATA/runs/PHASE[-TAG]-UTC.json.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
data=${1:-/tmp/hlsplay-train}
bin=${2:-$here/../../.build/release}
new=${3:-}
model="$here/../../models/stall-logistic-v2.json"
spec="$here/specs/stall-v2.json"
tuned=()
if [ -n "$new" ]; then tuned=(--tuned-bin "$new"); fi
# 1. training traces (controller on: v1 model / heuristic) and held-out traces (v1 on vs off), together
python3 "$here/collect.py" train   --spec "$spec" --data "$data" --bin "$bin" &
python3 "$here/collect.py" heldout --spec "$spec" --data "$data" --bin "$bin"
wait
# 2. train on the real training sessions, judge on the real held-out ones
python3 "$here/train_real.py" --spec "$spec" --data "$data"
# 3. controller on (v2) vs off on the held-out traces, then two more offsets
python3 "$here/collect.py" onoff --spec "$spec" --data "$data" --bin "$bin" "${tuned[@]}" --model "$model"
if [ -n "$new" ]; then
  python3 "$here/collect.py" onoff --spec "$spec" --data "$data" --bin "$bin" "${tuned[@]}" --model "$model" \
          --offsets extra --skip-arm on
else
  python3 "$here/collect.py" onoff --spec "$spec" --data "$data" --bin "$bin" --model "$model" --offsets extra
fi
# 4. the held-out figures again, now with the v2-controlled sessions (v2's parameters do not change)
python3 "$here/train_real.py" --spec "$spec" --data "$data"
if [ -n "$new" ]; then
  python3 "$here/onoff_report.py" --data "$data" --phase heldout --arm on --tag v1-original-constants
  python3 "$here/onoff_report.py" --data "$data" --phase onoff --arm on --tag v2-original-constants
  python3 "$here/onoff_report.py" --data "$data" --phase onoff --arm on-tuned --tag v2-tuned-constants
else
  python3 "$here/onoff_report.py" --data "$data" --phase heldout --arm on --tag v1
  python3 "$here/onoff_report.py" --data "$data" --phase onoff --arm on --tag v2
fi
# 5. the simulator on the same derived traces and session lengths
python3 "$here/sim_compare.py" --data "$data" --phases train,heldout,onoff
# 6. the paired tests of every stored on/off tag and of the pooled ones (onOffPaired)
python3 "$here/onoff_report.py" --compare
