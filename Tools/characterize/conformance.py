#!/usr/bin/env python3
"""Writes docs/conformance.md: hlsplay's parser, then the player, over every
third-party playlist fixture in ../shared/data/playlists, beside what each source
library expects.

Usage: Tools/characterize/conformance.sh [--parser-only | --reuse FILE] [--jobs N]
  (builds hlsplay and hls-origin, then runs this)
  --parser-only  skip the player pass (the doc then has no player columns)
  --reuse FILE   render the player pass from a saved results file instead of playing
                 (each run saves its results to .build/conformance-play.jsonl)
Parser pass: each fixture goes through `hlsplay check --json`, the same parser the
player uses. Where a library's expectation is known it is shown, with agreement. The
reasons for every deliberate difference are kept, and asserted, in the parser's fixture
tests (Tests/HLSCoreTests/*Fixture*), named per file.
Player pass: Tools/characterize/conformance_play.py plays each fixture through hls-origin with
sample media (see its docstring for what is served, and how).
"""
import argparse, json, os, re, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conformance_play  # noqa: E402  (it puts Tools/lib on the path)
from hlsplay_tools import REPO as ROOT, json_lines, read_jsonl  # noqa: E402

DATA = conformance_play.DATA
HLSPLAY = conformance_play.HLSPLAY


def expectations():
    """file path (relative to DATA) -> (library, expected 'accept'|'reject', detail)."""
    out = {}
    hj = json.load(open(os.path.join(DATA, "hlsjs", "expectations.json")))
    for name, e in hj.items():
        if name.startswith("_") or not isinstance(e, dict):
            continue
        err = e.get("error")
        out["hlsjs/" + name] = ("hls.js", "reject" if err else "accept", err or "")
    gb = json.load(open(os.path.join(DATA, "globocom-m3u8", "expectations.json")))
    for name, e in gb.items():
        if name.startswith("_") or not isinstance(e, dict):
            continue
        out["globocom-m3u8/" + name] = ("python-m3u8", "accept", e.get("source", "")[:80])
    for name in os.listdir(os.path.join(DATA, "videojs-m3u8-parser")):
        if name.endswith(".m3u8"):
            out["videojs-m3u8-parser/" + name] = ("video.js (lenient)", "accept", "has expected/" + name[:-5] + ".json")
    for name in os.listdir(os.path.join(DATA, "kuu-hls-parser", "examples")):
        out["kuu-hls-parser/examples/" + name] = ("hls-parser", "accept", "")
    for name in os.listdir(os.path.join(DATA, "kuu-hls-parser", "strict-fail")):
        out["kuu-hls-parser/strict-fail/" + name] = ("hls-parser strict", "reject", "")
    return out


# Why hlsplay's verdict differs from the library's, per fixture (asserted in the fixture tests).
REASONS = {
    "globocom-m3u8/daterange-scte35-out-and-in-playlist.m3u8": "no EXT-X-TARGETDURATION, which RFC 8216 §4.3.3.1 makes REQUIRED; the tests re-check the body with the tag added",
    "globocom-m3u8/low-latency-with-preload-and-byteranges-playlist.m3u8": "no EXT-X-TARGETDURATION (REQUIRED); the tests re-check the body with the tag added",
    "globocom-m3u8/simple-playlist-messy.m3u8": "a stray URI line (`JUNK`) with no EXTINF is fatal, as in python-m3u8's own strict mode",
    "hlsjs/define-import-media.m3u8": "IMPORT needs the parent playlist's variables, which the hls.js test supplies; with them (as the fixture test passes them) it parses",
    "hlsjs/define-queryparam-media.m3u8": "IMPORT of a variable the parent defines from its URL query; parses with the parent variables the hls.js test supplies",
    "hlsjs/define-queryparam-multivariant.m3u8": "QUERYPARAM needs the playlist URL's query, which the hls.js test supplies; parses with it",
    "kuu-hls-parser/strict-fail/extinf-exceeds-targetduration.m3u8": "a warning by policy: a segment longer than the target duration is playable",
    "kuu-hls-parser/strict-fail/part-without-part-inf.m3u8": "a warning by policy: the parts are still usable",
    "videojs-m3u8-parser/byteRange.m3u8": "RFC 8216 §4.3.2.2: a BYTERANGE without an offset must follow a sub-range of the same resource",
    "videojs-m3u8-parser/llhls-byte-range.m3u8": "`587500@` with nothing before it to continue from (RFC 8216 §4.3.2.2)",
    "videojs-m3u8-parser/invalidTargetDuration.m3u8": "`NaN` is not a decimal-integer",
    "videojs-m3u8-parser/llhls-delta-byte-range.m3u8": "an EXTINF with no URI line is fatal",
    "videojs-m3u8-parser/manifestNoExtM3u.m3u8": "no #EXTM3U: not a playlist (RFC 8216 §4.3.1.1)",
}


