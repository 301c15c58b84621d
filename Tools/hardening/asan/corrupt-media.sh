#!/usr/bin/env bash
# Corrupt media under AddressSanitizer + LeakSanitizer.
#   Tools/hardening/asan/corrupt-media.sh [COUNT] [SEED]      (default 300 cases, seed 1)
# Builds Tools/hardening/asan/CorruptMedia against Sources/HLSMedia with -sanitize=address (swiftc
# directly: the main package has no library product to depend on), prepares the inputs
# (Samples/build/short-2s TS segments, plus fMP4 / plain MP4 / ADTS remuxes made with the
# ffmpeg CLI), runs COUNT seeded mutations and prints the counts. Exit status is non-zero
# if the run crashed (ASan error, signal) or LeakSanitizer reported a leak.
# Env: ASAN_BUILD (default Tools/hardening/asan/.build, git-ignored).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
count="${1:-300}"
seed="${2:-1}"
out="${ASAN_BUILD:-$here/.build}"
export PATH="/opt/swift/usr/bin:$PATH"
mkdir -p "$out/modules" "$out/media"
t0=$(date +%s)

# --- build (incremental) ---
quiet() { grep -v "Cannot export local symbol '__asan" >&2 || true; }
# The CFFmpeg shim's static inline C helpers are compiled into HLSMedia by the Swift compiler's
# clang: -Xcc -fsanitize=undefined instruments them with UndefinedBehaviorSanitizer (its runtime
# comes with ASan's). Swift code needs no flag for that: overflow and conversion checks trap under -O.
ubsan=(-Xcc -fsanitize=undefined)
flags=(-O -g -sanitize=address "${ubsan[@]}" -parse-as-library -I "$root/CFFmpeg" $(pkg-config --cflags-only-I libavformat libavcodec libavutil libswresample | sed 's/-I/-Xcc -I/g'))
lib="$out/modules/libHLSMedia.a"
mapfile -t media < <(find "$root/Sources/HLSMedia" -name '*.swift' | sort)
# A change of flags (the UBSan one was added later) rebuilds everything.
stamp="$out/modules/flags.txt"
[[ "$(cat "$stamp" 2>/dev/null)" == "${flags[*]}" ]] || rm -f "$lib" "$out/corrupt-media"
if [[ ! -f "$lib" || -n "$(find "$root/Sources/HLSMedia" "$root/CFFmpeg" -newer "$lib" -type f | head -1)" ]]; then
  echo "asan build: HLSMedia (${#media[@]} files, -sanitize=address)" >&2
  swiftc "${flags[@]}" -module-name HLSMedia -emit-module -emit-module-path "$out/modules/HLSMedia.swiftmodule" \
    -emit-library -static -o "$lib" "${media[@]}" 2>&1 | quiet || { echo "build failed" >&2; exit 2; }
  echo "${flags[*]}" >"$stamp"
fi
bin="$out/corrupt-media"
if [[ ! -x "$bin" || "$here/CorruptMedia/main.swift" -nt "$bin" || "$here/CPlant/plant.h" -nt "$bin" || "$lib" -nt "$bin" ]]; then
  echo "asan build: corrupt-media" >&2
  # main.swift is top-level code: no -parse-as-library for it.
  swiftc -O -g -sanitize=address "${ubsan[@]}" -I "$root/CFFmpeg" -I "$here/CPlant" -I "$out/modules" -L "$out/modules" -lHLSMedia \
    $(pkg-config --libs libavformat libavcodec libavutil libswresample) \
    -module-name CorruptMedia "$here/CorruptMedia/main.swift" -o "$bin" 2>&1 | quiet || { echo "build failed" >&2; exit 2; }
fi
t1=$(date +%s)

# --- inputs ---
ladder="$root/Samples/build/short-2s"
[[ -f "$ladder/v3/seg_00003.ts" ]] || { echo "no $ladder: run Samples/make-all.sh first" >&2; exit 2; }
m="$out/media"
ln -sfn "$ladder" "$m/ts"
if [[ ! -f "$m/packed.aac" || ! -f "$m/fmp4/seg_00000.m4s" || ! -f "$m/plain.mp4" ]]; then
  src="$ladder/v0/seg_00000.ts"; mkdir -p "$m/fmp4"
  ffmpeg -nostdin -v error -y -i "$src" -c copy -bsf:a aac_adtstoasc -f hls -hls_segment_type fmp4 -hls_time 2 \
    -hls_playlist_type vod -hls_fmp4_init_filename init.mp4 -hls_segment_filename "$m/fmp4/seg_%05d.m4s" "$m/fmp4/prog.m3u8"
  ffmpeg -nostdin -v error -y -i "$src" -c copy -bsf:a aac_adtstoasc -f mp4 "$m/plain.mp4"
  ffmpeg -nostdin -v error -y -i "$src" -vn -c:a copy -f adts "$m/packed.aac"
fi

