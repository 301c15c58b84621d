#!/bin/sh
# A live HLS packager nobody here wrote: FFmpeg's own HLS muxer, fed in real time (-re) from lavfi
# test sources, writing a 3-rung ladder with a multivariant playlist into OUTDIR while it runs.
#
#   Samples/live-packager.sh OUTDIR [SECONDS]
#
# Serve OUTDIR with `hls-origin OUTDIR` (no --live needed: the playlists are already live) and
# play http://127.0.0.1:PORT/master.m3u8. Without SECONDS it runs until interrupted.
#
# Tunables (environment):
#   SEGMENT_SECONDS  target segment duration (default 2); the GOP is aligned to it
#   LIST_SIZE        segments kept in each media playlist (-hls_list_size, default 6)
#   FPS              frame rate (default 25)
#
# Layout: OUTDIR/master.m3u8, OUTDIR/v0..v2/index.m3u8, OUTDIR/v0..v2/seg_NNNNN.ts
#   v0 426x240 400 kbit/s, v1 640x360 800 kbit/s, v2 854x480 1400 kbit/s, each with 96 kbit/s AAC (sine).
# Flags: delete_segments (old segments are removed as they leave the window), program_date_time
# (EXT-X-PROGRAM-DATE-TIME on each segment), independent_segments (every segment starts with a keyframe).
set -eu

if [ $# -lt 1 ]; then
    echo "usage: $0 OUTDIR [SECONDS]" >&2
    exit 64
fi
OUT=$1
DURATION=${2:-}
SEG=${SEGMENT_SECONDS:-2}
LIST=${LIST_SIZE:-6}
FPS=${FPS:-25}
GOP=$(awk "BEGIN { printf \"%d\", $SEG * $FPS }")

command -v ffmpeg >/dev/null 2>&1 || { echo "$0: ffmpeg not found on PATH" >&2; exit 69; }
mkdir -p "$OUT/v0" "$OUT/v1" "$OUT/v2"

# shellcheck disable=SC2086
exec ffmpeg -hide_banner -nostdin -loglevel warning -y -re \
    -f lavfi -i "testsrc2=size=854x480:rate=$FPS" \
    -f lavfi -i "sine=frequency=440:sample_rate=48000" \
    ${DURATION:+-t "$DURATION"} \
    -filter_complex "[0:v]split=3[a][b][c];[a]scale=426:240[v0];[b]scale=640:360[v1];[c]null[v2]" \
    -map "[v0]" -map "[v1]" -map "[v2]" -map 1:a -map 1:a -map 1:a \
    -c:v libx264 -preset veryfast -tune zerolatency -pix_fmt yuv420p \
    -g "$GOP" -keyint_min "$GOP" -sc_threshold 0 \
    -b:v:0 400k -maxrate:v:0 440k -bufsize:v:0 800k \
    -b:v:1 800k -maxrate:v:1 880k -bufsize:v:1 1600k \
    -b:v:2 1400k -maxrate:v:2 1540k -bufsize:v:2 2800k \
    -c:a aac -b:a 96k -ac 2 \
    -f hls -hls_time "$SEG" -hls_list_size "$LIST" \
    -hls_flags delete_segments+program_date_time+independent_segments \
    -hls_segment_filename "$OUT/v%v/seg_%05d.ts" \
    -master_pl_name master.m3u8 \
    -var_stream_map "v:0,a:0 v:1,a:1 v:2,a:2" \
    "$OUT/v%v/index.m3u8"
