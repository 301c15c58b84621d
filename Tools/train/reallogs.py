"""Real hlsplay session logs (docs/session-log.md) → the session shape train.py labels and scores.

A session's samples are its `risk.sample` events (features at t, session
seconds); its stalls are the `stall.start`/`stall.end` pairs (`atSeconds`, the
exact instants on the same clock); its end is the `t` of the last event before
the summary, so a negative whose t + H runs past it is dropped (outcome
unknown), exactly as StallLabelling does.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from hlsplay_tools import read_jsonl, read_log  # noqa: E402

# Every StallFeatures field; a field absent from a record is missing (None).
FEATURE_FIELDS = [
    "bufferSeconds", "bandwidthFastBps", "bandwidthSlowBps", "currentRungBitrateBps", "nextHigherRungBitrateBps",
    "inFlightBytesReceived", "inFlightBytesExpected", "inFlightElapsedSeconds", "inFlightSecondsSinceLastByte",
    "firstByteSeconds", "rttSeconds", "cpuPressureAvg10Percent", "decodeLagRatio", "thermalMaxCelsius",
]


@dataclass
class RealSession:
    trace: str
    meta: dict
    samples: list = field(default_factory=list)   # [(t, features)]
    risks: list = field(default_factory=list)     # [(t, logged risk)]
    stalls: list = field(default_factory=list)    # [[start, end or None]]
    duration: float = 0.0
    play_start: float | None = None
    summary: dict | None = None


def load_session(path: str, meta: dict) -> RealSession:
    s = RealSession(trace=meta.get("trace", os.path.basename(path)), meta=meta)
    last_t = 0.0
    for rec in read_jsonl(path, strict=True):
        typ = rec.get("type")
        if typ == "summary":
            s.summary = rec
            continue
        if typ == "header":
            continue
        last_t = max(last_t, rec.get("t", last_t))
        if typ == "risk.sample":
            if rec.get("phase") != "playing":
                continue
            f = {k: rec["features"].get(k) for k in FEATURE_FIELDS}
            s.samples.append((rec["t"], f))
            s.risks.append((rec["t"], rec["risk"]))
        elif typ == "stall.start":
            s.stalls.append([rec["atSeconds"], None])
        elif typ == "stall.end" and s.stalls and s.stalls[-1][1] is None:
            s.stalls[-1][1] = rec["atSeconds"]
        elif typ == "playback.started" and s.play_start is None:
            s.play_start = rec["atSeconds"]
    s.duration = last_t
    return s


def load_manifest(data: str, phases=None) -> list:
    """Manifest lines (one per session), the last line per session id."""
    rows = {}
    for r in read_jsonl(os.path.join(data, "manifest.jsonl"), strict=True):
        if phases is None or r["phase"] in phases:
            rows[r["id"]] = r
    return [rows[k] for k in sorted(rows)]


def load_sessions(data: str, rows: list) -> list:
    out = []
    for r in rows:
        path = os.path.join(data, r["log"])
        if os.path.exists(path):
            out.append(load_session(path, r))
    return out


def playback_start(log: str) -> float | None:
    """When the media clock first started (the startup threshold reached), session seconds."""
    started = read_log(log, strict=True).first("playback.started")
    return started["atSeconds"] if started else None