# --- run ---
# LSan suppressions: only for allocations proven to be outside our code (see the file).
# handle_abort: an FFmpeg av_assert0 abort() gets an ASan stack too. Swift's own crash
# backtracer is off: it reads the crashed stack and trips ASan itself (a false report).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:handle_abort=1:detect_stack_use_after_return=0}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$here/lsan.supp:print_suppressions=1}"
export ASAN_SYMBOLIZER_PATH="${ASAN_SYMBOLIZER_PATH:-/opt/swift/usr/bin/llvm-symbolizer}"
export SWIFT_BACKTRACE=enable=no
# UBSan: a report stops the process (counted as a crash, like an ASan error), with its stack.
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
rm -f "$out"/corrupt-media*.log "$out/crashes.txt" "$out/results.txt"
results="$out/results.txt"
# A crash ends the process: it is counted, its case recorded, and the run resumes at the next case.
next=0; chunk=0; crashes=0; leakbytes=0; leakallocs=0
while [[ $next -lt $count ]]; do
  log="$out/corrupt-media.$chunk.log"
  "$bin" --media "$m" --count "$count" --start "$next" --seed "$seed" --results "$results" >"$log" 2>&1
  rc=$?
  # Leak reports are cumulative within one process (periodic checks + the one at exit): take the last.
  l=$(sed -n 's/.*SUMMARY: AddressSanitizer: \([0-9]*\) byte(s) leaked in \([0-9]*\) allocation(s).*/\1 \2/p' "$log" | tail -1)
  if [[ -n "$l" ]]; then leakbytes=$((leakbytes + ${l% *})); leakallocs=$((leakallocs + ${l#* })); fi
  last=$(tail -1 "$results")
  if [[ "$last" == START* ]]; then
    c=${last#START }
    crashes=$((crashes + 1))
    why=$(grep -m1 -E "ERROR: AddressSanitizer|runtime error:|ffmpeg\[0\]|Fatal error" "$log" | cut -c1-200)
    echo "case $c: ${why:-exit $rc}; replay: $bin --media $m --seed $seed --case $c; log $log" >>"$out/crashes.txt"
    echo "CRASH $c" >>"$results"
    next=$((c + 1))
  else
    if [[ $rc -ne 0 && -z "$l" ]]; then crashes=$((crashes + 1)); echo "exit $rc after the last case; log $log" >>"$out/crashes.txt"; fi
    next=$count
  fi
  chunk=$((chunk + 1))
done
t2=$(date +%s)
awk '
  /^DONE /{n++; o[$4]++; m[$3 " " $4]++; if (!($3 in seen)) {seen[$3]=1; order[++k]=$3}}
  /^CRASH /{n++; cr++}
  END {
    printf "cases %d  thrown %d  flagged %d  clean %d  crashes %d\n", n, o["thrown"], o["flagged"], o["clean"], cr
    for (i=1;i<=k;i++) printf "  %-18s thrown %5d  flagged %5d  clean %5d\n", order[i], m[order[i] " thrown"], m[order[i] " flagged"], m[order[i] " clean"]
  }' "$results"
# Known reproducers (Tools/hardening/asan/regressions/NAME.{ts,adts,m4s,mp4}): each must end without a crash.
regress_fail=0; regress_n=0
for f in "$here"/regressions/*; do
  [[ -f "$f" && "$f" != *.list ]] || continue
  case "$f" in *.adts) h=adts ;; *.m4s) h=fmp4 ;; *.mp4) h=probe ;; *) h=ts ;; esac
  regress_n=$((regress_n + 1))
  if ! "$bin" --media "$m" --file "$f" --hint "$h" >"$out/regress.$(basename "$f").log" 2>&1; then
    regress_fail=$((regress_fail + 1))
    echo "REGRESSION $(basename "$f") (hint $h) still crashes: $(grep -m1 -E "ERROR: AddressSanitizer|ffmpeg\[0\]" "$out/regress.$(basename "$f").log" | cut -c1-160)" >&2
  fi
done
while read -r rel h _; do
  [[ -z "$rel" || "$rel" == \#* ]] && continue
  f="$root/Samples/build/$rel"
  [[ -f "$f" ]] || { echo "regression input $f missing (run Samples/make-all.sh)" >&2; continue; }
  regress_n=$((regress_n + 1))
  rlog="$out/regress.$(echo "$rel" | tr / _).log"
  if ! "$bin" --media "$m" --file "$f" --hint "$h" >"$rlog" 2>&1; then
    regress_fail=$((regress_fail + 1))
    echo "REGRESSION $rel (hint $h) still crashes: $(grep -m1 -E "ERROR: AddressSanitizer|ffmpeg\\[0\\]" "$rlog" | cut -c1-160)" >&2
  fi
done < <(cat "$here/regressions/samples.list" 2>/dev/null)
echo "regressions: $regress_n run, $regress_fail crash"
suppressed=$(cat "$out"/corrupt-media.*.log | grep -A100 "Suppressions used:" | grep -E "^ *[0-9]+ +[0-9]+ " | awk '{s+=$2} END {print s+0}')
echo "crashes $crashes  leaks $leakbytes bytes in $leakallocs allocations  (suppressed: ${suppressed:-0} bytes)  seed $seed  build $((t1-t0)) s  run $((t2-t1)) s  total $((t2-t0)) s"
[[ -f "$out/crashes.txt" ]] && { echo "CRASHES:" >&2; cat "$out/crashes.txt" >&2; }
[[ $leakbytes -gt 0 ]] && echo "LEAKS: see $out/corrupt-media.*.log" >&2
[[ $crashes -eq 0 && $leakbytes -eq 0 && $regress_fail -eq 0 ]]
