#!/usr/bin/env python3
"""The player pass of the conformance report: every playlist fixture in
../shared/data/playlists played by the real hlsplay through the real hls-origin,
with sample media at every path the playlist names.

Usage:
  Tools/characterize/conformance_play.py [--only REL[,REL...]] [--jobs N] [--out FILE] [--keep DIR]
    --only   fixture paths relative to the data folder, or case ids (see CASES_EXTRA)
    --jobs   runs in parallel (default 2, the most the shared machine allows)
    --out    write the results as one JSON object per line (default: stdout)
    --keep   keep each case's origin root, logs and stdout under DIR
Tools/characterize/conformance.py imports this module and renders the results into docs/conformance.md.

For each fixture a temporary origin root is built:
  * the fixture playlist, verbatim. The one rewrite ever made: an absolute URL of a
    remote host (http[s]://HOST/...) becomes http://127.0.0.1:PORT/_host/HOST/...,
    so that nothing but loopback is ever contacted ("host rewritten" in the notes);
  * at every path the playlist names, a real sample file of the right kind
    (Samples/build must exist: Samples/make-all.sh and Samples/make-variants.sh):
      - a segment (.ts or unknown extension): a 2 s MPEG-TS sample segment
        (short-2s/v1/seg_0000N.ts, N cycling);
      - a segment under an EXT-X-MAP, or named .m4s/.mp4/...: an fMP4 sample segment
        (variants/fmp4/seg_0000N.m4s); the EXT-X-MAP itself: the fMP4 init section;
      - an AES-128 key: the sample key (16 bytes); every segment under it is encrypted
        with that key and the fixture's IV (explicit, else the media sequence number);
      - byte ranges: one file per resource, each declared range filled with a sample of
        the right kind, sized to the range (MPEG-TS padded with null packets, fMP4 with a
        `free` box; truncated when the range is shorter than the sample, and said so);
      - a variant, rendition or I-frame playlist the fixture set does not provide: a
        generated 4-segment VOD media playlist over the MPEG-TS sample ("generated");
  * a live playlist (no EXT-X-ENDLIST) is served as it is: it never advances.
Then `hls-origin ROOT --port 0 --log` and `hlsplay URL --headless --json --duration 4
--log FILE` run, with a hard timeout (SIGINT at TIMEOUT_SECONDS, SIGKILL 5 s later),
and the outcome is classified from the exit status, the session log and the origin log.
The origin's requests are counted per kind (playlist, part, segment) and checked against
the paced bound computed from the fixture's durations (`paced_bound`, which mirrors the
player's RequestRateRules): `requestsByKind`, `requestsPerMinute`, `pacedBound`, `overBound`.
"""
import argparse, json, os, re, shutil, signal, subprocess, sys, tempfile, threading
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from hlsplay_tools import (REPO as ROOT, INTERRUPT_GRACE_SECONDS as KILL_GRACE_SECONDS, Origin,  # noqa: E402
                           build_dir, find_binary, read_jsonl, refusing_tool_errors, run_hlsplay,
                           validate_log)
DATA = os.path.normpath(os.path.join(ROOT, "..", "shared", "data", "playlists"))
SAMPLES = os.path.join(ROOT, "Samples", "build")
HLSPLAY = os.path.join(build_dir("debug"), "hlsplay")
ORIGIN = os.path.join(build_dir("debug"), "hls-origin")

# Media seconds each fixture is played for (`--duration`).
PLAY_DURATION_SECONDS = 4
# Wall-clock limit of one hlsplay run: then SIGINT, and SIGKILL after KILL_GRACE_SECONDS more
# (hlsplay_tools.INTERRUPT_GRACE_SECONDS).
TIMEOUT_SECONDS = 30
# Runs in parallel: the build machine has 2 cores, shared.
DEFAULT_JOBS = 2
# Where a request to any other host would go (port 9, discard: nothing listens), never off the machine.
CLOSED_LOOPBACK_PROXY = "http://127.0.0.1:9"

TS_SAMPLES = [os.path.join(SAMPLES, "short-2s", "v1", f"seg_0000{i}.ts") for i in range(4)]
FMP4_SAMPLES = [os.path.join(SAMPLES, "variants", "fmp4", f"seg_0000{i}.m4s") for i in range(4)]
FMP4_INIT = os.path.join(SAMPLES, "variants", "fmp4", "init.mp4")
SAMPLE_KEY = os.path.join(SAMPLES, "variants", "aes-iv", "k.key")
FMP4_EXTENSIONS = (".m4s", ".mp4", ".m4v", ".m4a", ".cmfv", ".cmfa", ".fmp4")

