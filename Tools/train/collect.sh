#!/usr/bin/env bash
# collect.sh — the real runs behind models/stall-logistic-v2.json and docs/stall-prediction.md.
#   Tools/train/collect.sh [DATA] [BIN]
# DATA: session logs, derived traces, manifest (default /tmp/hlsplay-train)
# BIN:  folder with release hlsplay and hls-origin (default .build/release; `swift build -c release`)
# Takes about 45 min of wall clock on 2 cores (6 sessions at a time, 90 s of media each).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
data=${1:-/tmp/hlsplay-train}
bin=${2:-$here/../../.build/release}
# 1. training traces (controller on: v1 model / heuristic) and held-out traces (v1 on vs off), together
python3 "$here/collect.py" train   --data "$data" --bin "$bin" --jobs 3 &
python3 "$here/collect.py" heldout --data "$data" --bin "$bin" --jobs 3 &
wait
# 2. train on the real training sessions, judge on the real held-out ones
python3 "$here/train_real.py" --data "$data"
# 3. controller on (v2) vs off on the held-out traces
python3 "$here/collect.py" onoff --data "$data" --bin "$bin" --model "$here/../../models/stall-logistic-v2.json" --jobs 6
python3 "$here/onoff_report.py" --data "$data" --phase heldout --tag v1
python3 "$here/onoff_report.py" --data "$data" --phase onoff --tag v2
# 4. the simulator on the same derived traces and session lengths
python3 "$here/sim_compare.py" --data "$data"
