#!/usr/bin/env bash
# make-ladder.sh OUTDIR [--duration SECONDS] [--segment SECONDS] [--4k [--reuse LADDER] | --abr5] [--loop SECONDS]
#
# Deterministic HLS VOD ladder from lavfi sources (testsrc2 + sine), four rungs:
#   v0 416x234 ~0.4 Mbps, v1 640x360 ~1 Mbps, v2 1280x720 ~3 Mbps, v3 1920x1080 ~6 Mbps
# --4k adds a fifth, v4 3840x2160 ~24 Mbps video (BANDWIDTH near 30 Mbps muxed), the
# 4K-class top rung of the characterization grid (docs/characterization.md). It costs
# ~3.3 s of one core per second of media (one thread: bit-exact), so the default
# ladders do not have it.
# --reuse LADDER (with --4k): hard-link (or copy) v0..v3 from LADDER when it was built
# by this recipe with the same duration and segment (the encodes are bit-exact, so the
# bytes are the same as re-encoding them); only v4 is encoded then.
# --abr5: instead, the ABR evaluation's five rungs (Tools/abr/specs, docs/abr.md): a bottom
# rung between 0.25 and 0.5 Mbit/s and a top rung above 15 Mbit/s without the 4K cost:
#   v0 416x234 ~0.25, v1 640x360 ~0.8, v2 1280x720 ~2.5, v3 1920x1080 ~5.5, v4 1920x1080 ~15 Mbps
# video (plus 128k audio and the TS overhead in BANDWIDTH). The 1080p top rung costs about a
# third of the 4K rung's encoding time.
# --loop SECONDS: encode only SECONDS of each rung's video (a multiple of 2, so every loop starts
# on a keyframe; no B-frames, so the loop keeps continuous timestamps) and repeat it to --duration
# by remuxing (stream copy), not by encoding again; the audio is encoded whole. A long ladder of
# real, playable media for a fraction of the encoding time; the picture and the segment sizes
# repeat every SECONDS.
# H.264 (libx264 veryfast, CBR-ish) + AAC-LC 128k stereo 48 kHz, 24 fps, GOP exactly 2 s,
# MPEG-TS segments. -threads 1 (x264 with frame threads is not bit-exact). One ffmpeg run per rung (identical GOP settings => aligned keyframes),
# then master.m3u8 is written here with BANDWIDTH = measured peak segment bitrate,
# AVERAGE-BANDWIDTH = measured mean, RESOLUTION, FRAME-RATE and CODECS.
# Idempotent: skipped when OUTDIR/master.m3u8 exists and OUTDIR/.stamp matches.
set -euo pipefail

usage() { echo "usage: $0 OUTDIR [--duration SECONDS] [--segment SECONDS] [--4k [--reuse LADDER] | --abr5] [--loop SECONDS]" >&2; exit 64; }
[ $# -ge 1 ] || usage
OUT=$1; shift
DURATION=30
SEGMENT=2
WITH_4K=0
ABR5=0
LOOP=0
LOOP_GIVEN=
REUSE=
while [ $# -gt 0 ]; do
  case $1 in
    --duration) [ $# -ge 2 ] || usage; DURATION=$2; shift 2 ;;
    --segment)  [ $# -ge 2 ] || usage; SEGMENT=$2; shift 2 ;;
    --4k)       WITH_4K=1; shift ;;
    --reuse)    [ $# -ge 2 ] || usage; REUSE=$2; shift 2 ;;
    --abr5)     ABR5=1; shift ;;
    --loop)     [ $# -ge 2 ] || usage; LOOP=$2; LOOP_GIVEN=1; shift 2 ;;
    *) usage ;;
  esac
