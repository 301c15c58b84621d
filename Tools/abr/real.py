"""The ABR evaluation's real mode: hlsplay and GStreamer, one after the other, each against its own
hls-origin replaying the same trace, in real time (docs/abr.md, "Real runs against GStreamer").

Reached through Tools/abr/evaluate.py, which dispatches on the spec's `"mode": "real"`:

    python3 Tools/abr/evaluate.py run Tools/abr/specs/abr-real.json --out /tmp/abr-real
    python3 Tools/abr/evaluate.py report /tmp/abr-real
    python3 Tools/abr/evaluate.py docs  /tmp/abr-real docs/abr.md
    python3 Tools/abr/evaluate.py check /tmp/abr-real docs/abr.md

A real spec names its ladder (as a virtual one), its traces (a list, or a side of the split and a
`select` rule: `{"sortedEvery": K, "first": N}` takes the side's traces in sorted order, every K-th
from the first, and keeps the first N of those), `offsetSeconds` (where in each trace the link
starts; only 0 is supported: hls-origin replays a trace from its start), `durationSeconds` (wall
seconds each player plays), `players` (in the order they play each trace: `gstreamer` and one or
more hlsplay arms, e.g. `hlsplay`), `hlsplayArgs` (the arguments of the hlsplay arm: a list when there
is one arm, else an object naming each arm's list, e.g. `{"hlsplay": ["--abr", "hlsplay"],
"hlsplay-mpc": ["--abr", "hlsplay-mpc"]}`) and `reps`. Every hlsplay session starts cold, with its own
empty estimate store (gstreamer_peer.run_hlsplay_peer), as GStreamer does.

Sessions run one at a time (real time: two would share the cores and the link's timing). Each
(trace, player, rep) gets its own hls-origin on a fresh port, started with `--trace TRACE` just
before the player asks for its first byte, and a folder `sessions/TRACE/PLAYER.repN/` holding the
raw files: `origin.jsonl` (the origin's request log), `session.jsonl` (hlsplay's session log) or
`events.jsonl` (every event gst_play.py printed), and `record.json` (the record
Tools/lib/gstreamer_peer.py derived at run time, kept for reading; the report does not use it).
`ladder/` keeps a copy of the ladder's playlists and `segment-sizes.json` (the byte size of every
segment file), so that the report can map the origin's requests to rungs without the media.
`manifest.json` is the virtual mode's (commit, binaries' sha256, machine, load averages and UTC
times at start and end, the spec, each trace's sha256) plus, per session, its command, wall time
and the load average just before it.

The report re-derives each session's record from its raw files with the same functions the peer
tool uses (gstreamer_peer.gstreamer_record / hlsplay_record): the played bitrate of both players is
read from their origin's request log by the same code (the ladder BANDWIDTH of the rung each
played second of media was fetched at), stalls from hlsplay's session log and GStreamer's buffering
messages after PLAYING, time to playing from hlsplay's `timeToPlaybackStartSeconds` (from the
process's start) and GStreamer's first PLAYING state (from the URL being handed to a pipeline
already built).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "Tools", "lib"))
sys.path.insert(0, os.path.join(REPO, "Tools", "train"))
import gstreamer_peer as peer  # noqa: E402
import hlsplay_tools as tools  # noqa: E402

PEER = "gstreamer"
# The real-run targets (issue 16, "Targets"): nothing here is chosen on the data.
TARGET_BITRATE_RATIO = 1.25        # hlsplay's played bitrate ≥ this × GStreamer's …
TARGET_STALL_MARGIN_SECONDS = 0.5  # … with stall time ≤ GStreamer's + this …
TARGET_TRACE_SHARE = 0.8           # … on at least this share of the traces; time to playing ≤ on all.
METRICS = (  # key, heading, unit, digits: the paired figures (hlsplay − GStreamer)
    ("bitrateMbps", "played bitrate", "Mbit/s", 2),
    ("stallSeconds", "stall time", "s", 2),
    ("timeToPlayingSeconds", "time to playing", "s", 2),
    ("timeToFirstFrameSeconds", "time to first frame", "s", 2),
)
# hlsplay arms against each other also compare the linear QoE of their summaries (docs/session-log.md,
# `qoe.linearQoE`: the MPC/Pensieve score every virtual comparison uses, in hlsplay_record's record);
# GStreamer has no such record.
ARM_METRICS = METRICS + (("linearQoE", "linear QoE", "score", 1),)


# ---------------------------------------------------------------- spec

def load_spec(path):
    with open(path) as f:
        spec = json.load(f)
    from evaluate import require_keys
    require_keys(path, spec, ("name", "mode", "ladder", "traces", "offsetSeconds", "durationSeconds", "players",
                              "reps"))
    if spec["mode"] != "real":
        raise SystemExit(f"{path}: not a real-mode spec (mode {spec['mode']!r})")
    arms = hlsplay_arms(spec)
    if spec["players"].count(PEER) != 1 or not arms or len(set(spec["players"])) != len(spec["players"]):
        raise SystemExit(f"{path}: players must name {PEER} once and one or more hlsplay arms, each once "
                         "(in the order they play)")
    args = spec.get("hlsplayArgs", [])
    if isinstance(args, dict):
        if sorted(args) != sorted(arms):
            raise SystemExit(f"{path}: hlsplayArgs must name the arguments of each hlsplay arm "
                             f"({', '.join(arms)}), and no other")
    elif len(arms) > 1:
        raise SystemExit(f"{path}: with several hlsplay arms, hlsplayArgs must name each arm's arguments")
    if spec["offsetSeconds"] != 0:
        raise SystemExit(f"{path}: offsetSeconds {spec['offsetSeconds']}: only 0 is supported "
                         "(hls-origin replays a trace from its start)")
    return spec


def hlsplay_arms(spec):
    """The spec's hlsplay arms: every player but GStreamer, in play order."""
    return [p for p in spec["players"] if p != PEER]


