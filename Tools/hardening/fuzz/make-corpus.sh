#!/usr/bin/env bash
# Builds the seed corpora (git-ignored) from the shared playlist collection and the hostile corpus:
#   corpus/playlist/       every .m3u8 file as-is (Tools/hardening/hostile/cases' too)
#   corpus/attributelist/  the attribute list (text after "TAG:") of every tag line that has one
#   corpus/requestpath/    every Media Playlist as a first load, followed by a reload ("#--reload"
#                          line) that slid the window by one segment, and where the playlist offers
#                          delta updates (CAN-SKIP-UNTIL), by a delta update (EXT-X-SKIP) of it
# Usage: make-corpus.sh [PLAYLIST_DIR] [OUT_DIR]
# Env: FUZZ_HOSTILE_SEEDS=the hostile corpus to seed from (default Tools/hardening/hostile/cases; empty: none,
#      e.g. to measure whether fuzzing finds those inputs on its own).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="${1:-${PLAYLISTS:-$here/../../../../shared/data/playlists}}"
out="${2:-$here/.build/corpus}"
[[ -d "$src" ]] || { echo "make-corpus: no playlist dir $src (set PLAYLISTS=...)" >&2; exit 2; }
rm -rf "$out/playlist" "$out/attributelist" "$out/requestpath"
mkdir -p "$out/playlist" "$out/attributelist" "$out/requestpath"
python3 - "$src" "${FUZZ_HOSTILE_SEEDS-$here/../hostile/cases}" "$out" <<'PY'
import hashlib, os, re, sys
src, hostile, out = sys.argv[1], sys.argv[2], sys.argv[3]
tag = re.compile(rb'^#EXT[A-Z0-9-]*:(.*)$')
SEP = b"\n#--reload\n"
counts = {"playlist": 0, "attributelist": 0, "requestpath": 0}
seen = set()
def put(kind, data):
    h = hashlib.sha1(kind.encode() + data).hexdigest()
    if h in seen: return
    seen.add(h); counts[kind] += 1
    open(os.path.join(out, kind, h), 'wb').write(data)

def reload_of(data):
    """The same live playlist one segment later: MEDIA-SEQUENCE + 1, the first segment gone, one more at the end."""
    lines = data.split(b"\n")
    first = next((i for i, l in enumerate(lines) if l.startswith(b"#EXTINF")), None)
    if first is None or first + 1 >= len(lines): return None
    uri = first + 1
    while uri < len(lines) and lines[uri].startswith(b"#"): uri += 1
    if uri >= len(lines): return None
    seq = next((i for i, l in enumerate(lines) if l.startswith(b"#EXT-X-MEDIA-SEQUENCE:")), None)
    new = list(lines)
    if seq is not None:
        try: new[seq] = b"#EXT-X-MEDIA-SEQUENCE:%d" % (int(lines[seq].split(b":", 1)[1]) + 1)
        except ValueError: return None
    else:
        new.insert(first, b"#EXT-X-MEDIA-SEQUENCE:1"); first += 1; uri += 1
    del new[first:uri + 1]
    new = [l for l in new if l != b"#EXT-X-ENDLIST"]
    return b"\n".join(new).rstrip(b"\n") + b"\n#EXTINF:2.0,\nnext-segment.ts\n"

def delta_of(data):
    """A delta update of a playlist that offers them: all but the last two segments skipped."""
    if b"CAN-SKIP-UNTIL" not in data: return None
    lines = data.split(b"\n")
    uris = [i for i, l in enumerate(lines) if l and not l.startswith(b"#")]
    if len(uris) < 3: return None
    cut = uris[-3] + 1
    head = [l for l in lines[:next(i for i, l in enumerate(lines) if l.startswith(b"#EXTINF"))]
            if not l.startswith(b"#EXT-X-PROGRAM-DATE-TIME") and not l.startswith(b"#EXT-X-DATERANGE")]
    body = [l for l in lines[cut:] if not l.startswith(b"#EXT-X-DATERANGE")]
    return b"\n".join(head + [b"#EXT-X-SKIP:SKIPPED-SEGMENTS=%d" % (len(uris) - 2)] + body)

files = []
for root in (src, hostile) if hostile else (src,):
    for d, _, names in os.walk(root):
        for f in sorted(names):
            if f.endswith('.m3u8'): files.append(os.path.join(d, f))
for path in files:
    data = open(path, 'rb').read()
    put("playlist", data)
    for line in data.splitlines():
        m = tag.match(line.strip())
        if m and b'=' in m.group(1): put("attributelist", m.group(1))
    if b"#EXTINF" in data:
        put("requestpath", data)
        r = reload_of(data)
        if r: put("requestpath", data + SEP + r)
        dl = delta_of(data)
        if dl: put("requestpath", data + SEP + dl)
print(f"corpus: {counts['playlist']} playlists, {counts['attributelist']} attribute lists, "
      f"{counts['requestpath']} request-path sequences -> {out}")
PY