done
[ -z "$REUSE" ] || [ "$WITH_4K" -eq 1 ] || { echo "--reuse needs --4k" >&2; exit 64; }
[ "$ABR5" -eq 0 ] || [ "$WITH_4K" -eq 0 ] || { echo "--abr5 and --4k are two different ladders" >&2; exit 64; }
case $SEGMENT in 2|6) ;; *) echo "segment must be 2 or 6" >&2; exit 64 ;; esac
[[ $DURATION =~ ^[0-9]+$ ]] && [ "$DURATION" -gt 0 ] || { echo "duration must be a positive integer" >&2; exit 64; }
if [ -n "$LOOP_GIVEN" ]; then
  [[ $LOOP =~ ^[0-9]+$ ]] && [ $((LOOP % 2)) -eq 0 ] && [ "$LOOP" -gt 0 ] && [ "$LOOP" -le "$DURATION" ] \
    || { echo "--loop must be an even number of seconds > 0, at most --duration" >&2; exit 64; }
  [ -z "$REUSE" ] || { echo "--loop and --reuse cannot be combined" >&2; exit 64; }
fi
command -v ffmpeg >/dev/null || { echo "ffmpeg not found in PATH" >&2; exit 69; }
command -v ffprobe >/dev/null || { echo "ffprobe not found in PATH" >&2; exit 69; }

RECIPE_VERSION=2
RUNG_4K_VERSION=1   # bump when the v4 line below changes
ABR5_VERSION=1      # bump when the --abr5 rungs below change
FFVER=$(ffmpeg -hide_banner -version | head -1)
# x264's bytes depend on the SIMD code it runs, even with one thread: its AVX-512 code gives other
# bytes than its AVX2 code (the 416x234 rung's peak BANDWIDTH 623408 against 621152). The committed
# samples' ladders are AVX2's, so on an x86-64 CPU with AVX2 every encode is pinned to it (asm=avx2:
# an AVX-512 CPU then gives AVX2's bytes); elsewhere x264 picks its own code, and the stamp says which,
# so a ladder is never reused across the two.
X264_ASM=native
if [ "$(uname -m)" = x86_64 ] && grep -qw avx2 /proc/cpuinfo 2>/dev/null; then X264_ASM=avx2; fi
X264_PARAMS="nal-hrd=cbr:force-cfr=1"
[ "$X264_ASM" = native ] || X264_PARAMS="$X264_PARAMS:asm=$X264_ASM"
STAMP4="recipe=$RECIPE_VERSION duration=$DURATION segment=$SEGMENT ffmpeg=$FFVER x264asm=$X264_ASM"
# The four-rung stamp is unchanged by the 4K option, so existing ladders stay valid.
STAMP=$STAMP4
[ "$WITH_4K" -eq 0 ] || STAMP="$STAMP4 rung4k=$RUNG_4K_VERSION"
[ "$ABR5" -eq 0 ] || STAMP="$STAMP4 abr5=$ABR5_VERSION"
[ "$LOOP" = 0 ] || STAMP="$STAMP loop=$LOOP"
if [ -f "$OUT/master.m3u8" ] && [ -f "$OUT/.stamp" ] && [ "$(cat "$OUT/.stamp")" = "$STAMP" ]; then
  echo "up to date: $OUT"
  exit 0
fi

mkdir -p "$OUT"
rm -rf "$OUT"/v0 "$OUT"/v1 "$OUT"/v2 "$OUT"/v3 "$OUT"/v4 "$OUT/master.m3u8" "$OUT/.stamp"

FPS=24
GOP=48   # 2 s at 24 fps
# name width height video-kbps profile-level (for CODECS)
RUNGS=(
  "v0 416 234 400 avc1.64000d"
  "v1 640 360 1000 avc1.64001e"
  "v2 1280 720 3000 avc1.64001f"
  "v3 1920 1080 6000 avc1.640028"
)
# 4K-class: ~24 Mbit/s of video muxes to a peak segment bitrate near 30 Mbit/s.
[ "$WITH_4K" -eq 0 ] || RUNGS+=("v4 3840 2160 24000 avc1.640033")
if [ "$ABR5" -eq 1 ]; then
  RUNGS=(
    "v0 416 234 250 avc1.64000d"
    "v1 640 360 800 avc1.64001e"
    "v2 1280 720 2500 avc1.64001f"
    "v3 1920 1080 5500 avc1.640028"
    "v4 1920 1080 15000 avc1.640028"
  )
