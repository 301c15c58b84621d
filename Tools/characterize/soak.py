#!/usr/bin/env python3
"""Soak run: one live hlsplay session through hls-origin's live mode for a long time.

Starts `hls-origin CONTENT --live` (unshaped loopback link) and
`hlsplay URL --headless --json --duration SECONDS --log LOG`, samples the hlsplay
process every --interval seconds from /proc/PID/status (VmRSS, RssAnon, RssFile,
Threads) and /proc/PID/fd (open descriptors), and at the end prints:

  * the least-squares slope of each series per hour, over the whole run and
    after the warm-up (--warmup seconds, default 120: startup allocations, the
    decoder pools and the forward buffer filling are not a leak);
  * first / last / min / max of each series, and the slope over the second half of the run
    (where a plateau shows as ~0 and a leak keeps its slope);
  * the session summary's stall count, stall seconds, played seconds, exit reason,
    failed requests and retries, and the live resyncs logged.

Run through Tools/characterize/soak.sh (builds what is missing). --csv FILE keeps the samples.
--check turns the figures into an exit status (for a short smoke run): exit 1 if
the session did not reach its duration, stalled, or holds more descriptors at the
end than it ever held during the warm-up plus FD_SLACK.
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from hlsplay_tools import Origin, find_binary, read_log, refusing_tool_errors  # noqa: E402

FD_SLACK = 2  # descriptors a healthy session may hold above its warm-up peak (a request in flight)


def read_status(pid):
    """VmRSS, RssAnon, RssFile in KiB and Threads from /proc/PID/status, or None once the process is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            text = f.read()
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    values = {}
    for key in ("VmRSS", "RssAnon", "RssFile", "Threads"):
        m = re.search(rf"^{key}:\s+(\d+)", text, re.M)
        values[key] = int(m.group(1)) if m else None
    values["fds"] = fds
    return values


def slope_per_hour(points):
    """Least-squares slope of (seconds, value) pairs, in value units per hour; None with < 3 points."""
    if len(points) < 3:
        return None
    n = len(points)
    mx = sum(t for t, _ in points) / n
    my = sum(v for _, v in points) / n
    sxx = sum((t - mx) ** 2 for t, _ in points)
    if sxx == 0:
        return None
    sxy = sum((t - mx) * (v - my) for t, v in points)
    return sxy / sxx * 3600


def print_series(samples, warmup):
    """The Markdown table of first/last/min/max and slopes of each sampled series."""
    series = {
        "RSS (MiB)": lambda s: s["VmRSS"] / 1024,
        "anonymous (MiB)": lambda s: s["RssAnon"] / 1024,
        "file-backed (MiB)": lambda s: s["RssFile"] / 1024,
        "open fds": lambda s: s["fds"],
        "threads": lambda s: s["Threads"],
    }
    warm = [(t, s) for t, s in samples if t >= warmup]
    half = [(t, s) for t, s in samples if samples and t >= samples[-1][0] / 2]
    print("| series | first | last | min | max | slope/h (all) | slope/h (after warm-up) | slope/h (second half) |")
    print("|---|---|---|---|---|---|---|---|")
    for name, f in series.items():
        vals = [f(s) for _, s in samples]
        if not vals:
            continue
        sa = slope_per_hour([(t, f(s)) for t, s in samples])
        sw = slope_per_hour([(t, f(s)) for t, s in warm])
        sh = slope_per_hour([(t, f(s)) for t, s in half])
        fmt = (lambda v: f"{v:.1f}") if "MiB" in name else (lambda v: f"{v:.0f}")
        sfmt = lambda v: "n/a" if v is None else f"{v:+.2f}"
        print(f"| {name} | {fmt(vals[0])} | {fmt(vals[-1])} | {fmt(min(vals))} | {fmt(max(vals))} "
              f"| {sfmt(sa)} | {sfmt(sw)} | {sfmt(sh)} |")


