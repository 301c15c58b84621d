#!/usr/bin/env python3
"""Many-sessions benchmark: how many sessions one hlsplay process sustains in real time.

For each mode (demux-only, full decode) and each session count N, starts a fresh
unshaped hls-origin serving the sample ladder as live (a sliding window on the wall
clock, looping, so every session plays --media-seconds of media at real-time pace),
runs `hlsplay --sessions N --ramp R --variant V --duration D`, and samples once a
second from /proc: the CPU time, RSS and anonymous RSS of hlsplay, the CPU time of
hls-origin, and the machine's idle time and load average.

Per run it prints N, stalls (with the likely cause), CPU seconds per media second per
session, memory per session, requests per second, TTFF p50/p90, the origin's CPU; at
the end the largest N with zero stalls in each mode. `--json FILE` writes every run.

A stall on an unshaped loopback origin is never the network's: it is classified as
  client-cpu   hlsplay itself used >= CLIENT_SATURATED_SHARE of the cores around it,
  client+origin-cpu  hlsplay and hls-origin together did,
  machine-cpu  the machine as a whole had < MACHINE_IDLE_FLOOR idle around it (the
               origin, or other processes on this shared machine),
  unexplained  neither.
"""

import argparse
import datetime
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import hlsplay_tools  # noqa: E402

REPO = pathlib.Path(hlsplay_tools.REPO)
CLOCK_TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
CORES = os.cpu_count() or 1
# A stall is client-caused when hlsplay used at least this share of all cores in the
# seconds around it.
CLIENT_SATURATED_SHARE = 0.9
# ... or machine-caused when the machine's idle share was below this.
MACHINE_IDLE_FLOOR = 0.05
# Seconds before a stall start that are looked at to classify it.
STALL_LOOKBACK_SECONDS = 5.0
# hls-origin's open-connection limit for the benchmark (its default, 512, is below what a few
# hundred sessions hold: a session that reconnects keeps its idle old connection in libcurl's cache).
ORIGIN_MAX_CONNECTIONS = 8192
# A decoding run is real time only while at most this share of its video frames is decoded
# after its presentation time (PlayerSession's late-frame count).
LATE_FRAME_SHARE_LIMIT = 0.01
# The client's peak CPU is its busiest window of this length, seconds.
PEAK_WINDOW_SECONDS = 10.0
# Sampling period of the /proc readings, seconds.
SAMPLE_INTERVAL_SECONDS = 1.0