fi

encode_rung() {
  local name=$1 w=$2 h=$3 kbps=$4
  mkdir -p "$OUT/$name"
  if [ "$LOOP" != 0 ]; then
    # The video's SECONDS encoded once (no B-frames: a loop then keeps every keyframe and
    # continuous timestamps), looped to DURATION by stream copy; the audio encoded whole.
    local src="$OUT/$name/loop-source.ts"
    ffmpeg -nostdin -hide_banner -loglevel error -y \
      -f lavfi -i "testsrc2=size=${w}x${h}:rate=${FPS}:duration=${LOOP}" -map 0:v:0 \
      -threads 1 -fflags +bitexact -flags:v +bitexact \
      -c:v libx264 -preset veryfast -profile:v high -pix_fmt yuv420p -bf 0 \
      -x264-params "$X264_PARAMS" \
      -b:v "${kbps}k" -minrate "${kbps}k" -maxrate "${kbps}k" -bufsize "$((kbps * 2))k" \
      -r $FPS -g $GOP -keyint_min $GOP -sc_threshold 0 \
      -force_key_frames "expr:gte(t,n_forced*2)" -f mpegts "$src"
    ffmpeg -nostdin -hide_banner -loglevel error -y \
      -stream_loop $(( (DURATION + LOOP - 1) / LOOP - 1 )) -i "$src" \
      -f lavfi -i "sine=frequency=440:beep_factor=4:sample_rate=48000:duration=${DURATION}" \
      -map 0:v:0 -map 1:a:0 -fflags +bitexact -flags:a +bitexact -c:v copy \
      -c:a aac -b:a 128k -ac 2 -ar 48000 -t "$DURATION" \
      -f hls -hls_time "$SEGMENT" -hls_playlist_type vod -hls_list_size 0 \
      -hls_segment_type mpegts -hls_flags independent_segments \
      -hls_segment_filename "$OUT/$name/seg_%05d.ts" \
      "$OUT/$name/prog.m3u8"
    rm -f "$src"
    return
  fi
  encode_to "$w" "$h" "$kbps" "$DURATION" \
    -f hls -hls_time "$SEGMENT" -hls_playlist_type vod -hls_list_size 0 \
    -hls_segment_type mpegts -hls_flags independent_segments \
    -hls_segment_filename "$OUT/$name/seg_%05d.ts" \
    "$OUT/$name/prog.m3u8"
}

# encode_to W H KBPS SECONDS OUTPUT-OPTIONS...: the rung's encode (bit-exact, one thread).
encode_to() {
  local w=$1 h=$2 kbps=$3 seconds=$4
  shift 4
  ffmpeg -nostdin -hide_banner -loglevel error -y \
    -f lavfi -i "testsrc2=size=${w}x${h}:rate=${FPS}:duration=${seconds}" \
    -f lavfi -i "sine=frequency=440:beep_factor=4:sample_rate=48000:duration=${seconds}" \
    -map 0:v:0 -map 1:a:0 \
    -threads 1 -fflags +bitexact -flags:v +bitexact -flags:a +bitexact \
    -c:v libx264 -preset veryfast -profile:v high -pix_fmt yuv420p \
    -x264-params "$X264_PARAMS" \
    -b:v "${kbps}k" -minrate "${kbps}k" -maxrate "${kbps}k" -bufsize "$((kbps * 2))k" \
    -r $FPS -g $GOP -keyint_min $GOP -sc_threshold 0 \
    -force_key_frames "expr:gte(t,n_forced*2)" \
    -c:a aac -b:a 128k -ac 2 -ar 48000 \
    "$@"
}

