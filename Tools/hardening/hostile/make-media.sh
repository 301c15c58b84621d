#!/usr/bin/env bash
# Builds hostile media for hlsplay's resource limits with the ffmpeg CLI: one folder per case,
# each a playlist and its media. Tests/HLSPlayerTests/HostileLimitsTests.swift plays every case
# with the real binary and checks the exit status, the log and the peak RSS; the expected outcome
# of each (default flags) is in this table. Building everything takes about 10 s; big-segments
# needs 47 MB of disk (its segments are hard links of one file).
#
#   case                 entry                    what                                     expected
#   sps-bomb             prog.m3u8                one 1 s H.264 segment (64x64 coded, ≈5   exit 65: media error naming 16000x16000
#                                                 KB) whose SPS claims 16000x16000         and the --max-resolution limit
#   sps-bomb-cropped     prog.m3u8                the same with a cropping window down to  exit 65 (the container says 64x64; the
#                                                 a 64x64 display size                     parameter sets are read before the probe)
#   sps-bomb-midstream   prog.m3u8                a good 64x64 segment, then the bomb in   exit 65: found by the decoder (source
#                                                 the same variant, no discontinuity       decoder), after a first frame
#   declared-too-large   master.m3u8              two rungs: v0 64x64, v1 RESOLUTION=      exit 0: v1 is excluded up-front
#                                                 16000x16000 (the sps-bomb media)         (resolution.limit), v0 plays
#   big-segments         prog.m3u8                20 segments of 2 s, ≈46 MB each (960x540 exit 0 with --duration 8; the forward
#                                                 lossless H.264 of noise, 20 fps)         buffer's byte bound holds loading
#   local-escape         play/prog-absolute.m3u8  names file:///etc/passwd                 exit 65 when played as a local path:
#                        play/prog-dotdot.m3u8    names ../outside/seg0.ts                 outside the playlist's directory
#                        play/prog-symlink.m3u8   names link0.ts -> ../outside/seg0.ts     (--allow-any-local-file: exit 0)
#                        play/prog-inside.m3u8    names seg0.ts (a copy, inside)           exit 0
#   empty-host           prog.m3u8                names http:///etc/passwd (no host)       exit 65 at once (served over HTTP),
#                                                                                          no DNS lookup, no retry
#
# The media bombs (sps-bomb*, declared-too-large, big-segments) also get a case.json in the hostile
# corpus's format (Tools/hardening/hostile/README.md where the corpus is: about, play, args, exit, summaryError,
# maxRSSMiB, maxSeconds): HostileLimitsTests.mediaBombs_asCorpusCases plays each as that corpus would,
# with --decode-threads 1 and 0.
#
# Usage: make-media.sh OUT_DIR [CASE...]   (default: every case)
set -euo pipefail
out="${1:?usage: make-media.sh OUT_DIR [CASE...]}"
shift
cases=" $* "
want() { [ "$cases" = "  " ] || [[ "$cases" == *" $1 "* ]]; }   # want CASE: asked for, or nothing asked
mkdir -p "$out"
ff() { ffmpeg -nostdin -hide_banner -loglevel error -y "$@"; }
corpus_case() { cat > "$out/$1/case.json"; }   # corpus_case CASE < JSON
# The peak-RSS bounds (MiB) the bombs are held to. A session's own is ≈65 MiB; a refused bomb allocates
# nothing more, while believing the SPS took 1.3 GB (2.6 GB with frame threads). big-segments may hold
# the 256 MiB byte bound + the segment expected to fit + one body being demuxed (≈46 MB each) + ≈65 MiB.
bomb_rss_mib=200
big_segments_rss_mib=480
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# --- sps-bomb: a tiny stream whose sequence parameter set is rewritten to claim 16000x16000 ---------
# (the largest square FFmpeg accepts: av_image_check_size wants (w+128)(h+128) < INT_MAX/8). The slices
# still cover 64x64; a decoder that believes the SPS allocates 16000x16000 pictures and conceals the rest.
ff -f lavfi -i "color=c=gray:s=64x64:r=25:d=1" -c:v libx264 -preset ultrafast -pix_fmt yuv420p -g 25 \
   -bsf:v h264_mp4toannexb -f h264 "$tmp/small.h264"