def arm_args(spec, arm):
    args = spec.get("hlsplayArgs", [])
    return list(args.get(arm, [])) if isinstance(args, dict) else list(args)


def session_dir(trace, player, rep):
    return os.path.join("sessions", trace.replace("/", "__"), f"{player}.rep{rep}")


# ---------------------------------------------------------------- run

def snapshot_ladder(ladder, out):
    """Copies the ladder's playlists into out/ladder and writes the segment files' sizes beside them."""
    dest = os.path.join(out, "ladder")
    lad = tools.Ladder(ladder)
    sizes = {}
    for rel in ["master.m3u8"] + [r.path.lstrip("/") for r in lad.rungs]:
        os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
        shutil.copyfile(os.path.join(ladder, rel), os.path.join(dest, rel))
    for r in lad.rungs:
        for path, _, _ in r.segments:
            sizes[path] = os.path.getsize(os.path.join(ladder, path.lstrip("/")))
    with open(os.path.join(dest, "segment-sizes.json"), "w") as f:
        json.dump(sizes, f, indent=0, sort_keys=True)
        f.write("\n")


def snapshot_traces(traces, out, trace_path):
    """Copies each trace file into out/traces/NAME, so that the report can read the links without the
    trace folders (it checks each copy against the manifest's sha256)."""
    for t in traces:
        dest = os.path.join(out, "traces", t)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(trace_path(t), dest)


def trace_steps(path, name):
    """The trace as [(seconds, bit/s)], read as hls-origin reads its format (by the collection it is from)."""
    import sim  # Tools/train/sim.py: the trace formats' readers
    base = name[len("extra/"):] if name.startswith("extra/") else name
    if base.startswith("pensieve/"):
        steps = sim.load_pensieve(path)
    elif base.startswith("mahimahi/"):
        steps = sim.load_mahimahi(path)
    else:
        steps = sim.load_sabre(path)
    return [(d, bps) for d, bps, _ in steps]


def link_megabits(steps, seconds):
    """Megabits the link carries in its first `seconds` (from the trace's start, wrapping at its end)."""
    total, t, i = 0.0, 0.0, 0
    if not steps or sum(d for d, _ in steps) <= 0:
        return 0.0
    while t < seconds:
        d, bps = steps[i % len(steps)]
        take = min(d, seconds - t)
        total += take * bps / 1e6
        t += take
        i += 1
    return total


