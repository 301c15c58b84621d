"""Trace-driven virtual-time player simulator for stall-prediction training.

This is a *model* of hlsplay, not hlsplay: a piecewise-constant link replayed
from a real throughput trace, a 4-rung ladder of 2 s segments fetched one at
a time, a buffer-based ABR (BBA-0), the same two-EWMA bandwidth estimator as
HLSCore's BandwidthEstimator, and the same startup/resume buffer thresholds
as PlaybackConfiguration. It samples StallFeatures every 0.25 s of virtual
time and records stall intervals. Device pressure (CPU PSI, decode lag,
thermal) and TCP RTT are not modelled and are reported as missing (None).

Trace formats (shared/data/traces/README.md):
  Pensieve cooked: "time_s<TAB>Mbit/s" lines, hold until the next timestamp.
  Sabre JSON: [{"duration_ms", "bandwidth_kbps", "latency_ms"}].
  Mahimahi: one ms timestamp per 1500-byte delivery opportunity (binned here).
All traces wrap around at the end, as their own simulators do.
"""

from __future__ import annotations

import json
import math
import os
import random
from dataclasses import dataclass, field

LADDER_BPS = [620_000, 1_310_000, 3_720_000, 7_230_000]
SEGMENT_SECONDS = 2.0
TICK_SECONDS = 0.05            # simulation step
SAMPLE_EVERY_SECONDS = 0.25     # monitor sampling period
STARTUP_BUFFER_SECONDS = 2.0    # PlaybackConfiguration.startupBufferSeconds
RESUME_BUFFER_SECONDS = 4.0     # PlaybackConfiguration.resumeBufferSeconds
MAX_BUFFER_SECONDS = 20.0       # stop fetching above this forward buffer
BBA_RESERVOIR_SECONDS = 5.0     # BBA-0: lowest rung below this buffer
BBA_CUSHION_SECONDS = 10.0      # BBA-0: linear map over the cushion
SEGMENT_SIZE_SIGMA = 0.15       # lognormal VBR variation of segment sizes
DEFAULT_LATENCY_SECONDS = 0.05  # first-byte delay where the trace has none
MAHIMAHI_BIN_SECONDS = 0.5
MIN_SESSION_SECONDS = 120.0
MAX_SESSION_SECONDS = 600.0

# HLSCore BandwidthEstimator.Configuration defaults
FAST_HALF_LIFE_S = 3.0
SLOW_HALF_LIFE_S = 9.0
MIN_SAMPLE_BYTES = 16 * 1024
MIN_TRANSFER_S = 0.02
MIN_TOTAL_WEIGHT_S = 0.01


@dataclass
class Trace:
    name: str
    steps: list  # [(duration_s, bps, latency_s)]

    @property
    def duration(self) -> float:
        return sum(d for d, _, _ in self.steps)


def load_pensieve(path: str) -> list:
    pts = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2:
                pts.append((float(parts[0]), float(parts[1]) * 1e6))
    steps = []
    for (t0, b0), (t1, _) in zip(pts, pts[1:]):
        if t1 > t0:
            steps.append((t1 - t0, b0, DEFAULT_LATENCY_SECONDS))
    return steps


def load_sabre(path: str) -> list:
    with open(path) as f:
        entries = json.load(f)
    return [(e["duration_ms"] / 1000, e["bandwidth_kbps"] * 1000, e.get("latency_ms", 50) / 1000)
            for e in entries if e["duration_ms"] > 0]


def load_mahimahi(path: str) -> list:
    with open(path) as f:
        ts = [int(x) for x in f if x.strip()]
    if not ts:
        return []
    nbins = int(math.ceil((ts[-1] + 1) / 1000 / MAHIMAHI_BIN_SECONDS))
    counts = [0] * nbins
    for t in ts:
        counts[min(nbins - 1, int(t / 1000 / MAHIMAHI_BIN_SECONDS))] += 1
    return [(MAHIMAHI_BIN_SECONDS, c * 1500 * 8 / MAHIMAHI_BIN_SECONDS, DEFAULT_LATENCY_SECONDS) for c in counts]