# Real media from other packagers: not played by this tool, but by two test suites in CI.
OTHER_PACKAGERS = """## Streams made by other packagers (in the tests)

The fixtures above are playlists served over sample media. Real media as other packagers write it
is played by two suites of the test run, with the real binary through hls-origin, each stream its
own test named after it. Each asserts exit 0, that the session ends as it should (completed, or the
`--duration` reached), the frames ffmpeg decodes from the same URL (`ffmpeg -i URL -f framecrc -`,
run in the same test; for a `--duration` run its first seconds) within one segment's frames, no
decode errors where ffmpeg has none, and a bounded wall time:

* `Tests/HLSPlayerTests/ThirdPartyStreamTests.swift`: every stream in `../shared/data/thirdparty`,
  the HLS test assets of the Shaka Player project (github.com/shaka-project/shaka-player,
  `test/test/assets/`, Apache License 2.0): AAC-only MPEG-TS, packed ADTS AAC, packed MP3, MP3-only
  MPEG-TS, packed E-AC-3, EXT-X-GAP with `#EXT-X-VERSION: 10`, an I-frame-only fMP4 playlist, a
  33-bit PTS rollover, a WebVTT group with a discontinuity, VIDEO rendition groups with alternate
  audio, fMP4 with PROGRAM-DATE-TIME and DATERANGE, muxed fMP4, Opus in MPEG-TS, HEVC in MPEG-TS,
  and Shaka Packager's byte-ranged fMP4. Streams over 20 s play for 6 s (audio only: 4 s).
* `Tests/HLSPlayerTests/CorpusStreamTests.swift`: a small corpus built at test time by
  `Tools/corpus/make-corpus.sh` with the ffmpeg CLI (a few seconds of media per item): packed AAC,
  MP3, AC-3 and E-AC-3 audio, MP3 in MPEG-TS, a 4 s GOP cut into 1 s segments with no
  EXT-X-INDEPENDENT-SEGMENTS, 0.25 s CMAF segments served live in a 1 s window, an I-frame-only
  playlist (a byte range per I-frame in TS), and blanks where RFC 8216 allows none in both playlist
  kinds. Items play to their end.

Streams that fail today because of a defect being fixed are listed, with the defect, in each
suite's `knownIssues`; their failures are recorded as known issues, and a listed stream that passes
fails its test until its entry is removed.

"""