def rung_costs(ladder):
    """[(BANDWIDTH, the media's own rate)] of the rungs, Mbit/s, on their lower convex hull: what playing
    at a ladder-rate X costs the link at least, mixing two rungs (the played bitrate is counted in
    BANDWIDTH, and a rung's segments average less than its BANDWIDTH)."""
    points = []
    for r in ladder.rungs:
        size = sum(ladder.sizes[p] for p, _, _ in r.segments)
        seconds = sum(d for _, _, d in r.segments)
        points.append((r.bandwidth_bps / 1e6, size * 8 / 1e6 / seconds))
    hull = []
    for pt in sorted(points):
        while len(hull) >= 2 and ((hull[-1][0] - hull[-2][0]) * (pt[1] - hull[-2][1])
                                  - (hull[-1][1] - hull[-2][1]) * (pt[0] - hull[-2][0])) <= 0:
            hull.pop()
        hull.append(pt)
    return hull


def cost_of(hull, x):
    """The least media rate (Mbit/s) that plays at ladder-rate x; None above the top rung."""
    if x <= hull[0][0]:
        return hull[0][1] * x / hull[0][0]
    for (x0, c0), (x1, c1) in zip(hull, hull[1:]):
        if x <= x1:
            return c0 + (c1 - c0) * (x - x0) / (x1 - x0)
    return None


def bitrate_target_possible(needed_mbps, link_mbit, played_seconds_min, hull):
    """Whether any player could meet the bitrate target on this link: playing `played_seconds_min` seconds
    (the least the stall and start targets allow) at ladder-rate `needed_mbps` needs at least
    cost × seconds megabits, all of which the link must have carried during the session."""
    cost = cost_of(hull, needed_mbps)
    return cost is not None and cost * played_seconds_min <= link_mbit


def run(spec_path, out, build="release", stale=None):
    """Plays every session of the spec, one at a time in real time, into the results folder `out`.
    `stale` is tools.stale_binaries of hlsplay and hls-origin as the caller found it (evaluate.py's
    check), None to look here."""
    import evaluate  # the virtual mode's manifest helpers
    spec = load_spec(spec_path)
    binary = tools.find_binary("hlsplay", build)
    origin_binary = tools.find_binary("hls-origin", build)
    traces = evaluate.spec_traces(spec)
    evaluate.check_traces_present(traces)
    ladder = evaluate.build_ladder(spec)
    if os.path.isdir(os.path.join(out, "sessions")):
        shutil.rmtree(os.path.join(out, "sessions"))
    os.makedirs(out, exist_ok=True)
    snapshot_ladder(ladder, out)
    snapshot_traces(traces, out, evaluate.trace_path)
    manifest = dict(
        spec=spec, specFile=os.path.relpath(os.path.abspath(spec_path), REPO),
        **tools.repo_state(),
        binaryOlderThanSources=bool(tools.stale_binaries({"hlsplay": binary, "hls-origin": origin_binary})
                                    if stale is None else stale),
        hlsplay=dict(path=binary, sha256=evaluate.sha256(binary), version=tools.hlsplay_version(binary)),
        hlsOrigin=dict(path=origin_binary, sha256=evaluate.sha256(origin_binary)),
        gstPlay=dict(python=peer.python_for_gstreamer(), script=os.path.relpath(peer.GST_PLAY, REPO),
                     sha256=evaluate.sha256(peer.GST_PLAY)),
        ladder=dict(path=ladder, masterSha256=evaluate.sha256(os.path.join(ladder, "master.m3u8")),
                    stamp=evaluate.read_text(os.path.join(ladder, ".stamp"))),
        traceList=traces, traceSha256={t: evaluate.sha256(evaluate.trace_path(t)) for t in traces},
        machine=evaluate.machine(), startedAt=evaluate.utc_now(), loadAverageAtStart=list(os.getloadavg()),
    )
    sessions = []
    total = len(traces) * len(spec["players"]) * spec["reps"]
    print(f"{total} real sessions of {spec['durationSeconds']} s, one at a time -> {out}", file=sys.stderr,
          flush=True)
    for trace in traces:
        oargs = ["--trace", evaluate.trace_path(trace)]
        for rep in range(1, spec["reps"] + 1):
            for player in spec["players"]:
                folder = session_dir(trace, player, rep)
                entry = dict(trace=trace, player=player, rep=rep, folder=folder, originArgs=oargs,
                             startedAt=evaluate.utc_now(), loadAverageAtStart=list(os.getloadavg()))
                started = time.monotonic()
                try:
                    if player == PEER:
                        rec = peer.run_gstreamer(ladder, spec["durationSeconds"], os.path.join(out, folder),
                                                 origin_args=oargs, build=build)
                    else:
                        rec = peer.run_hlsplay_peer(ladder, spec["durationSeconds"], os.path.join(out, folder),
                                                    origin_args=oargs, hlsplay_args=arm_args(spec, player),
                                                    build=build)
                    entry.update(ok=True, endReason=rec.get("endReason"),
                                 playerStartAfterOriginSeconds=rec.get("playerStartAfterOriginSeconds"),
                                 playerLoadSeconds=rec.get("playerLoadSeconds"),
                                 playerVersion=rec.get("playerVersion"), demuxer=rec.get("demuxer"))
                except tools.ToolError as e:
                    entry.update(ok=False, error=str(e))
                entry.update(wallSeconds=round(time.monotonic() - started, 3))
                sessions.append(entry)
                print(f"  {len(sessions)}/{total} {trace} {player}: "
                      f"{'ok' if entry['ok'] else entry['error']}", file=sys.stderr, flush=True)
    manifest.update(endedAt=evaluate.utc_now(), loadAverageAtEnd=list(os.getloadavg()), sessions=sessions)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    return manifest


