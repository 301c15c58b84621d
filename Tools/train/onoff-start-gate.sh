#!/usr/bin/env bash
# onoff-start-gate.sh — the third on/off round (docs/stall-prediction.md, "Controller on vs off, third round").
#   Tools/train/onoff-start-gate.sh [DATA] [BIN]
# DATA: session logs and manifest (default /tmp/hlsplay-onoff3); the virtual-time runs use their own folder
#       under it. BIN: release hlsplay and hls-origin (default .build/release; `swift build -c release`).
# 1. tuning in virtual time on the TRAINING traces (16 offsets each, both ladders, five preload thresholds);
# 2. the chosen defaults in virtual time on the held-out traces;
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
mkdir -p "$data/policies"
for pair in 0.5:0.3 0.4:0.25 0.3:0.15 0.25:0.1 0.2:0.1; do
  enter=${pair%:*}; exit_=${pair#*:}
  echo "{\"preloadEnterRisk\": $enter, \"preloadExitRisk\": $exit_}" > "$data/policies/p$enter.json"
done
# The ladders (collect.py builds them on first use).
python3 -c "import sys; sys.path.insert(0, '$here'); import collect; s = collect.load_spec('$spec'); collect.make_ladder('$data', s); collect.make_ladder('$data', s, True)"
for ladder in ladder ladder-low; do
  for enter in 0.5 0.4 0.3 0.25 0.2; do
    python3 "$here/vsim.py" onoff --data "$data" --bin "$bin" --traces train --offsets 16 --ladder "$data/$ladder" \
            --policy "$data/policies/p$enter.json" --tag "train-$ladder-p$enter" > /dev/null
  done
  python3 "$here/vsim.py" onoff --data "$data" --bin "$bin" --traces heldout --offsets 16 --ladder "$data/$ladder" \
          --tag "heldout-$ladder"
done
python3 "$here/collect.py" onoff --data "$data" --bin "$bin" --model "$model" --offsets quarters --tag v2-start --jobs 6 --spec "$spec"
python3 "$here/collect.py" onoff --data "$data" --bin "$bin" --model "$model" --offsets quarters --tag v2-start-low --spec "$spec" \
        --low-rung --jobs 6
python3 "$here/collect.py" onoff --data "$data" --bin "$bin" --model "$model" --offsets eighths --tag v2-start-b --jobs 6 --spec "$spec"
python3 "$here/onoff_report.py" --data "$data" --phase onoff --run-tag v2-start --tag v2-start-gate-4-rungs
python3 "$here/onoff_report.py" --data "$data" --phase onoff --run-tag v2-start-low --tag v2-start-gate-low-rung
python3 "$here/onoff_report.py" --data "$data" --phase onoff --run-tag v2-start-b --tag v2-start-gate-4-rungs-b
python3 "$here/onoff_report.py" --compare   # paired tests of every tag and of both 4-rung batches pooled
python3 "$here/vsim.py" compare --data "$data" --bin "$bin" --phases onoff --results-key virtualSimVsRealStartGate
