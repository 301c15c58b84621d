#!/usr/bin/env bash
# make-variants.sh — packagings of the short ladder's 360p rung for format
# tests, remuxed (no re-encode, so a second or two) with FFmpeg's HLS muxer:
#   fmp4/        fMP4/CMAF segments with an EXT-X-MAP init section
#   byterange/   one .ts file, segments as EXT-X-BYTERANGE sub-ranges
#   aes-iv/      AES-128, explicit IV in EXT-X-KEY
#   aes-msn/     AES-128, no IV attribute: the IV is the media sequence number
#                (encrypted with openssl, since FFmpeg always writes an IV)
#   aes-rotate/  AES-128 key rotation: a new key every 2 segments, explicit
#                and media-sequence IVs, a METHOD=NONE stretch (openssl)
#   alt-audio/   video-only variants (v0, v1) + an EXT-X-MEDIA AUDIO group:
#                English (the sample's own audio) and French (an 880 Hz tone)
#   alt-audio-fmp4/  the same as fMP4/CMAF
#   alt-audio-packed/  v0 with the English rendition as packed ADTS audio (.aac)
#   redundant/   v0+v1 listed twice (a/ and b/); steering.m3u8 adds PATHWAY-IDs
#                and EXT-X-CONTENT-STEERING to a static steering.json (steering-clones.m3u8:
#                to one whose PATHWAY-CLONES add pathway c; steering-later.m3u8: to one preferring
#                "b" whose RELOAD-URI, a second later, is that one: the clones join mid-stream)
# The AES keys are fixed test keys (written next to the playlists), so the
# output is the same every run. Input: Samples/build/short-2s (make-all.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src="$here/build/short-2s/v1/prog.m3u8"
out="${1:-$here/build/variants}"
[ -f "$src" ] || { echo "make-variants.sh: $src missing (run make-ladder.sh first)" >&2; exit 1; }
stamp="recipe=6 src=$(stat -c %Y "$src")"
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

ladder=$(dirname "$(dirname "$src")")
# Remuxes below use -copyts -muxdelay 0 -muxpreload 0: the source's timestamps
# are kept exactly (no re-basing, no 1.4 s mpegts mux delay), so separately
# remuxed tracks stay aligned with each other and with short-2s.
hls_vod=(-fflags +bitexact -f hls -hls_time 2 -hls_playlist_type vod)
# "peak avg" bit/s of a media playlist: segment bytes x 8 / EXTINF, as make-ladder.sh.
rates() {
    awk -v dir="$(dirname "$1")" '
      /^#EXTINF:/ { sub(/^#EXTINF:/, ""); sub(/,.*/, ""); d = $0; next }
      /^[^#]/ && d > 0 {
        cmd = "stat -c %s \"" dir "/" $0 "\""; cmd | getline sz; close(cmd)
        br = sz * 8 / d; if (br > peak) peak = br; tb += sz * 8; td += d; d = 0
      }
      END { printf "%d %d\n", peak, tb / td }' "$1"
}
# The short ladder's STREAM-INF attributes for rung $1 (v0 or v1), without BANDWIDTH/AVERAGE-BANDWIDTH.
rung_attrs() { grep -B1 -x "$1/prog.m3u8" "$ladder/master.m3u8" | sed -n 1p | sed -E 's/^#EXT-X-STREAM-INF://; s/(AVERAGE-)?BANDWIDTH=[0-9]+,//g'; }

# alt-audio/ and alt-audio-fmp4/: video-only v0 and v1 (remux -an), English =
# the sample's own audio (remux -vn, the last AAC frame dropped so the track
# ends with the video: 375 frames = 8.000 s), French = an 880 Hz sine (no
# beeps) encoded to the same 375 frames with the English track's first
# timestamp, so both renditions cut at the same 2 s boundaries as the video.
alt="$out/alt-audio"; altf="$out/alt-audio-fmp4"
mkdir -p "$alt"/{v0,v1,en,fr} "$altf"/{v0,v1,en,fr}
for v in v0 v1; do
    ffmpeg -hide_banner -loglevel error -nostdin -copyts -i "$ladder/$v/prog.m3u8" -map 0:v -c copy \
        -muxdelay 0 -muxpreload 0 "${hls_vod[@]}" -hls_flags independent_segments \
        -hls_segment_filename "$alt/$v/seg_%05d.ts" "$alt/$v/prog.m3u8"
done
ffmpeg -hide_banner -loglevel error -nostdin -copyts -i "$ladder/v0/prog.m3u8" -map 0:a -c copy -frames:a 375 \
    -muxdelay 0 -muxpreload 0 "${hls_vod[@]}" -hls_segment_filename "$alt/en/seg_%05d.ts" "$alt/en/prog.m3u8"
