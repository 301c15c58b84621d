#!/usr/bin/env bash
# Parse time and time to first frame of a very long VOD (release build), against a short one.
# Makes the playlists with make-long-vod.sh (ten real 1 s segments, cycled), serves them with
# hls-origin on loopback, and prints, best and median of RUNS runs each:
#   check       wall seconds of `hlsplay check long.m3u8` (process start + read + parse)
#   check-cpu   its CPU seconds (user + system): what the parse costs, whatever else the machine runs
#   parse       in the session: the playlist's last byte → its playlist.loaded event (parse and
#               placing every segment on the timeline)
#   ttff        the session's timeToFirstFrameSeconds (summary)
# A figure, not an assertion: the machine's load moves it. Usage: bench.sh [COUNT] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/../../.."
count="${1:-100000}"
runs="${2:-3}"
swift build -c release --static-swift-stdlib --product hlsplay >/dev/null
swift build -c release --static-swift-stdlib --product hls-origin >/dev/null
work="$(mktemp -d)"
origin_pid=""
cleanup() { [[ -n "$origin_pid" ]] && kill "$origin_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
Tools/characterize/long-vod/make-long-vod.sh "$work/long" "$count"
Tools/characterize/long-vod/make-long-vod.sh "$work/short" 100
.build/release/hls-origin "$work" --port 0 > "$work/origin.out" 2>&1 &
origin_pid=$!
for _ in $(seq 50); do grep -q listening "$work/origin.out" 2>/dev/null && break; sleep 0.1; done
base="$(head -1 "$work/origin.out" | sed 's/^listening on //')"
python3 - "$base" "$work" "$runs" "$count" <<'PY'
import json, os, resource, statistics, subprocess, sys, time
base, work, runs, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
hlsplay = ".build/release/hlsplay"
def cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime
def check(path):
    t, c = time.monotonic(), cpu()
    subprocess.run([hlsplay, "check", path], check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - t, cpu() - c
def session(url, log):
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(work, "cache"))
    subprocess.run([hlsplay, url, "--headless", "--json", "--cold", "--duration", "2", "--log", log],
                   check=True, stdout=subprocess.DEVNULL, env=env)
    events = [json.loads(l) for l in open(log)]
    first_end = next(e["t"] for e in events if e.get("type") == "request.end")
    loaded = next(e["t"] for e in events if e.get("type") == "playlist.loaded")
    return loaded - first_end, events[-1]["timeToFirstFrameSeconds"]
print(f"{'playlist':<22} {'figure':<9} {'best s':>8} {'median s':>9}")
for name, n in (("short", 100), ("long", count)):
    path = os.path.join(work, name, "long.m3u8")
    checks = [check(path) for _ in range(runs)]
    sessions = [session(f"{base}{name}/long.m3u8", os.path.join(work, f"{name}-{i}.jsonl")) for i in range(runs)]
    label = f"{n:,} segments"
    for fig, values in (("check", [c[0] for c in checks]), ("check-cpu", [c[1] for c in checks]),
                        ("parse", [s[0] for s in sessions]), ("ttff", [s[1] for s in sessions])):
        print(f"{label:<22} {fig:<9} {min(values):>8.3f} {statistics.median(values):>9.3f}")
PY
