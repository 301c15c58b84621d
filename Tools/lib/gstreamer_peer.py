"""GStreamer (playbin3 with adaptivedemux2's hlsdemux2) as a peer player in real-time runs, and
hlsplay beside it on the same ladder and link (docs/abr.md, "GStreamer as a peer").

    import sys, os
    sys.path.insert(0, os.path.join(REPO, "Tools", "lib"))
    import gstreamer_peer as peer

    g = peer.run_gstreamer("Samples/build/ladder-2s", 10, "/tmp/g", origin_args=["--trace", TRACE])
    h = peer.run_hlsplay_peer("Samples/build/ladder-2s", 10, "/tmp/h", origin_args=["--trace", TRACE])
    print(peer.comparison_line(h, g))

Each run starts its own hls-origin (hlsplay_tools.Origin) with the shaping given, so each player meets
the trace from its start, and writes into its folder: `origin.jsonl` (the origin's request log),
`events.jsonl` (GStreamer: every event gst_play.py printed; hlsplay: its session log `session.jsonl`)
and `record.json`, the run's one record (RECORD_FIELDS). The record is derived from those raw files
by `gstreamer_record` / `hlsplay_record`, which can be run again on them.

GStreamer is driven from Debian's python3 with python3-gi (Tools/install-deps.sh installs both and
the gstreamer1.0 packages) in a process of its own, Tools/lib/gst_play.py.
"""
import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hlsplay_tools as tools  # noqa: E402

GST_PLAY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gst_play.py")
# The interpreter python3-gi is installed for (Debian's); another python3 on PATH may lack it.
DEBIAN_PYTHON = "/usr/bin/python3"
# How long gst_play.py may take to load GStreamer and build its pipeline (a cold plugin registry
# on a loaded 2-core machine has taken over a minute).
GST_READY_TIMEOUT_SECONDS = 180
# After the run's duration, how long the GStreamer process has to print its end and tear down.
GST_END_GRACE_SECONDS = 30
# The demuxer element the peer is meant to run: adaptivedemux2's HLS demuxer (rank primary + 1 in
# GStreamer 1.22, so playbin3 picks it over the older hlsdemux of gst-plugins-bad).
EXPECTED_DEMUXER = "hlsdemux2"
# The demuxer elements playbin3 may create for HLS: the record names the one it did.
HLS_DEMUXERS = ("hlsdemux2", "hlsdemux")

# Every record has these fields (None when not reached or not known); docs/abr.md describes each.
RECORD_FIELDS = (
    "player", "playerVersion", "demuxer", "durationSeconds", "wallSeconds", "endReason",
    "timeToFirstFrameSeconds", "timeToPlayingSeconds", "stallCount", "stallSeconds", "stalls",
    "playedSeconds", "renderedVideoFrames", "frameGapCount", "frameGapSeconds",
    "playedBitrateBps", "playedSecondsByRung", "playedSecondsNotFetched", "playedSwitches",
    "fetchedBitrateBps", "fetchedSegments", "incompleteSegmentFetches", "firstRungIndex",
    "originRequests", "originArgs", "playerStartAfterOriginSeconds", "playerLoadSeconds", "errors",
)


def python_for_gstreamer():
    """Debian's python3 when it is there (python3-gi's), else this one."""
    return DEBIAN_PYTHON if os.access(DEBIAN_PYTHON, os.X_OK) else sys.executable


# ---------------------------------------------------------------- records from raw files

def stalls_from_events(events, end_seconds):
    """The stalls of a GStreamer run: from the first time the pipeline reached PLAYING on, a buffering
    message below 100 % starts a stall and the next at 100 % ends it; one still open at the end lasts
    to end_seconds (`open`: true). The buffering before the first PLAYING is the start, not a stall."""
    stalls, started, current = [], False, None
    for e in events:
        if e["type"] == "state" and e.get("new") == "PLAYING":
            started = True
        elif e["type"] == "buffering" and started:
            if e["percent"] < 100 and current is None:
                current = {"startSeconds": e["t"]}
            elif e["percent"] >= 100 and current is not None:
                current["endSeconds"] = e["t"]
                current["durationSeconds"] = round(e["t"] - current["startSeconds"], 6)
                stalls.append(current)
                current = None
    if current is not None:
        current.update(endSeconds=end_seconds, durationSeconds=round(end_seconds - current["startSeconds"], 6),
                       open=True)
        stalls.append(current)
    return stalls


