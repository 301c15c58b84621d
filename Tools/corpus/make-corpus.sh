#!/usr/bin/env bash
# Builds a small corpus of HLS streams the way other packagers write them, with the ffmpeg CLI
# (a few seconds of media each; the whole build takes well under a minute). One folder per item,
# its entry playlist named in the table below; Tests/HLSPlayerTests/CorpusStreamTests.swift plays
# every item through hls-origin and compares the decoded frames with ffmpeg's (framecrc).
#
#   item           entry          what
#   packed-aac     prog.m3u8      audio only: packed ADTS AAC segments (.aac), no container
#   packed-mp3     prog.m3u8      audio only: packed MP3 segments (.mp3)
#   packed-ac3     prog.m3u8      audio only: packed AC-3 segments (.ac3)
#   packed-eac3    prog.m3u8      audio only: packed E-AC-3 segments (.ec3, as Apple names them)
#   ts-mp3         prog.m3u8      audio only: MP3 in MPEG-TS
#   mid-gop        prog.m3u8      H.264 with a 4 s GOP cut into 1 s segments (split_by_time):
#                                 segments start mid-GOP; no EXT-X-INDEPENDENT-SEGMENTS
#   cmaf-live      prog.m3u8      CMAF (fMP4) 0.25 s segments, one GOP each, with AAC: served live
#                                 by hls-origin with a short window (the test does)
#   iframe-only    iframes.m3u8   an I-frame-only media playlist (EXT-X-I-FRAMES-ONLY): a byte range
#                                 per I-frame inside regular TS segments, PAT/PMT from EXT-X-MAP
#   whitespace     master.m3u8    blanks where RFC 8216 allows none: `#EXT-X-VERSION: 3`, a blank
#                                 before a ':', around '=' and ',', around EXTINF durations, at
#                                 line ends (docs/playlist-parsing.md, "Whitespace")
#
# Usage: make-corpus.sh OUT_DIR
set -euo pipefail
out="${1:?usage: make-corpus.sh OUT_DIR}"
mkdir -p "$out"
ff() { ffmpeg -nostdin -hide_banner -loglevel error -y "$@"; }
tone=(-f lavfi -i "sine=frequency=440:sample_rate=48000")
picture() { echo "testsrc2=size=320x180:rate=$1"; }

# Packed audio: the segment muxer writes raw elementary-stream segments and an m3u8 list.
packed() { # item codec-args format extension
  local d="$out/$1"; mkdir -p "$d"
  ff "${tone[@]}" -map 0:a -t 4 $2 -ac 2 -f segment -segment_time 1 -segment_format "$3" \
     -segment_list "$d/prog.m3u8" -segment_list_type m3u8 "$d/seg%d.$4"
}
packed packed-aac "-c:a aac -b:a 96k" adts aac
packed packed-mp3 "-c:a libmp3lame -b:a 128k" mp3 mp3
packed packed-ac3 "-c:a ac3 -b:a 192k" ac3 ac3
packed packed-eac3 "-c:a eac3 -b:a 192k" eac3 ec3

# MP3 in MPEG-TS, audio only.
mkdir -p "$out/ts-mp3"
ff "${tone[@]}" -map 0:a -t 4 -c:a libmp3lame -b:a 128k -ac 2 -f hls -hls_time 1 -hls_list_size 0 \
   -hls_playlist_type vod -hls_segment_filename "$out/ts-mp3/seg%d.ts" "$out/ts-mp3/prog.m3u8"

# A long GOP (4 s at 25 fps) cut every second: segments 1-3 of each GOP start on a P-frame.
mkdir -p "$out/mid-gop"
ff -f lavfi -i "$(picture 25)" "${tone[@]}" -map 0:v -map 1:a -t 8 -c:v libx264 -preset ultrafast -pix_fmt yuv420p \
   -g 100 -keyint_min 100 -sc_threshold 0 -c:a aac -b:a 64k -ac 2 \
   -f hls -hls_time 1 -hls_list_size 0 -hls_playlist_type vod -hls_flags split_by_time \
   -hls_segment_filename "$out/mid-gop/seg%d.ts" "$out/mid-gop/prog.m3u8"

# CMAF: fMP4 segments of 0.25 s (a 6-frame GOP at 24 fps), 8 s, for a live window of a few segments.
mkdir -p "$out/cmaf-live"
ff -f lavfi -i "$(picture 24)" "${tone[@]}" -map 0:v -map 1:a -t 8 -c:v libx264 -preset ultrafast -pix_fmt yuv420p \
   -g 6 -keyint_min 6 -sc_threshold 0 -c:a aac -b:a 64k -ac 2 \
   -f hls -hls_time 0.25 -hls_list_size 0 -hls_playlist_type vod -hls_segment_type fmp4 \
   -hls_fmp4_init_filename init.mp4 -hls_segment_filename "$out/cmaf-live/seg%d.m4s" "$out/cmaf-live/prog.m3u8"