# Extra cases beyond one run per fixture: a multivariant fixture played through the media
# fixture of the same folder that its variants stand for (the relationship the hls.js test
# encodes by passing the parent's variables), and a query the hls.js test supplies.
CASES_EXTRA = {
    "hlsjs/define-queryparam-multivariant.m3u8+media": {
        "fixture": "hlsjs/define-queryparam-multivariant.m3u8",
        "query": "foo=bar&a=ok&token=1234",
        # variant URI (after substitution, host rewritten) -> fixture served there
        "provide": {"_host/www.x.com/sec/video/1.m3u8": "hlsjs/define-queryparam-media.m3u8",
                    "_host/www.x.com/sec/video/2.m3u8": "hlsjs/define-queryparam-media.m3u8"},
        "about": "the multivariant fixture with the URL query of the hls.js test (`?foo=bar&a=ok&token=1234`); "
                 "both variants served by `define-queryparam-media.m3u8`, which IMPORTs `token` from it",
    },
    # Played past its clear segments: the third segment is under METHOD=SAMPLE-AES.
    "hlsjs/clear-enc-clear-enc-multikey.m3u8@12s": {
        "fixture": "hlsjs/clear-enc-clear-enc-multikey.m3u8",
        "duration": 12,
        "about": "played for 12 s instead of 4, to reach the first SAMPLE-AES segment (at 10.5 s)",
    },
}


# ---------------------------------------------------------------- playlist reading

ATTR_RE = re.compile(r'([A-Z0-9-]+)=("[^"]*"|[^,]*)')


def attributes(text):
    out = {}
    for m in ATTR_RE.finditer(text):
        v = m.group(2).strip()
        out[m.group(1)] = v[1:-1] if v.startswith('"') and v.endswith('"') else v
    return out


class Variables:
    """EXT-X-DEFINE, just enough to find the paths a playlist names (RFC 8216bis §4.4.2.3)."""

    def __init__(self, parent=None, query=""):
        self.parent = parent or {}
        self.query = dict(urllib.parse.parse_qsl(query, keep_blank_values=True))
        self.values = {}

    def define(self, attrs):
        if "NAME" in attrs and "VALUE" in attrs:
            self.values.setdefault(attrs["NAME"], self.sub(attrs["VALUE"]))
        elif "IMPORT" in attrs and attrs["IMPORT"] in self.parent:
            self.values[attrs["IMPORT"]] = self.parent[attrs["IMPORT"]]
        elif "QUERYPARAM" in attrs and attrs["QUERYPARAM"] in self.query:
            self.values[attrs["QUERYPARAM"]] = self.query[attrs["QUERYPARAM"]]

    def sub(self, s):
        return re.sub(r"\{\$([A-Za-z0-9_-]+)\}", lambda m: self.values.get(m.group(1), m.group(0)), s)


def parse_range(spec, last_end):
    """'n[@o]' -> (offset, length); without @o the range continues the previous one."""
    spec = spec.strip()
    if "@" in spec:
        n, o = spec.split("@", 1)
        return (int(o), int(n)) if o else (last_end or 0, int(n))
    return (last_end or 0, int(spec))


