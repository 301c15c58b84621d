#!/usr/bin/env bash
# Builds the seed corpora (git-ignored) from the shared playlist collection:
#   corpus/playlist/       every .m3u8 file as-is
#   corpus/attributelist/  the attribute list (text after "TAG:") of every tag line that has one
# Usage: make-corpus.sh [PLAYLIST_DIR] [OUT_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="${1:-${PLAYLISTS:-$here/../../../shared/data/playlists}}"
out="${2:-$here/.build/corpus}"
[[ -d "$src" ]] || { echo "make-corpus: no playlist dir $src (set PLAYLISTS=...)" >&2; exit 2; }
rm -rf "$out/playlist" "$out/attributelist"
mkdir -p "$out/playlist" "$out/attributelist"
python3 - "$src" "$out" <<'PY'
import hashlib, os, re, sys
src, out = sys.argv[1], sys.argv[2]
tag = re.compile(rb'^#EXT[A-Z0-9-]*:(.*)$')
np = na = 0
seen = set()
for root, _, files in os.walk(src):
    for f in sorted(files):
        if not f.endswith('.m3u8'):
            continue
        data = open(os.path.join(root, f), 'rb').read()
        h = hashlib.sha1(data).hexdigest()
        if h not in seen:
            seen.add(h); np += 1
            open(os.path.join(out, 'playlist', h), 'wb').write(data)
        for line in data.splitlines():
            m = tag.match(line.strip())
            if not m or b'=' not in m.group(1):
                continue
            a = m.group(1)
            h = hashlib.sha1(a).hexdigest()
            if h not in seen:
                seen.add(h); na += 1
                open(os.path.join(out, 'attributelist', h), 'wb').write(a)
print(f"corpus: {np} playlists, {na} attribute lists -> {out}")
PY