def process_cpu_seconds(pid):
    """utime + stime of a process (all threads), seconds; None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    # fields[0] is the state (field 3); utime and stime are fields 14 and 15.
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS_PER_SECOND


def process_memory_bytes(pid):
    """(VmRSS, RssAnon, threads) of a process, bytes; None when it is gone."""
    values = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("VmRSS", "RssAnon", "Threads"):
                    values[key] = int(rest.split()[0])
    except OSError:
        return None
    return values.get("VmRSS", 0) * 1024, values.get("RssAnon", 0) * 1024, values.get("Threads", 0)


def machine_cpu_ticks():
    """(busy, total) jiffies over all CPUs, from /proc/stat."""
    with open("/proc/stat") as f:
        parts = [int(x) for x in f.readline().split()[1:]]
    idle = parts[3] + (parts[4] if len(parts) > 4 else 0)
    total = sum(parts[:8])
    return total - idle, total


def load_average():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


class Sampler(threading.Thread):
    """Samples hlsplay, the origin and the machine every SAMPLE_INTERVAL_SECONDS."""

    def __init__(self, client_pid, origin_pid):
        super().__init__(daemon=True)
        self.client_pid = client_pid
        self.origin_pid = origin_pid
        self.samples = []
        self.stopping = threading.Event()

    def run(self):
        while not self.stopping.is_set():
            busy, total = machine_cpu_ticks()
            memory = process_memory_bytes(self.client_pid)
            self.samples.append({
                "wall": time.time(),
                "clientCPU": process_cpu_seconds(self.client_pid),
                "originCPU": process_cpu_seconds(self.origin_pid),
                "machineBusy": busy, "machineTotal": total,
                "rss": memory[0] if memory else None,
                "anon": memory[1] if memory else None,
                "threads": memory[2] if memory else None,
                "load1": load_average(),
            })
            self.stopping.wait(SAMPLE_INTERVAL_SECONDS)


def parse_iso(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def read_session_logs(log_dir):
    """Wall-clock instants of every stall start in the per-session logs, and the
    decoded and late video frames of their summaries."""
    instants, decoded, late = [], 0, 0
    for log in hlsplay_tools.read_logs(sorted(log_dir.glob("s*.jsonl"))):
        if log.header is not None:
            started = parse_iso(log.header["startedAt"])
            instants += [started + e["t"] for e in log.of_type("stall.start")]
        if log.summary is not None:
            decoded += log.summary.get("decodedVideoFrames", 0)
            late += log.summary.get("lateVideoFrames", 0)
    return instants, decoded, late


def classify_stall(at, samples):
    """client-cpu, machine-cpu or unexplained, from the samples in the lookback window."""
    window = [s for s in samples if at - STALL_LOOKBACK_SECONDS - SAMPLE_INTERVAL_SECONDS <= s["wall"] <= at + SAMPLE_INTERVAL_SECONDS]
    if len(window) < 2:
        return "unexplained"
    first, last = window[0], window[-1]
    seconds = last["wall"] - first["wall"]
    if first["clientCPU"] is not None and last["clientCPU"] is not None and seconds > 0:
        client = (last["clientCPU"] - first["clientCPU"]) / seconds
        if client >= CLIENT_SATURATED_SHARE * CORES:
            return "client-cpu"
        if first["originCPU"] is not None and last["originCPU"] is not None:
            if client + (last["originCPU"] - first["originCPU"]) / seconds >= CLIENT_SATURATED_SHARE * CORES:
                return "client+origin-cpu"
    total = last["machineTotal"] - first["machineTotal"]
    if total > 0 and 1 - (last["machineBusy"] - first["machineBusy"]) / total < MACHINE_IDLE_FLOOR:
        return "machine-cpu"
    return "unexplained"


def run_once(args, mode, sessions, origin_binary, client_binary, work):
    with hlsplay_tools.refusing_tool_errors("sessions-bench"):
        origin = hlsplay_tools.Origin(args.root, ["--live", "--window", str(args.window),
                                                  "--max-connections", str(ORIGIN_MAX_CONNECTIONS)],
                                      binary=origin_binary)
    base_url = origin.base
    log_dir = work / f"{mode}-{sessions}"
    log_dir.mkdir(parents=True)
    command = [str(client_binary), base_url + "master.m3u8", "--headless", "--json",
               "--sessions", str(sessions), "--ramp", str(args.ramp),
               "--variant", str(args.variant), "--duration", str(args.media_seconds),
               "--estimate-store", str(work / "estimates.json"),
               "--log", str(log_dir / "s.jsonl")]
    if mode == "demux":
        command.append("--no-decode")
    origin_cpu_before = process_cpu_seconds(origin.pid) or 0.0
    busy0, total0 = machine_cpu_ticks()
    started = time.time()
    # Files, not pipes: a full pipe would block the client (FFmpeg's own log goes to
    # stderr when one process runs many sessions).
    out_path, err_path = log_dir / "stdout.txt", log_dir / "stderr.txt"
    with open(out_path, "w") as out_file, open(err_path, "w") as err_file:
        client = subprocess.Popen(command, stdout=out_file, stderr=err_file)
    sampler = Sampler(client.pid, origin.pid)
    sampler.start()
    # The client's CPU total is read from its own rusage at exit (wait4), so the
    # last second before exit is not lost to the sampling period.
    _, status, usage = os.wait4(client.pid, 0)
    client.returncode = os.waitstatus_to_exitcode(status)
    out, err = out_path.read_text(), err_path.read_text(errors="replace")
    wall = time.time() - started
    sampler.stopping.set()
    sampler.join()
    busy1, total1 = machine_cpu_ticks()
    origin_cpu = (process_cpu_seconds(origin.pid) or origin_cpu_before) - origin_cpu_before
    origin.stop()

    try:
        aggregate = json.loads(out.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        aggregate = {}
    if aggregate.get("type") == "summary":
        # One session prints its own summary, not an aggregate.
        ttff = aggregate.get("timeToFirstFrameSeconds")
        aggregate = {
            "exitReasons": {aggregate.get("exitReason"): 1}, "stallCount": aggregate.get("stallCount"),
            "sessionsWithStalls": 1 if aggregate.get("stallCount") else 0, "stallSeconds": aggregate.get("stallSeconds"),
            "playedSeconds": aggregate.get("playedSeconds", 0.0),
            "requestsPerSecond": aggregate.get("requests", 0) / aggregate["sessionSeconds"] if aggregate.get("sessionSeconds") else None,
            "throughputBps": aggregate.get("bytes", 0) * 8 / aggregate["sessionSeconds"] if aggregate.get("sessionSeconds") else None,
            "timeToFirstFrameP50Seconds": ttff, "timeToFirstFrameP90Seconds": ttff,
        }
    client_cpu = usage.ru_utime + usage.ru_stime
    played = aggregate.get("playedSeconds", 0.0)
    steady = [s for s in sampler.samples if s["rss"] is not None]
    peak_rss = max((s["rss"] for s in steady), default=0)
    peak_anon = max((s["anon"] for s in steady), default=0)
    stalls, decoded_frames, late_frames = read_session_logs(log_dir)
    causes = {}
    for at in stalls:
        cause = classify_stall(at, sampler.samples)
        causes[cause] = causes.get(cause, 0) + 1
    loads = [s["load1"] for s in sampler.samples]
    # The busiest PEAK_WINDOW_SECONDS of the client (all sessions running at once after the ramp).
    peak_cores = 0.0
    timed = [s for s in sampler.samples if s["clientCPU"] is not None]
    for i, a in enumerate(timed):
        for b in timed[i + 1:]:
            if b["wall"] - a["wall"] >= PEAK_WINDOW_SECONDS:
                peak_cores = max(peak_cores, (b["clientCPU"] - a["clientCPU"]) / (b["wall"] - a["wall"]))
                break
    result = {
        "mode": mode, "sessions": sessions, "exitStatus": client.returncode,
        "exitReasons": aggregate.get("exitReasons"),
        "stalls": aggregate.get("stallCount"), "sessionsWithStalls": aggregate.get("sessionsWithStalls"),
        "stallSeconds": aggregate.get("stallSeconds"), "stallCauses": causes,
        "playedSeconds": played, "wallSeconds": round(wall, 2),
        "clientCPUSeconds": round(client_cpu, 2),
        "clientCores": round(client_cpu / wall, 3) if wall > 0 else None,
        "clientPeakCores": round(peak_cores, 3),
        "cpuSecondsPerMediaSecondPerSession": round(client_cpu / played, 5) if played > 0 else None,
        "originCPUSeconds": round(origin_cpu, 2),
        "originCPUSecondsPerMediaSecondPerSession": round(origin_cpu / played, 5) if played > 0 else None,
        "machineBusyShare": round((busy1 - busy0) / (total1 - total0), 3) if total1 > total0 else None,
        "peakRSSBytes": peak_rss, "peakAnonBytes": peak_anon,
        "rssPerSessionBytes": peak_rss // sessions, "anonPerSessionBytes": peak_anon // sessions,
        "peakThreads": max((s["threads"] for s in steady), default=0),
        "decodedVideoFrames": decoded_frames, "lateVideoFrames": late_frames,
        "requestsPerSecond": aggregate.get("requestsPerSecond"),
        "throughputBps": aggregate.get("throughputBps"),
        "ttffP50Seconds": aggregate.get("timeToFirstFrameP50Seconds"),
        "ttffP90Seconds": aggregate.get("timeToFirstFrameP90Seconds"),
        "loadAverageMean": round(sum(loads) / len(loads), 2) if loads else None,
        "loadAverageMax": max(loads) if loads else None,
    }
    if client.returncode not in (0,) or not aggregate:
        result["stderrTail"] = err.strip().splitlines()[-5:]
    if not args.keep_logs:
        shutil.rmtree(log_dir, ignore_errors=True)
    return result


def sustained(result):
    """Every session played its media to the end without a stall, and (decoding) at most
    LATE_FRAME_SHARE_LIMIT of the video frames were decoded late."""
    late_ok = result["lateVideoFrames"] <= LATE_FRAME_SHARE_LIMIT * max(1, result["decodedVideoFrames"])
    return (result["stalls"] == 0 and late_ok and result["exitReasons"] == {"durationReached": result["sessions"]})


def format_row(r):
    mb = 1 << 20
    def num(v, fmt):
        return format(v, fmt) if isinstance(v, (int, float)) else "-"
    causes = ",".join(f"{k}:{v}" for k, v in sorted(r["stallCauses"].items())) or "-"
    return (f"{r['mode']:6} {r['sessions']:5d} {num(r['stalls'], 'd'):>6} {causes:>18} "
            f"{num(r['cpuSecondsPerMediaSecondPerSession'], '.5f'):>9} {num(r['clientPeakCores'], '.2f'):>5} "
            f"{r['rssPerSessionBytes'] / mb:7.2f} {r['anonPerSessionBytes'] / mb:7.2f} "
            f"{num(r['requestsPerSecond'], '.1f'):>7} {num(r['ttffP50Seconds'], '.3f'):>6} {num(r['ttffP90Seconds'], '.3f'):>6} "
            f"{num(r['originCPUSeconds'], '.1f'):>7} {num(r['originCPUSecondsPerMediaSecondPerSession'], '.5f'):>9} "
            f"{num(r['machineBusyShare'], '.2f'):>5} {num(r['loadAverageMean'], '.1f'):>5}"
            + (f"  late {r['lateVideoFrames']}/{r['decodedVideoFrames']} frames" if r["decodedVideoFrames"] else ""))


HEADER = ("mode       N stalls             causes  cpu/ms/s  peak  RSS/s MB anon/s MB   req/s ttff50 ttff90 "
          "originCPU origin/ms/s  busy  load")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--demux-sessions", default="50,100,200,300,400",
                   help="session counts for demux-only runs (comma-separated; empty to skip)")
    p.add_argument("--decode-sessions", default="1,2,3,4,6",
                   help="session counts for full-decode runs (comma-separated; empty to skip)")
    p.add_argument("--media-seconds", type=float, default=60, help="media each session plays (--duration)")
    p.add_argument("--ramp", type=float, default=20, help="stagger the session starts over this long, seconds")
    p.add_argument("--root", type=pathlib.Path, default=REPO / "Samples/build/ladder-2s", help="the ladder hls-origin serves")
    p.add_argument("--variant", type=int, default=3, help="the rung every session is pinned to (3 = 1080p)")
    p.add_argument("--window", type=int, default=6, help="live window of hls-origin, segments")
    p.add_argument("--bin", type=pathlib.Path, default=REPO / ".build/release", help="where hlsplay and hls-origin are")
    p.add_argument("--stop-after-failures", type=int, default=1,
                   help="stop a mode's ramp after this many consecutive runs with stalls")
    p.add_argument("--keep-logs", action="store_true", help="keep the per-session logs")
    p.add_argument("--json", type=pathlib.Path, help="also write every run as JSON to this file")
    args = p.parse_args()

    client_binary, origin_binary = args.bin / "hlsplay", args.bin / "hls-origin"
    for b in (client_binary, origin_binary):
        if not b.exists():
            raise SystemExit(f"{b} is missing: swift build -c release")
    if not (args.root / "master.m3u8").exists():
        raise SystemExit(f"{args.root}/master.m3u8 is missing: Samples/make-all.sh")

    plans = [("demux", args.demux_sessions), ("decode", args.decode_sessions)]
    work = pathlib.Path(tempfile.mkdtemp(prefix="sessions-bench-"))
    results = []
    print(f"# {CORES} cores; {args.media_seconds:g} s of live media per session, ramp {args.ramp:g} s, "
          f"variant {args.variant}; origin unshaped, live, window {args.window}", flush=True)
    print("# cpu/ms/s = client CPU seconds per media second per session; peak = client cores in its busiest "
          f"{PEAK_WINDOW_SECONDS:g} s; RSS/s, anon/s = peak per session; originCPU = hls-origin CPU seconds in the run, "
          "origin/ms/s = per media second per session; busy = the machine's busy share (all processes) during the run; "
          "load = mean 1-min load average", flush=True)
    print(HEADER, flush=True)
    try:
        for mode, counts in plans:
            failures = 0
            for n in [int(x) for x in counts.split(",") if x.strip()]:
                r = run_once(args, mode, n, origin_binary, client_binary, work)
                results.append(r)
                print(format_row(r), flush=True)
                if "stderrTail" in r:
                    print("  stderr: " + " | ".join(r["stderrTail"]), flush=True)
                failures = 0 if sustained(r) else failures + 1
                if failures >= args.stop_after_failures:
                    break
    finally:
        if args.keep_logs:
            print(f"# logs in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    for mode, _ in plans:
        ran = [r for r in results if r["mode"] == mode]
        if not ran:
            continue
        ok = [r["sessions"] for r in ran if sustained(r)]
        no_client = [r["sessions"] for r in ran
                     if r["exitReasons"] == {"durationReached": r["sessions"]}
                     and not r["stallCauses"].get("client-cpu") and not r["stallCauses"].get("client+origin-cpu")]
        print(f"largest N sustained, {mode}: {max(ok) if ok else 'none'} with zero stalls"
              f"{' and no late frames' if mode == 'decode' else ''}; "
              f"{max(no_client) if no_client else 'none'} with zero stalls caused by the client (or client + origin)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    sys.exit(main())
