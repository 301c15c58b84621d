#!/usr/bin/env bash
# LL-HLS hold precision of hls-origin: how late after a part is due does a blocking
# playlist reload (for the part after the hinted one) and a hinted-part request get
# their first byte? Reads the origin's own request log; prints the figures.
#   Tools/characterize/llhls-blocking.sh [RELOADS] [HINTS]      (defaults 20, 10)
set -euo pipefail
cd "$(dirname "$0")/../.."
RELOADS=${1:-20}
HINTS=${2:-10}
swift build --product hls-origin >/dev/null
Samples/make-ladder.sh Samples/build/short-2s --duration 8 --segment 2 >/dev/null
LOG=$(mktemp /tmp/llhls-blocking.XXXXXX.jsonl)
OUT=$(mktemp /tmp/llhls-blocking.XXXXXX.out)
.build/debug/hls-origin Samples/build/short-2s --ll-hls --part-target 0.5 --window 10 --log "$LOG" >"$OUT" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true; rm -f "$LOG" "$OUT"' EXIT
for _ in $(seq 50); do grep -q listening "$OUT" && break; sleep 0.1; done
PORT=$(sed -n 's#.*127.0.0.1:\([0-9]*\)/#\1#p' "$OUT")
URL=http://127.0.0.1:$PORT/v0
hint() { curl -s "$URL/prog.m3u8" | sed -n 's/.*PRELOAD-HINT.*URI="\([^"]*\)".*/\1/p'; }
for _ in $(seq "$RELOADS"); do
  h=$(hint); m=$(echo "$h" | sed 's/.*live=\([0-9]*\)&.*/\1/'); p=$(( $(echo "$h" | sed 's/.*part=//') + 1 ))
  if [ "$p" -ge 4 ]; then m=$((m + 1)); p=0; fi   # short-2s: four 0.5 s parts per segment
  curl -s -o /dev/null "$URL/prog.m3u8?_HLS_msn=$m&_HLS_part=$p"
done
for _ in $(seq "$HINTS"); do curl -s -o /dev/null "$URL/$(hint)"; done
kill $PID; wait $PID 2>/dev/null || true
python3 - "$LOG" <<'PY'
import json, math, sys
# On short-2s with 0.5 s parts a part completes every 0.5 s of server time.
entries = [json.loads(l) for l in open(sys.argv[1])]
def figures(name, rows, ahead):
    late = sorted((e["firstByteSent"] - (math.floor(e["accepted"] / 0.5 + 1e-9) + ahead) * 0.5) * 1000 for e in rows)
    held = [e["blockedSeconds"] for e in rows]
    print(f"{name}: {len(rows)} requests, first byte after the part was due: median {late[len(late)//2]:.1f} ms, "
          f"min {late[0]:.1f} ms, max {late[-1]:.1f} ms; held {min(held):.3f}-{max(held):.3f} s")
figures("blocking reloads", [e for e in entries if (e.get("query") or "").startswith("_HLS_msn")], 2)
figures("hinted parts", [e for e in entries if (e.get("query") or "").startswith("live=")], 1)
PY
