#!/usr/bin/env bash
# Tools/reproduce.sh NAME — re-derives a published table from a fresh run, from a clean checkout:
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
# Environment: HLSPLAY_TRACES, the trace folder (default: ../shared/data/traces beside the checkout);
# REPRODUCE_OUT, the results folder (default: a new /tmp/hlsplay-reproduce-NAME.XXXXXX, kept);
# HLSPLAY_PYTHON_ENV, the Python environment with NumPy/SciPy (default /opt/hlsplay/python,
# Tools/install-deps.sh makes it). Every build and session runs under nice -n 19.
set -euo pipefail
usage() { echo "usage: $0 abr-sample | abr-sample-predictor" >&2; exit 64; }
[ $# -eq 1 ] || usage
cd "$(dirname "$0")/.."
case $1 in
    abr-sample) spec=Tools/abr/sample/spec.json; published=Tools/abr/sample/run; doc=docs/abr.md ;;
    abr-sample-predictor) spec=Tools/abr/sample-predictor/spec.json; published=Tools/abr/sample-predictor/run; doc=docs/abr.md ;;
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