# Why the player did what it did, where the outcome needs more than the log's one line:
# a harness limit (the sample media cannot be what the fixture names), a player policy, or
# a finding (see FINDINGS). Keyed by case id (fixture path, or an extra case id).
PLAYER_REASONS = {
    "globocom-m3u8/map-uri-playlist-with-byterange.m3u8":
        "harness limit: the EXT-X-MAP ranges (812 B, 912 B) are shorter than a real two-track init section (the sample's "
        "is 1341 B), so no segment demuxes. PLAYLIST-TYPE:VOD without EXT-X-ENDLIST is played as live (as hls.js does), so "
        "the player reloads the unchanging playlist every second (half the target duration, RFC 8216 §6.3.4) waiting for a "
        "segment it can play",
    "globocom-m3u8/simple-playlist-commaless-extinf.m3u8": "EXTINF 5220 s over a 2 s sample: the 4 s are played from one segment",
    "globocom-m3u8/simple-playlist-crlf.m3u8": "CRLF line endings read as LF",
    "globocom-m3u8/content-steering-playlist.m3u8":
        "content steering: starts on pathway CDN-A (the tag's PATHWAY-ID) and asks the steering server "
        "(`steering?video=…&_HLS_pathway=CDN-A`); the harness answers with a file that is not a steering manifest, so it "
        "is rejected (logged, retried in 30 s) and the player stays on CDN-A: `low/` and `hi/` only, the CDN-B variants "
        "are their redundant copies, never loaded (was a finding: steering ignored, CDN-B loaded)",
    "globocom-m3u8/playlist-with-multiple-keys-unencrypted-and-encrypted-none.m3u8":
        "live: starts three target durations from the end, at the METHOD=NONE segments, then the second AES-128 key",
    "globocom-m3u8/gap-playlist.m3u8": "the EXT-X-GAP segment is not requested and is played through without a stall",
    "grafov-m3u8/wowza-vod-chunklist.m3u8": "the first 4 s of 522 segments",
    "hlsjs/byterange-without-offset.m3u8":
        "live start at the third segment; its range without an offset is requested where RFC 8216 §4.3.2.2 puts it "
        "(`bytes=1039452-1182519`, after 140060@803136 and 96256). Harness limit: the ranges (96–143 kB) are shorter than a "
        "2 s sample segment, so each holds a truncated one and the cut shows as a decode error",
    "hlsjs/clear-enc-clear-enc-multikey.m3u8": "the first two segments are clear (fMP4); the SAMPLE-AES ones start at 10.5 s: see the `@12s` run",
    "hlsjs/clear-enc-clear-enc-multikey.m3u8@12s":
        "rejected at the first SAMPLE-AES segment with a clear error, as issue 6 asks (sample encryption and DRM key formats are unsupported)",
    "hlsjs/daterange-interstitials.m3u8": "interstitials are ignored: the primary content plays; the X-ASSET-URI `b.m3u8` is never requested",
    "hlsjs/define-import-media.m3u8": "as the parser: IMPORT needs a parent playlist; hls.js's test supplies its variables",
    "hlsjs/define-queryparam-media.m3u8": "as the parser: IMPORT needs a parent playlist; see the `+media` run for it played under its parent",
    "hlsjs/define-queryparam-multivariant.m3u8": "as the parser: served without a URL query, QUERYPARAM has nothing to import; see the `+media` run",
    "hlsjs/define-queryparam-multivariant.m3u8+media":
        "variables flow as hls.js expects: the origin saw `1.m3u8?parent-token=1234` and `segment-1.mp4?pt=1234&t=1234&x=yes`, "
        "`segment-2.mp4?t=1234`, `segment-3.mp4?t=1234` (hls.js's `segment_urls`). Its `.mp4` segments have no EXT-X-MAP, so "
        "hlsplay probes them (policy, below); the playlist is live (no EXT-X-ENDLIST), so it reloads waiting for more",
    "hlsjs/define-substitution-multivariant.m3u8":
        "the variant URIs resolve as hls.js expects (`example.com/sec/video/1.m3u8`, `…/sec/avc1.64001f/2.m3u8`; the host, "
        "a variable, rewritten in place as `http://127.0.0.1:PORT/_host/{$host}/`); the steering server is not requested",
    "hlsjs/define-multivariant.m3u8": "the `#cell=core` fragment is not sent",
    "hlsjs/fmp4-discontinuities-pdt.m3u8": "live start is after the second EXT-X-MAP (`init_960719739.mp4`), which is fetched",
    "hlsjs/llhls-parts-preload-rendition-report.m3u8": "LL-HLS: parts and the preload hint from PART-HOLD-BACK with blocking reloads; the static playlist never advances, so it stalls and keeps asking (paced at the part target)",
    "kuu-hls-parser/examples/8.2-Live-Media-Playlist_using-HTTPS.m3u8": "https URLs served over http by the rewrite",
    "kuu-hls-parser/examples/8.3-Playlist-with-encrypted-Media-Segments.m3u8": "AES-128 with the media sequence number as IV; key fetched from the rewritten host",
    "kuu-hls-parser/examples/8.6-Master-Playlist-with-Alternative-audio.m3u8":
        "the AUDIO rendition `main/english-audio.m3u8` is loaded beside the video-only variant (both generated: muxed TS)",
    "kuu-hls-parser/examples/8.8-Session-Data-in-a-Master-Playlist.m3u8":
        "no variant stream, so nothing to play: a clear rejection. The parser (like hls-parser) accepts the syntax",
    "kuu-hls-parser/examples/Low-Latency_Example-01_Low-Latency_HLS_Playlist.m3u8": "LL-HLS: parts and the preload hint from PART-HOLD-BACK with blocking reloads (`_HLS_msn`/`_HLS_part`); the static playlist never advances, so once the listed parts are played it stalls and keeps asking (paced at the part target)",
    "kuu-hls-parser/examples/Low-Latency_Example-02_Playlist_Delta_Update.m3u8":
        "LL-HLS from PART-HOLD-BACK with blocking reloads; `.mp4` segments with no EXT-X-MAP are probed (policy, below). "
        "The fixture is itself a delta update, so the first `_HLS_skip` answer does not merge: delta updates are turned off "
        "(logged once) and the whole playlist is asked for, which the static file answers with the same delta, played from "
        "the segments it lists (logged once); the playlist never advances, so it stalls and keeps asking, paced at the part "
        "target (was a finding: 4,482 requests in 30 s here, 29,946 on the release build, each logging the failed merge)",
    "kuu-hls-parser/examples/Low-Latency_Example-03_Byterange-addressed_Parts-01.m3u8": "as Example 02: `.mp4` segments, no EXT-X-MAP; reloads paced at the part target (was 9,853 requests in 30 s)",
    "kuu-hls-parser/examples/Low-Latency_Example-03_Byterange-addressed_Parts-02.m3u8": "as Example 02: `.mp4` segments, no EXT-X-MAP; reloads paced at the part target (was 8,628 requests in 30 s)",
    "kuu-hls-parser/examples/Low-Latency_Example-03_Byterange-addressed_Parts-03.m3u8": "as Example 02: `.mp4` segments, no EXT-X-MAP; reloads paced at the part target",
    "kuu-hls-parser/examples/RedundantSegments.m3u8": "the byte-range segment (third, at 18 s) is beyond the 4 s played",
    "kuu-hls-parser/strict-fail/extinf-exceeds-targetduration.m3u8": "played, as the parser's policy (a warning) intends; hls-parser's strict mode rejects it",
    "kuu-hls-parser/strict-fail/part-without-part-inf.m3u8":
        "accepted with warnings, as the parser's policy intends; `fs240.mp4` has no EXT-X-MAP, so it is probed and plays; live and never advancing, so it stalls and reloads",
    "videojs-m3u8-parser/fmp4.m3u8":
        "ends in a clear media error once both segments are skipped (was a finding: it never ended). Harness limit "
        "behind it: the EXT-X-MAP range is 720 B, shorter than a real two-track init section (the sample's is 1341 B), "
        "so neither segment demuxes",
    "videojs-m3u8-parser/diff-init-key.m3u8":
        "live start near the end (`init54-E.mp4`, clear). Init sections under an AES-128 key without IV are served clear: "
        "RFC 8216 §4.3.2.5 requires the IV there, and hlsplay decrypts an init section only with an explicit IV",
    "videojs-m3u8-parser/encrypted.m3u8": "live start at the last segment (METHOD=NONE)",
    "videojs-m3u8-parser/llhlsDelta.m3u8": "`.mp4` segments with no EXT-X-MAP are probed (policy, below); LL-HLS blocking reloads on a static playlist that never advances; as kuu's Example 02, a delta that does not merge turns delta updates off, and the reloads are paced at the part target (was 4,553 requests in 30 s)",
    "videojs-m3u8-parser/llhls.m3u8": "LL-HLS: parts and the preload hint from PART-HOLD-BACK with blocking reloads (`_HLS_msn`/`_HLS_part`); the static playlist never advances, so once the listed parts are played it stalls and keeps asking (paced at the part target)",
    "videojs-m3u8-parser/iFramePlaylist.m3u8": "I-frame playlists are not used for playback; the STREAM-INF variants play (generated)",
}