def read_playlist(text, variables):
    """The references of one playlist: a list of dicts with uri, role and context."""
    refs = []
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    multivariant = any(l.startswith(("#EXT-X-STREAM-INF", "#EXT-X-MEDIA:", "#EXT-X-I-FRAME-STREAM-INF", "#EXT-X-SESSION-"))
                       for l in lines)
    msn, key, map_, pending_range, gap, expect_variant = 0, None, None, None, False, False
    last_end = {}  # uri -> end of the previous sub-range of that resource
    index = 0
    durations, target, hold_back, part_target = [], 0.0, None, None
    # Live as the player sees it: no EXT-X-ENDLIST (even with PLAYLIST-TYPE:VOD).
    live = "#EXT-X-ENDLIST" not in text and not multivariant and "#EXTINF" in text
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            tag, _, value = line.partition(":")
            a = attributes(value) if value else {}
            if tag == "#EXT-X-DEFINE":
                variables.define(a)
            elif tag == "#EXTINF":
                try:
                    durations.append(float(value.split(",")[0]))
                except ValueError:
                    durations.append(0.0)
            elif tag == "#EXT-X-TARGETDURATION":
                try:
                    target = float(value)
                except ValueError:
                    pass
            elif tag == "#EXT-X-PART-INF" and "PART-TARGET" in a:
                try:
                    part_target = float(a["PART-TARGET"])
                except ValueError:
                    pass
            elif tag == "#EXT-X-SERVER-CONTROL" and "HOLD-BACK" in a:
                try:
                    hold_back = float(a["HOLD-BACK"])
                except ValueError:
                    pass
            elif tag == "#EXT-X-MEDIA-SEQUENCE":
                try:
                    msn = int(value)
                except ValueError:
                    pass
            elif tag == "#EXT-X-SKIP":
                try:
                    msn += int(a.get("SKIPPED-SEGMENTS", "0"))
                except ValueError:
                    pass
            elif tag == "#EXT-X-KEY":
                method = a.get("METHOD", "")
                if method == "NONE":
                    key = None
                elif method == "AES-128" and "URI" in a:
                    uri = variables.sub(a["URI"])
                    key = {"uri": uri, "iv": variables.sub(a["IV"]) if "IV" in a else None}
                    refs.append({"uri": uri, "role": "key"})
                else:
                    key = {"uri": None, "method": method}  # SAMPLE-AES, DRM: not served, not encrypted
            elif tag == "#EXT-X-MAP" and "URI" in a:
                uri = variables.sub(a["URI"])
                rng = None
                if "BYTERANGE" in a:
                    rng = parse_range(variables.sub(a["BYTERANGE"]), None)
                map_ = {"uri": uri, "range": rng}
                refs.append({"uri": uri, "role": "init", "range": rng, "key": key})
            elif tag == "#EXT-X-BYTERANGE":
                pending_range = value
            elif tag == "#EXT-X-GAP":
                gap = True
            elif tag == "#EXT-X-STREAM-INF":
                expect_variant = True
            elif tag in ("#EXT-X-MEDIA", "#EXT-X-I-FRAME-STREAM-INF", "#EXT-X-RENDITION-REPORT") and "URI" in a:
                refs.append({"uri": variables.sub(a["URI"]), "role": "playlist", "tag": tag[1:]})
            elif tag == "#EXT-X-SESSION-DATA" and "URI" in a:
                refs.append({"uri": variables.sub(a["URI"]), "role": "json"})
            elif tag == "#EXT-X-CONTENT-STEERING" and "SERVER-URI" in a:
                refs.append({"uri": variables.sub(a["SERVER-URI"]), "role": "steering"})
            elif tag in ("#EXT-X-PART", "#EXT-X-PRELOAD-HINT") and "URI" in a:
                uri = variables.sub(a["URI"])
                rng = None
                if "BYTERANGE" in a:
                    try:
                        rng = parse_range(variables.sub(a["BYTERANGE"]), last_end.get(uri))
                    except ValueError:
                        rng = None
                elif "BYTERANGE-START" in a:
                    start = int(a["BYTERANGE-START"])
                    rng = (start, int(a.get("BYTERANGE-LENGTH", "0")) or None)
                if a.get("GAP") != "YES":
                    refs.append({"uri": uri, "role": "part", "range": rng, "key": key, "map": map_,
                                 "msn": msn, "index": index, "tag": tag[1:]})
            continue
        uri = variables.sub(line)
        if multivariant:
            if expect_variant:
                refs.append({"uri": uri, "role": "playlist", "tag": "EXT-X-STREAM-INF"})
            expect_variant = False
            continue
        rng = None
        if pending_range is not None:
            try:
                rng = parse_range(variables.sub(pending_range), last_end.get(uri))
                last_end[uri] = rng[0] + rng[1]
            except ValueError:
                rng = None
        if not gap:
            refs.append({"uri": uri, "role": "segment", "range": rng, "key": key, "map": map_,
                         "msn": msn, "index": index})
        msn, index, pending_range, gap = msn + 1, index + 1, None, False
    # Where the player starts a live playlist (LivePlaylistRules.startSegmentIndex):
    # HOLD-BACK, else three target durations, before the end.
    start, remaining = len(durations), hold_back if hold_back is not None else 3 * target
    while live and start > 0 and remaining > 0:
        start -= 1
        remaining -= durations[start]
    return {"multivariant": multivariant, "live": live, "refs": refs, "start": start if live else 0,
            "durations": durations, "target": target, "partTarget": part_target}


# ---------------------------------------------------------------- the request-rate bound

# The paced bound a run's requests are checked against: the player's request-rate bound
# (RequestRateRules in Sources/HLSCore/Loading/RequestRateBound.swift), computed here from the
# fixture's own durations rather than read from the player's log. Per kind, `burst` requests
# back to back, then one per half the duration the kind is paced by.
BOUND_INTERVAL_FRACTION = 0.5        # RequestRateRules.intervalFraction
BOUND_FLOOR_SECONDS = 0.1            # RequestRateRules.minimumIntervalFloorSeconds
BOUND_UNKNOWN_SECONDS = 0.5          # RequestRateRules.unknownDurationIntervalSeconds
BOUND_PLAYLIST_BURST = 4             # RequestRateRules.playlistBurst
BOUND_MEDIA_SLACK = 4                # RequestRateRules.mediaBurstSlack
# The largest forward-buffer target the player uses by default (the policy controller's
# defensive downshift): the most segments or parts the bound lets go back to back, seconds.
BOUND_FORWARD_BUFFER_SECONDS = 60


def bound_inputs(info):
    """(target duration the live rules use, part target, mean segment duration) of a playlist."""
    durations = [d for d in info.get("durations", []) if d >= 0]
    target = max([info.get("target") or 0.0] + durations) or 1.0  # LivePlaylistRules.targetDurationSeconds(for:)
    mean = sum(durations) / len(durations) if durations else None
    part = info.get("partTarget") if (info.get("partTarget") or 0) > 0 else None
    return target, part, mean