# ---------------------------------------------------------------- report

def folder_ladder(folder):
    with open(os.path.join(folder, "ladder", "segment-sizes.json")) as f:
        sizes = json.load(f)
    return tools.Ladder(os.path.join(folder, "ladder"), sizes=sizes)


def session_record(folder, entry, ladder, duration):
    """(record, problem) of one session, derived from its raw files."""
    d = os.path.join(folder, entry["folder"])
    origin_log = os.path.join(d, "origin.jsonl")
    if not entry.get("ok") or not os.path.isfile(origin_log):
        return None, entry.get("error") or "no origin log"
    requests = tools.read_jsonl(origin_log)
    if entry["player"] == PEER:
        events = tools.read_jsonl(os.path.join(d, "events.jsonl"))
        rec = peer.gstreamer_record(events, requests, ladder, duration, entry["originArgs"],
                                    entry.get("playerStartAfterOriginSeconds"), entry.get("playerLoadSeconds"))
        if rec["timeToPlayingSeconds"] is None:
            return None, "GStreamer never reached PLAYING"
        return rec, None
    log = os.path.join(d, "session.jsonl")
    events, problem = tools.validate_log(log)
    if problem:
        return None, problem
    rec = peer.hlsplay_record(events[-1], requests, ladder, duration, entry["originArgs"],
                              entry.get("playerStartAfterOriginSeconds"), entry.get("playerVersion"),
                              None, entry.get("endReason"), events)
    if rec["timeToPlayingSeconds"] is None:
        return None, "hlsplay never started playing"
    return rec, None


def figures(rec):
    return dict(bitrateMbps=(rec["playedBitrateBps"] or 0) / 1e6, stallSeconds=float(rec["stallSeconds"] or 0),
                stallCount=int(rec["stallCount"] or 0), timeToPlayingSeconds=rec["timeToPlayingSeconds"],
                timeToFirstFrameSeconds=rec["timeToFirstFrameSeconds"], playedSeconds=rec["playedSeconds"],
                startGate=rec.get("startGate"), linearQoE=rec.get("linearQoE"))