# x264 is only bit-exact with a single thread, so each encode uses -threads 1 and
# the machine's cores are used by running rungs in two parallel lanes instead:
# lane A encodes 1080p, lane B the three smaller rungs; with --4k, lane A encodes
# 2160p and lane B the four others (or hard-links them from --reuse).
reusable() {
  [ -n "$REUSE" ] && [ -f "$REUSE/master.m3u8" ] && [ -f "$REUSE/.stamp" ] \
    && [ "$(cat "$REUSE/.stamp")" = "$STAMP4" ] \
    && [ -f "$REUSE/v0/prog.m3u8" ] && [ -f "$REUSE/v3/prog.m3u8" ]
}
link_rung() { cp -al "$REUSE/$1" "$OUT/$1" 2>/dev/null || cp -a "$REUSE/$1" "$OUT/$1"; }
if [ "$WITH_4K" -eq 1 ]; then
  lane_a() { read -r n w h k _ <<<"${RUNGS[4]}"; encode_rung "$n" "$w" "$h" "$k"; }
  if reusable; then
    echo "reusing v0..v3 from $REUSE"
    lane_b() { for i in 3 2 1 0; do read -r n _ <<<"${RUNGS[$i]}"; link_rung "$n"; done; }
  else
    [ -z "$REUSE" ] || echo "not reusing $REUSE (absent or built with other parameters): encoding v0..v3"
    lane_b() { for i in 3 2 1 0; do read -r n w h k _ <<<"${RUNGS[$i]}"; encode_rung "$n" "$w" "$h" "$k"; done; }
  fi
elif [ "$ABR5" -eq 1 ]; then
  # The 15 Mbit/s rung costs about as much as the four others together.
  lane_a() { read -r n w h k _ <<<"${RUNGS[4]}"; encode_rung "$n" "$w" "$h" "$k"; }
  lane_b() { for i in 3 2 1 0; do read -r n w h k _ <<<"${RUNGS[$i]}"; encode_rung "$n" "$w" "$h" "$k"; done; }
else
  lane_a() { read -r n w h k _ <<<"${RUNGS[3]}"; encode_rung "$n" "$w" "$h" "$k"; }
  lane_b() { for i in 2 1 0; do read -r n w h k _ <<<"${RUNGS[$i]}"; encode_rung "$n" "$w" "$h" "$k"; done; }
fi
lane_a & pid_a=$!
lane_b & pid_b=$!
status=0
wait "$pid_a" || status=$?
wait "$pid_b" || status=$?
[ "$status" -eq 0 ] || { echo "ffmpeg failed ($status)" >&2; exit 1; }

# Measure per-segment bitrates (bits / EXTINF duration) and the codec string level
# actually produced (from the SPS via ffprobe), then write the master playlist.
{
  echo "#EXTM3U"
  echo "#EXT-X-VERSION:3"
  echo "#EXT-X-INDEPENDENT-SEGMENTS"
  for rung in "${RUNGS[@]}"; do
    read -r name w h kbps codec <<<"$rung"
    stats=$(awk -v dir="$OUT/$name" '
      /^#EXTINF:/ { sub(/^#EXTINF:/, ""); sub(/,.*/, ""); d = $0; next }
      /^[^#]/ && d > 0 {
        cmd = "stat -c %s \"" dir "/" $0 "\""; cmd | getline sz; close(cmd)
        br = sz * 8 / d; if (br > peak) peak = br; tb += sz * 8; td += d; d = 0
      }
      END { printf "%d %d\n", peak, tb / td }' "$OUT/$name/prog.m3u8")
    read -r peak avg <<<"$stats"
    # avc1.PPCCLL: High profile (0x64), constraints 00, level from the stream.
    level=$(ffprobe -v error -select_streams v:0 -show_entries stream=level -of csv=p=0 "$OUT/$name/seg_00000.ts" | awk '/^[0-9]+$/ && !seen { print; seen = 1 }')
    codec=$(printf 'avc1.6400%02x' "$level")
    echo "#EXT-X-STREAM-INF:BANDWIDTH=$peak,AVERAGE-BANDWIDTH=$avg,RESOLUTION=${w}x${h},FRAME-RATE=24.000,CODECS=\"$codec,mp4a.40.2\""
    echo "$name/prog.m3u8"
  done
} > "$OUT/master.m3u8.tmp"
mv "$OUT/master.m3u8.tmp" "$OUT/master.m3u8"
echo "$STAMP" > "$OUT/.stamp"
echo "built: $OUT"