def load_all(root: str) -> list:
    """All real traces (Sabre's synthetic example/network.json is left out)."""
    traces = []
    for dirpath, _, files in sorted(os.walk(root)):
        for fn in sorted(files):
            path = os.path.join(dirpath, fn)
            rel = os.path.relpath(path, root)
            if fn.endswith(".md") or rel.startswith("sabre/example"):
                continue
            if rel.startswith("pensieve/"):
                steps = load_pensieve(path)
            elif rel.startswith("sabre/"):
                steps = load_sabre(path)
            elif rel.startswith("mahimahi/"):
                steps = load_mahimahi(path)
            else:
                continue
            if steps:
                traces.append(Trace(rel, steps))
    return traces


class Link:
    """Piecewise-constant bandwidth(t), wrapping, starting at `offset` seconds."""

    def __init__(self, trace: Trace, offset: float):
        self.steps = trace.steps
        self.total = trace.duration
        self.offset = offset % self.total
        # cumulative starts for lookup
        self.starts = []
        acc = 0.0
        for d, _, _ in self.steps:
            self.starts.append(acc)
            acc += d
        self.idx = 0

    def at(self, t: float):
        x = (t + self.offset) % self.total
        # steps are visited mostly in order: search from the last index
        i = self.idx
        if not (self.starts[i] <= x < self.starts[i] + self.steps[i][0]):
            lo, hi = 0, len(self.starts) - 1
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if self.starts[mid] <= x:
                    lo = mid
                else:
                    hi = mid - 1
            i = lo
            self.idx = i
        _, bps, lat = self.steps[i]
        return bps, lat


class Ewma:
    def __init__(self, half_life):
        self.alpha = math.exp(math.log(0.5) / half_life)
        self.estimate = 0.0
        self.total_weight = 0.0

    def add(self, value, weight):
        adj = self.alpha ** weight
        self.estimate = value * (1 - adj) + adj * self.estimate
        self.total_weight += weight

    @property
    def value(self):
        zf = 1 - self.alpha ** self.total_weight
        return self.estimate / zf if zf > 0 else self.estimate


class Estimator:
    """HLSCore BandwidthEstimator, same formulas and defaults."""

    def __init__(self):
        self.fast = Ewma(FAST_HALF_LIFE_S)
        self.slow = Ewma(SLOW_HALF_LIFE_S)

    def add(self, nbytes, transfer_s):
        if nbytes <= 0 or transfer_s < 0 or nbytes < MIN_SAMPLE_BYTES:
            return
        w = max(transfer_s, MIN_TRANSFER_S)
        bps = nbytes * 8 / w
        self.fast.add(bps, w)
        self.slow.add(bps, w)

    @property
    def has(self):
        return self.fast.total_weight >= MIN_TOTAL_WEIGHT_S

    def fast_bps(self):
        return self.fast.value if self.has else None

    def slow_bps(self):
        return self.slow.value if self.has else None


def bba_rung(buffer_s: float) -> int:
    """BBA-0 rate map: lowest rung in the reservoir, linear over the cushion."""
    if buffer_s <= BBA_RESERVOIR_SECONDS:
        return 0
    if buffer_s >= BBA_RESERVOIR_SECONDS + BBA_CUSHION_SECONDS:
        return len(LADDER_BPS) - 1
    frac = (buffer_s - BBA_RESERVOIR_SECONDS) / BBA_CUSHION_SECONDS
    target = LADDER_BPS[0] + frac * (LADDER_BPS[-1] - LADDER_BPS[0])
    return max(i for i, b in enumerate(LADDER_BPS) if b <= target)


@dataclass
class Session:
    trace: str
    offset: float
    duration: float
    samples: list = field(default_factory=list)   # [(t, features dict)]
    stalls: list = field(default_factory=list)    # [[start, end or None]]
    play_start: float | None = None
    bits_played: float = 0.0