def bitrate_fields(ladder, requests, played_to_seconds, played_from_seconds=0.0):
    """The record's fields read from the origin's request log: the rungs fetched and played."""
    fetched = ladder.fetched_segments(requests)
    complete = [f for f in fetched if f["complete"]]
    played_bps, by_rung, missing = (None, {}, None) if played_to_seconds is None else \
        tools.played_rungs(fetched, played_from_seconds, played_to_seconds)
    # The rung of each media segment played, in media order: its changes are the switches seen.
    last = {}
    for f in complete:
        last[f["segmentIndex"]] = f
    order = [last[n]["rungIndex"] for n in sorted(last)
             if played_to_seconds is not None and last[n]["startSeconds"] < played_to_seconds
             and last[n]["startSeconds"] + last[n]["durationSeconds"] > played_from_seconds]
    return {
        "playedBitrateBps": round(played_bps) if played_bps is not None else None,
        "playedSecondsByRung": {str(k): round(v, 6) for k, v in sorted(by_rung.items())},
        "playedSecondsNotFetched": round(missing, 6) if missing is not None else None,
        "playedSwitches": sum(1 for a, b in zip(order, order[1:]) if a != b),
        "fetchedBitrateBps": round(b) if (b := tools.fetched_bitrate_bps(fetched)) is not None else None,
        "fetchedSegments": len(complete),
        "incompleteSegmentFetches": len(fetched) - len(complete),
        "firstRungIndex": fetched[0]["rungIndex"] if fetched else None,
        "originRequests": sum(1 for r in requests if r.get("type") != "connection"),
    }


def gstreamer_record(events, requests, ladder, duration_seconds, origin_args=(), start_offset_seconds=None,
                     load_seconds=None):
    """The record of a GStreamer run from its event list (gst_play.py's lines) and the origin's log."""
    end = next((e for e in events if e["type"] == "end"), None)
    end_t = end["t"] if end else max((e.get("t", 0) for e in events), default=0.0)
    factories = [e["factory"] for e in events if e["type"] == "element"]
    first = lambda type_, **kw: next((e for e in events if e["type"] == type_ and  # noqa: E731
                                      all(e.get(k) == v for k, v in kw.items())), None)
    preroll, rendered, playing = first("frame.preroll"), first("frame.first"), first("state", new="PLAYING")
    frame = preroll or rendered
    stalls = stalls_from_events(events, end_t)
    gaps = [e for e in events if e["type"] == "frame.gap"]
    played = end.get("positionSeconds") if end else None
    rec = {
        "player": "gstreamer",
        "playerVersion": end.get("gstreamerVersion") if end else
        next((e.get("gstreamerVersion") for e in events if e["type"] == "ready"), None),
        "demuxer": next((f for f in factories if f in HLS_DEMUXERS), None),
        "durationSeconds": duration_seconds,
        "wallSeconds": end_t,
        "endReason": end.get("reason") if end else "killed",
        "timeToFirstFrameSeconds": frame["t"] if frame else None,
        "timeToPlayingSeconds": playing["t"] if playing else None,
        "stallCount": len(stalls),
        "stallSeconds": round(sum(s["durationSeconds"] for s in stalls), 6),
        "stalls": stalls,
        "playedSeconds": played,
        "renderedVideoFrames": end.get("renderedVideoFrames") if end else None,
        "frameGapCount": len(gaps),
        "frameGapSeconds": round(sum(g["gapSeconds"] for g in gaps), 6),
        "originArgs": list(origin_args),
        "playerStartAfterOriginSeconds": start_offset_seconds,
        "playerLoadSeconds": load_seconds,
        "errors": [{"type": e["type"], "message": e.get("message"), "source": e.get("source")}
                   for e in events if e["type"] in ("error", "fatal")],
    }
    rec.update(bitrate_fields(ladder, requests, played))
    return {k: rec.get(k) for k in RECORD_FIELDS}


def hlsplay_stalls(session_events):
    """hlsplay's stalls from its session log, as GStreamer's are listed: each `stall.start`'s `atSeconds`
    to its `stall.end`'s (a session that ended mid-stall writes the stall.end then)."""
    stalls, current = [], None
    for e in session_events:
        if e.get("type") == "stall.start":
            current = {"startSeconds": e.get("atSeconds", e.get("t"))}
        elif e.get("type") == "stall.end" and current is not None:
            end = e.get("atSeconds", e.get("t"))
            current.update(endSeconds=end, durationSeconds=e.get("stallSeconds", round(end - current["startSeconds"], 6)))
            stalls.append(current)
            current = None
    return stalls