# I-frame-only: regular 2 s TS segments (1 s GOP, video only), and a playlist of one byte range per
# I-frame found by ffprobe (the keyframe's first TS packet up to the next video packet's), with the
# first segment's SDT/PAT/PMT as the Media Initialization Section (RFC 8216 §4.3.3.6).
mkdir -p "$out/iframe-only"
ff -f lavfi -i "$(picture 25)" -map 0:v -t 6 -c:v libx264 -preset ultrafast -pix_fmt yuv420p \
   -g 25 -keyint_min 25 -sc_threshold 0 -an \
   -f hls -hls_time 2 -hls_list_size 0 -hls_playlist_type vod \
   -hls_segment_filename "$out/iframe-only/seg%d.ts" "$out/iframe-only/prog.m3u8"
python3 - "$out/iframe-only" <<'PY'
import json, os, subprocess, sys
d = sys.argv[1]
segments = [l.strip() for l in open(os.path.join(d, "prog.m3u8")) if l.strip() and not l.startswith("#")]
lines, first_pos = [], None
for seg in segments:
    probe = json.loads(subprocess.check_output(
        ["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_packets",
         "-show_entries", "packet=pos,flags,duration_time", "-of", "json", os.path.join(d, seg)]))
    packets = [p for p in probe["packets"] if "pos" in p]
    size = os.path.getsize(os.path.join(d, seg))
    for i, p in enumerate(packets):
        if "K" not in p["flags"]:
            continue
        start = int(p["pos"])
        end = int(packets[i + 1]["pos"]) if i + 1 < len(packets) else size
        if first_pos is None:
            first_pos = start
        lines += ["#EXTINF:1.000,", f"#EXT-X-BYTERANGE:{end - start}@{start}", seg]
head = ["#EXTM3U", "#EXT-X-VERSION:4", "#EXT-X-TARGETDURATION:1", "#EXT-X-PLAYLIST-TYPE:VOD",
        "#EXT-X-I-FRAMES-ONLY", f'#EXT-X-MAP:URI="{segments[0]}",BYTERANGE="{first_pos}@0"']
open(os.path.join(d, "iframes.m3u8"), "w").write("\n".join(head + lines + ["#EXT-X-ENDLIST", ""]))
PY

# Whitespace: an ordinary 4 s TS stream whose playlists carry the blanks real packagers write.
mkdir -p "$out/whitespace"
ff -f lavfi -i "$(picture 25)" "${tone[@]}" -map 0:v -map 1:a -t 4 -c:v libx264 -preset ultrafast -pix_fmt yuv420p \
   -g 25 -keyint_min 25 -sc_threshold 0 -c:a aac -b:a 64k -ac 2 \
   -f hls -hls_time 1 -hls_list_size 0 -hls_playlist_type vod \
   -hls_segment_filename "$out/whitespace/seg%d.ts" "$out/whitespace/clean.m3u8"
python3 - "$out/whitespace" <<'PY'
import os, sys
d = sys.argv[1]
out = []
for line in open(os.path.join(d, "clean.m3u8")).read().splitlines():
    if line.startswith("#EXT-X-VERSION:"):
        line = "#EXT-X-VERSION: " + line.split(":", 1)[1]        # Shaka's shaka-gap asset does this
    elif line.startswith("#EXT-X-TARGETDURATION:"):
        line = "#EXT-X-TARGETDURATION :" + line.split(":", 1)[1]
    elif line.startswith("#EXT-X-PLAYLIST-TYPE:"):
        line = "#EXT-X-PLAYLIST-TYPE:\t" + line.split(":", 1)[1]
    elif line.startswith("#EXTINF:"):
        duration, title = line[len("#EXTINF:"):].split(",", 1)
        line = f"#EXTINF: {duration} ,{title}\t"
    elif line and not line.startswith("#"):
        line = line + "  "
    out.append(line)
open(os.path.join(d, "prog.m3u8"), "w").write("\n".join(out) + "\n")
open(os.path.join(d, "master.m3u8"), "w").write(
    "#EXTM3U \n#EXT-X-VERSION: 3\n"
    '#EXT-X-STREAM-INF: BANDWIDTH = 600000 , RESOLUTION= 320x180,CODECS = "avc1.42c00d, mp4a.40.2" ,FRAME-RATE= 25.000\n'
    "prog.m3u8 \n")
os.remove(os.path.join(d, "clean.m3u8"))
PY
echo "corpus: $(ls "$out" | wc -l) items in $out"
