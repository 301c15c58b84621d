#!/usr/bin/env python3
"""Startup / recovery characterization grid for hlsplay (issue 4).

Drives the release binaries (hlsplay, hls-origin) sequentially on loopback and
prints Markdown reports (also written to OUT/report.md):

  grid        start kind {cold, warm, channel-change} x link rate x segment
              duration x --startup-cap policy x repetitions: per cell median /
              p90 / max time to first frame, coefficient of variation, hard
              wedges (TTFF > 10 s), stalls, first rung fetched and the
              over-selection ratio of that first fetch, TTFF / startup floor;
              and the startup floor per (rate, segment, RTT) from the protocol;
  overselect  a stale 50 Mbit/s warm estimate on a 2 Mbit/s link;
  recovery    link collapse and one black-holed mid-stream segment (VOD);
  faults      the fault report: black-holed *first* segment, link collapse
              mid-play, live segment roll-off (hls-origin --live, the link
              collapsing for longer than the live window) — time from the
              fault's end to playback resumed, with stalls, wedges, re-requests,
              resyncs and escalations counted from the session log.

Sharding: `--shard i/N` runs only shard i of a deterministic partition of the
whole plan (every cell x repetition and every scenario x repetition; the
partition depends on the spec alone, not on the machine). Each output directory
holds shard.json (spec, shard, units run; the commit, whether the tree was clean,
each binary's sha256, the host, the load average and UTC time at start and end),
sessions.jsonl (raw records) and logs/. `grid.py merge DIR1 DIR2 ... --out DIR` checks that the shards are of one
spec, complete, none missing or given twice, and writes the same report an
unsharded run writes. `--list` prints the plan and the shard's share.

Run through Tools/characterize/grid.sh (it builds the binaries and the samples first).
"""
import argparse, hashlib, importlib, json, os, shutil, socket, statistics, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import hlsplay_tools  # noqa: E402
import distribute  # noqa: E402
from hlsplay_tools import read_jsonl  # noqa: E402,F401  (grid.read_jsonl: the tests read the merged records)

ROOT = hlsplay_tools.REPO
HARD_WEDGE_S = 10.0
# Bump when the plan, the partition or the meaning of a spec key changes:
# shards of different versions never merge.
SPEC_VERSION = 2
SECTIONS = ("grid", "overselect", "recovery", "faults")
SHARD_SCHEMA = "hlsplay.grid-shard"

# Recovery scenarios (VOD, cold start): link collapses (server clock AT:DUR)
# and one mid-stream segment black-holed once.
RECOVERY_SCENARIOS = (
    {"fault": "collapse", "seg": 6, "rate": "2mbit", "at": 8, "dur": 12},
    {"fault": "collapse", "seg": 2, "rate": "2mbit", "at": 6, "dur": 8},
    {"fault": "collapse", "seg": 6, "rate": "6mbit", "at": 8, "dur": 12},
    {"fault": "black-hole", "seg": 6, "rate": "2mbit", "segment": 3},
    {"fault": "black-hole", "seg": 2, "rate": "2mbit", "segment": 6},
    {"fault": "black-hole", "seg": 6, "rate": "6mbit", "segment": 3},
)
# The fault report (issue 4): black-holed first segment; link collapse mid-play;
# live roll-off — a live stream (window W segments) whose link collapses for
# longer than the window, so the next segment has left the playlist (and
# answers 404) when the link comes back.
FAULT_SCENARIOS = (
    {"fault": "black-hole-first", "seg": 2, "rate": "2mbit"},
    {"fault": "black-hole-first", "seg": 6, "rate": "2mbit"},
    {"fault": "black-hole-first", "seg": 2, "rate": "6mbit"},
    {"fault": "black-hole-first", "seg": 6, "rate": "6mbit"},
    {"fault": "collapse", "seg": 2, "rate": "2mbit", "at": 6, "dur": 8},
    {"fault": "collapse", "seg": 6, "rate": "2mbit", "at": 8, "dur": 12},
    {"fault": "collapse", "seg": 2, "rate": "6mbit", "at": 6, "dur": 8},
    {"fault": "collapse", "seg": 6, "rate": "6mbit", "at": 8, "dur": 12},
    {"fault": "live-rolloff", "seg": 2, "rate": "2mbit", "window": 3, "at": 8, "dur": 10},
    {"fault": "live-rolloff", "seg": 6, "rate": "6mbit", "window": 3, "at": 10, "dur": 24},
)
FAULT_TARGET_SEGMENTS = 2.0  # recovery targets of issue 4, in segment durations


# ---------------------------------------------------------------- helpers

