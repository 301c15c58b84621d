#!/usr/bin/env bash
# Writes a very long VOD into DIR: ten real 1 s MPEG-TS segments (H.264 320x180 25 fps with a
# 1 s GOP, AAC), encoded once by ffmpeg (a few seconds), and a media playlist `long.m3u8` that
# lists COUNT segments (default 100,000: the parser's PlaylistLimits.maxSegments, about 27.8 h)
# by cycling through the ten, with an EXT-X-DISCONTINUITY at every wrap (the timestamps go back).
# START, when given, is written as EXT-X-START:TIME-OFFSET=START (e.g. -5: five seconds before
# the end). The playlist stays under the parser's 4 MiB limit.
# Usage: make-long-vod.sh DIR [COUNT] [START]
# Used by Tests/HLSPlayerTests/LongVODTests.swift and Tools/characterize/long-vod/bench.sh.
set -euo pipefail
dir="${1:?usage: make-long-vod.sh DIR [COUNT] [START]}"
count="${2:-100000}"
start="${3:-}"
mkdir -p "$dir"
if [[ ! -f "$dir/src.m3u8" ]]; then
  ffmpeg -nostdin -hide_banner -loglevel error -y \
    -f lavfi -i "testsrc2=size=320x180:rate=25" -f lavfi -i "sine=frequency=440:sample_rate=48000" -t 10 \
    -c:v libx264 -preset ultrafast -pix_fmt yuv420p -g 25 -keyint_min 25 -sc_threshold 0 \
    -c:a aac -b:a 64k -ac 2 \
    -f hls -hls_time 1 -hls_list_size 0 -hls_segment_filename "$dir/s%d.ts" "$dir/src.m3u8"
fi
python3 - "$dir" "$count" "$start" <<'PY'
import math, os, sys
d, count, start = sys.argv[1], int(sys.argv[2]), sys.argv[3]
pairs, dur = [], None
for line in open(os.path.join(d, "src.m3u8")):
    line = line.strip()
    if line.startswith("#EXTINF:"):
        dur = line[len("#EXTINF:"):].split(",")[0]
    elif line and not line.startswith("#"):
        pairs.append((dur, line))
n = len(pairs)
target = max(1, math.ceil(max(float(p[0]) for p in pairs) - 0.5))  # rounds like RFC 8216 §4.3.3.1
out = ["#EXTM3U", "#EXT-X-VERSION:3", f"#EXT-X-TARGETDURATION:{target}", "#EXT-X-PLAYLIST-TYPE:VOD"]
if start:
    out.append(f"#EXT-X-START:TIME-OFFSET={start}")
for i in range(count):
    if i > 0 and i % n == 0:
        out.append("#EXT-X-DISCONTINUITY")
    d_, uri = pairs[i % n]
    out.append(f"#EXTINF:{d_},")
    out.append(uri)
out.append("#EXT-X-ENDLIST")
with open(os.path.join(d, "long.m3u8"), "w") as f:
    f.write("\n".join(out) + "\n")
PY
