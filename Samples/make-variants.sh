#!/usr/bin/env bash
# make-variants.sh — packagings of the short ladder's 360p rung for format
# tests, remuxed (no re-encode, so a second or two) with FFmpeg's HLS muxer:
#   fmp4/        fMP4/CMAF segments with an EXT-X-MAP init section
#   byterange/   one .ts file, segments as EXT-X-BYTERANGE sub-ranges
#   aes-iv/      AES-128, explicit IV in EXT-X-KEY
#   aes-msn/     AES-128, no IV attribute: the IV is the media sequence number
#                (encrypted with openssl, since FFmpeg always writes an IV)
# The AES keys are fixed test keys (written next to the playlists), so the
# output is the same every run. Input: Samples/build/short-2s (make-all.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src="$here/build/short-2s/v1/prog.m3u8"
out="${1:-$here/build/variants}"
[ -f "$src" ] || { echo "make-variants.sh: $src missing (run make-ladder.sh first)" >&2; exit 1; }
stamp="recipe=2 src=$(stat -c %Y "$src")"
if [ -f "$out/.stamp" ] && [ "$(cat "$out/.stamp")" = "$stamp" ]; then exit 0; fi
rm -rf "$out"; mkdir -p "$out"/{fmp4,byterange,aes-iv,aes-msn}
ff() { ffmpeg -hide_banner -loglevel error -nostdin -i "$src" -c copy -f hls -hls_time 2 -hls_playlist_type vod "$@"; }
ff -bsf:a aac_adtstoasc -hls_segment_type fmp4 -hls_fmp4_init_filename init.mp4 \
   -hls_segment_filename "$out/fmp4/seg_%05d.m4s" "$out/fmp4/prog.m3u8"
ff -hls_flags single_file -hls_segment_filename "$out/byterange/all.ts" "$out/byterange/prog.m3u8"
printf '\x00\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\xcc\xdd\xee\xff' > "$out/aes-iv/k.key"
printf 'k.key\n%s\n0123456789abcdef0123456789abcdef\n' "$out/aes-iv/k.key" > "$out/aes-iv.keyinfo"
ff -hls_key_info_file "$out/aes-iv.keyinfo" -hls_segment_filename "$out/aes-iv/seg_%05d.ts" "$out/aes-iv/prog.m3u8"
# aes-msn: FFmpeg writes an explicit IV, so this one is encrypted here with
# openssl: media sequence numbers start at 5 and segment n uses IV = n.
cp "$out/aes-iv/k.key" "$out/aes-msn/k.key"
first=5
{
    printf '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:%d\n#EXT-X-PLAYLIST-TYPE:VOD\n' "$first"
    printf '#EXT-X-KEY:METHOD=AES-128,URI="k.key"\n'
    n=$first
    for seg in "$(dirname "$src")"/seg_*.ts; do
        openssl aes-128-cbc -e -K 00112233445566778899aabbccddeeff -iv "$(printf '%032x' "$n")" \
            -in "$seg" -out "$out/aes-msn/seg_$n.ts"
        printf '#EXTINF:2.000000,\nseg_%d.ts\n' "$n"
        n=$((n + 1))
    done
    printf '#EXT-X-ENDLIST\n'
} > "$out/aes-msn/prog.m3u8"
rm -f "$out"/*.keyinfo
echo "$stamp" > "$out/.stamp"
echo "built: $out"
