#!/usr/bin/env python3
"""Collect real hlsplay sessions on hls-origin replaying the real traces (issue 5 §4), as a
collection spec declares them (Tools/train/specs/stall-v2.json: the published v2 runs).

    python3 Tools/train/collect.py PHASE [--spec SPEC] [--data /tmp/hlsplay-train] [--bin DIR] [--jobs N]
                                   [--model FILE] [--offsets BATCH|F,F,…] [--tuned-bin DIR] [--skip-arm ARM]
                                   [--low-rung] [--policy FILE] [--tag NAME]

PHASE is one of the spec's phases (stall-v2.json):
  train    every `train` trace × offsets, one arm per trace and offset, alternating
           (armSelection "alternate"): the controller on with the v1 model and with the
           heuristic (two policies in the data, so the model does not learn one
           controller's habits only)
  heldout  every `heldout` trace × offsets, every arm (armSelection "rotate"): controller
           on (--predictor model with the phase's model, or --model) and off, the arms of
           one trace and offset adjacent in the queue, their order rotating, so machine
           load hits both alike; --tuned-bin DIR adds the "on-tuned" arm, the controller on
           in another build
  onoff    the same with v2's model (the final on/off figures)

What runs is the spec's: trace lists, offset batches (offsetFractions; --offsets names one,
or lists fractions), media seconds per session, the wall limit, the scaling rule, the ladder
recipe, hlsplay's arguments, the arms and their models, sessions at once per phase. The CLI
only picks among them (and --model/--policy/--tag, which collect.sh and onoff-start-gate.sh
pass and the run manifest records).

One hls-origin per session (--port 0; the port is read from its first line),
loopback only. Each trace is first *derived* into the data directory as a
Sabre network JSON: rotated to start at the session's offset, scaled (the spec's
`scaling`: v2 scales a trace whose mean is above 4 Mbit/s to a 2.5 Mbit/s mean), with its
first-byte latency (Sabre's own latency_ms, else sim.DEFAULT_LATENCY_SECONDS). The origin
loops it, the simulator reads the very same file (sim_compare.py). Media: the spec's ladder
(v2: a 248 s loop of Samples/build/ladder-2s, make_ladder), so a 90 s session never reaches
the end of the stream.

hlsplay runs with --no-decode: labels come from the media clock, which starts
on the first demuxed packet and is driven by demuxed (buffered) media, never by
decoding, so decoding changes no stall label; it would only add CPU load on a
2-core machine shared with builds, and CPU starvation is what distorts
real-time runs. decodeLagRatio is therefore missing in these logs (it is not a
model input). The load average (1 min) at start and end of each session and
the mean CPU PSI seen by the player are kept in the manifest.

Every session appends one line to DATA/manifest.jsonl: trace, offset, scale,
predictor, model, log path, exit status, load, summary figures, its hlsplay and
hls-origin commands (what train_real.py, onoff_report.py and vsim.py read). Every run
of a phase also writes DATA/runs/PHASE[-TAG]-UTCSTART.json, the run manifest (the
fields of Tools/abr/evaluate.py's): the spec as run and its file, the options, commit,
whether the tree was clean, each binary's path, sha256 and version, the ladder's
master sha256, each trace's sha256, the machine, load average and UTC time at start
and end, and per session its id, log, commands and exit status.
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

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import recording_groups  # noqa: E402
import sim  # noqa: E402
import hlsplay_tools as tools  # noqa: E402
from hlsplay_tools import Origin, read_log, run_hlsplay  # noqa: E402
sys.path.insert(0, os.path.join(REPO, "Tools", "abr"))
import evaluate  # noqa: E402  (the declared-experiment helpers: sha256, git, machine, utc_now)

TRACES_ROOT = os.path.join(os.path.dirname(REPO), "shared", "data", "traces")
# The published v2 collection: its traces, split, offsets, media, scaling, ladder and arms.
DEFAULT_SPEC = os.path.join(HERE, "specs", "stall-v2.json")
SPEC_KEYS = ("name", "traces", "offsetFractions", "sessionMediaSeconds", "sessionWallLimitSeconds", "scaling",
             "ladder", "hlsplayArgs", "phases")


def load_spec(path: str = DEFAULT_SPEC) -> dict:
    """A collection spec (Tools/train/specs/*.json), checked: every key present, every phase's
    traces a named list, and no recording-source group on both sides of the split but the ones
    the spec names in allowedCrossingGroups (each of which must be a published crossing)."""
    with open(path) as fh:
        spec = json.load(fh)
    evaluate.require_keys(path, spec, SPEC_KEYS)
    if "default" not in spec["offsetFractions"]:
        raise SystemExit(f"{path}: offsetFractions has no 'default' list")
    for name, phase in spec["phases"].items():
        if phase.get("traces") not in spec["traces"]:
            raise SystemExit(f"{path}: phase '{name}' names the trace list {phase.get('traces')!r}, "
                             f"not one of {sorted(spec['traces'])}")
        if phase.get("armSelection") not in ("alternate", "rotate") or not phase.get("arms"):
            raise SystemExit(f"{path}: phase '{name}' needs arms and an armSelection of alternate | rotate")
    allowed = set(spec.get("allowedCrossingGroups", []))
    if allowed - recording_groups.PUBLISHED_SPLIT_CROSSINGS:
        raise SystemExit(f"{path}: allowedCrossingGroups {sorted(allowed)} names a group no published split "
                         "crosses (Tools/train/recording_groups.py): a new split must cross none")
    crossing = recording_groups.crossing_groups(spec["traces"].get("train", []), spec["traces"].get("heldout", []))
    if crossing - allowed:
        raise SystemExit(f"{path}: the split puts recording groups {sorted(crossing - allowed)} on both sides "
                         "(Tools/train/recording_groups.py)")
    spec["specFile"] = os.path.relpath(os.path.abspath(path), REPO)
    return spec


def offset_fractions(spec: dict, offsets: str | None) -> tuple[list, bool]:
    """(fractions, named by index): the spec's default batch, another named batch of the spec
    (offsetFractions.NAME), or a comma-separated list. Sessions of the default batch name their
    offset by its index, the others by its percentage (the first runs' naming)."""
    if offsets is None or offsets == "default":
        return list(spec["offsetFractions"]["default"]), True
    if offsets in spec["offsetFractions"]:
        return list(spec["offsetFractions"][offsets]), False
    try:
        return [float(x) for x in offsets.split(",")], False
    except ValueError:
        raise SystemExit(f"--offsets {offsets}: neither a batch of the spec ({', '.join(spec['offsetFractions'])}) "
                         "nor a comma-separated list of fractions")


def load_steps(rel: str) -> list:
    path = os.path.join(TRACES_ROOT, rel)
    if rel.startswith("pensieve/"):
        return sim.load_pensieve(path)
    if rel.startswith("sabre/"):
        return sim.load_sabre(path)
    return sim.load_mahimahi(path)


def trace_scale(steps: list, scaling: dict) -> float:
    """A trace whose mean rate is above scaling.aboveMeanBps is scaled so that its mean is
    scaling.toMeanBps (v2: 4G LTE above 4 Mbit/s → a congested 4G at 2.5 Mbit/s); else 1."""
    total = sum(d for d, _, _ in steps)
    mean = sum(d * b for d, b, _ in steps) / total
    return 1.0 if mean <= scaling["aboveMeanBps"] else scaling["toMeanBps"] / mean


def derive_trace(rel: str, fraction: float, out_dir: str, scaling: dict) -> tuple[str, float, float]:
    """Writes the rotated, scaled trace as Sabre JSON; returns (path, offset s, scale)."""
    steps = load_steps(rel)
    total = sum(d for d, _, _ in steps)
    offset = fraction * total
    scale = trace_scale(steps, scaling)
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


def x264_params(source: str) -> str:
    """The low rung's x264 parameters: make-ladder.sh's, with x264's code pinned as the source ladder's own
    stamp says it was (`x264asm=avx2`: its bytes depend on the SIMD code it runs, Samples/README.md), so the
    low rung is encoded as the rungs beside it were."""
    stamp = evaluate.read_text(os.path.join(source, ".stamp")) or ""
    asm = next((w.split("=", 1)[1] for w in stamp.split() if w.startswith("x264asm=")), "native")
    return "nal-hrd=cbr:force-cfr=1" + ("" if asm == "native" else f":asm={asm}")


def make_ladder(data: str, spec: dict, low_rung: bool = False) -> str:
    """The spec's ladder recipe: a VOD copy of ladder.source (v2: ladder-2s, 30 s) with each rung's
    segments concatenated ladder.loops times (v2: 8, 248 s) and re-segmented by ffmpeg with stream
    copy (no re-encode; keyframes every 2 s). With low_rung (folder "ladder-low"), ladder.lowRung is
    encoded for the same length (same test pattern, GOP and segment length) and listed first.
    --low-rung: a fifth rung under ladder-2s's 0.62 Mbit/s bottom, the size of the lowest rung of
    common published ladders (Apple's authoring spec starts at 145 kbit/s of video at 416x234; ours
    adds 32 kbit/s of audio). Most held-out stalls begin at 0.62 Mbit/s, where no cap can help; this
    rung is what a downshift needs."""
    lad = spec["ladder"]
    source = os.path.join(REPO, lad["source"])
    final = os.path.join(data, "ladder-low" if low_rung else "ladder")
    # What the copy was made from: the source's own stamp and master, the recipe, and the low rung's x264
    # code. A copy made from another source ladder (one encoded with other x264 code, say) is made again.
    stamp = json.dumps({"sourceStamp": evaluate.read_text(os.path.join(source, ".stamp")),
                        "sourceMasterSha256": evaluate.sha256(os.path.join(source, "master.m3u8")),
                        "ladder": lad, "lowRung": low_rung}, sort_keys=True)
    if os.path.exists(os.path.join(final, "master.m3u8")) and evaluate.read_text(os.path.join(final, ".source")) == stamp:
        return final
    # built in a private folder and renamed, so two collectors started together cannot mix files
    out = final + f".tmp{os.getpid()}"
    os.makedirs(out, exist_ok=True)
    for v in lad["rungs"]:
        os.makedirs(os.path.join(out, v), exist_ok=True)
        with open(os.path.join(source, v, "prog.m3u8")) as fh:
            segs = [ln.strip() for ln in fh if ln.strip() and not ln.startswith("#")]
        lst = os.path.join(out, v + ".list")
        with open(lst, "w") as fh:
            for _ in range(lad["loops"]):
                for s in segs:
                    fh.write(f"file '{os.path.join(source, v, s)}'\n")
        subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "concat", "-safe", "0",
                        "-i", lst, "-c", "copy", "-map", "0", "-f", "hls", "-hls_time", str(lad["segmentSeconds"]),
                        "-hls_playlist_type", "vod", "-hls_segment_filename", os.path.join(out, v, "seg_%05d.ts"),
                        os.path.join(out, v, "prog.m3u8")], check=True)
    with open(os.path.join(source, "master.m3u8")) as src:
        master = src.read()
    if low_rung:
        r = lad["lowRung"]
        d = os.path.join(out, r["name"])
        os.makedirs(d, exist_ok=True)
        seconds = lad["sourceSeconds"] * lad["loops"]
        kbps = r["video_kbps"]
        subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
                        "-f", "lavfi", "-i", f"testsrc2=size={r['width']}x{r['height']}:rate=24:duration={seconds}",
                        "-f", "lavfi", "-i", f"sine=frequency=440:beep_factor=4:sample_rate=48000:duration={seconds}",
                        "-map", "0:v:0", "-map", "1:a:0", "-threads", "1",
                        "-c:v", "libx264", "-preset", "veryfast", "-profile:v", "high", "-pix_fmt", "yuv420p",
                        "-x264-params", x264_params(source), "-b:v", f"{kbps}k", "-minrate", f"{kbps}k",
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
    with open(os.path.join(out, ".source"), "w") as dst:
        dst.write(stamp)
    if evaluate.read_text(os.path.join(final, ".source")) != stamp:
        shutil.rmtree(final, ignore_errors=True)  # a copy of another source
    try:
        os.rename(out, final)
    except OSError:  # another collector finished first: use its copy
        shutil.rmtree(out)
    return final


def loadavg() -> float:
    with open("/proc/loadavg") as fh:
        return float(fh.read().split()[0])


def run_session(job: dict, bin_dir: str, ladder: str, data: str, spec: dict) -> dict:
    sid = job["id"]
    log = os.path.join(data, "logs", sid + ".jsonl")
    origin = Origin(ladder, ["--trace", job["traceFile"], "--trace-format", "sabre"], binary=os.path.join(bin_dir, "hls-origin"))
    try:
        args = ["--duration", str(spec["sessionMediaSeconds"]), *spec["hlsplayArgs"],
                "--estimate-store", os.path.join(data, "stores", sid + ".json"), "--predictor", job["predictor"]]
        if job.get("model"):
            args += ["--model", job["model"]]
        if job.get("policy"):
            args += ["--policy", job["policy"]]
        load0 = loadavg()
        run = run_hlsplay(origin.url("master.m3u8"), args, log=log, timeout=spec["sessionWallLimitSeconds"],
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
               stderr=(err or "")[-400:], spec=spec["name"], command=run.command, originCommand=origin.command)
    if summary:
        out.update({k: summary.get(k) for k in ("stallCount", "stallSeconds", "averageBitrateBps", "playedSeconds",
                                                 "timeToFirstFrameSeconds", "exitReason", "policyChanges")})
    return out


def plan(spec: dict, phase: str, model: str | None, data: str, tuned_bin: str | None = None,
         offsets: str | None = None, skip_arms: tuple = (), policy: str | None = None, tag: str | None = None) -> list:
    """The sessions of one phase of the spec, in queue order. `model` (a path) replaces the phase's
    model in every arm that runs one; `offsets` names a batch of the spec's offsetFractions or lists
    fractions (offset_fractions); arms with `"bin": "tuned"` run only with tuned_bin."""
    if phase not in spec["phases"]:
        raise SystemExit(f"the spec {spec['name']} has no phase '{phase}' (it has {', '.join(spec['phases'])})")
    ph = spec["phases"][phase]
    tdir = os.path.join(data, "traces")
    os.makedirs(tdir, exist_ok=True)
    fractions, by_index = offset_fractions(spec, offsets)
    traces = spec["traces"][ph["traces"]]
    jobs = []
    if ph["armSelection"] == "alternate":
        # one arm per trace and offset, the arms alternating (two policies in the data, so the
        # model does not learn one controller's habits only)
        arms = [(a["name"], a["predictor"], os.path.join(REPO, a["model"]) if a.get("model") else None)
                for a in ph["arms"]]
        for i, rel in enumerate(traces):
            for k, frac in enumerate(fractions):
                name, pred, mdl = arms[(i + k) % len(arms)]
                path, off, scale = derive_trace(rel, frac, tdir, spec["scaling"])
                kk = str(k) if by_index else f"o{round(frac * 100):02d}"
                jobs.append(dict(id=f"{phase}-{i:02d}-{kk}-{name}", phase=phase, split=ph["split"], trace=rel,
                                 offsetSeconds=round(off, 3), scale=round(scale, 4), traceFile=path,
                                 predictor=pred, model=mdl))
        return jobs
    mdl = model or os.path.join(REPO, ph["model"])
    tag = tag or os.path.splitext(os.path.basename(mdl))[0]
    for i, rel in enumerate(traces):
        for k, frac in enumerate(fractions):
            path, off, scale = derive_trace(rel, frac, tdir, spec["scaling"])
            # ids of extra offsets name the offset (the first runs used its index)
            kk = str(k) if by_index else f"o{round(frac * 100):02d}"
            # every arm of one trace/offset, adjacent in the queue (they run at the same time,
            # under the same load); their order rotates. --policy applies to every arm with a controller
            arms = [(a["name"], a["predictor"], mdl if a["predictor"] == "model" else None,
                     tuned_bin if a.get("bin") == "tuned" else None)
                    for a in ph["arms"] if a.get("bin") != "tuned" or tuned_bin]
            arms = [a for a in arms if a[0] not in skip_arms]
            r = (i + k) % len(arms)
            for arm, pred, m, b in arms[r:] + arms[:r]:
                jobs.append(dict(id=f"{phase}-{i:02d}-{kk}-{arm}-{tag}", phase=phase, split=ph["split"], trace=rel,
                                 offsetSeconds=round(off, 3), scale=round(scale, 4), traceFile=path,
                                 predictor=pred, model=m, controller=arm, bin=b,
                                 policy=policy if pred != "off" else None))
    return jobs


def binary_record(path: str) -> dict:
    return dict(path=os.path.abspath(path), sha256=evaluate.sha256(path) if os.path.isfile(path) else None,
                version=tools.hlsplay_version(path) if os.path.basename(path) == "hlsplay" and os.path.isfile(path) else None)


def run_manifest(spec: dict, phase: str, options: dict, bins: list, ladder: str, jobs: list) -> dict:
    """What a phase run is, before it runs (evaluate.py's manifest fields): the spec as run, the
    options given, commit, tree state, each binary's sha256, the ladder, each trace's sha256, machine."""
    traces = sorted({j["trace"] for j in jobs})
    return dict(
        spec=spec, specFile=spec["specFile"], phase=phase, options=options,
        **tools.repo_state(),
        binaries={os.path.abspath(d): {name: binary_record(os.path.join(d, name)) for name in ("hlsplay", "hls-origin")}
                  for d in bins},
        ladder=dict(path=os.path.abspath(ladder), masterSha256=evaluate.sha256(os.path.join(ladder, "master.m3u8"))),
        traceSha256={t: evaluate.sha256(os.path.join(TRACES_ROOT, t)) for t in traces},
        machine=evaluate.machine(), startedAt=evaluate.utc_now(), loadAverageAtStart=list(os.getloadavg()))


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("phase", help="a phase of the spec: train | heldout | onoff")
    ap.add_argument("--spec", default=DEFAULT_SPEC, help="the collection spec (default: Tools/train/specs/stall-v2.json)")
    ap.add_argument("--data", default="/tmp/hlsplay-train")
    ap.add_argument("--bin", default=os.path.join(REPO, ".build", "release"),
                    help="folder with release hlsplay and hls-origin")
    ap.add_argument("--model", help="model file for the controller-on arm instead of the phase's (heldout/onoff)")
    ap.add_argument("--tuned-bin", help="(heldout/onoff) run the phase's \"bin\": \"tuned\" arm (on-tuned), the "
                    "controller on with the binaries in this folder (a build with other PolicyController constants)")
    ap.add_argument("--offsets", help="a batch of the spec's offsetFractions (default, extra, …) or comma-separated "
                    "start fractions; default: the spec's default batch")
    ap.add_argument("--skip-arm", action="append", default=[], help="(heldout/onoff) leave this arm out: on | off")
    ap.add_argument("--jobs", type=int, help="sessions at once (default: the phase's jobs in the spec)")
    ap.add_argument("--low-rung", action="store_true", help="play the ladder with the spec's lowRung added (folder ladder-low)")
    ap.add_argument("--policy", help="(heldout/onoff) --policy FILE for the controller-on arm")
    ap.add_argument("--tag", help="(heldout/onoff) suffix of the session ids instead of the model's name")
    args = ap.parse_args(argv)
    spec = load_spec(args.spec)
    for d in ("logs", "stores", "runs"):
        os.makedirs(os.path.join(args.data, d), exist_ok=True)
    ladder = make_ladder(args.data, spec, args.low_rung)
    jobs = plan(spec, args.phase, args.model, args.data, args.tuned_bin, args.offsets, tuple(args.skip_arm),
                args.policy, args.tag)
    n_jobs = args.jobs or spec["phases"][args.phase].get("jobs") or 6
    options = dict(model=args.model, tunedBin=args.tuned_bin, offsets=args.offsets, skipArms=args.skip_arm,
                   jobs=n_jobs, lowRung=args.low_rung, policy=args.policy, tag=args.tag, data=os.path.abspath(args.data))
    bins = [args.bin] + ([args.tuned_bin] if args.tuned_bin else [])
    run = run_manifest(spec, args.phase, options, bins, ladder, jobs)
    stamp = run["startedAt"].replace(":", "").replace("-", "").replace("+0000", "Z")
    name = f"{args.phase}-{args.tag}" if args.tag else args.phase
    run_path = os.path.join(args.data, "runs", f"{name}-{stamp}.json")
    manifest = os.path.join(args.data, "manifest.jsonl")
    lock = threading.Lock()
    sessions = []
    print(f"{len(jobs)} sessions, {n_jobs} at once; run manifest {run_path}", flush=True)
    with cf.ThreadPoolExecutor(n_jobs) as pool:
        futs = [pool.submit(run_session, j, j.get("bin") or args.bin, ladder, args.data, spec) for j in jobs]
        for f in cf.as_completed(futs):
            r = f.result()
            with lock, open(manifest, "a") as fh:
                fh.write(json.dumps(r) + "\n")
            sessions.append({k: r.get(k) for k in ("id", "log", "trace", "offsetSeconds", "predictor", "controller",
                                                    "command", "originCommand", "exitStatus", "wallSeconds",
                                                    "loadAverage1mStart", "loadAverage1mEnd")})
            print(f"{r['id']:44} exit {r['exitStatus']} stalls {r.get('stallCount')} "
                  f"{(r.get('stallSeconds') or 0):6.1f}s avg {(r.get('averageBitrateBps') or 0) / 1e6:5.2f}M "
                  f"load {r['loadAverage1mStart']:.1f}/{r['loadAverage1mEnd']:.1f}", flush=True)
    order = {j["id"]: n for n, j in enumerate(jobs)}
    run.update(endedAt=evaluate.utc_now(), loadAverageAtEnd=list(os.getloadavg()),
               sessions=sorted(sessions, key=lambda s: order[s["id"]]))
    with open(run_path, "w") as fh:
        json.dump(run, fh, indent=1, sort_keys=True)
        fh.write("\n")


if __name__ == "__main__":
    main()