def hlsplay_record(summary, requests, ladder, duration_seconds, origin_args=(), start_offset_seconds=None,
                   version=None, wall_seconds=None, end_reason=None, session_events=()):
    """hlsplay's record in the same fields, from its summary and the origin's log of its run: time to
    playing is its timeToPlaybackStartSeconds, and the bitrate is read from the origin's log exactly as
    GStreamer's is (its own averageBitrateBps is kept beside it as summaryAverageBitrateBps). Beyond
    RECORD_FIELDS it also keeps what only hlsplay records: startGate and its summary's linearQoE."""
    s = summary or {}
    played = s.get("playedSeconds")
    rec = {
        "player": "hlsplay", "playerVersion": version, "demuxer": None, "durationSeconds": duration_seconds,
        "wallSeconds": s.get("sessionSeconds", wall_seconds), "endReason": end_reason if summary else "killed",
        "timeToFirstFrameSeconds": s.get("timeToFirstFrameSeconds"),
        "timeToPlayingSeconds": s.get("timeToPlaybackStartSeconds"),
        "stallCount": s.get("stallCount"), "stallSeconds": s.get("stallSeconds"),
        "stalls": hlsplay_stalls(session_events),
        "playedSeconds": played, "renderedVideoFrames": s.get("decodedVideoFrames"),
        "frameGapCount": None, "frameGapSeconds": None, "originArgs": list(origin_args),
        "playerStartAfterOriginSeconds": start_offset_seconds, "errors": [],
    }
    rec.update(bitrate_fields(ladder, requests, played))
    out = {k: rec.get(k) for k in RECORD_FIELDS}
    out["summaryAverageBitrateBps"] = s.get("averageBitrateBps")
    # Whether the session started from a stored estimate ("warm") or without one ("cold"): its cap.gate.
    out["startGate"] = next((e.get("gate") for e in session_events if e.get("type") == "cap.gate"), None)
    # The summary's linear QoE (docs/session-log.md, `qoe.linearQoE`); GStreamer has no such figure.
    out["linearQoE"] = (s.get("qoe") or {}).get("linearQoE")
    return out


# ---------------------------------------------------------------- runs