# AAC priming: the encoder's first packet is 1024 samples early, hence + 1024/48000.
en_start=$(ffprobe -v error -select_streams a:0 -show_entries stream=start_time -of csv=p=0 "$alt/en/seg_00000.ts" | sed -n 1p)
fr_offset=$(awk -v s="$en_start" 'BEGIN { printf "%.6f", s + 1024 / 48000 }')
ffmpeg -hide_banner -loglevel error -nostdin -f lavfi -i "sine=frequency=880:sample_rate=48000:duration=8.1" \
    -ac 2 -c:a aac -b:a 128k -frames:a 375 -flags:a +bitexact -threads 1 -output_ts_offset "$fr_offset" \
    -muxdelay 0 -muxpreload 0 "${hls_vod[@]}" -hls_segment_filename "$alt/fr/seg_%05d.ts" "$alt/fr/prog.m3u8"
for t in v0 v1 en fr; do
    ffmpeg -hide_banner -loglevel error -nostdin -copyts -i "$alt/$t/prog.m3u8" -c copy -bsf:a aac_adtstoasc \
        "${hls_vod[@]}" -hls_segment_type fmp4 -hls_fmp4_init_filename init.mp4 \
        -hls_segment_filename "$altf/$t/seg_%05d.m4s" "$altf/$t/prog.m3u8"
done
# BANDWIDTH of a variant = its video peak + the highest audio rendition peak
# (RFC 8216 §4.3.4.2 counts the renditions the variant plays with).
for d in "$alt" "$altf"; do
    read -r ap_en aa_en <<<"$(rates "$d/en/prog.m3u8")"
    read -r ap_fr aa_fr <<<"$(rates "$d/fr/prog.m3u8")"
    ap=$(( ap_en > ap_fr ? ap_en : ap_fr )); aa=$(( aa_en > aa_fr ? aa_en : aa_fr ))
    {
        echo "#EXTM3U"
        echo "#EXT-X-VERSION:$([ "$d" = "$altf" ] && echo 7 || echo 4)"
        echo "#EXT-X-INDEPENDENT-SEGMENTS"
        echo '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="English",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,CHANNELS="2",URI="en/prog.m3u8"'
        echo '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="Français",LANGUAGE="fr",DEFAULT=NO,AUTOSELECT=YES,CHANNELS="2",URI="fr/prog.m3u8"'
        for v in v0 v1; do
            read -r vp va <<<"$(rates "$d/$v/prog.m3u8")"
            echo "#EXT-X-STREAM-INF:BANDWIDTH=$((vp + ap)),AVERAGE-BANDWIDTH=$((va + aa)),$(rung_attrs "$v"),AUDIO=\"aud\""
            echo "$v/prog.m3u8"
        done
    } > "$d/master.m3u8"
done

