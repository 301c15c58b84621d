#!/usr/bin/env bash
# The fault matrix (docs/fault-matrix.md): runs FaultMatrixTests (every hls-origin fault × when ×
# VOD/live, real hlsplay runs on loopback), then prints the Markdown table of what each case did.
#   Tools/characterize/fault-matrix.sh                 print the table
#   Tools/characterize/fault-matrix.sh --update-docs   also replace the table in docs/fault-matrix.md
# FAULT_MATRIX_PARALLEL=N sets how many cases run at once (default 8); FAULT_MATRIX_CASES=REGEX runs
# only the cases whose names match.
set -euo pipefail
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2; exit "$1"; }
case "${1:-}" in
    -h|--help) usage 0 ;;
    ""|--update-docs) [ $# -le 1 ] || usage 64 ;;
    *) echo "fault-matrix.sh: unknown argument '$1'" >&2; usage 64 ;;
esac
cd "$(dirname "$0")/../.."
[ -f Samples/build/ladder-2s/master.m3u8 ] || Samples/make-all.sh >/dev/null
swift build --build-tests >/dev/null
work=$(mktemp -d /tmp/hlsplay-fault-matrix.XXXXXX)
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
status=0
FAULT_MATRIX_REPORT="$work/rows.jsonl" swift test --skip-build --filter 'FaultMatrixTests' >"$work/test.txt" 2>&1 || status=$?
elapsed=$(( $(date +%s) - start ))
grep -E "^(✔|✘|􀟈|􁁛|􀢄).*(Suite|Test run)" "$work/test.txt" | tail -3 >&2 || true
python3 Tools/characterize/fault-matrix.py "$work/rows.jsonl" --test-output "$work/test.txt" --elapsed "$elapsed" \
    ${1:+"$@"}
exit $status
