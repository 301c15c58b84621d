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
spec="$here/specs/stall-v2.json"   # traces, offset batches, media, ladder recipe, arms
# The ladders (collect.py builds them on first use).
python3 -c "import sys; sys.path.insert(0, '$here'); import collect; s = collect.load_spec('$spec'); collect.make_ladder('$data', s); collect.make_ladder('$data', s, True)"
# 1-2. virtual time, as Tools/train/specs/vsim-onoff-start-gate.json declares it (tuning runs on the
# training traces, held-out runs with the defaults): raw logs and manifest in DATA/vsim, the ladders
# and derived traces in DATA; the report writes virtualOnOffTuning and virtualOnOffHeldOut.
python3 "$here/vsim.py" run "$here/specs/vsim-onoff-start-gate.json" --out "$data/vsim" --work "$data" --bin "$bin" \
        --results "$here/results-v2.json"
# 3. the real runs, as Tools/train/specs/held-out-third-round.json declares them: collect.py onoff with the
# collection's offset batches quarters (tag v2-start), quarters with the low rung (v2-start-low), eighths (v2-start-b)
python3 "$here/heldout_round.py" run "$here/specs/held-out-third-round.json" --data "$data" --bin "$bin" --jobs 6
# 4. the reports: heldOutThirdRound (the controller-on sessions as a later held-out set), the on/off tags
python3 "$here/heldout_round.py" report "$here/specs/held-out-third-round.json" --data "$data" --results "$here/results-v2.json"
python3 "$here/onoff_report.py" --data "$data" --phase onoff --run-tag v2-start --tag v2-start-gate-4-rungs
python3 "$here/onoff_report.py" --data "$data" --phase onoff --run-tag v2-start-low --tag v2-start-gate-low-rung
python3 "$here/onoff_report.py" --data "$data" --phase onoff --run-tag v2-start-b --tag v2-start-gate-4-rungs-b
python3 "$here/onoff_report.py" --compare   # paired tests of every tag and of both 4-rung batches pooled
python3 "$here/vsim.py" compare --data "$data" --bin "$bin" --phases onoff --results-key virtualSimVsRealStartGate