# Player bugs found by the pass, case id -> what happened. Outcomes the harness flags by itself
# (log invalid, killed, a VOD session that never ends, a remote host contacted, player and
# parser disagreeing) are listed too, automatically.
# Player bugs this pass found, by case id. Both found earlier are fixed (their notes say how they end now).
FINDINGS = {}

PLAYER_DIFFERENCES = """* **What the parser rejects, the player rejects**, with the same message (exit 65, a `playlist` error
  naming the rule and the line): no fixture that `hlsplay check` rejects is played.
* **One fixture the parser accepts is rejected by the player**: `8.8-Session-Data-in-a-Master-Playlist`, a
  multivariant playlist with no variant stream (only EXT-X-SESSION-DATA). It parses (as in hls-parser); there is
  nothing to play, so the player says so and exits 65. Not a parser disagreement.
* **A segment's container is read from its first bytes** (`ContainerHint.sniff`: MPEG-TS, ISO BMFF, ADTS,
  MPEG audio, AC-3/E-AC-3, after an ID3 tag; `PlayerSession.containerHint` falls back on EXT-X-MAP for fMP4,
  the packed-audio extensions, a probe for `.mp4`/`.m4s`/`.m4a`, else MPEG-TS), so a complete,
  self-initialising fragmented MP4 plays although RFC 8216 §3.3 wants EXT-X-MAP for it — as hls.js and
  video.js, which look at the bytes, would. The Apple LL-HLS examples 02 and 03, `llhlsDelta`,
  `part-without-part-inf` and the hls.js `define-*` media playlists are written that way (abridged).
* **PLAYLIST-TYPE:VOD without EXT-X-ENDLIST is played as live** (reloaded every half target duration):
  `map-uri-playlist-with-byterange`. RFC 8216 §4.3.3.5 says such a playlist cannot change, so the reloads are
  useless, but hls.js also keys "live" on EXT-X-ENDLIST alone.
* **LL-HLS on a static origin**: with PART-INF and CAN-BLOCK-RELOAD=YES the player loads parts from
  PART-HOLD-BACK and reloads with `_HLS_msn`/`_HLS_part` (and `_HLS_skip` when CAN-SKIP-UNTIL allows; a delta
  answer is merged into the playlist it extends). The harness serves the fixtures as static files, which cannot
  block. Every reload is paced (`LowLatencyRules.reloadWaitSeconds`): it starts at least half a part target after
  the previous one, and one part target after an answer that did not advance; a delta answer that does not merge
  turns delta updates off for the stream (the delta fixtures answer every request with the same delta, which is
  then played from the segments it lists). The session stalls once the listed parts are played — a fair reading
  of a live playlist that never advances — and keeps asking about once per part target: 60–190 requests a minute
  for part targets of 1.0–0.33 s, within the paced bound (docs/pacing-and-live-windows.md).
* **I-frame-only playlists** (EXT-X-I-FRAMES-ONLY) given as the URL to play are played as trick-play
  content: each I-frame is decoded (low delay) and shown for its EXTINF; `playlist.loaded` and the summary
  say `iFramesOnly: true`.
* **Not used by the player, by design**: the I-frame playlists of a multivariant playlist (EXT-X-I-FRAME-STREAM-INF), RENDITION-REPORT, EXT-X-SESSION-DATA, EXT-X-SESSION-KEY, EXT-X-DATERANGE
  and interstitials, EXT-X-BITRATE, CUE-OUT/CUE-IN, EXT-X-PROGRAM-DATE-TIME (used for live latency only).
  Content steering is used (the steering server is asked; see `content-steering-playlist`).
* **SAMPLE-AES / DRM**: rejected with a clear error when the first such segment is reached
  (`clear-enc-clear-enc-multikey@12s`); the clear segments before it play.
* **Harness limits, not player behaviour** (said per fixture in the notes): byte ranges shorter than a real
  segment or init section hold a truncated sample (`fmp4`, `map-uri-playlist-with-byterange`,
  `byterange-without-offset`, the LL-HLS parts); a file a fixture names both clear and encrypted, or under two
  keys, is made for the use the player reaches first; key URIs that differ only in their query
  (`key.php?r=52`, `?r=53`) are one file on the origin (it ignores queries), so every key is the same sample
  key; generated variant and rendition playlists are 4 × 2 s of muxed MPEG-TS whatever the CODECS say (HEVC,
  Dolby Vision, AC-3, audio-only); live playlists never advance; only 4 s of each are played, so what lies
  later in a long playlist (e.g. the third segment of `RedundantSegments`) is not reached.
"""