cat > "$tmp/patch_sps.py" <<'PY'
import sys

def nal_units(data):
    """(start, end) of each NAL unit's bytes in an Annex B stream."""
    starts, i = [], 0
    while (j := data.find(b"\x00\x00\x01", i)) >= 0:
        starts.append(j + 3); i = j + 3
    for k, s in enumerate(starts):
        e = starts[k + 1] - 3 if k + 1 < len(starts) else len(data)
        while e > s and data[e - 1] == 0: e -= 1   # the leading zero of a 4-byte start code
        yield s, e

def unescape(b):   # emulation prevention bytes out
    out, zeros = bytearray(), 0
    for x in b:
        if zeros >= 2 and x == 3: zeros = 0; continue
        out.append(x); zeros = zeros + 1 if x == 0 else 0
    return bytes(out)

def escape(b):     # and back in
    out, zeros = bytearray(), 0
    for x in b:
        if zeros >= 2 and x <= 3: out.append(3); zeros = 0
        out.append(x); zeros = zeros + 1 if x == 0 else 0
    return bytes(out)

class Bits:
    def __init__(self, b): self.b, self.p, self.out = b, 0, []
    def read(self, n):
        v = 0
        for _ in range(n): v = v << 1 | (self.b[self.p >> 3] >> (7 - (self.p & 7))) & 1; self.p += 1
        return v
    def read_ue(self):
        z = 0
        while self.read(1) == 0: z += 1
        return (1 << z) - 1 + self.read(z)
    def put(self, n, v): self.out += [(v >> (n - 1 - i)) & 1 for i in range(n)]
    def put_ue(self, v): x = v + 1; self.put(x.bit_length() - 1, 0); self.put(x.bit_length(), x)
    def u(self, n): v = self.read(n); self.put(n, v); return v        # copy a fixed-width field
    def ue(self): v = self.read_ue(); self.put_ue(v); return v         # copy an Exp-Golomb field