def report_data(folder):
    """Every figure of the real report, from the manifest and the raw files of each session."""
    import stats  # numpy/SciPy: only the report needs them
    with open(os.path.join(folder, "manifest.json")) as f:
        manifest = json.load(f)
    spec = manifest["spec"]
    traces = manifest["traceList"]
    ladder = folder_ladder(folder)
    per, problems = {}, []  # (player, trace) -> figures averaged over reps
    for t in traces:
        for p in spec["players"]:
            reps = []
            for e in (e for e in manifest["sessions"] if e["trace"] == t and e["player"] == p):
                rec, problem = session_record(folder, e, ladder, spec["durationSeconds"])
                if problem:
                    problems.append(f"{e['folder']}: {problem}")
                else:
                    reps.append(figures(rec))
            if reps:
                per[(p, t)] = {k: reps[0][k] if isinstance(reps[0][k], str) or reps[0][k] is None
                               else sum(x[k] for x in reps) / len(reps) if all(x[k] is not None for x in reps)
                               else None for k in reps[0]}
    arms = hlsplay_arms(spec)
    links, problems_links = session_links(folder, manifest, spec["durationSeconds"])
    problems += problems_links
    hull = rung_costs(ladder)
    complete = [t for t in traces if all((p, t) in per for p in spec["players"])
                and all(per[(p, t)][k] is not None for p in spec["players"] for k, *_ in METRICS)]
    load = [e["loadAverageAtStart"][0] for e in manifest["sessions"]]
    gates = {}  # arm -> {gate: sessions}
    for (p, t), v in per.items():
        if p != PEER:
            gates.setdefault(p, {})
            gates[p][v["startGate"] or "unknown"] = gates[p].get(v["startGate"] or "unknown", 0) + 1
    return dict(name=spec["name"], mode="real", traces=traces, complete=complete, players=spec["players"],
                perTrace={f"{p}|{t}": v for (p, t), v in per.items()},
                arms={arm: arm_report(per, complete, arm, arm_args(spec, arm), gates.get(arm, {}), stats,
                                      links, hull, spec["durationSeconds"])
                      for arm in arms},
                linkMeanMbps={t: m / spec["durationSeconds"] for t, m in links.items()},
                armComparisons=arm_comparisons(per, complete, arms, stats),
                problems=problems, durationSeconds=spec["durationSeconds"], reps=spec["reps"],
                offsetSeconds=spec["offsetSeconds"],
                gstreamerVersion=next((e.get("playerVersion") for e in manifest["sessions"]
                                       if e["player"] == PEER and e.get("playerVersion")), None),
                demuxers=sorted({e.get("demuxer") for e in manifest["sessions"]
                                 if e["player"] == PEER and e.get("demuxer")}),
                loadAverage1MinuteAtSessionStart=dict(min=min(load), median=median(load), max=max(load))
                if load else None)


def arm_comparisons(per, complete, arms, stats):
    """Each hlsplay arm after the first (A) against the first (B), paired by trace, on ARM_METRICS. A
    figure one of the two lacks on a trace (no QoE: no chunk played) leaves that trace out of its row."""
    out = []
    for arm in arms[1:]:
        comparisons = {}
        for k, *_ in ARM_METRICS:
            both = [t for t in complete if per[(arm, t)].get(k) is not None and per[(arms[0], t)].get(k) is not None]
            comparisons[k] = stats.paired_comparison([per[(arm, t)][k] for t in both],
                                                     [per[(arms[0], t)][k] for t in both], both)
        out.append(dict(a=arm, b=arms[0], comparisons=comparisons))
    return out


def session_links(folder, manifest, seconds):
    """{trace: megabits its link carried in the session's first `seconds`}, from the trace copies in
    folder/traces (checked against the manifest's sha256); a run without them gives {}."""
    import evaluate
    links, problems = {}, []
    for t in manifest["traceList"]:
        path = os.path.join(folder, "traces", t)
        if not os.path.isfile(path):
            continue
        if evaluate.sha256(path) != manifest["traceSha256"].get(t):
            problems.append(f"traces/{t}: not the trace the run used (sha256 differs from the manifest)")
            continue
        links[t] = link_megabits(trace_steps(path, t), seconds)
    return links, problems