RESULTS_CACHE = os.path.join(ROOT, ".build", "conformance-play.jsonl")


def parser_pass():
    files = []
    for dirpath, _, names in os.walk(DATA):
        files += [os.path.join(dirpath, n) for n in names if n.endswith(".m3u8")]
    files.sort()
    p = subprocess.run([HLSPLAY, "check", "--json"] + files, capture_output=True, text=True)
    return json_lines(p.stdout)


def md(text):
    text = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", text or "")
    return text.replace("|", "\\|").replace("\n", " ")


def automatic_findings(r, parsed):
    """Findings the harness can see by itself; [] when the outcome is as expected."""
    out = []
    if r["outcome"] == "harness-error":
        return out
    if r["outcome"] == "log-invalid":
        out.append(f"the session log is not valid JSON Lines ending in a summary: {r.get('logProblem')}")
    if r.get("remoteContacted"):
        out.append("a request went to a host other than the loopback origin")
    if r["outcome"] == "timed-out" and "killed" in r["why"]:
        out.append(f"did not exit within {conformance_play.KILL_GRACE_SECONDS} s of SIGINT: killed")
    elif r["outcome"] == "timed-out" and not r.get("live") and not r.get("multivariant"):
        out.append(f"a VOD playlist (EXT-X-ENDLIST) and the session never ends: {r['why']}")
    elif r["outcome"] == "timed-out" and r.get("overBound"):
        # A live playlist that never advances may keep a session waiting; it may not make it hammer the origin.
        out.append("a live session that did not end made more requests than the paced bound allows: " + over_bound(r))
    if r.get("outcome") != "timed-out" and r.get("overBound"):
        out.append("more requests than the paced bound allows: " + over_bound(r))
    if parsed is not None and r["case"] == r["fixture"]:
        if not parsed["accepted"] and r["outcome"] not in ("rejected",):
            out.append("`hlsplay check` rejects this playlist but the player did not")
        if parsed["accepted"] and r["outcome"] == "rejected" and "malformed playlist" in (r.get("error") or ""):
            out.append("`hlsplay check` accepts this playlist but the player rejected it as malformed")
    return out


