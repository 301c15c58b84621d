#!/usr/bin/env bash
# Builds and runs the libFuzzer targets (playlist parser, attribute-list grammar, the
# playlist-to-request path) for SECONDS each (default 60), one after the other.
#   Tools/hardening/fuzz/run.sh [SECONDS]
# Env: PLAYLISTS=dir of .m3u8 seeds (default ../shared/data/playlists next to the repo),
#      FUZZ_BUILD=build dir (default Tools/hardening/fuzz/.build, git-ignored), FUZZ_TARGETS="playlist attributelist requestpath",
#      FUZZ_ARGS=extra libFuzzer flags, appended last (e.g. "-jobs=2" or a lower -rss_limit_mb).
# Limits: a single input running over 10 s is a timeout, the process over 2048 MB RSS
# (or one malloc over 512 MB) is an OOM, LeakSanitizer runs after each input that
# allocated more than it freed; all three are findings like a crash. Exit status is
# non-zero on any finding, and the reproducer path is printed.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
seconds="${1:-60}"
out="${FUZZ_BUILD:-$here/.build}"
export FUZZ_BUILD="$out"
"$here/build.sh" >/dev/null || { echo "run.sh: build failed" >&2; exit 2; }
[[ -d "$out/corpus/requestpath" ]] || "$here/make-corpus.sh" "${PLAYLISTS:-$here/../../../../shared/data/playlists}" "$out/corpus" || exit 2
# Swift's runtime symbolizer for readable stacks when a finding happens.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:symbolize=1}"
export ASAN_SYMBOLIZER_PATH="${ASAN_SYMBOLIZER_PATH:-/opt/swift/usr/bin/llvm-symbolizer}"
# A Swift trap (an overflow, a bad conversion) must reach libFuzzer as the SIGILL it is
# ("deadly signal", with the trapping line in the stack): Swift's own crash backtracer would
# read the crashed stack first and make ASan report a bogus heap-use-after-free or unknown-crash.
export SWIFT_BACKTRACE=enable=no

status=0
for t in ${FUZZ_TARGETS:-playlist attributelist requestpath}; do
  case $t in
    playlist) maxlen=65536 ;;        # large enough for every seed playlist, small next to maxBytes
    attributelist) maxlen=4096 ;;
    requestpath) maxlen=65536 ;;
    *) echo "unknown target $t" >&2; exit 2 ;;
  esac
  bin="$out/fuzz-$t"
  work="$out/corpus-work/$t"; art="$out/artifacts/$t/"
  mkdir -p "$work" "$art"
  log="$out/fuzz-$t.log"
  # Known reproducers first: each must run clean.
  if compgen -G "$here/regressions/$t/*" >/dev/null; then
    if ! "$bin" -runs=1 -timeout=10 -rss_limit_mb=2048 "$here"/regressions/$t/* >"$out/regress-$t.log" 2>&1; then
      echo "FAIL $t: a regression input still fails, see $out/regress-$t.log" >&2
      grep -E "ERROR|Running:" "$out/regress-$t.log" | tail -5 >&2
      status=1
    fi
  fi
  start=$(date +%s.%N)
  "$bin" "$work" "$out/corpus/$t" \
    -dict="$here/hls.dict" -max_total_time="$seconds" -max_len="$maxlen" \
    -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 -detect_leaks=1 \
    -artifact_prefix="$art" -print_final_stats=1 -close_fd_mask=1 ${FUZZ_ARGS:-} >"$log" 2>&1
  rc=$?
  end=$(date +%s.%N)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9]+[a-zA-Z]*' "$log" | tail -1)
  printf '%-14s %8.1f s  execs %-10s (%s/s)  peak RSS %s MB  %s  exit %d\n' \
    "$t" "$(echo "$end - $start" | bc)" "${execs:-?}" "${rate:-?}" "${rss:-?}" "${cov:-}" "$rc"
  if [[ $rc -ne 0 ]]; then
    status=1
    kind=$(grep -oE 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer): [a-zA-Z-]+' "$log" | head -1)
    where=$(grep -m1 -oE 'in [^ ]+ [^ ]*Sources/HLSCore/[^ ]+' "$log" | sed 's/.*Sources\//Sources\//')
    [[ -n "$where" ]] && kind="$kind at $where"
    repro=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    echo "FINDING $t: ${kind:-exit $rc}; reproducer: ${repro:-none written}; log: $log" >&2
  fi
done
exit $status
