#!/usr/bin/env bash
# Before/after figures of the fuzz setup (docs/hardening.md "Fuzzing: before and after"):
#   Tools/hardening/fuzz/compare.sh [SECONDS] [BEFORE_REV]        (default 120 s per target, 5d77fdd)
# "before" is BEFORE_REV's Tools/fuzz (its build.sh, run.sh, dictionary, seeds, targets), "after"
# this tree's. Each setup fuzzes two HLSCores, one after the other, in this one run:
#   old: BEFORE_REV's Sources/HLSCore, which still has the overflows that the hostile numbers hit;
#   new: this tree's.
# Both setups get the same seeds (the shared playlists only, no hostile cases, so a finding is the
# fuzzer's own), the same environment and SECONDS per target. A finding stops libFuzzer, so a target
# is restarted on its remaining time (its work corpus kept) until SECONDS are used. "crashes" counts
# the inputs written; "findings" the distinct places they stop at: each input is replayed through
# its target and the first Swift frame of the stack that is not libFuzzer's is its place.
# Then every final playlist corpus is replayed through one binary (this tree's fuzz-playlist on the
# new HLSCore, -runs=0) so the parser coverage of both setups is read with the same instrument.
# Env: COMPARE_DIR (default /tmp/hlsplay-fuzz-compare; reused: builds and corpora are kept, the
#      work corpora and results are reset), PLAYLISTS (default ../shared/data/playlists).
#   Tools/hardening/fuzz/compare.sh --findings      only the findings of the last run, from its crash inputs
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
dir="${COMPARE_DIR:-/tmp/hlsplay-fuzz-compare}"
export SWIFT_BACKTRACE=enable=no      # a Swift trap reaches libFuzzer as SIGILL with its stack (see run.sh)
export ASAN_SYMBOLIZER_PATH="${ASAN_SYMBOLIZER_PATH:-/opt/swift/usr/bin/llvm-symbolizer}"

# The place of each crash input of a (setup, code, target): "file:line" of the trap, counted.
places() {  # setup code target
  local b="$dir/$1-$2" f
  for f in "$b/artifacts/$3"/crash-*; do
    [[ -f "$f" ]] || continue
    "$b/fuzz-$3" -runs=1 "$f" 2>&1 | grep -oE '#[0-9]+ 0x[0-9a-f]+ in [^ ]+ [^ ]+\.swift:[0-9]+' |
      grep -vE 'Fuzzer[A-Za-z]*\.cpp' | head -1 | sed -E 's/.* ([^ ]+\.swift:[0-9]+)$/\1/; s|^.*/||'
  done | sort | uniq -c | awk '{printf "%s (%d) ", $2, $1}'
}
findings() {  # setup code target: "N crashes, M places: …"
  local n m p
  n=$(find "$dir/$1-$2/artifacts/$3" -name 'crash-*' 2>/dev/null | wc -l)
  p=$(places "$@")
  m=$(printf '%s' "$p" | grep -oE '\([0-9]+\)' | wc -l)
  printf '%d crashes, %d places %s' "$n" "$m" "$p"
}
if [[ "${1:-}" == --findings ]]; then
  for code in old new; do
    for t in playlist attributelist; do printf '%-6s %-4s %-14s %s\n' before $code $t "$(findings before $code $t)"; done
    for t in playlist attributelist requestpath; do printf '%-6s %-4s %-14s %s\n' after $code $t "$(findings after $code $t)"; done
  done
  exit 0
fi
seconds="${1:-120}"
rev="${2:-5d77fdd}"
export PLAYLISTS="${PLAYLISTS:-$root/../shared/data/playlists}"
export FUZZ_HOSTILE_SEEDS=""          # after: no hostile seeds, as before
mkdir -p "$dir"

# BEFORE_REV's tools and HLSCore; a tree whose HLSCore is this one, for the old tools.
# They lie at Tools/fuzz, where they were then (their build.sh finds the sources two folders up),
# in the old tree and in the new one alike.
if [[ ! -d "$dir/old/Sources/HLSCore" ]]; then
  mkdir -p "$dir/old" && git -C "$root" archive "$rev" Sources/HLSCore Tools/fuzz | tar -x -C "$dir/old" || exit 2