def paced_bound(kind, seconds, target, part, mean):
    """The most requests of `kind` (playlist, part, segment) the bound lets start within `seconds`."""
    if kind == "playlist":
        paced = part or target
    elif kind == "part":
        paced = part
    else:
        paced = mean or target
    interval = max(BOUND_FLOOR_SECONDS, BOUND_INTERVAL_FRACTION * paced) if paced else BOUND_UNKNOWN_SECONDS
    if kind == "playlist":
        burst = BOUND_PLAYLIST_BURST
    else:
        unit = max(paced or BOUND_UNKNOWN_SECONDS / BOUND_INTERVAL_FRACTION, BOUND_FLOOR_SECONDS / BOUND_INTERVAL_FRACTION)
        burst = int(-(-BOUND_FORWARD_BUFFER_SECONDS // unit)) + BOUND_MEDIA_SLACK
    return burst + int(max(0.0, seconds) / interval)


def requests_by_kind(root, requests):
    """The origin's requests counted as the bound counts them: playlist, part, segment, other."""
    counts = {"playlist": 0, "part": 0, "segment": 0, "other": 0}
    for r in requests:
        path = (r.get("path") or "").lstrip("/")
        roles = {u["role"] for u in root.files.get(path, [])}
        if path in root.playlists or path.endswith(".m3u8"):
            counts["playlist"] += 1
        elif "segment" in roles:
            counts["segment"] += 1
        elif "part" in roles:
            counts["part"] += 1
        else:
            counts["other"] += 1
    return counts


# ---------------------------------------------------------------- sample files

NULL_TS_PACKET = bytes([0x47, 0x1F, 0xFF, 0x10]) + b"\xff" * 184


def read(path):
    with open(path, "rb") as f:
        return f.read()


def fit_ts(data, length):
    """MPEG-TS sample sized to `length`: padded with null packets (PID 0x1FFF), or truncated."""
    if len(data) >= length:
        return data[:length], len(data) > length
    pad = length - len(data)
    out = data + NULL_TS_PACKET * (pad // 188) + b"\xff" * (pad % 188)
    return out, False


def fit_mp4(data, length):
    """An MP4 box sequence sized to `length`: a `free` box appended, or truncated."""
    if len(data) == length:
        return data, False
    if len(data) > length or length - len(data) < 8:
        return data[:length], len(data) > length
    pad = length - len(data)
    return data + pad.to_bytes(4, "big") + b"free" + b"\x00" * (pad - 8), False


def aes_encrypt(data, key, iv):
    """AES-128-CBC with PKCS#7 padding (RFC 8216 §4.3.2.4), by the openssl CLI as in Samples/make-variants.sh."""
    p = subprocess.run(["openssl", "aes-128-cbc", "-e", "-K", key.hex(), "-iv", iv.hex()],
                       input=data, capture_output=True, check=True)
    return p.stdout


def iv_bytes(key, msn):
    if key.get("iv"):
        h = key["iv"][2:] if key["iv"][:2].lower() == "0x" else key["iv"]
        return bytes.fromhex(h.rjust(32, "0")[-32:])
    return msn.to_bytes(16, "big")


def generated_media_playlist():
    body = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:0\n#EXT-X-PLAYLIST-TYPE:VOD\n"
    for i in range(4):
        body += f"#EXTINF:2.000000,\n_gen_seg_0000{i}.ts\n"
    return body + "#EXT-X-ENDLIST\n"


# ---------------------------------------------------------------- the origin root

class Root:
    """A temporary origin root for one case, and the notes on what it holds."""

    def __init__(self, directory):
        self.dir = directory
        self.files = {}      # served path (no leading /) -> list of uses
        self.playlists = {}  # served path -> text (written once the port is known)
        self.notes = []
        self.by_kind = {}    # a note that applies to several paths -> those paths
        self.host_rewritten = set()
        self.live = self.multivariant = False
        self.start_index = 0
        self.generated = 0
        self.info = {}

    def note(self, text, path=None):
        if path is not None:
            paths = self.by_kind.setdefault(text, [])
            if path not in paths:
                paths.append(path)
            text = ("paths", text)
        if text not in self.notes:
            self.notes.append(text)

    def rendered_notes(self):
        out = []
        for n in self.notes:
            if isinstance(n, tuple):
                paths = self.by_kind[n[1]]
                out.append(f"{n[1]}: `{paths[0]}`" + (f" and {len(paths) - 1} more" if len(paths) > 1 else ""))
            else:
                out.append(n)
        return out


def served_path(uri, base_path):
    """The origin path a URI resolves to, relative to a playlist at base_path; None if not HTTP."""
    p = urllib.parse.urlsplit(uri)
    if p.scheme and p.scheme not in ("http", "https"):
        return None, False
    if p.scheme:
        host = p.hostname or ""
        if host in ("127.0.0.1", "localhost"):
            return p.path.lstrip("/"), False
        return "_host/" + host + "/" + p.path.lstrip("/"), True
    joined = urllib.parse.urljoin("http://o/" + base_path, uri)
    return urllib.parse.urlsplit(joined).path.lstrip("/"), False


def rewrite_hosts(text, port):
    """Absolute URLs of remote hosts -> the loopback origin, under /_host/HOST/."""
    def line(l):
        if l.startswith("#") and not l.startswith("#EXT"):
            return l  # a comment: left alone
        # The host may be a variable reference (`https://{$host}/`): rewritten the same way.
        return re.sub(r"https?://([A-Za-z0-9.{}$_-]+)(:\d+)?/",
                      lambda m: m.group(0) if m.group(1) in ("127.0.0.1", "localhost")
                      else f"http://127.0.0.1:{port}/_host/{m.group(1)}/", l)
    return "".join(line(l) for l in text.splitlines(keepends=True))


def plan(root, rel, text, path, variables, provide, depth=0):
    """Record the playlist at `path` and everything it names, recursively."""
    info = read_playlist(text, variables)
    root.playlists[path] = text
    if depth == 0:
        root.live = info["live"]
        root.multivariant = info["multivariant"]
        root.start_index = info["start"]
        root.info = info
    elif info["live"]:
        root.note(f"`{path}` is live (no EXT-X-ENDLIST): served as is, it never advances")
    for ref in info["refs"]:
        target, remote = served_path(ref["uri"], path)
        if target is None:
            root.note(f"`{ref['uri'][:60]}` ({ref['role']}) is not an HTTP URI: nothing served")
            continue
        if remote:
            root.host_rewritten.add(urllib.parse.urlsplit(ref["uri"]).hostname)
        if ref["role"] == "playlist":
            if target in root.playlists:
                continue
            if target in provide:
                child_rel = provide[target]
                child_text = open(os.path.join(DATA, child_rel), encoding="utf-8", newline="").read()
                query = urllib.parse.urlsplit(ref["uri"]).query
                plan(root, child_rel, child_text, target, Variables(variables.values, query), provide, depth + 1)
                root.note(f"`{target}` ({ref['tag']}) is the fixture `{child_rel}`")
            else:
                root.playlists[target] = generated_media_playlist()
                for i in range(4):
                    seg = os.path.join(os.path.dirname(target), f"_gen_seg_0000{i}.ts")
                    root.files.setdefault(seg, []).append({"role": "segment", "kind": "ts", "range": None, "enc": None, "index": i})
                root.generated += 1
            continue
        uses = root.files.setdefault(target, [])
        role = ref["role"]
        if role == "key":
            uses.append({"role": "key"})
        elif role in ("json", "steering"):
            uses.append({"role": role})
        elif role == "init":
            enc = None
            if ref.get("key") and ref["key"].get("uri") and ref["key"].get("iv"):
                enc = (ref["key"]["uri"], iv_bytes(ref["key"], 0))
            elif ref.get("key") and ref["key"].get("uri"):
                root.note("an EXT-X-MAP under an AES-128 key without an IV (RFC 8216 §4.3.2.5 makes the IV REQUIRED): the init section is served clear")
            uses.append({"role": "init", "kind": "init", "range": ref["range"], "enc": enc, "index": 0})
        else:
            ext = os.path.splitext(urllib.parse.urlsplit(ref["uri"]).path)[1].lower()
            fmp4 = ref.get("map") is not None or ext in FMP4_EXTENSIONS
            if fmp4 and ref.get("map") is None:
                root.note(f"fMP4 {role}s without an EXT-X-MAP (RFC 8216 §3.3 requires one): served self-initialising "
                          "(sample init + fragment in one file)", target)
            enc = None
            k = ref.get("key")
            if k and k.get("uri"):
                enc = (k["uri"], iv_bytes(k, ref["msn"]))
            kind = "ts" if not fmp4 else ("fmp4" if ref.get("map") is not None else "fmp4-self")
            uses.append({"role": role, "kind": kind, "range": ref.get("range"),
                         "enc": enc, "index": ref["index"]})


def materialise(root):
    """Write every planned file (playlists are written later, with the port)."""
    key = read(SAMPLE_KEY)
    for path, uses in sorted(root.files.items()):
        if path in root.playlists:
            continue
        full = os.path.join(root.dir, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        roles = {u["role"] for u in uses}
        if "key" in roles:
            open(full, "wb").write(key)
            continue
        if roles <= {"json", "steering"}:
            body = {"VERSION": 1, "TTL": 300} if "steering" in roles else {}
            open(full, "w").write(json.dumps(body))
            if "steering" in roles:
                root.note("content steering server: a minimal steering manifest `{\"VERSION\":1,\"TTL\":300}`")
            continue
        media = [u for u in uses if u["role"] in ("segment", "init", "part")]
        ranged = [u for u in media if u.get("range") and u["range"][1]]
        kinds = {u["kind"] for u in media}
        if len(kinds) > 1:
            root.note(f"named as {' and '.join(sorted(kinds))} (one file serves both)", path)

        def sample(u):
            if u["kind"] == "init":
                return read(FMP4_INIT)
            if u["kind"] == "fmp4":
                return read(FMP4_SAMPLES[u["index"] % 4])
            if u["kind"] == "fmp4-self":
                return read(FMP4_INIT) + read(FMP4_SAMPLES[u["index"] % 4])
            return read(TS_SAMPLES[u["index"] % 4])

        whole = [u for u in media if not (u.get("range") and u["range"][1])]
        if whole:
            # Named whole (as a segment): the whole file is one sample, and any byte ranges
            # also naming it point inside it. One file cannot be both clear and encrypted, or
            # encrypted twice: it is made for the use the player reaches first — from the first
            # segment of a VOD playlist, from the live start (HOLD-BACK, else three target
            # durations before the end) of a live one.
            first = min(whole, key=lambda u: (u.get("index", 0) < root.start_index, u.get("index", 0)))
            data = sample(first)
            encs = {u["enc"] for u in media}
            if len(encs) > 1:
                root.note("named under different keys/IVs, or clear and encrypted: made for the use the player reaches first, "
                          "so the other uses are not encrypted to the fixture's key", path)
            if first["enc"]:
                data = aes_encrypt(data, key, first["enc"][1])
            end = max([u["range"][0] + u["range"][1] for u in ranged] or [0])
            if ranged:
                root.note("named both whole and by byte ranges: a whole sample, the ranges point inside it", path)
                if end > len(data):
                    data += fit_ts(b"", end - len(data))[0]
            open(full, "wb").write(data)
            continue
        # Only byte ranges: each range holds a sample of its kind, sized to the range.
        if any(u["enc"] for u in ranged):
            root.note("encrypted byte ranges: sample not encrypted to the fixture's key", path)
        placed, out = [], bytearray()
        mp4 = any(u["kind"] != "ts" for u in ranged)
        for u in sorted(ranged, key=lambda u: u["range"][0]):
            off, length = u["range"]
            if any(off < e and off + length > s for s, e in placed):
                if (off, off + length) not in placed:
                    root.note("overlapping byte ranges (the first range placed keeps its bytes)", path)
                continue
            if len(out) < off:
                gap = off - len(out)
                filler = (fit_mp4(b"", gap)[0] if gap >= 8 else b"\x00" * gap) if mp4 else fit_ts(b"", gap)[0]
                out += filler
            fitter = fit_ts if u["kind"] == "ts" else fit_mp4
            data, truncated = fitter(sample(u), length)
            if truncated:
                what = "init section" if u["kind"] == "init" else "segment"
                root.note(f"byte range shorter than the sample {what} (the range holds a truncated sample)", f"{path} {length}@{off}")
            out += data
            placed.append((off, off + length))
        open(full, "wb").write(bytes(out))


def write_playlists(root, port):
    for path, text in root.playlists.items():
        full = os.path.join(root.dir, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        rewritten = rewrite_hosts(text, port)
        with open(full, "w", encoding="utf-8", newline="") as f:
            f.write(rewritten)


# ---------------------------------------------------------------- running

def run_player(url, work, duration_seconds=PLAY_DURATION_SECONDS):
    log = os.path.join(work, "session.jsonl")
    # Only loopback is ever contacted: a URL the rewrite missed goes to a proxy on a closed
    # loopback port (and fails there, never resolving the name) and shows as remoteContacted.
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(work, "cache"))
    for k in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"):
        env.pop(k, None)
    env.update(http_proxy=CLOSED_LOOPBACK_PROXY, https_proxy=CLOSED_LOOPBACK_PROXY, HTTPS_PROXY=CLOSED_LOOPBACK_PROXY,
               ALL_PROXY=CLOSED_LOOPBACK_PROXY, no_proxy="127.0.0.1,localhost", NO_PROXY="127.0.0.1,localhost")
    run = run_hlsplay(url, ["--duration", str(duration_seconds)], log=log, timeout=TIMEOUT_SECONDS,
                      on_timeout="interrupt", binary=HLSPLAY, env=env, cwd=ROOT)
    return {"command": run.command, "status": run.status, "stdout": run.stdout, "stderr": run.stderr, "log": log,
            "timedOut": run.timed_out, "killed": run.killed, "wallSeconds": round(run.wall_seconds, 2)}


def classify(run, events, problem, requests):
    """outcome: played | partial | rejected | timed-out | log-invalid; and one line why."""
    summary = events[-1] if events and events[-1].get("type") == "summary" else {}
    errors = [e for e in events if e.get("type") == "error"]
    fatal = [e for e in errors if e.get("fatal")]
    skipped = [e for e in events if e.get("type") == "segment.skipped"]
    buffered = [e for e in events if e.get("type") == "segment.buffered"]
    res = {
        "status": run["status"], "wallSeconds": run["wallSeconds"],
        "exitReason": summary.get("exitReason"), "error": summary.get("error"),
        "ttffSeconds": summary.get("timeToFirstFrameSeconds"),
        "segmentsBuffered": summary.get("segmentsBuffered", len(buffered)),
        "segmentsSkipped": summary.get("segmentsSkipped", len(skipped)),
        "videoFrames": summary.get("decodedVideoFrames"), "audioFrames": summary.get("decodedAudioFrames"),
        "decodeErrors": summary.get("decodeErrors"), "stallCount": summary.get("stallCount"),
        "isLive": summary.get("isLive"), "playedSeconds": summary.get("playedSeconds"),
        "skipReasons": sorted({s.get("reason", "")[:120] for s in skipped}),
        "errors": [f"{e.get('category')}: {e.get('message', '')[:200]}" for e in errors[:6]],
        "corruptPackets": sum(b.get("corruptPackets", 0) for b in buffered),
        "notFound": sorted({r.get("path") for r in requests if r.get("status") in (403, 404)}),
        "requests": len(requests),
        "requested": sorted({r.get("path", "") + ("?" + r["query"] if r.get("query") else "") for r in requests})[:40],
        "remoteContacted": any(e.get("type") == "request.start" and not re.match(r"https?://127\.0\.0\.1[:/]", e.get("url", ""))
                               for e in events),
        "logProblem": problem,
    }
    if problem:
        return "log-invalid", f"session log invalid: {problem}", res
    if run["killed"]:
        return "timed-out", f"no exit {TIMEOUT_SECONDS} s + {KILL_GRACE_SECONDS} s after SIGINT: killed", res
    if run["timedOut"]:
        waiting = waiting_for(events)
        return "timed-out", f"still running after {TIMEOUT_SECONDS} s ({waiting}); SIGINT: exit {run['status']}, {summary.get('exitReason')}", res
    if summary.get("exitReason") == "error" or run["status"] not in (0,):
        cat = fatal[-1].get("category") if fatal else "?"
        return "rejected", f"exit {run['status']}, {cat}: {summary.get('error') or (fatal[-1].get('message') if fatal else '')}", res
    frames = summary.get("decodedVideoFrames") or 0
    issues = []
    gaps = [s for s in skipped if s.get("reason") == "EXT-X-GAP"]
    others = [s for s in skipped if s.get("reason") != "EXT-X-GAP"]
    if others:
        issues.append(f"{len(others)} segment(s) skipped ({'; '.join(sorted({s.get('reason', '')[:100] for s in others}))})")
    if summary.get("decodeErrors"):
        issues.append(f"{summary['decodeErrors']} decode error(s)")
    media_errors = [e for e in errors if e.get("category") in ("media", "decode", "ffmpeg")]
    if media_errors:
        issues.append(f"{len(media_errors)} media error event(s)")
    if frames == 0:
        issues.append("no video frame decoded")
    played = (f"TTFF {summary.get('timeToFirstFrameSeconds', 0):.2f} s, {res['segmentsBuffered']} segment(s) buffered, "
              f"{frames} frames, {summary.get('stallCount', 0)} stall(s)") if summary.get("timeToFirstFrameSeconds") is not None \
        else f"{res['segmentsBuffered']} segment(s) buffered, {frames} frames"
    if gaps:
        played += f"; {len(gaps)} EXT-X-GAP segment(s) played through, not fetched"
    if issues:
        return "partial", played + "; " + "; ".join(issues), res
    return "played", played + f" ({summary.get('exitReason')})", res


def waiting_for(events):
    """What a session that did not end was doing: the last request in flight, else the phase."""
    ended = {e.get("requestID") for e in events if e.get("type") == "request.end"}
    open_requests = [e for e in events if e.get("type") == "request.start" and e.get("requestID") not in ended]
    samples = [e for e in events if e.get("type") == "buffer.sample"]
    phase = samples[-1].get("phase") if samples else "no monitor sample"
    reloads = sum(1 for e in events if e.get("type") == "playlist.loaded")
    skipped = [e for e in events if e.get("type") == "segment.skipped"]
    buffered = sum(1 for e in events if e.get("type") == "segment.buffered")
    done = f"{buffered} segment(s) buffered, {len(skipped)} skipped" + (f" ({skipped[0].get('reason', '')[:60]})" if skipped else "")
    if open_requests:
        r = open_requests[-1]
        return f"waiting for {r.get('purpose')} {urllib.parse.urlsplit(r.get('url', '')).path}; phase {phase}; {done}; {reloads} playlist loads"
    return f"no request in flight; phase {phase}; {done}; {reloads} playlist loads"


def run_case(case_id, keep=None):
    spec = CASES_EXTRA.get(case_id, {"fixture": case_id})
    rel = spec["fixture"]
    work = tempfile.mkdtemp(prefix="conf-play-")
    try:
        root_dir = os.path.join(work, "root")
        os.makedirs(root_dir)
        root = Root(root_dir)
        text = open(os.path.join(DATA, rel), encoding="utf-8", newline="").read()
        query = spec.get("query", "")
        plan(root, rel, text, rel, Variables(query=query), spec.get("provide", {}))
        materialise(root)
        origin_log = os.path.join(work, "origin.jsonl")
        with Origin(root_dir, log=origin_log, binary=ORIGIN, stop_signal=signal.SIGINT) as origin:
            write_playlists(root, origin.port)
            url = origin.url(rel) + (f"?{query}" if query else "")
            run = run_player(url, work, spec.get("duration", PLAY_DURATION_SECONDS))
        events, problem = validate_log(run["log"])
        requests = read_jsonl(origin_log)
        outcome, why, res = classify(run, events, problem, requests)
        # Requests per kind against the paced bound, from the fixture's durations (a multivariant
        # fixture's media playlists are generated: 2 s segments, target duration 2).
        target, part, mean = bound_inputs(root.info) if not root.multivariant else (2.0, None, 2.0)
        counts = requests_by_kind(root, requests)
        seconds = run["wallSeconds"]
        res["requestsByKind"] = counts
        res["requestsPerMinute"] = round(len(requests) * 60 / seconds, 1) if seconds > 0 else None
        res["pacedBound"] = {k: paced_bound(k, seconds, target, part, mean) for k in ("playlist", "part", "segment")}
        res["pacedBoundInputs"] = {"targetDurationSeconds": target, "partTargetSeconds": part,
                                   "meanSegmentDurationSeconds": mean, "seconds": seconds}
        res["overBound"] = sorted(k for k in ("playlist", "part", "segment") if counts[k] > res["pacedBound"][k])
        # The origin's port changes every run: keep the results comparable between runs.
        why = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", why)
        res["error"] = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", res["error"]) if res.get("error") else res.get("error")
        res["errors"] = [re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", e) for e in res["errors"]]
        notes = root.rendered_notes()
        if root.host_rewritten:
            notes.insert(0, "host rewritten: " + ", ".join(sorted(root.host_rewritten)) + " → 127.0.0.1")
        if root.generated:
            notes.append(f"{root.generated} media playlist(s) generated (not in the fixture set)")
        if root.live:
            notes.append("live playlist (no EXT-X-ENDLIST): served as is, never advances"
                         + ("; it says PLAYLIST-TYPE:VOD" if "#EXT-X-PLAYLIST-TYPE:VOD" in text else ""))
        if run["stderr"].strip() and outcome in ("log-invalid", "timed-out"):
            res["stderrTail"] = run["stderr"].strip().splitlines()[-3:]
        repro = (f"Tools/characterize/conformance_play.py --only {case_id} --keep /tmp/conf   # then: "
                 f"{os.path.relpath(ORIGIN, ROOT)} /tmp/conf/{safe(case_id)}/root & "
                 f"{os.path.relpath(HLSPLAY, ROOT)} http://127.0.0.1:PORT/{rel}{'?' + query if query else ''} "
                 f"--headless --json --duration {spec.get('duration', PLAY_DURATION_SECONDS)} --log /tmp/conf.jsonl")
        result = {"case": case_id, "fixture": rel, "about": spec.get("about"), "outcome": outcome, "why": why,
                  "notes": notes, "live": root.live, "multivariant": root.multivariant, "repro": repro, **res}
        if keep:
            dest = os.path.join(keep, safe(case_id))
            shutil.rmtree(dest, ignore_errors=True)
            shutil.copytree(work, dest, symlinks=True)
            with open(os.path.join(dest, "stdout.json"), "w") as f:
                f.write(run["stdout"])
            with open(os.path.join(dest, "stderr.txt"), "w") as f:
                f.write(run["stderr"])
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)


def safe(case_id):
    return re.sub(r"[^A-Za-z0-9._-]+", "_", case_id)


def all_cases():
    files = []
    for dirpath, _, names in os.walk(DATA):
        files += [os.path.relpath(os.path.join(dirpath, n), DATA) for n in names if n.endswith(".m3u8")]
    return sorted(files) + sorted(CASES_EXTRA)


def run_all(cases=None, jobs=DEFAULT_JOBS, keep=None, progress=None):
    cases = cases or all_cases()
    with refusing_tool_errors("conformance_play.py"):
        find_binary("hlsplay", "debug"), find_binary("hls-origin", "debug")
    for f in TS_SAMPLES + FMP4_SAMPLES + [FMP4_INIT, SAMPLE_KEY]:
        if not os.path.exists(f):
            raise SystemExit(f"{f} is missing: run Samples/make-all.sh and Samples/make-variants.sh")
    lock = threading.Lock()
    done = [0]

    def one(c):
        try:
            r = run_case(c, keep)
        except Exception as e:  # a harness failure is reported, never hidden
            r = {"case": c, "fixture": CASES_EXTRA.get(c, {}).get("fixture", c), "outcome": "harness-error",
                 "why": f"{type(e).__name__}: {e}", "notes": []}
        with lock:
            done[0] += 1
            if progress:
                progress(f"[{done[0]}/{len(cases)}] {c}: {r['outcome']}")
        return r

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, cases))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help="comma-separated fixture paths (relative to the data folder) or case ids")
    ap.add_argument("--jobs", type=int, default=DEFAULT_JOBS)
    ap.add_argument("--out")
    ap.add_argument("--keep")
    a = ap.parse_args()
    cases = a.only.split(",") if a.only else None
    results = run_all(cases, a.jobs, a.keep, progress=lambda s: print(s, file=sys.stderr))
    text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in results)
    if a.out:
        open(a.out, "w").write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
