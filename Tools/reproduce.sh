#!/usr/bin/env bash
# Tools/reproduce.sh NAME — re-derives a published table or sample, from a clean checkout:
#
#     git clean -xfd && Tools/reproduce.sh abr-sample
#
# builds what the table needs (the hlsplay binary, debug build; the spec's ladder by its committed
# recipe), runs the spec into a new results folder (raw session logs + manifest), derives the report
# from those logs alone and compares the result, byte for byte, with the block the docs publish. It also
# re-derives the block from the committed raw logs of the published run. Exit 0 when both are the docs'
# block; 1 with a unified diff on stderr when either differs; 64 for an unknown NAME; anything else is a
# build or run failure, with its own message.
#
# Tables it knows (NAME: spec, doc):
#   abr-sample   Tools/abr/sample/spec.json (run: Tools/abr/sample/run), docs/abr.md "Sample run"
#   abr-sample-predictor   Tools/abr/sample-predictor/spec.json (run: Tools/abr/sample-predictor/run),
#                docs/abr.md "Sample run with arms" (the predictor on against --predictor off)
#
# The training samples (docs/stall-prediction.md) are re-derived from their committed raw logs only:
# no build, no session, about a second. It copies the sample's raw files (manifests, session logs) into
# the results folder, runs the sample's report step on them (which writes every figure file and
# results.json again) and diffs the folder and results.json, byte for byte, against the committed ones
# (exit 1 with `diff -ru` on stderr on any difference).
#   train-sample-vsim-onoff     Tools/train/sample-vsim-onoff (vsim.py report: run/'s vsim-onoff-TAG.json
#                and report.json, results.json)
#   train-sample-third-round    Tools/train/sample-third-round (heldout_round.py report: data/'s
#                heldout-round-NAME.json, results.json; needs NumPy, SciPy, scikit-learn)
# Re-running their sessions is not offered here (the third round's are real-time sessions on hls-origin;
# the virtual one builds the 248 s v2 ladder first): the docstrings of Tools/tests/test_train_vsim_sample.py
# and test_train_heldout_round.py give the commands.
#
# Environment: HLSPLAY_TRACES, the trace folder (default: ../shared/data/traces beside the checkout);
# REPRODUCE_OUT, the results folder (default: a new /tmp/hlsplay-reproduce-NAME.XXXXXX, kept);
# HLSPLAY_PYTHON_ENV, the Python environment with NumPy/SciPy (default /opt/hlsplay/python,
# Tools/install-deps.sh makes it). Every build and session runs under nice -n 19.
set -euo pipefail
usage() {
    echo "usage: $0 abr-sample | abr-sample-predictor | train-sample-vsim-onoff | train-sample-third-round" >&2
    exit 64
}
[ $# -eq 1 ] || usage
cd "$(dirname "$0")/.."
sample=
case $1 in
    abr-sample) spec=Tools/abr/sample/spec.json; published=Tools/abr/sample/run; doc=docs/abr.md ;;
    abr-sample-predictor) spec=Tools/abr/sample-predictor/spec.json; published=Tools/abr/sample-predictor/run; doc=docs/abr.md ;;
    train-sample-vsim-onoff) sample=Tools/train/sample-vsim-onoff; raw=run ;;
    train-sample-third-round) sample=Tools/train/sample-third-round; raw=data ;;
    *) usage ;;
esac
name=$1
py="${HLSPLAY_PYTHON_ENV:-/opt/hlsplay/python}/bin/python3"
[ -x "$py" ] || py=/usr/bin/python3
[ -x "$py" ] || py=python3
out="${REPRODUCE_OUT:-$(mktemp -d "/tmp/hlsplay-reproduce-$name.XXXXXX")}"
mkdir -p "$out"
started=$(date +%s)
step() { echo "reproduce $name: $* ($(( $(date +%s) - started )) s)" >&2; }

if [ -n "$sample" ]; then
    step "copying the raw files of $sample/$raw into $out/$raw"
    mkdir "$out/$raw"
    if [ "$raw" = run ]; then  # vsim.py report writes the rest: vsim-onoff-TAG.json, report.json
        cp -R "$sample/run/manifest.json" "$sample/run/policies" "$sample/run/vsim-logs" "$out/run/"
        "$py" -B Tools/train/vsim.py report "$out/run" --results "$out/results.json" >&2
    else  # heldout_round.py report writes the rest: heldout-round-NAME.json
        cp -R "$sample/data/manifest.jsonl" "$sample/data/logs" "$sample/data/runs" "$out/data/"
        "$py" -B Tools/train/heldout_round.py report "$sample/spec.json" --data "$out/data" \
            --results "$out/results.json" >&2
    fi
    step "comparing with the committed $sample"
    status=0
    for f in "$raw" results.json; do
        if diff -ru "$sample/$f" "$out/$f" >&2; then
            echo "same: $out/$f = $sample/$f (derived from the committed raw logs)"
        else
            echo "DIFFERS: $out/$f is not the committed $sample/$f" >&2
            status=1
        fi
    done
    step "done, exit $status (results kept in $out)"
    exit $status
fi

step "building hlsplay (swift build --product hlsplay)"
nice -n 19 swift build --product hlsplay >&2
binary="$(swift build --show-bin-path)/hlsplay"

step "running $spec into $out"
# run: builds the spec's ladder by its recipe when missing, plays every session, writes the report;
# its stdout is the report's markdown.
"$py" -B Tools/abr/evaluate.py run "$spec" --out "$out" --binary "$binary" > "$out/derived.md"

step "comparing with $doc"
status=0
compare() {  # compare LABEL FILE: FILE against the doc's block of this spec
    "$py" -B - "$doc" "$name" "$2" "$1" <<'EOF' || status=1
import difflib, os, sys
sys.path.insert(0, os.path.join("Tools", "abr"))
import evaluate
doc, name, derived, label = sys.argv[1:5]
with open(doc) as f:
    block = evaluate.generated_block(f.read(), name)
if block is None:
    sys.exit(f"{doc} has no block '{name}'")
with open(derived) as f:
    text = f.read()
if text != block:
    sys.stderr.writelines(difflib.unified_diff(block.splitlines(True), text.splitlines(True),
                                               f"{doc} ({name})", label))
    sys.exit(f"DIFFERS: {label} is not the block {doc} publishes")
print(f"same: {label} = {doc}'s block '{name}' ({len(text.encode())} bytes)")
EOF
}
compare "the table derived from this run's raw logs ($out/logs)" "$out/derived.md"
if [ -n "$published" ]; then
    # a copy: the report step writes report.json and report.md beside the logs it reads
    cp -R "$published" "$out/published-run"
    "$py" -B Tools/abr/evaluate.py report "$out/published-run" > "$out/published.md"
    compare "the table derived from the committed raw logs ($published/logs)" "$out/published.md"
fi
step "done, exit $status (results kept in $out)"
exit $status