fi
mkdir -p "$dir/new/Tools"
ln -sfn "$root/Sources" "$dir/new/Sources"
rm -rf "$dir/new/Tools/fuzz" && cp -a "$dir/old/Tools/fuzz" "$dir/new/Tools/fuzz"
rm -rf "$dir/new/Tools/fuzz/.build" "$dir/old/Tools/fuzz/.build"
# BEFORE_REV's player computed a Range header inline, "offset-(offset+length-1)"; the request-path
# target calls the helper that replaced it, so the old HLSCore gets it in that old form.
compat='import HLSCore
extension ByteRange {
    var httpRange: String { "\(offset ?? 0)-\((offset ?? 0) + length - 1)" }
}'
# Written only when it changes, so the targets are not rebuilt on every run.
[[ "$(cat "$dir/compat-httpRange.swift" 2>/dev/null)" == "$compat" ]] || printf '%s\n' "$compat" >"$dir/compat-httpRange.swift"

# Builds: the after setup builds each HLSCore; the before setup links against the same library
# (same flags, -O -g -sanitize=fuzzer,address), copied with its time stamp so it is not rebuilt.
build() {  # setup code
  local b="$dir/$1-$2"
  mkdir -p "$b"
  if [[ $1 == after ]]; then
    local src=$root; [[ $2 == old ]] && src=$dir/old
    local extra=""; [[ $2 == old ]] && extra="$dir/compat-httpRange.swift"
    FUZZ_BUILD="$b" FUZZ_SOURCES="$src" FUZZ_EXTRA_SOURCES="$extra" "$here/build.sh" >/dev/null || exit 2
  else
    [[ -f "$b/modules/libHLSCore.a" ]] || { mkdir -p "$b/modules" && cp -a "$dir/after-$2/modules/." "$b/modules/"; }
    FUZZ_BUILD="$b" "$dir/$2/Tools/fuzz/build.sh" >/dev/null || exit 2
  fi
}
for code in old new; do build after $code; build before $code; done

results="$dir/results.txt"
: >"$results"
run_target() {  # setup code target
  local setup=$1 code=$2 t=$3 b="$dir/$1-$2"
  local tools="$here"; [[ $setup == before ]] && tools="$dir/$code/Tools/fuzz"
  rm -rf "$b/corpus-work/$t" "$b/artifacts/$t"
  local used=0 execs=0 cov="" ft="" runs=0
  while ((used < seconds)); do
    local t0; t0=$(date +%s)
    FUZZ_BUILD="$b" FUZZ_TARGETS="$t" "$tools/run.sh" $((seconds - used)) >/dev/null 2>&1
    used=$((used + $(date +%s) - t0)); runs=$((runs + 1))
    local log="$b/fuzz-$t.log" n
    n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    [[ -z "$n" ]] && n=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
    execs=$((execs + ${n:-0}))
    cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
    ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
    grep -qE "Test unit written to|ERROR: " "$log" || break   # no finding: the time is used up
  done
  printf '%-6s %-4s %-14s %4d s  runs %-3d execs %-9d edges %-6s ft %-6s %s\n' "$setup" "$code" "$t" \
    "$used" "$runs" "$execs" "${cov:-?}" "${ft:-?}" "$(findings "$setup" "$code" "$t")" | tee -a "$results"
}
for code in old new; do
  for t in playlist attributelist; do run_target before $code $t; done
  for t in playlist attributelist requestpath; do run_target after $code $t; done
done

# One instrument for the parser coverage of every final playlist corpus (seeds + what was found).
echo "parser coverage of each final playlist corpus, replayed by $dir/after-new/fuzz-playlist -runs=0:" | tee -a "$results"
for setup in before after; do
  for code in old new; do
    b="$dir/$setup-$code"
    line=$("$dir/after-new/fuzz-playlist" -runs=0 -max_len=65536 "$b/corpus-work/playlist" "$b/corpus/playlist" 2>&1 |
      grep -oE 'INITED cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' | tail -1)
    printf '  %-6s fuzzed on %-3s  %s\n' "$setup" "$code" "$line" | tee -a "$results"
  done
done
echo "results: $results"
