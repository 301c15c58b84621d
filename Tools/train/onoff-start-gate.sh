#!/usr/bin/env bash
# onoff-start-gate.sh — the third on/off round (docs/stall-prediction.md, "Controller on vs off, third round").
#   Tools/train/onoff-start-gate.sh [DATA] [BIN]
# DATA: session logs and manifest (default /tmp/hlsplay-onoff3); the virtual-time runs use their own folder
#       under it. BIN: release hlsplay and hls-origin (default .build/release; `swift build -c release`).
# 1. tuning in virtual time on the TRAINING traces (16 offsets each, both ladders, five preload thresholds);
# 2. the chosen defaults in virtual time on the held-out traces (1 and 2: specs/vsim-onoff-start-gate.json);
# 3. real runs on the held-out traces (4 offsets × on/off), 4-rung ladder, the ladder with a low rung, and
#    the 4-rung ladder again at 4 other offsets,
#    6 sessions at a time (~18 min each on an idle 2-core machine; run nothing else meanwhile);
# 4. the reports, stored in Tools/train/results-v2.json.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
data=${1:-/tmp/hlsplay-onoff3}
bin=${2:-$here/../../.build/release}
model="$here/../../models/stall-logistic-v2.json"
spec="$here/specs/stall-v2.json"   # traces, offset batches, media, ladder recipe, arms
# The ladders (collect.py builds them on first use).
python3 -c "import sys; sys.path.insert(0, '$here'); import collect; s = collect.load_spec('$spec'); collect.make_ladder('$data', s); collect.make_ladder('$data', s, True)"
# 1-2. virtual time, as Tools/train/specs/vsim-onoff-start-gate.json declares it (tuning runs on the
# training traces, held-out runs with the defaults): raw logs and manifest in DATA/vsim, the ladders
# and derived traces in DATA; the report writes virtualOnOffTuning and virtualOnOffHeldOut.
python3 "$here/vsim.py" run "$here/specs/vsim-onoff-start-gate.json" --out "$data/vsim" --work "$data" --bin "$bin" \
        --results "$here/results-v2.json"
python3 "$here/collect.py" onoff --data "$data" --bin "$bin" --model "$model" --offsets quarters --tag v2-start --jobs 6 --spec "$spec"
python3 "$here/collect.py" onoff --data "$data" --bin "$bin" --model "$model" --offsets quarters --tag v2-start-low --spec "$spec" \
        --low-rung --jobs 6
python3 "$here/collect.py" onoff --data "$data" --bin "$bin" --model "$model" --offsets eighths --tag v2-start-b --jobs 6 --spec "$spec"
python3 "$here/onoff_report.py" --data "$data" --phase onoff --run-tag v2-start --tag v2-start-gate-4-rungs
python3 "$here/onoff_report.py" --data "$data" --phase onoff --run-tag v2-start-low --tag v2-start-gate-low-rung
python3 "$here/onoff_report.py" --data "$data" --phase onoff --run-tag v2-start-b --tag v2-start-gate-4-rungs-b
python3 "$here/onoff_report.py" --compare   # paired tests of every tag and of both 4-rung batches pooled
python3 "$here/vsim.py" compare --data "$data" --bin "$bin" --phases onoff --results-key virtualSimVsRealStartGate