def simulate(trace: Trace, offset: float, seed: int, duration: float | None = None) -> Session:
    """One session; `duration` (virtual seconds) defaults to the trace's length clamped to 120–600 s."""
    rng = random.Random(seed)
    link = Link(trace, offset)
    if duration is None:
        duration = min(MAX_SESSION_SECONDS, max(MIN_SESSION_SECONDS, trace.duration))
    s = Session(trace.name, offset, duration)
    est = Estimator()
    buffer_s = 0.0
    phase = "starting"  # starting | playing | stalled
    current_rung = 0
    req = None  # dict: rung, expected, received, start, first_byte_at, last_byte_at, latency
    last_fb = None
    t = 0.0
    next_sample = 0.0
    steps = int(round(duration / TICK_SECONDS))
    for k in range(steps):
        t = k * TICK_SECONDS
        # start a request if idle and buffer below the cap
        if req is None and buffer_s < MAX_BUFFER_SECONDS:
            current_rung = bba_rung(buffer_s)
            size = LADDER_BPS[current_rung] * SEGMENT_SECONDS / 8 * math.exp(rng.gauss(0, SEGMENT_SIZE_SIGMA))
            _, lat = link.at(t)
            req = dict(rung=current_rung, expected=float(int(size)), received=0.0, start=t,
                       first_byte_at=t + lat, last_byte_at=None)
        # sample features at the monitor period (state at the start of the tick)
        if t + 1e-9 >= next_sample:
            next_sample += SAMPLE_EVERY_SECONDS
            if phase != "starting":
                s.samples.append((round(t, 4), features(buffer_s, est, current_rung, req, t, last_fb)))
        # network
        if req is not None:
            bps, _ = link.at(t)
            if t + TICK_SECONDS > req["first_byte_at"]:
                active = min(TICK_SECONDS, t + TICK_SECONDS - req["first_byte_at"])
                got = bps * active / 8
                if got > 0:
                    remaining = req["expected"] - req["received"]
                    if got >= remaining:
                        done_frac = remaining / got
                        end_t = t + TICK_SECONDS - active + active * done_frac
                        req["received"] = req["expected"]
                        req["last_byte_at"] = end_t
                        est.add(int(req["expected"]), end_t - req["first_byte_at"])
                        last_fb = req["first_byte_at"] - req["start"]
                        buffer_s += SEGMENT_SECONDS
                        req = None
                    else:
                        req["received"] += got
                        req["last_byte_at"] = t + TICK_SECONDS
        # playback
        if phase == "playing":
            buffer_s -= TICK_SECONDS
            s.bits_played += LADDER_BPS[current_rung] * TICK_SECONDS
            if buffer_s <= 1e-9:
                buffer_s = 0.0
                phase = "stalled"
                s.stalls.append([round(t + TICK_SECONDS, 4), None])
        elif phase == "starting" and buffer_s >= STARTUP_BUFFER_SECONDS:
            phase = "playing"
            s.play_start = t + TICK_SECONDS
        elif phase == "stalled" and buffer_s >= RESUME_BUFFER_SECONDS:
            phase = "playing"
            s.stalls[-1][1] = round(t + TICK_SECONDS, 4)
    return s


def features(buffer_s, est, rung, req, t, last_fb) -> dict:
    """The StallFeatures fields (names as in Swift); None = missing."""
    f = dict(
        bufferSeconds=buffer_s,
        bandwidthFastBps=est.fast_bps(),
        bandwidthSlowBps=est.slow_bps(),
        currentRungBitrateBps=float(LADDER_BPS[rung]),
        nextHigherRungBitrateBps=float(LADDER_BPS[rung + 1]) if rung + 1 < len(LADDER_BPS) else None,
        inFlightBytesReceived=None, inFlightBytesExpected=None,
        inFlightElapsedSeconds=None, inFlightSecondsSinceLastByte=None,
        firstByteSeconds=last_fb, rttSeconds=None,
        cpuPressureAvg10Percent=None, decodeLagRatio=None, thermalMaxCelsius=None,
    )
    if req is not None:
        f["inFlightBytesReceived"] = float(int(req["received"]))
        f["inFlightBytesExpected"] = req["expected"]
        f["inFlightElapsedSeconds"] = t - req["start"]
        last = req["last_byte_at"] if req["last_byte_at"] is not None else req["start"]
        f["inFlightSecondsSinceLastByte"] = max(0.0, t - last)
    return f
