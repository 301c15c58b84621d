#!/usr/bin/env bash
# Corrupt media under AddressSanitizer + LeakSanitizer.
#   Tools/asan/corrupt-media.sh [COUNT] [SEED]      (default 300 cases, seed 1)
# Builds Tools/asan/CorruptMedia against Sources/HLSMedia with -sanitize=address (swiftc
# directly: the main package has no library product to depend on), prepares the inputs
# (Samples/build/short-2s TS segments, plus fMP4 / plain MP4 / ADTS remuxes made with the
# ffmpeg CLI), runs COUNT seeded mutations and prints the counts. Exit status is non-zero
# if the run crashed (ASan error, signal) or LeakSanitizer reported a leak.
# Env: ASAN_BUILD (default Tools/asan/.build, git-ignored).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
count="${1:-300}"
seed="${2:-1}"
out="${ASAN_BUILD:-$here/.build}"
export PATH="/opt/swift/usr/bin:$PATH"
mkdir -p "$out/modules" "$out/media"
t0=$(date +%s)

# --- build (incremental) ---
quiet() { grep -v "Cannot export local symbol '__asan" >&2 || true; }
flags=(-O -g -sanitize=address -parse-as-library -I "$root/CFFmpeg" $(pkg-config --cflags-only-I libavformat libavcodec libavutil libswresample | sed 's/-I/-Xcc -I/g'))
lib="$out/modules/libHLSMedia.a"
mapfile -t media < <(find "$root/Sources/HLSMedia" -name '*.swift' | sort)
if [[ ! -f "$lib" || -n "$(find "$root/Sources/HLSMedia" "$root/CFFmpeg" -newer "$lib" -type f | head -1)" ]]; then
  echo "asan build: HLSMedia (${#media[@]} files, -sanitize=address)" >&2
  swiftc "${flags[@]}" -module-name HLSMedia -emit-module -emit-module-path "$out/modules/HLSMedia.swiftmodule" \
    -emit-library -static -o "$lib" "${media[@]}" 2>&1 | quiet || { echo "build failed" >&2; exit 2; }
fi
bin="$out/corrupt-media"
if [[ ! -x "$bin" || "$here/CorruptMedia/main.swift" -nt "$bin" || "$lib" -nt "$bin" ]]; then
  echo "asan build: corrupt-media" >&2
  # main.swift is top-level code: no -parse-as-library for it.
  swiftc -O -g -sanitize=address -I "$root/CFFmpeg" -I "$out/modules" -L "$out/modules" -lHLSMedia \
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
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=0}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$here/lsan.supp:print_suppressions=1}"
export ASAN_SYMBOLIZER_PATH="${ASAN_SYMBOLIZER_PATH:-/opt/swift/usr/bin/llvm-symbolizer}"
log="$out/corrupt-media.log"
"$bin" --media "$m" --count "$count" --seed "$seed" --state "$out/current-case" >"$log" 2>&1
rc=$?
t2=$(date +%s)
cat "$log" | grep -E "^(cases|  )" || true
leaks=$(sed -n 's/.*SUMMARY: AddressSanitizer: \([0-9]*\) byte(s) leaked in \([0-9]*\) allocation(s).*/\1 bytes in \2 allocations/p' "$log")
crash=0
if [[ $rc -ne 0 && -z "$leaks" ]] || grep -q "ERROR: AddressSanitizer" "$log"; then crash=1; fi
suppressed=$(grep -A100 "Suppressions used:" "$log" | grep -E "^ *[0-9]+ +[0-9]+ " | awk '{s+=$2} END {print s+0}')
echo "crashes $crash  leaks ${leaks:-0}  (suppressed leak bytes: ${suppressed:-0})  build $((t1-t0)) s  run $((t2-t1)) s  total $((t2-t0)) s"
if [[ $crash -ne 0 ]]; then
  c=$(tr -d ' \n' < "$out/current-case")
  echo "CRASH in case $c (seed $seed): replay with $bin --media $m --seed $seed --case $c ; log $log" >&2
  grep -E "ERROR: AddressSanitizer|SUMMARY" "$log" >&2
fi
[[ -n "$leaks" ]] && echo "LEAK: see $log" >&2
[[ $crash -eq 0 && -z "$leaks" && $rc -eq 0 ]]
