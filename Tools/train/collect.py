#!/usr/bin/env python3
"""Collect real hlsplay sessions on hls-origin replaying the real traces (issue 5 §4).

    python3 Tools/train/collect.py PHASE [--data /tmp/hlsplay-train] [--bin DIR] [--jobs 6]

PHASE:
  train    every TRAIN trace × offsets, the controller on with the v1 model and
           with the heuristic, alternately (two policies in the data, so the
           model does not learn one controller's habits only)
  heldout  every HELD_OUT trace × offsets, controller on (--predictor model,
           --model MODEL) and off, alternately, so machine load hits both alike
  onoff    the same as heldout with another --model (the final on/off figures);
           --tuned-bin DIR adds a third arm, the controller on in another build

One hls-origin per session (--port 0; the port is read from its first line),
loopback only. Each trace is first *derived* into the data directory as a
Sabre network JSON: rotated to start at the session's offset, scaled (see
SCALE_ABOVE_MEAN_BPS), with its first-byte latency (Sabre's own latency_ms,
else sim.DEFAULT_LATENCY_SECONDS). The origin loops it, the simulator reads the
very same file (sim_compare.py). Media: a 248 s loop of Samples/build/ladder-2s
(make_ladder), so a 90 s session never reaches the end of the stream.

hlsplay runs with --no-decode: labels come from the media clock, which starts
on the first demuxed packet and is driven by demuxed (buffered) media, never by
decoding, so decoding changes no stall label; it would only add CPU load on a
2-core machine shared with builds, and CPU starvation is what distorts
real-time runs. decodeLagRatio is therefore missing in these logs (it is not a
model input). The load average (1 min) at start and end of each session and
the mean CPU PSI seen by the player are kept in the manifest.

Every session appends one line to DATA/manifest.jsonl: trace, offset, scale,
predictor, model, log path, exit status, load, summary figures.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import recording_groups  # noqa: E402
import sim  # noqa: E402
from hlsplay_tools import Origin, read_log, run_hlsplay  # noqa: E402

TRACES_ROOT = os.path.join(os.path.dirname(REPO), "shared", "data", "traces")

# The fixed split, by trace. Both lists are subsets of the v1 model's split
# (models/stall-logistic-v1.json training.trainTraces / heldOutTraces), so the
# held-out networks were seen by neither v1 nor v2. Chosen so that the 0.62
# Mbit/s bottom rung of the ladder is sometimes not sustainable (stalls in a fair
# share of sessions), with every source family on both sides. That puts the Norway
# HSDPA dataset, one recording-source group (recording_groups.py: its Pensieve and
# Sabre files cannot be told apart), on both sides; a new split must not cut a group.
TRAIN_TRACES = [
    "pensieve/hsdpa_norway/norway_bus_11",
    "pensieve/hsdpa_norway/norway_car_12",
    "pensieve/hsdpa_norway/norway_car_7",
    "pensieve/hsdpa_norway/norway_ferry_19",
    "pensieve/hsdpa_norway/norway_train_1",
    "pensieve/hsdpa_norway/norway_tram_53",
    "pensieve/fcc/trace_7540_http---www.yahoo.com",
    "pensieve/fcc/trace_207336_http---www.amazon.com",
    "pensieve/fcc/trace_32551_http---www.amazon.com",
    "sabre/3G_hsdpa_norway/report.2010-09-20_1542CEST.json",
    "sabre/3G_hsdpa_norway/report.2011-01-31_1025CET.json",
    "sabre/4G_lte_belgium/report_tram_0002.json",
    "sabre/4G_lte_belgium/report_foot_0006.json",
    "sabre/fcc_stepup_sd/trace0000.json",
    "mahimahi/Verizon-EVDO-driving.down",
    "mahimahi/ATT-LTE-driving.down",
]
HELD_OUT_TRACES = [
    "pensieve/hsdpa_norway/norway_metro_6",
    "pensieve/hsdpa_norway/norway_tram_48",
    "pensieve/fcc/trace_797466_http---www.amazon.com",
    "pensieve/fcc/trace_941752_http---www.facebook.com",
    "sabre/3G_hsdpa_norway/report.2011-02-14_2032CET.json",
    "sabre/3G_hsdpa_norway/report.2010-09-28_1407CEST.json",
    "sabre/4G_lte_belgium/report_train_0003.json",
    "mahimahi/TMobile-UMTS-driving.down",
]
_new_crossings = (recording_groups.crossing_groups(TRAIN_TRACES, HELD_OUT_TRACES)
                  - recording_groups.PUBLISHED_SPLIT_CROSSINGS)
if _new_crossings:
    raise RuntimeError(f"collect.py: the split puts recording groups {sorted(_new_crossings)} on both sides "
                       "(Tools/train/recording_groups.py)")
OFFSET_FRACTIONS = [0.0, 0.5]        # session start within the trace, as a fraction of its length
SESSION_MEDIA_SECONDS = 90.0         # --duration: media played per session
SESSION_WALL_LIMIT_SECONDS = 240.0   # SIGTERM after this (the log still ends in a summary)
SCALE_ABOVE_MEAN_BPS = 4_000_000.0   # traces with a higher mean rate are scaled ...
SCALED_MEAN_BPS = 2_500_000.0        # ... so that their mean is this (4G LTE → a congested 4G)
LADDER_SOURCE = os.path.join(REPO, "Samples", "build", "ladder-2s")
LADDER_LOOPS = 8                     # 8 × 30 s = 248 s of media (audio priming adds ~2 %)
# --low-rung: a fifth rung under ladder-2s's 0.62 Mbit/s bottom, the size of the
# lowest rung of common published ladders (Apple's authoring spec starts at 145
# kbit/s of video at 416x234; ours adds 32 kbit/s of audio). Most held-out stalls
# begin at 0.62 Mbit/s, where no cap can help; this rung is what a downshift needs.
LOW_RUNG = dict(name="vlow", width=320, height=180, video_kbps=150, audio_kbps=32)


def load_steps(rel: str) -> list:
    path = os.path.join(TRACES_ROOT, rel)
    if rel.startswith("pensieve/"):
        return sim.load_pensieve(path)
    if rel.startswith("sabre/"):
        return sim.load_sabre(path)
    return sim.load_mahimahi(path)


def trace_scale(steps: list) -> float:
    total = sum(d for d, _, _ in steps)
    mean = sum(d * b for d, b, _ in steps) / total
    return 1.0 if mean <= SCALE_ABOVE_MEAN_BPS else SCALED_MEAN_BPS / mean


def derive_trace(rel: str, fraction: float, out_dir: str) -> tuple[str, float, float]:
    """Writes the rotated, scaled trace as Sabre JSON; returns (path, offset s, scale)."""
    steps = load_steps(rel)
    total = sum(d for d, _, _ in steps)
    offset = fraction * total
    scale = trace_scale(steps)
    # rotate: split the step that contains the offset
    acc, rotated = 0.0, []
    for i, (d, b, lat) in enumerate(steps):
        if acc + d > offset:
            cut = offset - acc
            rotated = [(d - cut, b, lat)] + steps[i + 1:] + steps[:i] + ([(cut, b, lat)] if cut > 0 else [])
            break
        acc += d
    entries = [dict(duration_ms=int(round(d * 1000)), bandwidth_kbps=int(round(b * scale / 1000)),
                    latency_ms=int(round(lat * 1000))) for d, b, lat in rotated if int(round(d * 1000)) > 0]
    name = rel.replace("/", "__") + f"@{fraction:.3f}.json"
    path = os.path.join(out_dir, name)
    with open(path, "w") as fh:
        json.dump(entries, fh)
    return path, offset, scale


def make_ladder(data: str, low_rung: bool = False) -> str:
    """A 248 s VOD copy of ladder-2s: each rung's 15 segments concatenated 8 times and
    re-segmented by ffmpeg with stream copy (no re-encode; keyframes every 2 s).
    With low_rung (folder "ladder-low"), LOW_RUNG is encoded for the same length
    (same test pattern, GOP and segment length) and listed first."""
    final = os.path.join(data, "ladder-low" if low_rung else "ladder")
    if os.path.exists(os.path.join(final, "master.m3u8")):
        return final
    # built in a private folder and renamed, so two collectors started together cannot mix files
    out = final + f".tmp{os.getpid()}"
    os.makedirs(out, exist_ok=True)
    for v in ("v0", "v1", "v2", "v3"):
        os.makedirs(os.path.join(out, v), exist_ok=True)
        with open(os.path.join(LADDER_SOURCE, v, "prog.m3u8")) as fh:
            segs = [ln.strip() for ln in fh if ln.strip() and not ln.startswith("#")]
        lst = os.path.join(out, v + ".list")
        with open(lst, "w") as fh:
            for _ in range(LADDER_LOOPS):
                for s in segs:
                    fh.write(f"file '{os.path.join(LADDER_SOURCE, v, s)}'\n")
        subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "concat", "-safe", "0",
                        "-i", lst, "-c", "copy", "-map", "0", "-f", "hls", "-hls_time", "2",
                        "-hls_playlist_type", "vod", "-hls_segment_filename", os.path.join(out, v, "seg_%05d.ts"),
                        os.path.join(out, v, "prog.m3u8")], check=True)
    with open(os.path.join(LADDER_SOURCE, "master.m3u8")) as src:
        master = src.read()
    if low_rung:
        r = LOW_RUNG
        d = os.path.join(out, r["name"])
        os.makedirs(d, exist_ok=True)
        seconds = 30 * LADDER_LOOPS
        kbps = r["video_kbps"]
        subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
                        "-f", "lavfi", "-i", f"testsrc2=size={r['width']}x{r['height']}:rate=24:duration={seconds}",
                        "-f", "lavfi", "-i", f"sine=frequency=440:beep_factor=4:sample_rate=48000:duration={seconds}",
                        "-map", "0:v:0", "-map", "1:a:0", "-threads", "1",
                        "-c:v", "libx264", "-preset", "veryfast", "-profile:v", "high", "-pix_fmt", "yuv420p",
                        "-x264-params", "nal-hrd=cbr:force-cfr=1", "-b:v", f"{kbps}k", "-minrate", f"{kbps}k",
                        "-maxrate", f"{kbps}k", "-bufsize", f"{2 * kbps}k", "-r", "24", "-g", "48", "-keyint_min", "48",
                        "-sc_threshold", "0", "-force_key_frames", "expr:gte(t,n_forced*2)",
                        "-c:a", "aac", "-b:a", f"{r['audio_kbps']}k", "-ac", "2", "-ar", "48000",
                        "-f", "hls", "-hls_time", "2", "-hls_playlist_type", "vod", "-hls_list_size", "0",
                        "-hls_segment_filename", os.path.join(d, "seg_%05d.ts"), os.path.join(d, "prog.m3u8")], check=True)
        # BANDWIDTH = peak segment bitrate, AVERAGE-BANDWIDTH = mean, as make-ladder.sh measures them
        peak, bits, dur, extinf = 0.0, 0.0, 0.0, None
        with open(os.path.join(d, "prog.m3u8")) as fh:
            for ln in fh:
                ln = ln.strip()
                if ln.startswith("#EXTINF:"):
                    extinf = float(ln[8:].split(",")[0])
                elif ln and not ln.startswith("#") and extinf:
                    b = os.path.getsize(os.path.join(d, ln)) * 8
                    peak, bits, dur, extinf = max(peak, b / extinf), bits + b, dur + extinf, None
        lines = master.splitlines()
        at = next(i for i, ln in enumerate(lines) if ln.startswith("#EXT-X-STREAM-INF"))
        lines[at:at] = [f'#EXT-X-STREAM-INF:BANDWIDTH={int(peak)},AVERAGE-BANDWIDTH={int(bits / dur)},'
                        f'RESOLUTION={r["width"]}x{r["height"]},FRAME-RATE=24.000,CODECS="avc1.64000c,mp4a.40.2"',
                        f'{r["name"]}/prog.m3u8']
        master = "\n".join(lines) + "\n"
    with open(os.path.join(out, "master.m3u8"), "w") as dst:
        dst.write(master)
    try:
        os.rename(out, final)
    except OSError:  # another collector finished first: use its copy
        shutil.rmtree(out)
    return final


def loadavg() -> float:
    with open("/proc/loadavg") as fh:
        return float(fh.read().split()[0])


def run_session(job: dict, bin_dir: str, ladder: str, data: str) -> dict:
    sid = job["id"]
    log = os.path.join(data, "logs", sid + ".jsonl")
    origin = Origin(ladder, ["--trace", job["traceFile"], "--trace-format", "sabre"], binary=os.path.join(bin_dir, "hls-origin"))
    try:
        args = ["--duration", str(SESSION_MEDIA_SECONDS), "--no-decode", "--cold",
                "--estimate-store", os.path.join(data, "stores", sid + ".json"), "--predictor", job["predictor"]]
        if job.get("model"):
            args += ["--model", job["model"]]
        if job.get("policy"):
            args += ["--policy", job["policy"]]
        load0 = loadavg()
        run = run_hlsplay(origin.url("master.m3u8"), args, log=log, timeout=SESSION_WALL_LIMIT_SECONDS,
                          on_timeout="terminate", json_output=False, binary=os.path.join(bin_dir, "hlsplay"))
        err, wall = run.stderr, run.wall_seconds
        load1 = loadavg()
    finally:
        origin.stop()
    summary, psi = None, []
    try:
        session = read_log(log, strict=True)
        summary = session.summary
        for rec in session.of_type("risk.sample"):
            p = rec["features"].get("cpuPressureAvg10Percent")
            if p is not None:
                psi.append(p)
    except (OSError, ValueError) as e:
        err = f"{err}\nlog unreadable: {e}"
    out = dict(job, log=os.path.relpath(log, data), ladder=os.path.basename(ladder), exitStatus=run.status, wallSeconds=round(wall, 2),
               loadAverage1mStart=load0, loadAverage1mEnd=load1,
               meanCpuPressureAvg10Percent=round(sum(psi) / len(psi), 1) if psi else None,
               stderr=(err or "")[-400:])
    if summary:
        out.update({k: summary.get(k) for k in ("stallCount", "stallSeconds", "averageBitrateBps", "playedSeconds",
                                                 "timeToFirstFrameSeconds", "exitReason", "policyChanges")})
    return out


def plan(phase: str, model: str | None, data: str, tuned_bin: str | None = None,
         offsets: list | None = None, skip_arms: tuple = (), policy: str | None = None, tag: str | None = None) -> list:
    tdir = os.path.join(data, "traces")
    os.makedirs(tdir, exist_ok=True)
    jobs = []
    if phase == "train":
        arms = [("model", os.path.join(REPO, "models", "stall-logistic-v1.json")), ("heuristic", None)]
        for i, rel in enumerate(TRAIN_TRACES):
            for k, frac in enumerate(OFFSET_FRACTIONS):
                pred, mdl = arms[(i + k) % 2]
                path, off, scale = derive_trace(rel, frac, tdir)
                jobs.append(dict(id=f"train-{i:02d}-{k}-{pred}", phase=phase, split="train", trace=rel,
                                 offsetSeconds=round(off, 3), scale=round(scale, 4), traceFile=path,
                                 predictor=pred, model=mdl))
    else:
        mdl = model or os.path.join(REPO, "models", "stall-logistic-v1.json")
        tag = tag or os.path.splitext(os.path.basename(mdl))[0]
        for i, rel in enumerate(HELD_OUT_TRACES):
            for k, frac in enumerate(offsets or OFFSET_FRACTIONS):
                path, off, scale = derive_trace(rel, frac, tdir)
                # ids of extra offsets name the offset (the first runs used its index)
                kk = str(k) if offsets is None else f"o{round(frac * 100):02d}"
                # the arms of one trace/offset are adjacent in the queue (they run at the
                # same time, under the same load); their order rotates
                arms = [("on", "model", mdl, None), ("off", "off", None, None)]
                # --policy applies to every arm with a controller
                if tuned_bin:
                    arms.append(("on-tuned", "model", mdl, tuned_bin))
                arms = [a for a in arms if a[0] not in skip_arms]
                r = (i + k) % len(arms)
                for arm, pred, m, b in arms[r:] + arms[:r]:
                    jobs.append(dict(id=f"{phase}-{i:02d}-{kk}-{arm}-{tag}", phase=phase, split="heldout", trace=rel,
                                     offsetSeconds=round(off, 3), scale=round(scale, 4), traceFile=path,
                                     predictor=pred, model=m, controller=arm, bin=b,
                                     policy=policy if pred != "off" else None))
    return jobs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("phase", choices=["train", "heldout", "onoff"])
    ap.add_argument("--data", default="/tmp/hlsplay-train")
    ap.add_argument("--bin", default=os.path.join(REPO, ".build", "release"),
                    help="folder with release hlsplay and hls-origin")
    ap.add_argument("--model", help="model file for the controller-on arm (heldout/onoff)")
    ap.add_argument("--tuned-bin", help="(heldout/onoff) a third arm: controller on with the binaries in this "
                    "folder (a build with other PolicyController constants)")
    ap.add_argument("--offsets", help="(heldout/onoff) comma-separated start fractions instead of OFFSET_FRACTIONS")
    ap.add_argument("--skip-arm", action="append", default=[], help="(heldout/onoff) leave this arm out: on | off")
    ap.add_argument("--jobs", type=int, default=6, help="sessions at once")
    ap.add_argument("--low-rung", action="store_true", help="play the ladder with LOW_RUNG added (folder ladder-low)")
    ap.add_argument("--policy", help="(heldout/onoff) --policy FILE for the controller-on arm")
    ap.add_argument("--tag", help="(heldout/onoff) suffix of the session ids instead of the model's name")
    args = ap.parse_args()
    for d in ("logs", "stores"):
        os.makedirs(os.path.join(args.data, d), exist_ok=True)
    ladder = make_ladder(args.data, args.low_rung)
    offsets = [float(x) for x in args.offsets.split(",")] if args.offsets else None
    jobs = plan(args.phase, args.model, args.data, args.tuned_bin, offsets, tuple(args.skip_arm), args.policy, args.tag)
    manifest = os.path.join(args.data, "manifest.jsonl")
    lock = threading.Lock()
    print(f"{len(jobs)} sessions, {args.jobs} at once", flush=True)
    with cf.ThreadPoolExecutor(args.jobs) as pool:
        futs = [pool.submit(run_session, j, j.get("bin") or args.bin, ladder, args.data) for j in jobs]
        for f in cf.as_completed(futs):
            r = f.result()
            with lock, open(manifest, "a") as fh:
                fh.write(json.dumps(r) + "\n")
            print(f"{r['id']:44} exit {r['exitStatus']} stalls {r.get('stallCount')} "
                  f"{(r.get('stallSeconds') or 0):6.1f}s avg {(r.get('averageBitrateBps') or 0) / 1e6:5.2f}M "
                  f"load {r['loadAverage1mStart']:.1f}/{r['loadAverage1mEnd']:.1f}", flush=True)


if __name__ == "__main__":
    main()