def pctl(xs, q):
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    s = sorted(xs)
    k = max(0, min(len(s) - 1, int(-(-q * len(s) // 100)) - 1))
    return s[k]


def cv(xs):
    """Coefficient of variation (population stdev / mean) of >= 2 values, else None."""
    if len(xs) < 2:
        return None
    m = statistics.mean(xs)
    return statistics.pstdev(xs) / m if m else None


def fmt(x, nd=2):
    if x is None:
        return "—"
    if isinstance(x, float):
        return f"{x:.{nd}f}"
    return str(x)


def parse_rate(r):
    r = r.lower()
    for suf, mul in (("mbit", 1e6), ("kbit", 1e3)):
        if r.endswith(suf):
            return float(r[: -len(suf)]) * mul
    return float(r)


def parse_secs(s):
    s = s.lower()
    if s.endswith("ms"):
        return float(s[:-2]) / 1000
    if s.endswith("s"):
        return float(s[:-1])
    return float(s)


def read_text(path):
    with open(path) as f:
        return f.read()


def read_json(path):
    with open(path) as f:
        return json.load(f)


def write_text(path, text):
    with open(path, "w") as f:
        f.write(text)


def dump_json(doc, path):
    with open(path, "w") as f:
        json.dump(doc, f)


class GridError(Exception):
    """A usage or consistency error with a message for the user."""


# ---------------------------------------------------------------- ladders

def ladder_name(spec, seg):
    return f"{spec['ladder']}-{seg}s"


def ladder_meta(folder):
    """What the report needs of a sample ladder, read from disk once at run
    time and kept in shard.json, so that a merge needs no samples: variant
    bandwidths, playlist and first-segment sizes, segment duration, .stamp."""
    lines = read_text(os.path.join(folder, "master.m3u8")).splitlines()
    meta = {"name": os.path.basename(folder.rstrip("/")), "bandwidths": [], "playlistBytes": [],
            "firstSegmentBytes": [], "segDuration": None,
            "masterBytes": os.path.getsize(os.path.join(folder, "master.m3u8"))}
    stamp = os.path.join(folder, ".stamp")
    meta["stamp"] = read_text(stamp).strip() if os.path.exists(stamp) else None
    for i, line in enumerate(lines):
        if not line.startswith("#EXT-X-STREAM-INF"):
            continue
        meta["bandwidths"].append(int(line.split("BANDWIDTH=")[1].split(",")[0]))
        p = os.path.join(folder, lines[i + 1].strip())
        meta["playlistBytes"].append(os.path.getsize(p))
        first = None
        for pl in read_text(p).splitlines():
            if pl.startswith("#EXTINF") and meta["segDuration"] is None:
                meta["segDuration"] = float(pl.split(":")[1].split(",")[0])
            if pl and not pl.startswith("#") and first is None:
                first = os.path.join(os.path.dirname(p), pl)
        meta["firstSegmentBytes"].append(os.path.getsize(first))
    return meta


def floor_seconds(meta, v, rate_bps, rtt_s, decode_s):
    """Protocol startup floor for variant v: one RTT each for the multivariant
    playlist, the media playlist and the first segment (the origin delays every
    response's first byte by the RTT; loopback has no handshake to charge), the
    bytes of all three at the link rate, plus first demux+decode."""
    nbytes = meta["masterBytes"] + meta["playlistBytes"][v] + meta["firstSegmentBytes"][v]
    return 3 * rtt_s + nbytes * 8 / rate_bps + decode_s


# ---------------------------------------------------------------- spec, plan, shards

def make_spec(opts, ladders, player):
    """Everything that defines the experiment (and nothing about where it runs).
    `ladders`: {name: meta} of the ladders used; their .stamp is part of the spec."""
    return {
        "version": SPEC_VERSION,
        "only": [s for s in SECTIONS if s in opts["only"]],
        "rates": list(opts["rates"]), "segments": list(opts["segments"]),
        "policies": list(opts["policies"]), "kinds": list(opts["kinds"]),
        "reps": opts["reps"], "duration": opts["duration"],
        "scenarioDuration": opts["scenario_duration"], "scenarioReps": opts["scenario_reps"],
        "rtt": opts["rtt"], "timeout": opts["timeout"], "ladder": opts["ladder"],
        "scenarios": list(opts.get("scenarios") or []),
        "ladderStamps": {k: ladders[k].get("stamp") for k in sorted(ladders)},
        "player": player,
    }


def spec_hash(spec):
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


def scenario_name(sc):
    n = f"{sc['fault']}-{sc['seg']}s-{sc['rate']}"
    if "window" in sc:
        n += f"-w{sc['window']}"
    if "at" in sc:
        n += f"-{sc['at']}+{sc['dur']}"
    if "segment" in sc:
        n += f"-seg{sc['segment']}"
    return n


def scenarios_of(spec, scenarios):
    """The recovery / fault scenarios the spec selects (`--scenarios`: name substrings; none = all)."""
    want = spec.get("scenarios") or []
    return [sc for sc in scenarios if not want or any(w in scenario_name(sc) for w in want)]


def ladders_needed(spec):
    segs = set()
    if "grid" in spec["only"]:
        segs |= set(spec["segments"])
    if "overselect" in spec["only"]:
        segs.add(6)
    if "recovery" in spec["only"]:
        segs |= {sc["seg"] for sc in scenarios_of(spec, RECOVERY_SCENARIOS)}
    if "faults" in spec["only"]:
        segs |= {sc["seg"] for sc in scenarios_of(spec, FAULT_SCENARIOS)}
    return sorted(segs)


def plan(spec):
    """The whole experiment as an ordered list of units. A unit runs as a whole
    on one machine: a grid unit is one (rate, segment, policy, repetition) with
    all its start kinds, because the warm session starts from the store the
    cold session of the same repetition wrote. `key` is unique and stable;
    `est` is a rough cost in seconds used only to balance shards."""
    units = []
    if "grid" in spec["only"]:
        nsess = len(spec["kinds"]) + (1 if "channel-change" in spec["kinds"] else 0)
        for rate in spec["rates"]:
            for seg in spec["segments"]:
                for rep in range(spec["reps"]):
                    for pol in spec["policies"]:
                        est = nsess * (spec["duration"] + 1.5 + seg * 2e6 / parse_rate(rate))
                        units.append({"key": f"grid/{rate}/{seg}s/{pol}/r{rep}", "section": "grid",
                                      "rate": rate, "seg": seg, "policy": pol, "rep": rep, "est": est})
    if "overselect" in spec["only"]:
        for pol in ("auto", "off", "first-variant"):
            for rep in range(spec["reps"] if pol == "auto" else spec["scenarioReps"]):
                units.append({"key": f"overselect/{pol}/r{rep}", "section": "overselect", "policy": pol,
                              "rep": rep, "est": spec["scenarioDuration"] + 10.0})
    for section, scenarios in (("recovery", RECOVERY_SCENARIOS), ("faults", FAULT_SCENARIOS)):
        if section not in spec["only"]:
            continue
        for sc in scenarios_of(spec, scenarios):
            for rep in range(spec["scenarioReps"]):
                units.append({"key": f"{section}/{scenario_name(sc)}/r{rep}", "section": section,
                              "scenario": dict(sc), "rep": rep,
                              "est": spec["scenarioDuration"] + 5.0 + sc.get("dur", 0)})
    return units


def parse_shard(text):
    """'i/N' (1-based) -> (i, N)."""
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise GridError(f"--shard {text!r}: expected i/N, e.g. 2/4")
    if n < 1 or not 1 <= i <= n:
        raise GridError(f"--shard {text!r}: need 1 <= i <= N")
    return i, n


def partition(units, n):
    """Deterministic partition of the plan into n shards (lists of keys, each in
    plan order): longest estimated unit first to the least loaded shard, ties
    by plan order and shard number. Depends on the plan alone."""
    order = sorted(range(len(units)), key=lambda k: (-units[k]["est"], k))
    load = [0.0] * n
    member = [[] for _ in range(n)]
    for k in order:
        s = min(range(n), key=lambda j: (load[j], j))
        load[s] += units[k]["est"]
        member[s].append(k)
    return [[units[k]["key"] for k in sorted(m)] for m in member]


def shard_units(spec, i, n):
    units = plan(spec)
    keys = set(partition(units, n)[i - 1])
    return [u for u in units if u["key"] in keys]


# ---------------------------------------------------------------- processes

def Origin(bin_path, root, args, log):
    """hls-origin serving root with args, its request log at log (started; .base, .stop())."""
    return hlsplay_tools.Origin(root, args, log=log, binary=bin_path)


def run_player(bin_path, url, log, extra, timeout):
    """(summaries printed, exit status or "timeout", wall seconds); killed at the timeout."""
    run = hlsplay_tools.run_hlsplay(url, extra, log=log, timeout=timeout, on_timeout="kill", binary=bin_path)
    run_player.last_load = run.started_load1
    return run.summaries, "timeout" if run.timed_out else run.status, run.wall_seconds


player_version = hlsplay_tools.hlsplay_version


# ---------------------------------------------------------------- what a session log says

def first_variant(log_events):
    """Variant of the first segment request, and of the first decoded frame."""
    req = next((e.get("variantIndex") for e in log_events
                if e.get("type") == "request.start" and e.get("purpose") == "segment"), None)
    ff = next((e.get("variantIndex") for e in log_events if e.get("type") == "frame.first"), None)
    return req, ff


def first_fetch_over_selection(log_events):
    """Over-selection ratio (rung bitrate / measured throughput) of the first
    segment fetch: its sample verdict, else its first byte-progress check."""
    first = next((e for e in log_events if e.get("type") == "request.start" and e.get("purpose") == "segment"), None)
    if not first:
        return None
    rid = first.get("requestID")
    for e in log_events:
        if e.get("requestID") != rid:
            continue
        if e.get("type") == "sample.verdict" and e.get("overSelectionRatio") is not None:
            return e["overSelectionRatio"]
        if e.get("type") == "request.byteProgress":
            r = (e.get("assessment") or {}).get("overSelectionRatio")
            if r is not None:
                return r
    return None


def session_record(summary, log_path, meta, rate_bps, rtt_s):
    ev = read_jsonl(log_path)
    req_v, ff_v = first_variant(ev)
    st = summary.get("startup") or {}
    dec = (st.get("demuxSeconds") or 0) + (st.get("firstFrameDecodeSeconds") or 0)
    ttff = summary.get("timeToFirstFrameSeconds")
    v = ff_v if ff_v is not None else req_v
    fl_chosen = floor_seconds(meta, v, rate_bps, rtt_s, dec) if v is not None else None
    fl_low = floor_seconds(meta, 0, rate_bps, rtt_s, dec)
    return {
        "ttff": ttff, "stalls": summary.get("stallCount"), "stallSeconds": summary.get("stallSeconds"),
        "avgBitrate": summary.get("averageBitrateBps"), "gate": summary.get("startupGate"),
        "overSelections": summary.get("overSelections"), "wedges": summary.get("wedgesDetected"),
        "capChanges": summary.get("capChanges"), "exit": summary.get("exitReason"),
        "firstRequestVariant": req_v, "firstFrameVariant": ff_v, "decodeSeconds": dec,
        "firstFetchOverSelection": first_fetch_over_selection(ev),
        "floorChosen": fl_chosen, "floorLowest": fl_low,
        "ratioChosen": ttff / fl_chosen if ttff and fl_chosen else None,
        "ratioLowest": ttff / fl_low if ttff else None,
        "sessionSeconds": summary.get("sessionSeconds"), "played": summary.get("playedSeconds"),
        "log": log_path,
    }


def stall_intervals(ev):
    """[start, end] of each stall on the player clock; end None when the stall
    never really ended (the log closes a stall the session ended in, so a stall
    counts as ended only if playback went on after it)."""
    out = []
    for i, e in enumerate(ev):
        if e.get("type") == "stall.start":
            out.append([e.get("atSeconds", e.get("t")), None, i])
        elif e.get("type") == "stall.end" and out and out[-1][1] is None:
            later = ev[i + 1:]
            went_on = any((x.get("type") == "buffer.sample" and x.get("phase") == "playing")
                          or x.get("type") in ("playback.ended", "stall.start") for x in later)
            summ = next((x for x in later if x.get("type") == "summary"), None)
            if not went_on and summ and summ.get("exitReason") in ("durationReached", "completed") \
                    and not any(x.get("type") == "error" and x.get("fatal") for x in later):
                went_on = True  # reached --duration right at the end of the stall
            out[-1][1] = e.get("atSeconds", e.get("t")) if went_on else None
            out[-1][2] = "closed"
    return [[s, e] for s, e, _ in out]


def _text(e):
    return json.dumps(e, sort_keys=True).lower()


def live_step(e):
    """What one `live.*` event says: "resync", "restart" or "give-up" (a
    decision), "seeked" / "resolved" (performed / over), or None. Reads
    `action` (LiveResyncLog) first, else the LiveResyncRecord `phase`."""
    a = str(e.get("action") or "").lower()
    if a:
        if "restart" in a:
            return "restart"
        if "give" in a or "fail" in a:
            return "give-up"
        if a.startswith("resync"):
            return "resync"
        return a
    p = str(e.get("phase") or (e.get("record") or {}).get("phase") or "").lower()
    if "restart" in p:
        return "restart"
    if "fail" in p or "give" in p:
        return "give-up"
    if "resync" in p:
        return "resync"
    return None


def live_counts(ev, summary=None):
    """Resyncs, escalations (restarts) and give-ups, from whatever the log
    shows: `live.resync` events (`action` resync / restart / give-up; seeked and
    resolved are counted apart), the summary's `liveResyncs` / `liveRestarts`,
    the `live` error "fell behind the live window", cap changes with reason
    live-resync, and multivariant playlist requests after the first (a restart
    reloads it; retries do not count). Each kind of evidence is counted alone
    and the largest count wins, so one resync logged three ways counts once."""
    summary = summary or {}
    steps = [live_step(e) for e in ev if str(e.get("type", "")).startswith("live.")]
    fell_behind = [e for e in ev if e.get("type") == "error" and e.get("category") == "live"
                   and "behind" in str(e.get("message", "")).lower()]
    live_errors = [e for e in ev if e.get("type") == "error" and e.get("category") == "live"]
    cap_resync = [e for e in ev if e.get("type") == "cap.change" and "resync" in str(e.get("reason", ""))]
    cap_restart = [e for e in ev if e.get("type") in ("cap.change", "cap.note", "cap.reconnect")
                   and "restart" in str(e.get("reason", e.get("kind", "")))]
    mv = sum(1 for e in ev if e.get("type") == "request.start" and e.get("purpose") == "multivariant-playlist"
             and (e.get("attempt") or 1) <= 1)
    return {
        "resyncs": max(steps.count("resync"), summary.get("liveResyncs") or 0, len(fell_behind), len(cap_resync)),
        "escalations": max(steps.count("restart"), summary.get("liveRestarts") or 0, len(cap_restart), max(0, mv - 1)),
        "giveUps": steps.count("give-up"), "seeks": steps.count("seeked"), "resolved": steps.count("resolved"),
        "liveEvents": len(steps), "liveErrors": len(live_errors),
        "resyncEvidence": {"live.resync": steps.count("resync"), "summary": summary.get("liveResyncs"),
                           "fell-behind error": len(fell_behind), "cap.change live-resync": len(cap_resync)},
    }


def fault_counts(ev, summary):
    """Stalls, wedges, re-requests, 404s, resyncs/escalations of one session."""
    seg_starts = [e for e in ev if e.get("type") == "request.start" and e.get("purpose") == "segment"]
    wedges = sum(1 for e in ev if e.get("type") == "request.byteProgress"
                 and (e.get("assessment") or {}).get("verdict") == "wedged")
    fatal = next((e for e in ev if e.get("type") == "error" and e.get("fatal")), None)
    out = {
        "stalls": sum(1 for e in ev if e.get("type") == "stall.start"),
        "stallSeconds": sum(e.get("stallSeconds") or 0 for e in ev if e.get("type") == "stall.end"),
        "wedges": wedges if wedges or not summary else (summary.get("wedgesDetected") or 0),
        # the same segment again, on any rung (a wedge re-request may re-decide the rung)
        "reRequests": len(seg_starts) - len({e.get("mediaSequence") if e.get("mediaSequence") is not None
                                             else e.get("url") for e in seg_starts}),
        "http404": sum(1 for e in ev if e.get("type") == "request.end" and e.get("status") == 404),
        "exit": (summary or {}).get("exitReason"),
        "error": (summary or {}).get("error") or (fatal or {}).get("message"),
        "ttff": (summary or {}).get("timeToFirstFrameSeconds"),
        "avgBitrate": (summary or {}).get("averageBitrateBps"),
    }
    out.update(live_counts(ev, summary))
    return out


def collapse_resume(stalls, at_p, back_p, seg, until=None):
    """Seconds from the link coming back (player clock) to the end of the last
    stall that overlaps the collapse or starts within 2 segment durations after
    it (or before `until`, when later: a live resync drops the buffer, so the
    stall it causes belongs to the fault too); 0 when no stall did (the buffer
    covered it); None when such a stall never ended."""
    horizon = max(back_p + 2 * seg, until if until is not None else back_p)
    hit = [st for st in stalls if st[0] <= horizon and (st[1] is None or st[1] >= at_p)]
    if not hit:
        return 0.0, False
    if any(st[1] is None for st in hit):
        return None, True
    return max(0.0, max(st[1] for st in hit) - back_p), True


def live_episode(ev, at_p, back_p):
    """Live resync steps from the collapse on: the first decision (resync or
    restart) and the first `resolved` after the link came back, relative to the
    link coming back; and the last decision or seek before that `resolved`
    (player clock), which bounds the stalls the fault caused."""
    steps = [(e["t"], live_step(e)) for e in ev if str(e.get("type", "")).startswith("live.")
             and e.get("t", -1) >= at_p]
    first = next((t for t, k in steps if k in ("resync", "restart")), None)
    resolved = next((t for t, k in steps if k == "resolved" and t >= back_p), None)
    last = max((t for t, k in steps if k in ("resync", "restart", "seeked")
                and (resolved is None or t <= resolved)), default=None)
    return {"firstResyncAfterLinkBack": first - back_p if first is not None else None,
            "resolvedAfterLinkBack": resolved - back_p if resolved is not None else None,
            "lastResyncStepPlayer": last}


def black_hole_first(ev):
    """The very first segment request was black-holed: from it to playback
    started (the player's first `playback.started`), with when it was found
    wedged and re-requested (seconds after the lost request)."""
    lost = next((e for e in ev if e.get("type") == "request.start" and e.get("purpose") == "segment"), None)
    if not lost:
        return {"note": "no segment was requested"}
    t0 = lost["t"]
    rid = lost.get("requestID")
    det = next((e for e in ev if e.get("type") == "request.byteProgress" and e.get("requestID") == rid), None)
    if det is None:
        det = next((e for e in ev if e.get("type") == "request.end" and e.get("requestID") == rid
                    and not e.get("ok")), None)
    again = next((e for e in ev if e.get("type") == "request.start" and e.get("purpose") == "segment"
                  and e["t"] > t0 and e.get("mediaSequence") == lost.get("mediaSequence")), None)
    started = next((e for e in ev if e.get("type") == "playback.started"), None)
    return {"faultAt": t0,
            "detectedAfter": det["t"] - t0 if det else None,
            "reRequestedAfter": again["t"] - t0 if again else None,
            "resume": (started.get("atSeconds", started["t"]) - t0) if started else None}


def align_offset(origin_log, player_events):
    """server seconds = player t + offset, from the multivariant request."""
    srv = sorted(read_jsonl(origin_log), key=lambda e: e.get("accepted", 0))
    m = next((e for e in srv if e.get("path", "").endswith("master.m3u8")), None)
    p = next((e for e in player_events if e.get("type") == "request.start"
              and e.get("purpose") == "multivariant-playlist"), None)
    if not m or not p:
        return None
    return m["accepted"] - p["t"]


# ---------------------------------------------------------------- running units

class Runner:
    """Runs units on this machine; each returns its records (dicts)."""

    def __init__(self, spec, bins, samples, out, ladders):
        self.spec, self.bins, self.samples, self.out, self.ladders = spec, bins, samples, out, ladders
        self.rtt_s = parse_secs(spec["rtt"])
        self.timeout = spec["timeout"]

    def folder(self, seg):
        return os.path.join(self.samples, ladder_name(self.spec, seg))

    def meta(self, seg):
        return self.ladders[ladder_name(self.spec, seg)]

    def logs(self, name):
        return os.path.join(self.out, "logs", name)

    def stores(self, name):
        return os.path.join(self.out, "stores", name)

    def run(self, unit):
        return getattr(self, "run_" + unit["section"])(unit)

    # -- grid: one (rate, seg, policy, rep) with its start kinds
    def run_grid(self, u):
        rate, seg, pol, rep = u["rate"], u["seg"], u["policy"], u["rep"]
        rate_bps = parse_rate(rate)
        tag = f"{rate}-{seg}s-{pol}-r{rep}"
        origin = Origin(self.bins["origin"], self.folder(seg), ["--rate", rate, "--rtt", self.spec["rtt"]],
                        self.logs(f"origin-{tag}.jsonl"))
        url = origin.base + "master.m3u8"
        recs = []
        try:
            store = self.stores(f"{tag}.json")
            common = ["--duration", str(self.spec["duration"]), "--startup-cap", pol]
            for kind in self.spec["kinds"]:
                log = self.logs(f"{kind}-{tag}.jsonl")
                if kind == "cold":
                    # a fresh, empty store: gate cold(no-estimate); the session writes it
                    if os.path.exists(store):
                        os.remove(store)
                    sums, rc, wall = run_player(self.bins["player"], url, log,
                                                common + ["--estimate-store", store], self.timeout)
                    summary = sums[0] if sums else None
                elif kind == "warm":
                    # the store the cold session of this rep just wrote, on the same link
                    wstore = self.stores(f"{tag}-warm.json")
                    if os.path.exists(store):
                        shutil.copy(store, wstore)
                    elif os.path.exists(wstore):
                        os.remove(wstore)
                    sums, rc, wall = run_player(self.bins["player"], url, log,
                                                common + ["--estimate-store", wstore], self.timeout)
                    summary = sums[0] if sums else None
                else:  # channel change: second session of `--then`, fresh store
                    cstore = self.stores(f"{tag}-cc.json")
                    if os.path.exists(cstore):
                        os.remove(cstore)
                    sums, rc, wall = run_player(self.bins["player"], url, log,
                                                common + ["--estimate-store", cstore, "--then", url],
                                                2 * self.timeout)
                    summary = sums[1] if len(sums) > 1 else None
                    log = log[: -len(".jsonl")] + "-2.jsonl"
                if summary is None:
                    rec = {"ttff": None, "exit": f"no summary (rc {rc})", "log": log}
                else:
                    rec = session_record(summary, log, self.meta(seg), rate_bps, self.rtt_s)
                rec.update({"kind": kind, "rate": rate, "seg": seg, "policy": pol, "rep": rep,
                            "rc": rc, "wall": wall, "load1": run_player.last_load})
                recs.append(rec)
                print(f"  {kind:14s} {tag:28s} ttff={fmt(rec.get('ttff'))} gate={rec.get('gate')} "
                      f"v={rec.get('firstFrameVariant')} stalls={rec.get('stalls')} wall={wall:.1f}s",
                      file=sys.stderr, flush=True)
        finally:
            origin.stop()
        return recs

    # -- over-select: a stale 50 Mbit/s warm estimate on a 2 Mbit/s link
    def store_doc(self):
        """A store file a real run wrote (its schema), else one short seed session writes one."""
        d = os.path.join(self.out, "stores")
        for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if f.startswith("overselect-"):
                continue
            try:
                doc = read_json(os.path.join(d, f))
                if doc.get("records"):
                    return doc
            except (OSError, ValueError, AttributeError):
                pass
        origin = Origin(self.bins["origin"], self.folder(6), ["--rate", "6mbit", "--rtt", self.spec["rtt"]],
                        self.logs("origin-seed.jsonl"))
        try:
            store = self.stores("seed.json")
            if os.path.exists(store):
                os.remove(store)
            run_player(self.bins["player"], origin.base + "master.m3u8", self.logs("seed.jsonl"),
                       ["--duration", "8", "--estimate-store", store], self.timeout)
            return read_json(store) if os.path.exists(store) else None
        finally:
            origin.stop()

    def run_overselect(self, u):
        pol, rep = u["policy"], u["rep"]
        doc = self.store_doc()
        if not doc:
            return [{"note": "no store file was written by a real run; scenario skipped", "policy": pol, "rep": rep}]
        limit = self.timeout + 60
        origin = Origin(self.bins["origin"], self.folder(6), ["--rate", "2mbit", "--rtt", self.spec["rtt"]],
                        self.logs(f"origin-overselect-{pol}-{rep}.jsonl"))
        try:
            stale = json.loads(json.dumps(doc))
            rec0 = stale["records"][0]
            rec0["valueBps"] = 50e6
            rec0["sampleCount"] = max(10, rec0.get("sampleCount", 0))
            rec0["measuredAt"] = time.time() - 5
            stale["records"] = [rec0]
            store = self.stores(f"overselect-{pol}-{rep}.json")
            dump_json(stale, store)
            log = self.logs(f"overselect-{pol}-{rep}.jsonl")
            sums, rc, wall = run_player(self.bins["player"], origin.base + "master.m3u8", log,
                                        ["--duration", str(self.spec["scenarioDuration"]), "--startup-cap", pol,
                                         "--estimate-store", store], limit)
        finally:
            origin.stop()
        ev = read_jsonl(log)
        if not sums:
            # killed at the timeout: no summary line; take what the log says
            ff = next((e for e in ev if e.get("type") == "frame.first"), None)
            sums = [{"timeToFirstFrameSeconds": ff["timeToFirstFrameSeconds"] if ff else None,
                     "startupGate": next((e.get("gate") for e in ev if e.get("type") == "cap.gate"), None),
                     "overSelections": sum(1 for e in ev if e.get("type") == "request.byteProgress"
                                           and "over-selected" in json.dumps(e)),
                     "stallCount": sum(1 for e in ev if e.get("type") == "stall.start"),
                     "exitReason": f"killed at the {limit:.0f} s timeout"}]
        r = session_record(sums[0], log, self.meta(6), 2e6, self.rtt_s)
        ab = next((e for e in ev if e.get("type") == "request.byteProgress"
                   and "over-selected" in json.dumps(e)), None)
        r["overSelectAt"] = ab.get("t") if ab else None
        r.update({"policy": pol, "rep": rep, "rc": rc, "wall": wall})
        print(f"  overselect {pol} r{rep}: ttff={fmt(r['ttff'])} gate={r['gate']} over={r['overSelections']} "
              f"v={r['firstRequestVariant']}->{r['firstFrameVariant']}", file=sys.stderr, flush=True)
        return [r]

    # -- recovery and faults: one scenario, one repetition, cold start
    def run_scenario(self, u):
        sc, rep = u["scenario"], u["rep"]
        seg, rate, fault = sc["seg"], sc["rate"], sc["fault"]
        tag = f"{u['section']}-{scenario_name(sc)}-r{rep}"
        olog = self.logs(f"origin-{tag}.jsonl")
        extra = ["--rate", rate, "--rtt", self.spec["rtt"]]
        if fault in ("collapse", "live-rolloff"):
            extra += ["--collapse", f"{sc['at']}:{sc['dur']}"]
        if fault == "live-rolloff":
            extra += ["--live", "--window", str(sc["window"])]
        if fault in ("black-hole", "black-hole-first"):
            # black-hole: the first request for segment K (any rung); black-hole-first:
            # the very first media segment request of the session
            pattern = f"*/seg_{sc['segment']:05d}.ts" if fault == "black-hole" else "*.ts"
            faults = self.stores(f"faults-{tag}.json")
            dump_json({"faults": [{"pathPattern": pattern, "requestIndex": 0,
                                   "action": {"type": "blackHole"}}]}, faults)
            extra += ["--faults", faults]
        origin = Origin(self.bins["origin"], self.folder(seg), extra, olog)
        log = self.logs(f"{tag}.jsonl")
        store = self.stores(f"{tag}.json")
        if os.path.exists(store):
            os.remove(store)
        try:
            sums, rc, wall = run_player(self.bins["player"], origin.base + "master.m3u8", log,
                                        ["--duration", str(self.spec["scenarioDuration"]), "--estimate-store", store],
                                        self.timeout + 90 + sc.get("dur", 0))
        finally:
            origin.stop()
        ev = read_jsonl(log)
        s = sums[0] if sums else None
        rec = {"scenario": fault, "name": scenario_name(sc), "seg": seg, "rate": rate, "rep": rep, "rc": rc,
               "wall": wall, "log": log}
        rec.update({k: sc[k] for k in ("at", "dur", "window", "segment") if k in sc})
        rec.update(fault_counts(ev, s))
        if s is None:
            rec["exit"] = rec["exit"] or f"no summary (rc {rc})"
        stalls = stall_intervals(ev)
        rec["stallIntervals"] = stalls
        resume = None
        if fault in ("collapse", "live-rolloff"):
            off = align_offset(olog, ev)
            rec["offset"] = off
            if off is not None:
                at_p, back_p = sc["at"] - off, sc["at"] + sc["dur"] - off  # player clock
                rec["faultStartPlayer"], rec["linkBackPlayer"] = at_p, back_p
                until = None
                if fault == "live-rolloff":
                    rec.update(live_episode(ev, at_p, back_p))
                    if rec["lastResyncStepPlayer"] is not None:
                        until = rec["lastResyncStepPlayer"] + 0.5  # a seek drops the buffer: the stall starts at once
                resume, rec["playbackInterrupted"] = collapse_resume(stalls, at_p, back_p, seg, until)
        elif fault == "black-hole-first":
            bh = black_hole_first(ev)
            rec.update(bh)
            resume = bh.get("resume")
            meta = self.meta(seg)
            st = (s or {}).get("startup") or {}
            dec = (st.get("demuxSeconds") or 0) + (st.get("firstFrameDecodeSeconds") or 0)
            rec["floorLowest"] = floor_seconds(meta, 0, parse_rate(rate), self.rtt_s, dec)
        else:  # black-hole mid-stream (recovery section)
            first = next((e for e in ev if e.get("type") == "request.start" and e.get("purpose") == "segment"
                          and e.get("mediaSequence") == sc["segment"]), None)
            if first:
                t_bh = first["t"]
                rec["blackHoleAtPlayer"] = t_bh
                buf = next((e for e in ev if e.get("type") == "segment.buffered" and e["t"] >= t_bh
                            and e.get("mediaSequence") == sc["segment"]), None)
                rec["bufferedAfter"] = buf["t"] - t_bh if buf else None
                hit = [st for st in stalls if st[1] is None or st[1] >= t_bh]
                rec["playbackInterrupted"] = bool(hit)
                if hit and all(st[1] is not None for st in hit):
                    resume = max(0.0, hit[0][1] - t_bh)
                elif not hit:
                    resume = 0.0
            else:
                rec["note"] = "the segment was never requested"
        rec["resume"] = resume
        print(f"  {tag}: stalls={rec['stalls']} resume={fmt(resume)} wedges={rec['wedges']} "
              f"resyncs={rec['resyncs']} escalations={rec['escalations']} exit={rec['exit']}",
              file=sys.stderr, flush=True)
        return [rec]

    run_recovery = run_scenario
    run_faults = run_scenario


# ---------------------------------------------------------------- reports (pure: records in, Markdown out)

def grid_tables(spec, recs, ladders):
    rtt_s = parse_secs(spec["rtt"])
    lines = []
    wall = sum(r.get("wall") or 0 for r in recs)
    lines.append(f"### Grid ({spec['reps']} reps, --duration {spec['duration']:g}, --rtt {spec['rtt']}, "
                 f"ladders {spec['ladder']}-*; stalls counted over the session; {len(recs)} sessions, "
                 f"{wall:.0f} s of session wall time)\n")
    lines.append("| kind | rate | seg | policy | n | gate | TTFF median | p90 | max | CV | hard wedges | stalls | stall s "
                 "| avg bitrate Mbit/s | first fetch variant | first fetch over-selection median | max "
                 "| first frame variant | TTFF/floor(chosen) median | max | TTFF/floor(lowest) median | load |")
    lines.append("|" + "---|" * 22)
    keys = []
    for r in recs:
        k = (r["kind"], r["rate"], r["seg"], r["policy"])
        if k not in keys:
            keys.append(k)
    for k in keys:
        cell = [r for r in recs if (r["kind"], r["rate"], r["seg"], r["policy"]) == k]
        t = [r["ttff"] for r in cell if r.get("ttff") is not None]
        missing = len(cell) - len(t)
        wedges = sum(1 for x in t if x > HARD_WEDGE_S) + missing
        gates = sorted({str(r.get("gate")).split("(")[0] for r in cell})
        fq = [str(r.get("firstRequestVariant")) for r in cell]
        fv = [str(r.get("firstFrameVariant")) for r in cell]
        ov = [r["firstFetchOverSelection"] for r in cell if r.get("firstFetchOverSelection") is not None]
        rc = [r["ratioChosen"] for r in cell if r.get("ratioChosen")]
        rl = [r["ratioLowest"] for r in cell if r.get("ratioLowest")]
        br = [r["avgBitrate"] for r in cell if r.get("avgBitrate")]
        lines.append("| " + " | ".join([
            k[0], k[1], f"{k[2]} s", k[3], str(len(cell)), "/".join(gates),
            fmt(statistics.median(t)) if t else "—", fmt(pctl(t, 90)) if t else "—", fmt(max(t)) if t else "—",
            fmt(cv(t)), str(wedges), str(sum(r.get("stalls") or 0 for r in cell)),
            fmt(sum(r.get("stallSeconds") or 0 for r in cell)),
            fmt(statistics.median(br) / 1e6) if br else "—", ",".join(fq),
            fmt(statistics.median(ov)) if ov else "—", fmt(max(ov)) if ov else "—", ",".join(fv),
            fmt(statistics.median(rc)) if rc else "—", fmt(max(rc)) if rc else "—",
            fmt(statistics.median(rl)) if rl else "—",
            fmt(statistics.median([r.get("load1") or 0 for r in cell]), 1)]) + " |")
    # the floor per (rate, seg)
    nv = max(len(ladders[ladder_name(spec, seg)]["bandwidths"]) for seg in spec["segments"])
    lines.append(f"\n### Startup floor (3 × RTT {spec['rtt']} + master + media playlist + first segment bytes "
                 f"÷ rate + median demux+decode)\n")
    lines.append("| rate | seg | demux+decode s | " + " | ".join(
        f"floor v{v}" + (" (lowest) s" if v == 0 else " (top) s" if v == nv - 1 else "") for v in range(nv)) + " |")
    lines.append("|" + "---|" * (3 + nv))
    for rate in spec["rates"]:
        for seg in spec["segments"]:
            meta = ladders[ladder_name(spec, seg)]
            dec = [r["decodeSeconds"] for r in recs if r["rate"] == rate and r["seg"] == seg and r.get("decodeSeconds")]
            d = statistics.median(dec) if dec else 0.0
            fl = [floor_seconds(meta, v, parse_rate(rate), rtt_s, d) for v in range(len(meta["bandwidths"]))]
            lines.append(f"| {rate} | {seg} s | {fmt(d, 3)} | " + " | ".join(fmt(x) for x in fl) + " |")
    # cold-start roll-up against the 1.2x target
    cold = [r for r in recs if r["kind"] == "cold" and r.get("ratioChosen")]
    if cold:
        lines.append("\n### Cold starts against the 1.2× floor target\n")
        lines.append("| policy | sessions | TTFF/floor(chosen) median | p90 | max | ≤ 1.2× | hard wedges |")
        lines.append("|---|---|---|---|---|---|---|")
        for pol in spec["policies"]:
            c = [r for r in recs if r["kind"] == "cold" and r["policy"] == pol]
            rr = [r["ratioChosen"] for r in c if r.get("ratioChosen")]
            w = sum(1 for r in c if r.get("ttff") is None or r["ttff"] > HARD_WEDGE_S)
            if rr:
                lines.append(f"| {pol} | {len(c)} | {fmt(statistics.median(rr))} | {fmt(pctl(rr, 90))} | "
                             f"{fmt(max(rr))} | {sum(1 for x in rr if x <= 1.2)}/{len(rr)} | {w} |")
    # hard wedges anywhere, per policy (the target: none with the cap on)
    if recs:
        lines.append(f"\n### Hard wedges (TTFF > {HARD_WEDGE_S:g} s or no first frame) and stalls, all start kinds\n")
        lines.append("| policy | sessions | hard wedges | sessions with a stall | stall s | TTFF max s |")
        lines.append("|---|---|---|---|---|---|")
        for pol in spec["policies"]:
            c = [r for r in recs if r["policy"] == pol]
            if not c:
                continue
            t = [r["ttff"] for r in c if r.get("ttff") is not None]
            w = sum(1 for r in c if r.get("ttff") is None or r["ttff"] > HARD_WEDGE_S)
            lines.append(f"| {pol} | {len(c)} | {w} | {sum(1 for r in c if r.get('stalls'))} | "
                         f"{fmt(sum(r.get('stallSeconds') or 0 for r in c))} | {fmt(max(t)) if t else '—'} |")
    return "\n".join(lines) + "\n"


def overselect_table(spec, recs, ladders):
    meta = ladders[ladder_name(spec, 6)]
    top = len(meta["bandwidths"]) - 1
    naive = meta["firstSegmentBytes"][top] * 8 / 2e6
    lines = [f"### Over-select: stale warm estimate 50 Mbit/s, 2 Mbit/s link, 6 s segments, RTT {spec['rtt']}\n",
             f"Naive player (top rung v{top}, {meta['bandwidths'][top] / 1e6:.2f} Mbit/s, first segment "
             f"{meta['firstSegmentBytes'][top]} B ÷ 2 Mbit/s): **{naive:.1f} s** to the first segment's last byte.\n",
             "| policy | rep | gate | first request variant | first frame variant | first over-selection abandon at s "
             "| over-selections | TTFF s | floor (lowest) s | stalls | stall s | avg Mbit/s | exit |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in recs:
        if r.get("note"):
            lines.append(f"| {r.get('policy')} | {r.get('rep')} | {r['note']} |" + " |" * 10)
            continue
        lines.append(f"| {r['policy']} | {r['rep']} | {r.get('gate')} | {r.get('firstRequestVariant')} | "
                     f"{r.get('firstFrameVariant')} | {fmt(r.get('overSelectAt'))} | {r.get('overSelections')} | "
                     f"{fmt(r.get('ttff'))} | {fmt(r.get('floorLowest'))} | {r.get('stalls')} | "
                     f"{fmt(r.get('stallSeconds'))} | {fmt((r.get('avgBitrate') or 0) / 1e6)} | {r.get('exit')} |")
    return "\n".join(lines) + "\n"


def recovery_table(spec, recs):
    lines = [f"### Recovery (RTT {spec['rtt']}, --duration {spec['scenarioDuration']:g}, "
             f"{spec['scenarioReps']} reps, ladders {spec['ladder']}-*)\n",
             "`resume − link back`: collapse — from the end of the collapse (server clock, aligned on the multivariant "
             "request) to the end of the last stall that overlaps the collapse or starts within 2 segment durations "
             "after it (0 = the buffer covered it); black hole — from the black-holed request to the end of the "
             "stall it caused (0 = none), with the time until that segment was buffered in parentheses. "
             "`in segments` = that ÷ segment duration (target ≤ 2).\n",
             "| scenario | seg | rate | rep | stalls | stall s | wedges | resume − link back s | in segments | avg Mbit/s | exit |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in recs:
        kind, seg, resume = r["scenario"], r["seg"], r.get("resume")
        label = f"collapse {r['at']}:{r['dur']}" if kind == "collapse" else f"black-hole seg {r['segment']}"
        lines.append(f"| {label} | {seg} s | {r['rate']} | {r['rep']} | {r['stalls']} | {fmt(r['stallSeconds'])} | "
                     f"{r['wedges']} | {fmt(resume)}"
                     f"{'' if kind == 'collapse' else ' (buffered ' + fmt(r.get('bufferedAfter')) + ')'} | "
                     f"{fmt(resume / seg) if resume is not None else '—'} | "
                     f"{fmt((r.get('avgBitrate') or 0) / 1e6)} | {r.get('exit')} |")
    return "\n".join(lines) + "\n"


FAULT_LABELS = {"black-hole-first": "black-holed first segment", "collapse": "link collapse mid-play",
                "live-rolloff": "live segment roll-off"}


def faults_table(spec, recs):
    lines = [f"### Faults (RTT {spec['rtt']}, --duration {spec['scenarioDuration']:g}, "
             f"{spec['scenarioReps']} reps, cold starts, ladders {spec['ladder']}-*)\n",
             "`fault end → resumed`: black-holed first segment — from the lost request (the first media segment "
             "request, never answered; it has no end the player could see) to playback started; link collapse and "
             "live roll-off — from the link coming back (server clock, aligned on the multivariant request) to the "
             "end of the last stall overlapping the collapse or starting within 2 segment durations after it "
             "(0 = the buffer covered it; `never` = that stall did not end before the session did). "
             f"`in seg` = that ÷ segment duration; target ≤ {FAULT_TARGET_SEGMENTS:g} (black hole, collapse; "
             "the issue sets none for live roll-off). Stalls, wedges (`request.byteProgress` wedged), "
             "re-requests (segment requests beyond the first per segment), 404s, resyncs and escalations "
             "(restarts) are counted from the session log. `detected / recovered`: black hole — the wedge "
             "detection and the re-request, seconds after the lost request; live roll-off — the first resync "
             "decision (`live.resync` resync or restart) and its `resolved`, seconds after the link came back "
             "(negative: during the collapse).\n",
             "| fault | seg | rate | window | fault (player s) | rep | stalls | stall s | wedges | re-requests | 404s "
             "| resyncs | escalations | detected / recovered s | fault end → resumed s | in seg | ≤ target "
             "| TTFF s | exit |",
             "|" + "---|" * 19]
    for r in recs:
        kind, seg, resume = r["scenario"], r["seg"], r.get("resume")
        if kind == "black-hole-first":
            when = f"{fmt(r.get('faultAt'))} →"
            det = f"{fmt(r.get('detectedAfter'))} / {fmt(r.get('reRequestedAfter'))}"
        elif kind == "live-rolloff":
            when = f"{fmt(r.get('faultStartPlayer'))}–{fmt(r.get('linkBackPlayer'))}"
            det = f"{fmt(r.get('firstResyncAfterLinkBack'))} / {fmt(r.get('resolvedAfterLinkBack'))}"
        else:
            when = f"{fmt(r.get('faultStartPlayer'))}–{fmt(r.get('linkBackPlayer'))}"
            det = "—"
        ended = resume is not None or (r.get("playbackInterrupted") is False)
        insec = resume / seg if resume is not None else None
        target = "—" if kind == "live-rolloff" else ("yes" if insec is not None and insec <= FAULT_TARGET_SEGMENTS
                                                      else "**no**")
        exit_ = r.get("exit")
        if r.get("error"):
            exit_ = f"{exit_}: {r['error']}"
        lines.append(f"| {FAULT_LABELS.get(kind, kind)} | {seg} s | {r['rate']} | {r.get('window', '—')} | {when} | "
                     f"{r['rep']} | {r['stalls']} | {fmt(r['stallSeconds'])} | {r['wedges']} | {r['reRequests']} | "
                     f"{r['http404']} | {r['resyncs']} | {r['escalations']} | {det} | "
                     f"{fmt(resume) if ended else '**never**'} | {fmt(insec)} | {target} | {fmt(r.get('ttff'))} | "
                     f"{exit_} |")
    # per fault: how many met the target, and the spread
    if recs:
        lines.append("\n| fault | sessions | ≤ target | fault end → resumed in seg, median | max | never resumed "
                     "| ended in an error | resyncs | escalations |")
        lines.append("|---|---|---|---|---|---|---|---|---|")
        for kind in [k for k in FAULT_LABELS if any(r["scenario"] == k for r in recs)]:
            c = [r for r in recs if r["scenario"] == kind]
            ins = [r["resume"] / r["seg"] for r in c if r.get("resume") is not None]
            never = sum(1 for r in c if r.get("resume") is None)
            met = "—" if kind == "live-rolloff" else f"{sum(1 for x in ins if x <= FAULT_TARGET_SEGMENTS)}/{len(c)}"
            lines.append(f"| {FAULT_LABELS[kind]} | {len(c)} | {met} | {fmt(statistics.median(ins)) if ins else '—'} | "
                         f"{fmt(max(ins)) if ins else '—'} | {never} | {sum(1 for r in c if r.get('exit') == 'error')} | "
                         f"{sum(r.get('resyncs') or 0 for r in c)} | {sum(r.get('escalations') or 0 for r in c)} |")
    return "\n".join(lines) + "\n"


def report(spec, recs, ladders):
    """The Markdown report of a run (or of merged shards): one table set per
    section, from the records alone, in plan order."""
    by = {s: [r for r in recs if r.get("section") == s] for s in SECTIONS}
    parts = [f"## hlsplay characterization (spec {spec_hash(spec)}; player {spec.get('player')})\n"]
    if "grid" in spec["only"]:
        parts.append(grid_tables(spec, by["grid"], ladders))
    if "overselect" in spec["only"]:
        parts.append(overselect_table(spec, by["overselect"], ladders))
    if "recovery" in spec["only"]:
        parts.append(recovery_table(spec, by["recovery"]))
    if "faults" in spec["only"]:
        parts.append(faults_table(spec, by["faults"]))
    return "\n".join(parts)


# ---------------------------------------------------------------- shard outputs and merging

def write_json(path, doc):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def load_shard(d):
    p = os.path.join(d, "shard.json")
    if not os.path.exists(p):
        raise GridError(f"{d}: no shard.json — not the output directory of a grid run")
    try:
        doc = read_json(p)
    except ValueError as e:
        raise GridError(f"{p}: not valid JSON ({e})")
    if doc.get("schema") != SHARD_SCHEMA:
        raise GridError(f"{p}: schema {doc.get('schema')!r}, expected {SHARD_SCHEMA!r}")
    doc["dir"] = d
    return doc


def merge_shards(dirs, out, copy_logs=True):
    """Check and merge shard outputs into `out`; returns (spec, records, ladders).
    Refuses different specs, different shard counts, shards given twice,
    missing shards and incomplete ones, each with a message saying which."""
    if not dirs:
        raise GridError("merge: no shard directories given")
    shards = [load_shard(d) for d in dirs]
    ref = shards[0]
    for s in shards[1:]:
        if s["specHash"] != ref["specHash"] or s["spec"] != ref["spec"]:
            diff = sorted(k for k in set(s["spec"]) | set(ref["spec"]) if s["spec"].get(k) != ref["spec"].get(k))
            raise GridError(f"merge: {s['dir']} has a different spec from {ref['dir']} "
                            f"(spec {s['specHash']} vs {ref['specHash']}; differs in: {', '.join(diff) or 'hash'})")
    counts = {s["shard"]["count"] for s in shards}
    if len(counts) != 1:
        raise GridError("merge: shards of different splits: " + ", ".join(
            f"{s['dir']} is {s['shard']['index']}/{s['shard']['count']}" for s in shards))
    n = counts.pop()
    seen = {}
    for s in shards:
        i = s["shard"]["index"]
        if i in seen:
            raise GridError(f"merge: shard {i}/{n} given twice: {seen[i]} and {s['dir']}")
        seen[i] = s["dir"]
    missing = [f"{i}/{n}" for i in range(1, n + 1) if i not in seen]
    if missing:
        raise GridError(f"merge: missing shard(s) {', '.join(missing)} of {n}")
    spec = ref["spec"]
    units = plan(spec)
    parts = partition(units, n)
    order = {u["key"]: k for k, u in enumerate(units)}
    recs = []
    for s in shards:
        i = s["shard"]["index"]
        want = parts[i - 1]
        if s.get("units") != want:
            raise GridError(f"merge: {s['dir']} (shard {i}/{n}) lists other units than the partition of this spec gives")
        done = s.get("completedUnits") or []
        if done != want:
            left = [k for k in want if k not in set(done)]
            raise GridError(f"merge: shard {i}/{n} ({s['dir']}) is incomplete: {len(done)} of {len(want)} units ran"
                            f"{'; first missing: ' + left[0] if left else ''}")
        for r in read_jsonl(os.path.join(s["dir"], "sessions.jsonl")):
            if r.get("unit") not in set(want):
                raise GridError(f"merge: {s['dir']}/sessions.jsonl holds a record of unit {r.get('unit')!r}, "
                                f"which is not shard {i}/{n}'s")
            r["_shardDir"] = s["dir"]
            recs.append(r)
    recs.sort(key=lambda r: order[r["unit"]])  # stable: a unit's sessions keep their order
    os.makedirs(os.path.join(out, "logs"), exist_ok=True)
    for r in recs:
        r.pop("_shardDir")
        if copy_logs and r.get("log"):
            r["log"] = os.path.join(out, "logs", os.path.basename(r["log"]))
    if copy_logs:
        for s in sorted(shards, key=lambda s: s["shard"]["index"]):
            ld = os.path.join(s["dir"], "logs")
            for f in sorted(os.listdir(ld)) if os.path.isdir(ld) else []:
                shutil.copy2(os.path.join(ld, f), os.path.join(out, "logs", f))
    with open(os.path.join(out, "sessions.jsonl"), "w") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")
    ladders = ref["ladders"]
    write_json(os.path.join(out, "shard.json"), {
        "schema": SHARD_SCHEMA, "spec": spec, "specHash": ref["specHash"], "ladders": ladders,
        "shard": {"index": 1, "count": 1}, "units": [u["key"] for u in units],
        "completedUnits": [u["key"] for u in units],
        "mergedFrom": [{"dir": os.path.abspath(s["dir"]), "shard": s["shard"], "host": s.get("host"),
                        "wallSeconds": s.get("wallSeconds"), "startedAt": s.get("startedAt"),
                        "finishedAt": s.get("finishedAt"), "loadAverageAtStart": s.get("loadAverageAtStart"),
                        "loadAverageAtEnd": s.get("loadAverageAtEnd"), "provenance": s.get("provenance")}
                       for s in sorted(shards, key=lambda s: s["shard"]["index"])],
        "wallSeconds": sum(s.get("wallSeconds") or 0 for s in shards),
    })
    return spec, recs, ladders


# ---------------------------------------------------------------- commands

def run_shard(spec, i, n, out, ladders, execute, footer_host=None, bins=None):
    """Run shard i/n of the spec into `out` with `execute(unit) -> [records]`;
    returns the records. shard.json is rewritten after every unit, so an
    interrupted shard is visibly incomplete (and refused by merge)."""
    units = shard_units(spec, i, n)
    for d in ("logs", "stores"):
        os.makedirs(os.path.join(out, d), exist_ok=True)
    meta_path = os.path.join(out, "shard.json")
    if os.path.exists(meta_path):
        old = load_shard(out)
        if old.get("specHash") != spec_hash(spec) or old.get("shard") != {"index": i, "count": n}:
            raise GridError(f"{out} holds the output of another run (spec {old.get('specHash')}, shard "
                            f"{old.get('shard', {}).get('index')}/{old.get('shard', {}).get('count')}); "
                            f"use another --out or remove it")
    doc = {"schema": SHARD_SCHEMA, "spec": spec, "specHash": spec_hash(spec), "ladders": ladders,
           "shard": {"index": i, "count": n}, "units": [u["key"] for u in units], "completedUnits": [],
           "host": footer_host, "startedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "loadAverageAtStart": list(os.getloadavg()),
           "provenance": hlsplay_tools.run_provenance(bins or {})}
    write_json(meta_path, doc)
    t0 = time.time()
    recs = []
    with open(os.path.join(out, "sessions.jsonl"), "w") as sink:
        for k, u in enumerate(units):
            print(f"[{k + 1}/{len(units)}] {u['key']}", file=sys.stderr, flush=True)
            for r in execute(u):
                r["unit"], r["section"] = u["key"], u["section"]
                recs.append(r)
                sink.write(json.dumps(r) + "\n")
            sink.flush()
            doc["completedUnits"].append(u["key"])
            doc["wallSeconds"] = time.time() - t0
            write_json(meta_path, doc)
    doc["finishedAt"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    doc["loadAverageAtEnd"] = list(os.getloadavg())
    write_json(meta_path, doc)
    return recs


def run_task(task, out_dir):
    """One task of a parallel or cluster run (module level: pickled by reference): shard
    task["shard"] of task["spec"] into out_dir, in this process, with the binaries and samples at the
    paths the task names. Refuses a worker whose hlsplay is not the one the spec was made with."""
    spec, (i, n) = task["spec"], task["shard"]
    have = player_version(task["bins"]["player"])
    if have != spec["player"]:
        raise GridError(f"{socket.gethostname()}: {task['bins']['player']} is {have!r}, the run is of {spec['player']!r}")
    runner = Runner(spec, task["bins"], task["samples"], out_dir, task["ladders"])
    recs = run_shard(spec, i, n, out_dir, task["ladders"], runner.run, footer_host=socket.gethostname(),
                     bins=task["bins"])
    return {"shard": [i, n], "records": len(recs)}


def run_parallel(spec, ladders, bins, samples, out, tasks, jobs, scheduler):
    """The whole plan as `tasks` shards (default: one per unit), run by distribute.run_units on a local
    pool of `jobs` processes or on the Dask cluster at `scheduler`, each into OUT/shards/NNN; then
    merged into OUT by merge_shards exactly as `grid.py merge` does. Returns the merged records."""
    # run_task by its module name "grid" (never "__main__"), so that pool processes and Dask workers
    # (which get this file by upload) resolve it by reference.
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    this = importlib.import_module("grid")
    n = tasks or len(plan(spec))
    work = [{"spec": spec, "shard": [k, n], "ladders": ladders, "bins": {b: os.path.abspath(p) for b, p in bins.items()},
             "samples": os.path.abspath(samples)} for k in range(1, n + 1)]
    shard_dir = os.path.join(out, "shards")
    if os.path.exists(os.path.join(out, "shard.json")):
        old = load_shard(out)
        if old.get("specHash") != spec_hash(spec):
            raise GridError(f"{out} holds the output of another run (spec {old.get('specHash')}); "
                            f"use another --out or remove it")
    os.makedirs(shard_dir, exist_ok=True)
    lib = os.path.dirname(os.path.abspath(hlsplay_tools.__file__))
    upload = [os.path.join(lib, "hlsplay_tools.py"), os.path.join(lib, "distribute.py"), os.path.abspath(this.__file__)]

    def done(k, w, host):
        print(f"task {k + 1}/{n} (shard {w['shard'][0]}/{n}) done on {host}", file=sys.stderr, flush=True)

    try:
        results = distribute.run_units(work, this.run_task, lambda k, w: os.path.join(shard_dir, f"{k + 1:03d}"),
                                       scheduler=scheduler, workers=jobs, upload=upload, progress=done)
    except distribute.DistributeError as e:
        raise GridError(str(e))
    _, recs, _ = merge_shards([r.dir for r in results], out)
    return recs


def list_plan(spec, i, n):
    units = plan(spec)
    parts = partition(units, n)
    est = {u["key"]: u["est"] for u in units}
    for j, keys in enumerate(parts, 1):
        mark = " <- this shard" if j == i and n > 1 else ""
        print(f"shard {j}/{n}: {len(keys)} units, ~{sum(est[k] for k in keys) / 60:.0f} min estimated{mark}")
    for k in parts[i - 1]:
        print(f"  {k}  (~{est[k]:.0f} s)")
    print(f"whole plan: {len(units)} units, ~{sum(est.values()) / 60:.0f} min estimated on one machine "
          f"(rough: session lengths, not measured)")


def parse_run_args(argv):
    ap = argparse.ArgumentParser(prog="grid.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="merge: grid.py merge DIR1 DIR2 ... --out DIR [--no-logs]")
    ap.add_argument("--out", default="/tmp/hlsplay-grid")
    ap.add_argument("--samples", default=os.path.join(ROOT, "Samples", "build"))
    ap.add_argument("--ladder", default="ladder4k",
                    help="sample ladder prefix: PREFIX-2s / PREFIX-6s (default ladder4k: the four rungs "
                         "+ a 3840x2160 rung near 30 Mbit/s; 'ladder' for the four-rung ladders)")
    ap.add_argument("--bin", default=os.path.join(ROOT, ".build", "release"))
    ap.add_argument("--rates", default="2mbit,6mbit,20mbit")
    ap.add_argument("--segments", default="2,6")
    ap.add_argument("--policies", default="auto,off,first-variant")
    ap.add_argument("--kinds", default="cold,warm,channel-change")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--duration", type=float, default=5)
    ap.add_argument("--scenario-duration", type=float, default=24)
    ap.add_argument("--scenario-reps", type=int, default=2,
                    help="repetitions of each recovery and fault scenario and of the non-auto over-select runs")
    ap.add_argument("--rtt", default="40ms")
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--only", default=",".join(SECTIONS), help=f"sections, comma-separated: {','.join(SECTIONS)}")
    ap.add_argument("--scenarios", default="",
                    help="only the recovery / fault scenarios whose name contains one of these comma-separated "
                         "strings (names: see --list), e.g. live-rolloff,black-hole-first-2s")
    ap.add_argument("--shard", default=None,
                    help="run only shard i of N (1-based), e.g. 2/4, in this process, one unit after another "
                         "(a Kubernetes Indexed Job's pod; Tools/cluster/grid-job.yaml)")
    ap.add_argument("--jobs", default="auto",
                    help="local run: tasks at once in a process pool ('auto': one per CPU; 1: one process, "
                         "one unit after another, as with --shard 1/1)")
    ap.add_argument("--scheduler", default=None,
                    help="run the tasks on the Dask distributed cluster behind this scheduler, e.g. "
                         "tcp://10.0.0.5:8786 (docs/cluster.md); results come back and are merged here")
    ap.add_argument("--tasks", type=int, default=None,
                    help="split the plan into this many shards, one task each (default: one task per unit, "
                         "so a free worker always takes the next unit)")
    ap.add_argument("--list", action="store_true", help="print the plan and this shard's units; run nothing")
    a = ap.parse_args(argv)
    a.rates = a.rates.split(",")
    a.segments = [int(x) for x in a.segments.split(",")]
    a.policies = a.policies.split(",")
    a.kinds = a.kinds.split(",")
    a.only = a.only.split(",")
    a.scenarios = [x for x in a.scenarios.split(",") if x]
    bad = [s for s in a.only if s not in SECTIONS]
    if bad:
        raise GridError(f"--only: unknown section(s) {', '.join(bad)}; known: {', '.join(SECTIONS)}")
    if a.jobs == "auto":
        a.jobs = distribute.local_workers()
    else:
        given = a.jobs
        try:
            a.jobs = int(a.jobs)
        except ValueError:
            a.jobs = 0
        if a.jobs < 1:
            raise GridError(f"--jobs {given!r}: expected 'auto' or a number >= 1")
    if a.shard is not None and (a.scheduler or a.tasks):
        raise GridError("--shard runs one shard in this process; it does not go with --scheduler or --tasks")
    if a.tasks is not None and a.tasks < 1:
        raise GridError("--tasks: need at least 1")
    return a


def cmd_run(argv):
    a = parse_run_args(argv)
    i, n = parse_shard(a.shard or "1/1")
    opts = vars(a)
    bins = {"player": os.path.join(a.bin, "hlsplay"), "origin": os.path.join(a.bin, "hls-origin")}
    probe = {"ladder": a.ladder, "only": a.only, "segments": a.segments, "scenarios": a.scenarios}
    ladders = {}
    for seg in ladders_needed(probe):
        folder = os.path.join(a.samples, f"{a.ladder}-{seg}s")
        if not os.path.exists(os.path.join(folder, "master.m3u8")):
            raise GridError(f"{folder} missing; run Tools/characterize/grid.sh (it builds the samples: Samples/make-all.sh --4k)")
        ladders[f"{a.ladder}-{seg}s"] = ladder_meta(folder)
    if a.list:
        spec = make_spec(opts, ladders, None)
        list_plan(spec, i, n)
        return
    for b in bins.values():
        if not os.access(b, os.X_OK):
            raise GridError(f"{b} missing; run Tools/characterize/grid.sh (it builds the release binaries)")
    spec = make_spec(opts, ladders, player_version(bins["player"]))
    t0 = time.time()
    if a.shard is None and (a.scheduler or a.jobs > 1):
        recs = run_parallel(spec, ladders, bins, a.samples, a.out, a.tasks, a.jobs, a.scheduler)
        text = report(spec, recs, ladders)
        write_text(os.path.join(a.out, "report.md"), text)
        print(text, flush=True)
        where = f"the cluster at {a.scheduler}" if a.scheduler else f"{a.jobs} local processes"
        print(f"\n_wall time {time.time() - t0:.0f} s on {where}; 1-min load average at the end "
              f"{os.getloadavg()[0]:.1f}; raw records in {a.out}/sessions.jsonl, shards in {a.out}/shards_")
        return
    runner = Runner(spec, bins, a.samples, a.out, ladders)
    recs = run_shard(spec, i, n, a.out, ladders, runner.run, footer_host=socket.gethostname(), bins=bins)
    text = report(spec, recs, ladders) if n == 1 else None
    if text is not None:
        write_text(os.path.join(a.out, "report.md"), text)
        print(text, flush=True)
    else:
        print(f"shard {i}/{n} done: {len(recs)} records in {a.out}/sessions.jsonl; merge all {n} shard "
              f"directories with `Tools/characterize/grid.py merge DIR1 ... DIR{n} --out DIR`", flush=True)
    print(f"\n_wall time {time.time() - t0:.0f} s; 1-min load average at the end {os.getloadavg()[0]:.1f}; "
          f"raw records in {a.out}/sessions.jsonl_")


def cmd_merge(argv):
    ap = argparse.ArgumentParser(prog="grid.py merge",
                                 description="Merge the output directories of all shards of one grid spec "
                                             "into one report (OUT/report.md, OUT/sessions.jsonl, OUT/logs).")
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--no-logs", action="store_true", help="do not copy the shards' session and origin logs")
    a = ap.parse_args(argv)
    if os.path.abspath(a.out) in {os.path.abspath(d) for d in a.dirs}:
        raise GridError("merge: --out must not be one of the shard directories")
    spec, recs, ladders = merge_shards(a.dirs, a.out, copy_logs=not a.no_logs)
    text = report(spec, recs, ladders)
    write_text(os.path.join(a.out, "report.md"), text)
    print(text, flush=True)
    print(f"\n_merged {len(a.dirs)} shards, {len(recs)} records, into {a.out}_")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        if argv and argv[0] == "merge":
            cmd_merge(argv[1:])
        else:
            cmd_run(argv)
    except GridError as e:
        sys.exit(f"grid: {e}")


if __name__ == "__main__":
    main()