def over_bound(r):
    counts, bound, inputs = r.get("requestsByKind", {}), r.get("pacedBound", {}), r.get("pacedBoundInputs", {})
    return "; ".join(f"{counts.get(k, 0)} {k} requests in {inputs.get('seconds', 0):.0f} s, bound {bound.get(k)}"
                     for k in r.get("overBound", []))


def rate_cell(r):
    """Requests per minute: all, and the playlist reloads against the paced bound."""
    seconds = (r.get("pacedBoundInputs") or {}).get("seconds") or 0
    if not seconds or r.get("requestsPerMinute") is None:
        return "—"
    per_minute = lambda n: n * 60 / seconds
    counts, bound = r.get("requestsByKind", {}), r.get("pacedBound", {})
    cell = f"{r['requestsPerMinute']:.0f}"
    cell += f" (playlists {per_minute(counts.get('playlist', 0)):.0f}, bound {per_minute(bound.get('playlist', 0)):.0f})"
    if r.get("overBound"):
        cell = f"**{cell}: over the bound**"
    return cell


def player_cell(r):
    return {"played": "played", "partial": "**partial**", "rejected": "rejected", "timed-out": "**timed out**",
            "log-invalid": "**log invalid**", "harness-error": "harness error"}.get(r["outcome"], r["outcome"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parser-only", action="store_true")
    ap.add_argument("--reuse")
    ap.add_argument("--jobs", type=int, default=conformance_play.DEFAULT_JOBS)
    a = ap.parse_args()

    results = parser_pass()
    exp = expectations()
    parsed_by_rel = {os.path.relpath(r["file"], DATA): r for r in results}
    rows, agree, compared = [], 0, 0
    for r in results:
        rel = os.path.relpath(r["file"], DATA)
        lib, expected, detail = exp.get(rel, ("—", None, ""))
        ours = "accept" if r["accepted"] else "reject"
        if r["accepted"]:
            size = f'{r.get("variants", 0)} variants' if r.get("kind") == "multivariant" else f'{r.get("segments", 0)} segments'
            what = f'accepted: {r.get("kind")}, {size}' + (f', {len(r["warnings"])} warning(s)' if r["warnings"] else "")
            note = "; ".join(w.replace("|", "\\|") for w in r["warnings"][:2])
        else:
            what = f'rejected ({r.get("errorKind")}, line {r.get("errorLine")})'
            note = (r.get("error") or "").replace("|", "\\|")
        if expected:
            compared += 1
            same = expected == ours
            agree += same
            verdict = "yes" if same else "**differs**: " + REASONS.get(rel, "see the fixture tests")
        else:
            verdict = "—"
        rows.append(f"| `{rel}` | {what} | {lib}: {expected or '—'} | {verdict} | {note[:160]} |")
    accepted = sum(r["accepted"] for r in results)

    play, play_seconds = None, None
    if a.reuse:
        play = read_jsonl(a.reuse, strict=True)
    elif not a.parser_only:
        started = time.monotonic()
        play = conformance_play.run_all(jobs=a.jobs, progress=lambda m: print(m, file=sys.stderr))
        play_seconds = time.monotonic() - started
        os.makedirs(os.path.dirname(RESULTS_CACHE), exist_ok=True)
        with open(RESULTS_CACHE, "w") as f:
            for r in play:
                f.write(json.dumps(r, sort_keys=True) + "\n")
            f.write(json.dumps({"runSeconds": play_seconds}) + "\n")
    if play:
        meta = [r for r in play if "case" not in r]
        play = [r for r in play if "case" in r]
        if play_seconds is None and meta:
            play_seconds = meta[-1].get("runSeconds")

    out = []
    w = out.append
    w("# Playlist conformance\n\n")
    w("Generated by `Tools/characterize/conformance.sh` (do not edit by hand): hlsplay's parser and then the player over\n"
      "every third-party fixture in `../shared/data/playlists` (sources and licences in its README;\n"
      "kuu/hls-parser © 2020 Kuu Miyazaki, MIT; videojs/m3u8-parser © Brightcove, Inc., Apache-2.0;\n"
      "hls.js © 2017 Dailymotion, Apache-2.0; globocom/m3u8 © 2014 Globo.com Player authors, MIT;\n"
      "grafov/m3u8 © 2013-2016 Alexander I. Grafov and the project developers, BSD-3-Clause), beside\n"
      "the source library's own verdict where one is known. The libraries disagree with each other and\n"
      "with RFC 8216 in places; our policy is in `docs/playlist-parsing.md`, and each deliberate parser\n"
      "difference is listed with its reason — and asserted — in the fixture tests under `Tests/HLSCoreTests/`.\n\n")
    w("## Summary\n\n")
    w(f"**Parser** (`hlsplay check --json`): {len(results)} fixtures: {accepted} accepted, {len(results) - accepted} rejected; "
      f"{agree} of {compared} agree with the library's accept/reject verdict.\n"
      "The 235 inline strict-mode cases of hls-parser are compared in the tests (181 agree).\n\n")
    findings = []
    if play:
        counts = {}
        for r in play:
            key = r["outcome"]
            if key == "rejected":
                clear = bool(r.get("error")) and r.get("status") in (65, 69)
                key = "rejected with a clear error" if clear else "rejected without a clear error"
            counts[key] = counts.get(key, 0) + 1
        order = ["played", "rejected with a clear error", "rejected without a clear error", "partial", "timed-out",
                 "log-invalid", "harness-error"]
        parts = [f"{counts.get(k, 0)} {k.replace('timed-out', 'timed out').replace('log-invalid', 'log invalid')}"
                 for k in order if counts.get(k, 0) or k in ("played", "rejected with a clear error", "partial", "timed-out", "log-invalid")]
        n_fix = sum(1 for r in play if r["case"] == r["fixture"])
        w(f"**Player** (`hlsplay URL --headless --json --duration {conformance_play.PLAY_DURATION_SECONDS}` through `hls-origin`): "
          f"{len(play)} runs ({n_fix} fixtures + {len(play) - n_fix} extra: a multivariant → media relationship, a longer play): " + ", ".join(parts) + ".\n")
        for r in play:
            auto = automatic_findings(r, parsed_by_rel.get(r["fixture"]))
            manual = FINDINGS.get(r["case"])
            if auto or manual:
                findings.append((r, auto, manual))
        w(f"Every session log was checked (valid JSON Lines, header first, summary last, `t` never decreasing): "
          f"{sum(1 for r in play if r['outcome'] == 'log-invalid')} invalid. "
          f"Findings (player bugs and spec deviations): {len(findings)}, listed below.\n")
        if play_seconds:
            w(f"The player pass took {play_seconds / 60:.1f} min wall clock on the 2-core build machine "
              f"({conformance_play.DEFAULT_JOBS} runs in parallel, debug build; a run that does not end is interrupted after "
              f"{conformance_play.TIMEOUT_SECONDS} s); the parser pass takes about a second.\n")
        w("\n")

    w("## Parser: every fixture through `hlsplay check`\n\n")
    w("| fixture | hlsplay | library expects | agree | first error or warnings |\n|---|---|---|---|---|\n")
    w("\n".join(rows) + "\n\n")

    if play:
        w("## Player: every fixture played through hls-origin\n\n")
        w("How (`Tools/characterize/conformance_play.py`): each fixture gets its own origin root holding the fixture playlist\n"
          "verbatim and, at every path it names, a real sample file of the right kind from `Samples/build`:\n"
          "a 2 s MPEG-TS segment (`short-2s/v1`) for `.ts` and unknown extensions; the fMP4 init section and\n"
          "fragments (`variants/fmp4`) for EXT-X-MAP and segments under it (a `.mp4`/`.m4s` segment with no\n"
          "EXT-X-MAP gets a self-initialising file, init + fragment); the sample AES-128 key for every key URI,\n"
          "with each segment under it encrypted to that key and the fixture's IV (explicit, else the media\n"
          "sequence number); for byte ranges one file per resource with each range holding a sample of its kind\n"
          "sized to the range (MPEG-TS padded with null packets, fMP4 with a `free` box, truncated if the range\n"
          "is shorter — said in the notes); a generated 4-segment VOD media playlist for each variant, rendition\n"
          "or I-frame playlist the fixture set does not provide. The one edit ever made to a fixture: absolute\n"
          "URLs of remote hosts point to the origin instead (`http://127.0.0.1:PORT/_host/HOST/…`, \"host\n"
          "rewritten\"); any other host would go to a closed loopback proxy, so nothing leaves the machine. A\n"
          "live playlist (no EXT-X-ENDLIST) is served as it is, so it never advances. Then\n"
          f"`hlsplay URL --headless --json --duration {conformance_play.PLAY_DURATION_SECONDS} --log FILE` runs against\n"
          f"`hls-origin ROOT --port 0` with a hard timeout ({conformance_play.TIMEOUT_SECONDS} s, SIGINT, then SIGKILL\n"
          f"{conformance_play.KILL_GRACE_SECONDS} s later), and the outcome comes from the exit status, the session log\n"
          "and the origin's request log:\n\n"
          "* **played**: exited 0 after the duration or the end, frames decoded, nothing skipped, no media error;\n"
          "* **rejected**: exited with an error (65 malformed playlist or media, 69 network) — the error is shown;\n"
          "* **partial**: exited 0 but skipped segments, logged media/decode errors, or decoded no frame;\n"
          f"* **timed out**: still running after {conformance_play.TIMEOUT_SECONDS} s — what it was waiting for is shown (a live\n"
          "  playlist that never advances may keep a session waiting; a timed-out run is a finding when it is VOD, or when it\n"
          "  made more requests than the paced bound below allows);\n"
          "* **log invalid**: the session log is not valid JSON Lines ending in a summary.\n\n"
          "Media durations are the fixture's EXTINF values; the samples hold 2 s each, so `frames` counts what\n"
          f"the samples had in the first {conformance_play.PLAY_DURATION_SECONDS} s of playlist time.\n\n"
          "**Requests per minute** are the origin's requests over the run's wall time: all of them, then the playlist\n"
          "requests and the most the *paced bound* lets through in that time. The bound is the player's request-rate\n"
          "bound (`RequestRateRules`), computed by the harness from the fixture's own durations: per kind (playlists,\n"
          "LL-HLS parts, segments) a burst, then one request per half the duration that kind is paced by — the part\n"
          "target (else the target duration, never below the longest EXTINF) for playlists, the part target for parts,\n"
          f"the mean EXTINF for segments; playlists burst {conformance_play.BOUND_PLAYLIST_BURST}, segments and parts as many as fill "
          f"{conformance_play.BOUND_FORWARD_BUFFER_SECONDS} s plus {conformance_play.BOUND_MEDIA_SLACK}; never more than one per "
          f"{conformance_play.BOUND_FLOOR_SECONDS} s. Any kind over its bound is a finding.\n\n")
        w("| fixture | parser | player | requests/min | what happened | why / what was served |\n|---|---|---|---|---|---|\n")
        for r in play:
            parsed = parsed_by_rel.get(r["fixture"])
            pv = "—" if parsed is None else ("accept" if parsed["accepted"] else "reject")
            name = f"`{r['fixture']}`" if r["case"] == r["fixture"] else f"`{r['case']}`: {r.get('about') or ''}"
            why = PLAYER_REASONS.get(r["case"], "")
            served = "; ".join(r.get("notes") or [])
            cell = "; ".join(x for x in (why, served) if x)
            w(f"| {md(name)} | {pv} | {player_cell(r)} | {rate_cell(r)} | {md(r['why'])[:300]} | {md(cell)[:600]} |\n")
        w("\n")

        w("## Findings\n\n")
        if not findings:
            w("None: no crash, no hang past the timeout, no invalid log, nothing played that the parser rejects.\n\n")
        for n, (r, auto, manual) in enumerate(findings, 1):
            w(f"{n}. **`{r['case']}`**: " + (manual or "") + (" Seen by the harness: " if manual and auto else "")
              + "; ".join(auto) + (f" (this run: {md(r['why'])})" if not any(r['why'] in x for x in auto) else "") + "\n")
            w(f"   Reproduce: `{r['repro']}`\n")
        w("\n")

    w(OTHER_PACKAGERS)

    w("## Differences and their reasons\n\n")
    w("### Parser against the libraries\n\n")
    for rel, why in REASONS.items():
        w(f"* `{rel}`: {why}.\n")
    if play:
        w("\n### Player against the parser and the libraries\n\n")
        w(PLAYER_DIFFERENCES)
    with open(os.path.join(ROOT, "docs", "conformance.md"), "w") as f:
        f.write("".join(out))
    summary = f"{len(results)} fixtures, {accepted} accepted; {agree}/{compared} agree"
    if play:
        summary += "; player: " + ", ".join(f"{v} {k}" for k, v in sorted(
            {r["outcome"]: sum(1 for x in play if x["outcome"] == r["outcome"]) for r in play}.items()))
        summary += f"; {len(findings)} finding(s)"
    print(summary + "; wrote docs/conformance.md")


if __name__ == "__main__":
    main()