def arm_report(per, complete, arm, args, gates, stats, links, hull, duration):
    """One hlsplay arm against GStreamer: the per-trace targets, their counts and the paired comparisons.
    Where the trace is in the folder, also whether any player could meet the bitrate target at all
    (bitrate_target_possible, with the fewest played seconds the start and stall targets allow)."""
    checks = {}
    for t in complete:
        h, g = per[(arm, t)], per[(PEER, t)]
        ratio = h["bitrateMbps"] / g["bitrateMbps"] if g["bitrateMbps"] > 0 else None
        bitrate_ok = ratio is not None and ratio >= TARGET_BITRATE_RATIO
        stall_ok = h["stallSeconds"] <= g["stallSeconds"] + TARGET_STALL_MARGIN_SECONDS
        played_min = max(0.0, duration - g["timeToPlayingSeconds"] - g["stallSeconds"] - TARGET_STALL_MARGIN_SECONDS)
        possible = None if t not in links else bitrate_target_possible(
            TARGET_BITRATE_RATIO * g["bitrateMbps"], links[t], played_min, hull)
        checks[t] = dict(bitrateRatio=ratio, bitrateMet=bitrate_ok, stallMet=stall_ok,
                         bitrateAndStallMet=bitrate_ok and stall_ok, bitrateTargetPossible=possible,
                         playingMet=h["timeToPlayingSeconds"] <= g["timeToPlayingSeconds"])
    n = len(complete)
    met = sum(1 for c in checks.values() if c["bitrateAndStallMet"])
    targets = dict(
        traces=n, bitrateAndStallMet=met, bitrateMet=sum(1 for c in checks.values() if c["bitrateMet"]),
        stallMet=sum(1 for c in checks.values() if c["stallMet"]),
        playingMet=sum(1 for c in checks.values() if c["playingMet"]),
        bitrateAndStallTargetHolds=n > 0 and met >= TARGET_TRACE_SHARE * n,
        bitrateTargetPossible=sum(1 for c in checks.values() if c["bitrateTargetPossible"]),
        bitrateTargetJudged=sum(1 for c in checks.values() if c["bitrateTargetPossible"] is not None),
        playingTargetHolds=n > 0 and all(c["playingMet"] for c in checks.values()),
    )
    comparisons = {k: stats.paired_comparison([per[(arm, t)][k] for t in complete],
                                              [per[(PEER, t)][k] for t in complete], complete)
                   for k, *_ in METRICS}
    ratios = [c["bitrateRatio"] for c in checks.values() if c["bitrateRatio"] is not None]
    return dict(hlsplayArgs=args, checks=checks, targets=targets, comparisons=comparisons,
                bitrateRatioMedian=median(ratios), startGates=dict(sorted(gates.items())))


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return None if n == 0 else (xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2)


def render(data):
    """The markdown block (deterministic: same raw files, same bytes)."""
    from evaluate import fmt, paired_cells
    n = len(data["complete"])
    arms = data["arms"]
    la = data["loadAverage1MinuteAtSessionStart"]
    players = " and ".join(f"hlsplay `{arm}` (`{' '.join(r['hlsplayArgs']) or '(none)'}`)" if len(arms) > 1
                           else f"hlsplay (`{' '.join(r['hlsplayArgs']) or '(none)'}`)" for arm, r in arms.items())
    out = [f"Spec `{data['name']}`: {n} traces × {players} and "
           f"{data['gstreamerVersion'] or 'GStreamer ?'} (playbin3, {', '.join(data['demuxers']) or '?'}), "
           f"{data['reps']} rep(s), {data['durationSeconds']} s of wall time each, in real time, one session at "
           f"a time, each against its own hls-origin replaying the trace from {data['offsetSeconds']} s. "
           f"Load average (1 min) at the sessions' starts: {fmt(la['min'], 2)} … {fmt(la['max'], 2)} "
           f"(median {fmt(la['median'], 2)})." if la else ""]
    gates = "; ".join(f"{arm}: " * (len(arms) > 1) + ", ".join(f"{k} in {v}" for k, v in r["startGates"].items())
                      for arm, r in arms.items())
    out += ["", f"hlsplay's start (its `cap.gate`: `cold` is without a stored estimate, as GStreamer starts): "
            f"{gates or 'no session'}."]
    if data["problems"]:
        out += ["", f"**{len(data['problems'])} session(s) without figures** (their traces are left out):"]
        out += [f"- `{p}`" for p in data["problems"]]
    for arm, r in arms.items():
        out += render_arm(data, arm, r, n, heading=len(arms) > 1)
    if data["armComparisons"]:
        out += ["", "**hlsplay arms against each other**, paired by trace (as above):", "",
                "| A | B | figure | mean A | mean B | mean A − B | 95 % CI | A above/below/equal | Wilcoxon p | "
                "sign p |", "| --- | --- | --- | ---: | ---: | ---: | --- | --- | ---: | ---: |"]
        for ac in data["armComparisons"]:
            for key, heading, unit, digits in ARM_METRICS:
                out.append(f"| {ac['a']} | {ac['b']} | {heading} ({unit}) | "
                           f"{paired_cells(ac['comparisons'][key], digits)}")
    return "\n".join(out) + "\n"