def run_gstreamer(root, duration_seconds, out_dir, *, master="master.m3u8", origin_args=(), build="release",
                  max_bitrate_bps=0, media_seconds=0):
    """Plays root/master with GStreamer for duration_seconds of wall time (or until media_seconds of media
    have played, when given) against its own hls-origin (started with origin_args) and returns the
    record (also written to out_dir/record.json)."""
    os.makedirs(out_dir, exist_ok=True)
    ladder = tools.Ladder(root, master)
    events_path, origin_log = os.path.join(out_dir, "events.jsonl"), os.path.join(out_dir, "origin.jsonl")
    cmd = [python_for_gstreamer(), "-B", GST_PLAY, "--duration", str(duration_seconds)] + \
        (["--max-bitrate", str(max_bitrate_bps)] if max_bitrate_bps else []) + \
        (["--media-seconds", str(media_seconds)] if media_seconds else [])
    stderr = open(os.path.join(out_dir, "gstreamer.stderr"), "w")
    launched = time.monotonic()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True)
    lines = []
    try:
        ready = read_line(p, GST_READY_TIMEOUT_SECONDS)
        load = round(time.monotonic() - launched, 6)
        if not ready.startswith("{") or json.loads(ready).get("type") != "ready":
            tools.stop_process(p)
            raise tools.ToolError(f"GStreamer did not start ({' '.join(cmd)}): {ready.strip()[:300]!r}; "
                                  f"see {stderr.name}; run Tools/install-deps.sh")
        lines.append(ready)
        with tools.Origin(root, origin_args, log=origin_log, build=build) as origin:
            p.stdin.write(origin.url(master) + "\n")
            p.stdin.flush()
            offset = round(time.monotonic() - origin_monotonic(origin), 6)
            try:
                out, _ = p.communicate(timeout=duration_seconds + GST_END_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                p.kill()
                out, _ = p.communicate()
            lines += out.splitlines(keepends=True)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        stderr.close()
    with open(events_path, "w") as f:
        f.writelines(l if l.endswith("\n") else l + "\n" for l in lines if l.strip())
    events = tools.json_lines("".join(lines))
    rec = gstreamer_record(events, tools.read_jsonl(origin_log), ladder, duration_seconds, origin_args, offset,
                           load)
    write_json(os.path.join(out_dir, "record.json"), rec)
    return rec


def run_hlsplay_peer(root, duration_seconds, out_dir, *, master="master.m3u8", origin_args=(), hlsplay_args=(),
                     build="release", media_seconds=0):
    """Plays root/master with hlsplay for duration_seconds of wall time (then SIGINT: it writes its summary),
    or until media_seconds of media have played (its --duration), against its own hls-origin started with
    origin_args; its record, also in out_dir/record.json.

    Unless hlsplay_args say otherwise (`--cold` or `--estimate-store`), the session gets its own estimate
    store, out_dir/estimates.json, which does not exist before it starts: a cold start, as GStreamer's is
    (neither player remembers an earlier session). Without it every session on 127.0.0.1 would start from
    the estimate the previous session stored in the user's store: a different trace's link."""
    os.makedirs(out_dir, exist_ok=True)
    hlsplay_args = list(hlsplay_args)
    if not any(a in ("--cold", "--estimate-store") or a.startswith("--estimate-store=") for a in hlsplay_args):
        store = os.path.join(out_dir, "estimates.json")
        if os.path.exists(store):
            os.remove(store)
        hlsplay_args += ["--estimate-store", store]
    ladder = tools.Ladder(root, master)
    log, origin_log = os.path.join(out_dir, "session.jsonl"), os.path.join(out_dir, "origin.jsonl")
    binary = tools.find_binary("hlsplay", build)
    with tools.Origin(root, origin_args, log=origin_log, build=build) as origin:
        offset = round(time.monotonic() - origin_monotonic(origin), 6)
        args = list(hlsplay_args) + (["--duration", str(media_seconds)] if media_seconds else [])
        run = tools.run_hlsplay(origin.url(master), args, log=log, timeout=duration_seconds,
                                binary=binary)
    # As GStreamer's: stopped at the wall-time bound, at --duration's media, at the end, or by an error.
    reason = "duration" if run.timed_out else ("error" if run.status != 0 else "media" if media_seconds else "eos")
    rec = hlsplay_record(run.summary, tools.read_jsonl(origin_log), ladder, duration_seconds, origin_args, offset,
                         tools.hlsplay_version(binary), run.wall_seconds, reason, run.events)
    write_json(os.path.join(out_dir, "record.json"), rec)
    return rec


def origin_monotonic(origin):
    """When the origin was started, on time.monotonic() (Origin keeps time.time())."""
    return time.monotonic() - (time.time() - origin.started_wall)


def read_line(p, timeout_seconds):
    """One line of p's stdout, "" if none came within timeout_seconds (p is then killed)."""
    timer = threading.Timer(timeout_seconds, lambda: p.poll() is None and p.kill())
    timer.start()
    try:
        return p.stdout.readline()
    finally:
        timer.cancel()


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


# ---------------------------------------------------------------- side by side

def fmt(v, unit="", scale=1.0, digits=2):
    return "—" if v is None else f"{v / scale:.{digits}f}{unit}"


def comparison_line(h, g):
    """One line: hlsplay's and GStreamer's figures side by side (`hlsplay | gstreamer`)."""
    def pair(key, unit="s", scale=1.0, digits=2):
        return f"{fmt(h.get(key), unit, scale, digits)} | {fmt(g.get(key), unit, scale, digits)}"
    ratio = (h["playedBitrateBps"] / g["playedBitrateBps"]) if h.get("playedBitrateBps") and \
        g.get("playedBitrateBps") else None
    return (f"first frame {pair('timeToFirstFrameSeconds')}; playing {pair('timeToPlayingSeconds')}; "
            f"played bitrate {pair('playedBitrateBps', ' kbit/s', 1000, 0)} (×{fmt(ratio)}); "
            f"fetched {pair('fetchedBitrateBps', ' kbit/s', 1000, 0)}; "
            f"stalls {h.get('stallCount')}/{fmt(h.get('stallSeconds'))} | "
            f"{g.get('stallCount')}/{fmt(g.get('stallSeconds'))} (count/s); "
            f"played {pair('playedSeconds')}")