def patch_sps(rbsp, width_mbs, height_mbs, crop_to):
    """H.264 7.3.2.1.1: copies every field, replacing pic_width_in_mbs_minus1 and pic_height_in_map_units_minus1
    (and, with crop_to, the cropping window: the coded size stays, the display size becomes crop_to; 4:2:0, frames)."""
    s = Bits(rbsp)
    profile = s.u(8); s.u(8); s.u(8); s.ue()
    if profile in (100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135):
        if s.ue() == 3: s.u(1)
        s.ue(); s.ue(); s.u(1)
        if s.u(1): sys.exit("SPS with scaling matrices: not handled")
    s.ue()
    poc_type = s.ue()
    if poc_type == 0: s.ue()
    elif poc_type == 1: sys.exit("pic_order_cnt_type 1: not handled")
    s.ue(); s.u(1)
    s.read_ue(); s.read_ue()
    s.put_ue(width_mbs - 1); s.put_ue(height_mbs - 1)
    if crop_to:
        if s.u(1) == 0: sys.exit("interlaced SPS: not handled")   # frame_mbs_only_flag
        s.u(1)                                                     # direct_8x8_inference_flag
        if s.read(1): [s.read_ue() for _ in range(4)]              # the old cropping window, dropped
        s.put(1, 1)
        s.put_ue(0); s.put_ue((width_mbs * 16 - crop_to[0]) // 2)  # left, right (CropUnitX = 2)
        s.put_ue(0); s.put_ue((height_mbs * 16 - crop_to[1]) // 2) # top, bottom (CropUnitY = 2)
    rest = [s.read(1) for _ in range(len(rbsp) * 8 - s.p)]   # frame_mbs_only_flag ... VUI, as they were
    while rest and rest[-1] == 0: rest.pop()
    rest.pop()                                                 # rbsp_stop_one_bit
    bits = s.out + rest + [1]
    bits += [0] * (-len(bits) % 8)
    return bytes(int("".join(map(str, bits[i:i + 8])), 2) for i in range(0, len(bits), 8))

src, dst, width, height = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
crop_to = tuple(map(int, sys.argv[5].split("x"))) if len(sys.argv) > 5 else None
data = open(src, "rb").read()
out, last, patched = bytearray(), 0, 0
for s, e in nal_units(data):
    if data[s] & 0x1F == 7:   # nal_unit_type 7: SPS
        out += data[last:s] + data[s:s + 1] + escape(patch_sps(unescape(data[s + 1:e]), width // 16, height // 16, crop_to))
        last, patched = e, patched + 1
out += data[last:]
if patched == 0: sys.exit("no SPS found")
open(dst, "wb").write(out)
PY
# -max_pixels keeps ffmpeg's own probe from allocating the pictures the SPS claims (the remux copies packets).
bomb() { # case patch-arguments...
  python3 "$tmp/patch_sps.py" "$tmp/small.h264" "$tmp/$1.h264" "${@:2}"
  mkdir -p "$out/$1"
  ff -max_pixels 65536 -f h264 -framerate 25 -i "$tmp/$1.h264" -c copy -f hls -hls_time 2 -hls_list_size 0 \
     -hls_playlist_type vod -hls_segment_filename "$out/$1/seg%d.ts" "$out/$1/prog.m3u8" 2>/dev/null
}
if want sps-bomb || want declared-too-large; then
  bomb sps-bomb 16000 16000
  corpus_case sps-bomb <<JSON
{
  "about": "A 5 KB H.264 segment of 64x64 slices whose SPS claims 16000x16000. Before --max-resolution the demuxer's probe and the decoder allocated 16000x16000 pictures: exit 0 after 13 s, 1.3 GB peak RSS (2.6 GB with --decode-threads 0). Now refused from the parameter sets before the probe decodes.",
  "play": "prog.m3u8",
  "exit": [65],
  "summaryError": ["16000x16000 (from the container)", "8192x4320", "--max-resolution"],
  "maxRSSMiB": $bomb_rss_mib,
  "maxSeconds": 60
}
JSON
fi
# The same, with a cropping window that makes the display size 64x64: the container says 64x64 (FFmpeg's
# max_pixels, which checks the display size, would let the coded 16000x16000 pictures through).
if want sps-bomb-cropped; then
  bomb sps-bomb-cropped 16000 16000 64x64
  corpus_case sps-bomb-cropped <<JSON
{
  "about": "The sps-bomb behind a cropping window: the container reports a 64x64 display size over 16000x16000 coded pictures, which FFmpeg's max_pixels (display size) lets through. Before: exit 0 after 12-18 s, 1.3 GB peak RSS (2.5 GB with --decode-threads 0). Now the coded size is refused before the probe decodes.",
  "play": "prog.m3u8",
  "exit": [65],
  "summaryError": ["16000x16000 (from the container)", "8192x4320", "--max-resolution"],
  "maxRSSMiB": $bomb_rss_mib,
  "maxSeconds": 60
}
JSON
fi
# A good 64x64 segment, then the bomb in the same variant without a discontinuity: the second segment
# reuses the first one's codec parameters (no probe), so only the decoder meets the new SPS.
if want sps-bomb-midstream; then
  bomb sps-bomb-midstream 16000 16000
  d="$out/sps-bomb-midstream"
  mv "$d/seg0.ts" "$d/seg1.ts"
  ff -f lavfi -i "color=c=gray:s=64x64:r=25:d=1" -c:v libx264 -preset ultrafast -pix_fmt yuv420p -g 25 -f mpegts "$d/seg0.ts"
  printf '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:1\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXTINF:1.000,\nseg0.ts\n#EXTINF:1.000,\nseg1.ts\n#EXT-X-ENDLIST\n' > "$d/prog.m3u8"
  corpus_case sps-bomb-midstream <<JSON
{
  "about": "A good 64x64 segment, then the sps-bomb in the same variant without a discontinuity: the demuxer reuses the first segment's parameters, so only the decoder meets the 16000x16000 SPS. Before: exit 0, 0.75-1.3 GB peak RSS (2.0 GB with --decode-threads 0). Now the decoder's get_format refuses it.",
  "play": "prog.m3u8",
  "exit": [65],
  "summaryError": ["16000x16000 (from the decoder)", "8192x4320", "--max-resolution"],
  "maxRSSMiB": $bomb_rss_mib,
  "maxSeconds": 60
}
JSON
fi

# --- declared-too-large: a ladder whose top rung declares a resolution above the limit -----------------
if want declared-too-large; then
d="$out/declared-too-large"
mkdir -p "$d/v0" "$d/v1"
ff -f lavfi -i "testsrc2=size=64x64:rate=25:d=4" -c:v libx264 -preset ultrafast -pix_fmt yuv420p -g 25 \
   -f hls -hls_time 1 -hls_list_size 0 -hls_playlist_type vod -hls_segment_filename "$d/v0/seg%d.ts" "$d/v0/prog.m3u8"
cp "$out/sps-bomb/prog.m3u8" "$out/sps-bomb/seg0.ts" "$d/v1/"
cat > "$d/master.m3u8" <<'M3U'
#EXTM3U
#EXT-X-VERSION:3
#EXT-X-STREAM-INF:BANDWIDTH=200000,RESOLUTION=64x64,CODECS="avc1.42c00a"
v0/prog.m3u8
#EXT-X-STREAM-INF:BANDWIDTH=400000,RESOLUTION=16000x16000,CODECS="avc1.42c00a"
v1/prog.m3u8
M3U
corpus_case declared-too-large <<JSON
{
  "about": "Two rungs, the second declaring RESOLUTION=16000x16000 (its media is the sps-bomb). Before, with no startup cap the player chose it: exit 0 after 14 s, 1.3 GB peak RSS. Now it is left out of the ladder and never requested; the 64x64 rung plays.",
  "play": "master.m3u8",
  "args": ["--startup-cap", "off"],
  "exit": [0],
  "maxRSSMiB": $bomb_rss_mib,
  "maxSeconds": 60
}
JSON
fi

# --- big-segments: ≈46 MB per 2 s segment ------------------------------------------------------------
if want big-segments; then
d="$out/big-segments"
mkdir -p "$d"
ff -f lavfi -i "color=gray:s=960x540:r=20:d=2,noise=alls=100:allf=t" -c:v libx264 -preset ultrafast -qp 0 \
   -pix_fmt yuv420p -g 40 -f mpegts "$d/seg0.ts"
{
  echo "#EXTM3U"; echo "#EXT-X-VERSION:3"; echo "#EXT-X-TARGETDURATION:2"; echo "#EXT-X-PLAYLIST-TYPE:VOD"
  for i in $(seq 0 19); do
    [ "$i" -gt 0 ] && { ln -f "$d/seg0.ts" "$d/seg$i.ts"; echo "#EXT-X-DISCONTINUITY"; }
    echo "#EXTINF:2.000,"; echo "seg$i.ts"
  done
  echo "#EXT-X-ENDLIST"
} > "$d/prog.m3u8"
corpus_case big-segments <<JSON
{
  "about": "20 segments of 2 s, about 46 MB each (lossless H.264 of noise). Before the byte bound the loader held 30 s of buffer whatever it weighed: with --duration 20 all 930 MB downloaded and 600-800 MiB peak RSS. Now loading stops at 256 MiB of buffered packets (buffer.byteBound).",
  "play": "prog.m3u8",
  "args": ["--duration", "20"],
  "exit": [0],
  "maxRSSMiB": $big_segments_rss_mib,
  "maxSeconds": 120
}
JSON
fi

# --- local-escape: local playlists naming files outside their directory -------------------------------
media() { printf '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:1\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXTINF:1.000,\n%s\n#EXT-X-ENDLIST\n' "$1"; }
if want local-escape; then
d="$out/local-escape"
mkdir -p "$d/play" "$d/outside"
ff -f lavfi -i "testsrc2=size=64x64:rate=25:d=1" -c:v libx264 -preset ultrafast -pix_fmt yuv420p -g 25 \
   -f mpegts "$d/outside/seg0.ts"
cp "$d/outside/seg0.ts" "$d/play/seg0.ts"
ln -sfn ../outside/seg0.ts "$d/play/link0.ts"
media "file:///etc/passwd" > "$d/play/prog-absolute.m3u8"
media "../outside/seg0.ts" > "$d/play/prog-dotdot.m3u8"
media "link0.ts" > "$d/play/prog-symlink.m3u8"
media "seg0.ts" > "$d/play/prog-inside.m3u8"
fi

# --- empty-host: an http URL without a host ------------------------------------------------------------
if want empty-host; then
  mkdir -p "$out/empty-host"
  media "http:///etc/passwd" > "$out/empty-host/prog.m3u8"
fi