# alt-audio-packed/: v0 video-only (as in alt-audio/) with the English rendition
# as packed audio: one raw ADTS .aac file per segment, cut at the same frames
# (no ID3 timestamps: a player places each on its playlist time).
pk="$out/alt-audio-packed"
mkdir -p "$pk"/{v0,en}
cp "$alt"/v0/* "$pk/v0/"
sed 's/\.ts$/.aac/' "$alt/en/prog.m3u8" > "$pk/en/prog.m3u8"
for f in "$alt"/en/seg_*.ts; do
    ffmpeg -hide_banner -loglevel error -nostdin -i "$f" -map 0:a -c copy -f adts "$pk/en/$(basename "${f%.ts}").aac"
done
{
    echo "#EXTM3U"
    echo "#EXT-X-VERSION:4"
    echo '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="English",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,CHANNELS="2",URI="en/prog.m3u8"'
    grep -A1 -m1 'AUDIO="aud"' "$alt/master.m3u8"
} > "$pk/master.m3u8"

# redundant/: the short ladder's v0 and v1 copied to a/ and b/. master.m3u8
# lists the 2-rung ladder twice (same BANDWIDTH, different URIs: RFC 8216
# §6.2.4 redundant variants); steering.m3u8 is the same with PATHWAY-ID and
# STABLE-VARIANT-ID and EXT-X-CONTENT-STEERING (initial pathway "a") pointing
# at a static steering.json that prefers "b".
red="$out/redundant"
mkdir -p "$red"/{a,b}
for p in a b; do cp -r "$ladder/v0" "$ladder/v1" "$red/$p/"; done
{
    printf '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-INDEPENDENT-SEGMENTS\n'
    for p in a b; do for v in v0 v1; do
        grep -B1 -x "$v/prog.m3u8" "$ladder/master.m3u8" | sed -n 1p
        echo "$p/$v/prog.m3u8"
    done; done
} > "$red/master.m3u8"
{
    printf '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-INDEPENDENT-SEGMENTS\n'
    printf '#EXT-X-CONTENT-STEERING:SERVER-URI="steering.json",PATHWAY-ID="a"\n'
    for p in a b; do for v in v0 v1; do
        echo "$(grep -B1 -x "$v/prog.m3u8" "$ladder/master.m3u8" | sed -n 1p),PATHWAY-ID=\"$p\",STABLE-VARIANT-ID=\"$v\""
        echo "$p/$v/prog.m3u8"
    done; done
} > "$red/steering.m3u8"
printf '{\n  "VERSION": 1,\n  "TTL": 4,\n  "PATHWAY-PRIORITY": ["b", "a"]\n}\n' > "$red/steering.json"
# steering-clones.m3u8: the same, its manifest (steering-clones.json) cloning pathway "b" as "c" (PATHWAY-CLONES,
# URI-REPLACEMENT PARAMS cdn=c: the same files with a query) and preferring "c": variants added by the manifest.
sed 's/SERVER-URI="steering.json"/SERVER-URI="steering-clones.json"/' "$red/steering.m3u8" > "$red/steering-clones.m3u8"
printf '{\n  "VERSION": 1,\n  "TTL": 4,\n  "PATHWAY-PRIORITY": ["c", "b", "a"],\n  "PATHWAY-CLONES": [{"BASE-ID": "b", "ID": "c", "URI-REPLACEMENT": {"PARAMS": {"cdn": "c"}}}]\n}\n' > "$red/steering-clones.json"
# steering-later.m3u8: its manifest (steering-later.json) prefers "b" for a second (TTL 1) and names
# steering-clones.json as its RELOAD-URI: pathway c's clones join the ladder mid-stream, after the start.
sed 's/SERVER-URI="steering.json"/SERVER-URI="steering-later.json"/' "$red/steering.m3u8" > "$red/steering-later.m3u8"
printf '{\n  "VERSION": 1,\n  "TTL": 1,\n  "RELOAD-URI": "steering-clones.json",\n  "PATHWAY-PRIORITY": ["b", "a"]\n}\n' > "$red/steering-later.json"

# aes-rotate/: short-2s v1 looped once (remux, 8 segments, 16 s), media
# sequence from 10, encrypted with openssl:
#   10-11 k1.key, explicit IV (the same IV for both segments)
#   12-13 k2.key, no IV: IV = media sequence number
#   14-15 METHOD=NONE (clear segments)
#   16-17 k3.key, explicit IV
rot="$out/aes-rotate"
mkdir -p "$rot/clear"
ffmpeg -hide_banner -loglevel error -nostdin -stream_loop 1 -copyts -i "$src" -c copy -muxdelay 0 -muxpreload 0 \
    "${hls_vod[@]}" -hls_segment_filename "$rot/clear/seg_%05d.ts" "$rot/clear/prog.m3u8"
keys=(k1 00112233445566778899aabbccddeef1 k2 00112233445566778899aabbccddeef2 k3 00112233445566778899aabbccddeef3)
for ((i = 0; i < ${#keys[@]}; i += 2)); do printf "$(sed "s/../\\\\x&/g" <<<"${keys[i+1]}")" > "$rot/${keys[i]}.key"; done
{
    printf '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:10\n#EXT-X-PLAYLIST-TYPE:VOD\n'
    n=10
    # EXTINF durations of the remux, in segment order.
    mapfile -t durations < <(sed -n 's/^#EXTINF:\([0-9.]*\),.*/\1/p' "$rot/clear/prog.m3u8")
    for seg in "$rot"/clear/seg_*.ts; do
        key=; iv=
        case $n in
            10) printf '#EXT-X-KEY:METHOD=AES-128,URI="k1.key",IV=0x0f0e0d0c0b0a09080706050403020100\n' ;;
            12) printf '#EXT-X-KEY:METHOD=AES-128,URI="k2.key"\n' ;;
            14) printf '#EXT-X-KEY:METHOD=NONE\n' ;;
            16) printf '#EXT-X-KEY:METHOD=AES-128,URI="k3.key",IV=0xa5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5\n' ;;
        esac
        case $n in
            10|11) key=${keys[1]}; iv=0f0e0d0c0b0a09080706050403020100 ;;
            12|13) key=${keys[3]}; iv=$(printf '%032x' "$n") ;;
            16|17) key=${keys[5]}; iv=a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5 ;;
        esac
        if [ -n "$key" ]; then
            openssl aes-128-cbc -e -K "$key" -iv "$iv" -in "$seg" -out "$rot/seg_$n.ts"
        else
            cp "$seg" "$rot/seg_$n.ts"
        fi
        printf '#EXTINF:%s,\nseg_%d.ts\n' "${durations[n - 10]}" "$n"
        n=$((n + 1))
    done
    printf '#EXT-X-ENDLIST\n'
} > "$rot/prog.m3u8"
rm -rf "$rot/clear"
echo "$stamp" > "$out/.stamp"
echo "built: $out"