def render_arm(data, arm, r, n, heading):
    """One hlsplay arm against GStreamer: the per-trace table, the targets and the paired comparisons."""
    from evaluate import fmt, paired_cells, short_trace
    per = data["perTrace"]
    name = f"hlsplay `{arm}`" if heading else "hlsplay"
    out = ["", f"#### {name} against GStreamer"] if heading else []
    out += ["", f"Per trace, {name} | GStreamer: time to first frame and to playing (s), played bitrate "
            "(Mbit/s, from each origin's request log), its ratio, stalls (count / s), and the targets met "
            f"(B: bitrate ≥ {TARGET_BITRATE_RATIO}× and stall time ≤ GStreamer's + {TARGET_STALL_MARGIN_SECONDS} s; "
            "P: time to playing ≤ GStreamer's).", "",
            "| trace | first frame | playing | played Mbit/s | ratio | link Mbit/s | stalls | B | P |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | :---: | :---: |"]
    links = data.get("linkMeanMbps", {})
    for t in data["traces"]:
        h, g = per.get(f"{arm}|{t}"), per.get(f"{PEER}|{t}")
        if t not in r["checks"]:
            out.append(f"| {short_trace(t)} | — | — | — | — | — | — | — | — |")
            continue
        c = r["checks"][t]
        b = "✓" if c["bitrateAndStallMet"] else "✗†" if c["bitrateTargetPossible"] is False else "✗"
        out.append(f"| {short_trace(t)} | {fmt(h['timeToFirstFrameSeconds'], 2)} \\| "
                   f"{fmt(g['timeToFirstFrameSeconds'], 2)} | {fmt(h['timeToPlayingSeconds'], 2)} \\| "
                   f"{fmt(g['timeToPlayingSeconds'], 2)} | {fmt(h['bitrateMbps'], 2)} \\| {fmt(g['bitrateMbps'], 2)} | "
                   f"{fmt(c['bitrateRatio'], 2)} | {fmt(links.get(t), 2)} | "
                   f"{h['stallCount']:.0f} / {fmt(h['stallSeconds'], 1)} \\| "
                   f"{g['stallCount']:.0f} / {fmt(g['stallSeconds'], 1)} | {b} | {'✓' if c['playingMet'] else '✗'} |")
    tg = r["targets"]
    need = TARGET_TRACE_SHARE * n
    out += ["", f"**Against the issue's real-run targets**: bitrate ≥ {TARGET_BITRATE_RATIO}× GStreamer's with stall "
            f"time ≤ GStreamer's + {TARGET_STALL_MARGIN_SECONDS} s on {tg['bitrateAndStallMet']} of {n} traces "
            f"(needed: ≥ {need:g}; **{'holds' if tg['bitrateAndStallTargetHolds'] else 'does not hold'}**; bitrate "
            f"alone on {tg['bitrateMet']}, stall alone on {tg['stallMet']}; median ratio "
            f"{fmt(r['bitrateRatioMedian'], 2)}); time to playing ≤ GStreamer's on {tg['playingMet']} of {n} "
            f"(needed: all; **{'holds' if tg['playingTargetHolds'] else 'does not hold'}**)."
            + (f" † No player could meet the bitrate target on {tg['bitrateTargetJudged'] - tg['bitrateTargetPossible']} "
               f"of the {tg['bitrateTargetJudged']} traces whose link is in the folder: playing "
               f"{TARGET_BITRATE_RATIO}× GStreamer's bitrate for the least time the start and stall targets allow "
               f"(the session less GStreamer's time to playing, its stall time and {TARGET_STALL_MARGIN_SECONDS} s) "
               "needs more megabits, at the rungs' own media rates, than the link carried in the whole session "
               "(link: its mean rate over the session)." if tg["bitrateTargetJudged"] else ""),
            "", f"**Paired comparisons**, {name} (A) against GStreamer (B), paired by trace: mean A − B, its 95 % "
            "bootstrap CI (BCa, 9 999 resamples, seed 17), traces with A above / below / equal, Wilcoxon "
            "signed-rank and sign test p (two-sided; Tools/train/stats.py).", "",
            "| figure | mean A | mean B | mean A − B | 95 % CI | A above/below/equal | Wilcoxon p | sign p |",
            "| --- | ---: | ---: | ---: | --- | --- | ---: | ---: |"]
    for key, heading_, unit, digits in METRICS:
        out.append(f"| {heading_} ({unit}) | {paired_cells(r['comparisons'][key], digits)}")
    return out