def load_csv(path):
    """Samples from a --csv file: (seconds, status dict)."""
    out = []
    with open(path) as f:
        next(f)
        for line in f:
            t, rss, anon, file_, threads, fds = line.strip().split(",")
            out.append((float(t), {"VmRSS": int(rss), "RssAnon": int(anon), "RssFile": int(file_), "Threads": int(threads), "fds": int(fds)}))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=".build/debug", help="directory holding hlsplay and hls-origin")
    ap.add_argument("--minutes", type=float, default=30, help="session length (default 30)")
    ap.add_argument("--interval", type=float, default=5, help="seconds between samples (default 5)")
    ap.add_argument("--warmup", type=float, default=120, help="seconds left out of the post-warm-up slope (default 120)")
    ap.add_argument("--content", default="Samples/build/ladder-2s", help="VOD ladder served as live")
    ap.add_argument("--window", type=int, default=6, help="live window, segments (default 6)")
    ap.add_argument("--csv", help="write the samples here")
    ap.add_argument("--log", help="keep the session log here (default: a temp file, removed)")
    ap.add_argument("--check", action="store_true", help="exit 1 on a stall, an early end or descriptor growth")
    ap.add_argument("--release", action="store_true", help=argparse.SUPPRESS)  # handled by soak.sh
    ap.add_argument("--analyze", metavar="CSV", help="only print the table of a --csv file from an earlier run")
    args = ap.parse_args()
    if args.analyze:
        samples = load_csv(args.analyze)
        print(f"soak: {len(samples)} samples from {args.analyze}, warm-up {args.warmup:g} s\n")
        print_series(samples, args.warmup)
        return 0

    duration = args.minutes * 60
    tmp = tempfile.mkdtemp(prefix="hlsplay-soak-")
    log_path = args.log or os.path.join(tmp, "session.jsonl")
    with refusing_tool_errors("soak"):
        # start_new_session: a hangup of the caller's terminal reaches neither child
        origin = Origin(args.content, ["--live", "--window", str(args.window)], build=args.build,
                        stop_signal=signal.SIGINT, start_new_session=True)
        hlsplay = find_binary("hlsplay", args.build)
    player = None
    try:
        url = origin.url("master.m3u8")
        env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache"))
        cmd = [hlsplay, url, "--headless", "--json", "--no-status",
               "--duration", f"{duration:g}", "--log", log_path]
        started = time.monotonic()
        player = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                  start_new_session=True)
        print(f"soak: {' '.join(cmd)}", file=sys.stderr)
        samples = []  # (seconds, status dict)
        origin_died = False
        deadline = started + duration + 120  # a session that overruns by 2 min is a hang
        next_at = started + args.interval  # the first sample after exec, not of the forked python
        while player.poll() is None:
            now = time.monotonic()
            if not origin.running():
                print(f"soak: hls-origin exited during the run (status {origin.proc.returncode}): the figures below are not a soak",
                      file=sys.stderr)
                origin_died = True
                break
            if now > deadline:
                player.send_signal(signal.SIGINT)
                print("soak: hlsplay overran its duration by 120 s: interrupted", file=sys.stderr)
                break
            if now >= next_at:
                s = read_status(player.pid)
                if s:
                    samples.append((now - started, s))
                    if len(samples) % max(1, int(60 / args.interval)) == 0:
                        print(f"soak: {now - started:7.0f} s  rss {s['VmRSS'] / 1024:7.1f} MiB  anon {s['RssAnon'] / 1024:7.1f} MiB"
                              f"  fds {s['fds']}  threads {s['Threads']}", file=sys.stderr, flush=True)
                next_at += args.interval
            time.sleep(min(0.2, max(0.0, next_at - time.monotonic())))
        out, err = player.communicate(timeout=None if not origin_died else 60)
        wall = time.monotonic() - started
    finally:
        if player and player.poll() is None:
            player.kill()
        origin.stop()

    try:
        summary = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        summary = {}
    resyncs = 0
    lines = 0
    try:
        events = read_log(log_path, strict=True).events
        lines = len(events)
        resyncs = sum(1 for e in events if e.get("type") == "error" and e.get("category") == "live")
    except (OSError, ValueError) as e:
        print(f"soak: session log unreadable: {e}", file=sys.stderr)

    if args.csv:
        with open(args.csv, "w") as f:
            f.write("seconds,rss_kib,anon_kib,file_kib,threads,fds\n")
            for t, s in samples:
                f.write(f"{t:.1f},{s['VmRSS']},{s['RssAnon']},{s['RssFile']},{s['Threads']},{s['fds']}\n")

    print(f"soak: {args.minutes:g} min live session, {len(samples)} samples every {args.interval:g} s, "
          f"wall {wall:.0f} s, warm-up {args.warmup:g} s")
    print()
    print_series(samples, args.warmup)
    print()
    keys = ["exitReason", "playedSeconds", "stallCount", "stallSeconds", "requests", "failedRequests", "retries",
            "segmentsBuffered", "segmentsSkipped", "decodedVideoFrames", "lateVideoFrames", "decodeErrors",
            "averageLiveLatencySeconds", "variantSwitches"]
    print("summary: " + ", ".join(f"{k} {summary.get(k)}" for k in keys))
    print(f"live resync/jump errors logged: {resyncs}; session log lines: {lines}; hlsplay exit {player.returncode}")
    if err.strip():
        print("hlsplay stderr (last lines): " + " | ".join(err.strip().splitlines()[-3:]))

    status = 0
    if origin_died:
        print("soak: INVALID RUN: hls-origin exited before hlsplay finished")
        status = 1
    if args.check:
        problems = []
        if summary.get("exitReason") != "durationReached":
            problems.append(f"exitReason {summary.get('exitReason')}")
        if summary.get("stallCount", 1) != 0:
            problems.append(f"stallCount {summary.get('stallCount')}")
        warm_peak = max((s["fds"] for t, s in samples if t < args.warmup), default=None)
        if warm_peak is not None and samples and samples[-1][1]["fds"] > warm_peak + FD_SLACK:
            problems.append(f"open fds {samples[-1][1]['fds']} at the end > warm-up peak {warm_peak} + {FD_SLACK}")
        if problems:
            print("soak check FAILED: " + "; ".join(problems))
            status = 1
        else:
            print("soak check passed")
    if not args.log:
        shutil.rmtree(tmp, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
