#!/usr/bin/env python3
"""Startup / recovery characterization grid for hlsplay (issue 4).

Drives the release binaries (hlsplay, hls-origin) sequentially on loopback and
prints Markdown tables:

  * the grid: start kind {cold, warm, channel-change} x link rate x segment
    duration x --startup-cap policy x repetitions, per cell median / p90 / max
    time to first frame, hard wedges (TTFF > 10 s), stalls, stall seconds,
    average bitrate, first variant, and TTFF / startup floor;
  * the startup floor per (rate, segment, RTT) from the protocol;
  * the over-select scenario (a stale 50 Mbit/s warm estimate on a 2 Mbit/s link);
  * recovery scenarios (link collapse, one black-holed mid-stream segment).

Run through Tools/grid.sh (builds the binaries and the samples first).
Raw per-session records go to OUT/sessions.jsonl, session logs to OUT/logs/.
"""
import argparse, json, os, shutil, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HARD_WEDGE_S = 10.0


# ---------------------------------------------------------------- helpers

def pctl(xs, q):
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    s = sorted(xs)
    k = max(0, min(len(s) - 1, int(-(-q * len(s) // 100)) - 1))
    return s[k]


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


def read_jsonl(path):
    out = []
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    pass
    return out


class Ladder:
    """Variant bitrates and file sizes of a sample ladder (from disk)."""

    def __init__(self, folder):
        self.folder = folder
        self.variants = []  # (bandwidth, playlist path)
        lines = open(os.path.join(folder, "master.m3u8")).read().splitlines()
        for i, line in enumerate(lines):
            if line.startswith("#EXT-X-STREAM-INF"):
                bw = int(line.split("BANDWIDTH=")[1].split(",")[0])
                self.variants.append((bw, lines[i + 1].strip()))
        self.master_bytes = os.path.getsize(os.path.join(folder, "master.m3u8"))
        self.playlist_bytes, self.segments, self.seg_duration = [], [], None
        for bw, pl in self.variants:
            p = os.path.join(folder, pl)
            self.playlist_bytes.append(os.path.getsize(p))
            segs = []
            for line in open(p).read().splitlines():
                if line.startswith("#EXTINF") and self.seg_duration is None:
                    self.seg_duration = float(line.split(":")[1].split(",")[0])
                if line and not line.startswith("#"):
                    segs.append(os.path.join(os.path.dirname(p), line))
            self.segments.append(segs)

    def first_segment_bytes(self, v):
        return os.path.getsize(self.segments[v][0])

    def bandwidth(self, v):
        return self.variants[v][0]


def floor_seconds(ladder, v, rate_bps, rtt_s, decode_s):
    """Protocol startup floor for variant v: one RTT each for the multivariant
    playlist, the media playlist and the first segment (the origin delays every
    response's first byte by the RTT; loopback has no handshake to charge), the
    bytes of all three at the link rate, plus first demux+decode."""
    nbytes = ladder.master_bytes + ladder.playlist_bytes[v] + ladder.first_segment_bytes(v)
    return 3 * rtt_s + nbytes * 8 / rate_bps + decode_s


class Origin:
    def __init__(self, bin_path, root, args, log):
        cmd = [bin_path, root, "--port", "0", "--log", log] + args
        self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.p.stdout.readline().strip()
        self.started_wall = time.time()
        if not line.startswith("listening on "):
            self.stop()
            raise RuntimeError(f"hls-origin did not start: {line!r}")
        self.base = line.split("listening on ", 1)[1].rstrip("/") + "/"
        self.log = log

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()


def run_player(bin_path, url, log, extra, timeout):
    cmd = [bin_path, url, "--headless", "--json", "--no-status", "--log", log] + extra
    t0 = time.time()
    load = os.getloadavg()[0]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
        out, rc = p.stdout, p.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""), "timeout"
    summaries = []
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                summaries.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    run_player.last_load = load
    return summaries, rc, time.time() - t0


def first_variant(log_events):
    """Variant of the first segment request, and of the first decoded frame."""
    req = next((e.get("variantIndex") for e in log_events
                if e.get("type") == "request.start" and e.get("purpose") == "segment"), None)
    ff = next((e.get("variantIndex") for e in log_events if e.get("type") == "frame.first"), None)
    return req, ff


def session_record(summary, log_path, ladder, rate_bps, rtt_s, duration):
    ev = read_jsonl(log_path)
    req_v, ff_v = first_variant(ev)
    st = summary.get("startup") or {}
    dec = (st.get("demuxSeconds") or 0) + (st.get("firstFrameDecodeSeconds") or 0)
    ttff = summary.get("timeToFirstFrameSeconds")
    v = ff_v if ff_v is not None else req_v
    fl_chosen = floor_seconds(ladder, v, rate_bps, rtt_s, dec) if v is not None else None
    fl_low = floor_seconds(ladder, 0, rate_bps, rtt_s, dec)
    return {
        "ttff": ttff, "stalls": summary.get("stallCount"), "stallSeconds": summary.get("stallSeconds"),
        "avgBitrate": summary.get("averageBitrateBps"), "gate": summary.get("startupGate"),
        "overSelections": summary.get("overSelections"), "wedges": summary.get("wedgesDetected"),
        "capChanges": summary.get("capChanges"), "exit": summary.get("exitReason"),
        "firstRequestVariant": req_v, "firstFrameVariant": ff_v, "decodeSeconds": dec,
        "floorChosen": fl_chosen, "floorLowest": fl_low,
        "ratioChosen": ttff / fl_chosen if ttff and fl_chosen else None,
        "ratioLowest": ttff / fl_low if ttff else None,
        "sessionSeconds": summary.get("sessionSeconds"), "played": summary.get("playedSeconds"),
        "log": log_path,
    }


# ---------------------------------------------------------------- the grid

def run_grid(a, bins, out, sink):
    rtt_s = parse_secs(a.rtt)
    recs = []
    n = 0
    for rate in a.rates:
        rate_bps = parse_rate(rate)
        for seg in a.segments:
            folder = os.path.join(a.samples, f"ladder-{seg}s")
            ladder = Ladder(folder)
            origin = Origin(bins["origin"], folder, ["--rate", rate, "--rtt", a.rtt],
                            os.path.join(out, "logs", f"origin-{rate}-{seg}s.jsonl"))
            url = origin.base + "master.m3u8"
            try:
                for rep in range(a.reps):
                    for pol in a.policies:
                        tag = f"{rate}-{seg}s-{pol}-r{rep}"
                        store = os.path.join(out, "stores", f"{tag}.json")
                        common = ["--duration", str(a.duration), "--startup-cap", pol]
                        for kind in a.kinds:
                            log = os.path.join(out, "logs", f"{kind}-{tag}.jsonl")
                            if kind == "cold":
                                # a fresh, empty store: gate cold(no-estimate); the session writes it
                                if os.path.exists(store):
                                    os.remove(store)
                                sums, rc, wall = run_player(bins["player"], url, log,
                                                            common + ["--estimate-store", store], a.timeout)
                                summary = sums[0] if sums else None
                            elif kind == "warm":
                                # the store the cold session of this rep just wrote, on the same link
                                wstore = os.path.join(out, "stores", f"{tag}-warm.json")
                                if os.path.exists(store):
                                    shutil.copy(store, wstore)
                                elif os.path.exists(wstore):
                                    os.remove(wstore)
                                sums, rc, wall = run_player(bins["player"], url, log,
                                                            common + ["--estimate-store", wstore], a.timeout)
                                summary = sums[0] if sums else None
                            else:  # channel change: second session of `--then`, fresh store
                                cstore = os.path.join(out, "stores", f"{tag}-cc.json")
                                if os.path.exists(cstore):
                                    os.remove(cstore)
                                sums, rc, wall = run_player(bins["player"], url, log,
                                                            common + ["--estimate-store", cstore, "--then", url],
                                                            2 * a.timeout)
                                summary = sums[1] if len(sums) > 1 else None
                                log = log[: -len(".jsonl")] + "-2.jsonl"
                            n += 1
                            if summary is None:
                                rec = {"ttff": None, "exit": f"no summary (rc {rc})", "log": log}
                            else:
                                rec = session_record(summary, log, ladder, rate_bps, rtt_s, a.duration)
                            rec.update({"kind": kind, "rate": rate, "seg": seg, "policy": pol, "rep": rep,
                                        "rc": rc, "wall": wall, "load1": run_player.last_load})
                            recs.append(rec)
                            sink.write(json.dumps(rec) + "\n")
                            sink.flush()
                            print(f"[{n}] {kind:14s} {tag:28s} ttff={fmt(rec.get('ttff'))} "
                                  f"gate={rec.get('gate')} v={rec.get('firstFrameVariant')} "
                                  f"stalls={rec.get('stalls')} wall={wall:.1f}s", file=sys.stderr, flush=True)
            finally:
                origin.stop()
    return recs


def grid_tables(recs, a):
    rtt_s = parse_secs(a.rtt)
    lines = []
    lines.append(f"### Grid ({a.reps} reps, --duration {a.duration}, --rtt {a.rtt}; stalls counted over the session)\n")
    lines.append("| kind | rate | seg | policy | n | gate | TTFF median | p90 | max | hard wedges | stalls | stall s | avg bitrate Mbit/s | first variant | TTFF/floor(chosen) median | max | TTFF/floor(lowest) median | load |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
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
        fv = [str(r.get("firstFrameVariant")) for r in cell]
        rc = [r["ratioChosen"] for r in cell if r.get("ratioChosen")]
        rl = [r["ratioLowest"] for r in cell if r.get("ratioLowest")]
        br = [r["avgBitrate"] for r in cell if r.get("avgBitrate")]
        lines.append("| " + " | ".join([
            k[0], k[1], f"{k[2]} s", k[3], str(len(cell)), "/".join(gates),
            fmt(statistics.median(t)) if t else "—", fmt(pctl(t, 90)) if t else "—", fmt(max(t)) if t else "—",
            str(wedges), str(sum(r.get("stalls") or 0 for r in cell)),
            fmt(sum(r.get("stallSeconds") or 0 for r in cell)),
            fmt(statistics.median(br) / 1e6) if br else "—", ",".join(fv),
            fmt(statistics.median(rc)) if rc else "—", fmt(max(rc)) if rc else "—",
            fmt(statistics.median(rl)) if rl else "—",
            fmt(statistics.median([r.get("load1") or 0 for r in cell]), 1)]) + " |")
    # the floor per (rate, seg)
    lines.append(f"\n### Startup floor (3 × RTT {a.rtt} + master + media playlist + first segment bytes ÷ rate + median demux+decode)\n")
    lines.append("| rate | seg | demux+decode s | floor lowest rung s | floor v1 | floor v2 | floor top rung s |")
    lines.append("|---|---|---|---|---|---|---|")
    for rate in a.rates:
        for seg in a.segments:
            ladder = Ladder(os.path.join(a.samples, f"ladder-{seg}s"))
            dec = [r["decodeSeconds"] for r in recs if r["rate"] == rate and r["seg"] == seg and r.get("decodeSeconds")]
            d = statistics.median(dec) if dec else 0.0
            fl = [floor_seconds(ladder, v, parse_rate(rate), rtt_s, d) for v in range(len(ladder.variants))]
            lines.append(f"| {rate} | {seg} s | {fmt(d, 3)} | " + " | ".join(fmt(x) for x in fl) + " |")
    # cold-start roll-up against the 1.2x target
    cold = [r for r in recs if r["kind"] == "cold" and r.get("ratioChosen")]
    if cold:
        lines.append("\n### Cold starts against the 1.2× floor target\n")
        lines.append("| policy | sessions | TTFF/floor(chosen) median | p90 | max | ≤ 1.2× | hard wedges |")
        lines.append("|---|---|---|---|---|---|---|")
        for pol in a.policies:
            c = [r for r in recs if r["kind"] == "cold" and r["policy"] == pol]
            rr = [r["ratioChosen"] for r in c if r.get("ratioChosen")]
            w = sum(1 for r in c if r.get("ttff") is None or r["ttff"] > HARD_WEDGE_S)
            if rr:
                lines.append(f"| {pol} | {len(c)} | {fmt(statistics.median(rr))} | {fmt(pctl(rr, 90))} | "
                             f"{fmt(max(rr))} | {sum(1 for x in rr if x <= 1.2)}/{len(rr)} | {w} |")
    return "\n".join(lines)


# ---------------------------------------------------------------- scenarios

def store_schema_from(out):
    """A store file a real run wrote (for the over-select scenario)."""
    for d in (os.path.join(out, "stores"),):
        if os.path.isdir(d):
            for f in sorted(os.listdir(d)):
                p = os.path.join(d, f)
                try:
                    doc = json.load(open(p))
                    if doc.get("records"):
                        return doc
                except Exception:
                    pass
    return None


def make_seed_store(bins, a, out):
    """Run one short cold session so that the player writes a real store file."""
    folder = os.path.join(a.samples, "ladder-2s")
    origin = Origin(bins["origin"], folder, ["--rate", "6mbit", "--rtt", a.rtt],
                    os.path.join(out, "logs", "origin-seed.jsonl"))
    try:
        store = os.path.join(out, "stores", "seed.json")
        if os.path.exists(store):
            os.remove(store)
        run_player(bins["player"], origin.base + "master.m3u8", os.path.join(out, "logs", "seed.jsonl"),
                   ["--duration", "8", "--estimate-store", store], a.timeout)
        return json.load(open(store)) if os.path.exists(store) else None
    finally:
        origin.stop()


def run_overselect(bins, a, out, sink):
    rtt_s = parse_secs(a.rtt)
    doc = store_schema_from(out) or make_seed_store(bins, a, out)
    if not doc:
        return "over-select: no store file was written by a real run; scenario skipped\n"
    folder = os.path.join(a.samples, "ladder-6s")
    ladder = Ladder(folder)
    top = len(ladder.variants) - 1
    naive = ladder.first_segment_bytes(top) * 8 / 2e6
    rows = []
    for pol in ("auto", "off", "first-variant"):
        for rep in range(a.reps if pol == "auto" else a.scenario_reps):
            origin = Origin(bins["origin"], folder, ["--rate", "2mbit", "--rtt", a.rtt],
                            os.path.join(out, "logs", f"origin-overselect-{pol}-{rep}.jsonl"))
            try:
                stale = json.loads(json.dumps(doc))
                rec0 = stale["records"][0]
                rec0["valueBps"] = 50e6
                rec0["sampleCount"] = max(10, rec0.get("sampleCount", 0))
                rec0["measuredAt"] = time.time() - 5
                stale["records"] = [rec0]
                store = os.path.join(out, "stores", f"overselect-{pol}-{rep}.json")
                json.dump(stale, open(store, "w"))
                log = os.path.join(out, "logs", f"overselect-{pol}-{rep}.jsonl")
                sums, rc, wall = run_player(bins["player"], origin.base + "master.m3u8", log,
                                            ["--duration", str(a.scenario_duration), "--startup-cap", pol,
                                             "--estimate-store", store], a.timeout + 60)
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
                         "exitReason": f"killed at the {a.timeout + 60:.0f} s timeout"}]
            r = session_record(sums[0], log, ladder, 2e6, rtt_s, a.scenario_duration)
            ab = next((e for e in ev if e.get("type") == "request.byteProgress"
                       and "over-selected" in json.dumps(e)), None)
            r["overSelectAt"] = ab.get("t") if ab else None
            r.update({"scenario": "overselect", "policy": pol, "rep": rep, "rc": rc, "wall": wall})
            sink.write(json.dumps(r) + "\n")
            sink.flush()
            print(f"overselect {pol} r{rep}: ttff={fmt(r['ttff'])} gate={r['gate']} over={r['overSelections']} "
                  f"v={r['firstRequestVariant']}->{r['firstFrameVariant']}", file=sys.stderr, flush=True)
            rows.append((pol, rep, r))
    lines = [f"### Over-select: stale warm estimate 50 Mbit/s, 2 Mbit/s link, 6 s segments, RTT {a.rtt}\n",
             f"Naive player (top rung v{top}, {ladder.bandwidth(top)/1e6:.2f} Mbit/s, first segment "
             f"{ladder.first_segment_bytes(top)} B ÷ 2 Mbit/s): **{naive:.1f} s** to the first segment's last byte.\n",
             "| policy | rep | gate | first request variant | first frame variant | first over-selection abandon at s | over-selections | TTFF s | floor (lowest) s | stalls | stall s | avg Mbit/s | exit |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for pol, rep, r in rows:
        lines.append(f"| {pol} | {rep} | {r.get('gate')} | {r.get('firstRequestVariant')} | {r.get('firstFrameVariant')} | "
                     f"{fmt(r.get('overSelectAt'))} | {r.get('overSelections')} | {fmt(r.get('ttff'))} | "
                     f"{fmt(r.get('floorLowest'))} | {r.get('stalls')} | {fmt(r.get('stallSeconds'))} | "
                     f"{fmt((r.get('avgBitrate') or 0)/1e6)} | {r.get('exit')} |")
    return "\n".join(lines) + "\n"


def dur_of(collapse_args):
    return float(collapse_args[1].split(":")[1])


def align_offset(origin_log, player_events):
    """server seconds = player t + offset, from the multivariant request."""
    srv = sorted(read_jsonl(origin_log), key=lambda e: e.get("accepted", 0))
    m = next((e for e in srv if e.get("path", "").endswith("master.m3u8")), None)
    p = next((e for e in player_events if e.get("type") == "request.start"
              and e.get("purpose") == "multivariant-playlist"), None)
    if not m or not p:
        return None
    return m["accepted"] - p["t"]


def run_recovery(bins, a, out, sink):
    rtt_s = parse_secs(a.rtt)
    scenarios = []
    for seg, rate, at, dur in ((6, "2mbit", 8, 12), (2, "2mbit", 6, 8), (6, "6mbit", 8, 12)):
        scenarios.append(("collapse", seg, rate, ["--collapse", f"{at}:{dur}"], at + dur))
    # one mid-stream segment black-holed once (the first request for it, any rung)
    for seg, rate, idx in ((6, "2mbit", 3), (2, "2mbit", 6), (6, "6mbit", 3)):
        scenarios.append(("black-hole", seg, rate, idx, None))
    lines = [f"### Recovery (RTT {a.rtt}, --duration {a.scenario_duration}, {a.scenario_reps} reps)\n",
             "`resume − link back`: collapse — from the end of the collapse (server clock, aligned on the multivariant "
             "request) to the end of the last stall that overlaps the collapse or starts within 2 segment durations "
             "after it (0 = the buffer covered it); black hole — from the black-holed request to the end of the "
             "stall it caused (0 = none), with the time until that segment was buffered in parentheses. "
             "`in segments` = that ÷ segment duration (target ≤ 2).\n",
             "| scenario | seg | rate | rep | stalls | stall s | wedges | resume − link back s | in segments | avg Mbit/s | exit |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for kind, seg, rate, arg, back in scenarios:
        folder = os.path.join(a.samples, f"ladder-{seg}s")
        ladder = Ladder(folder)
        for rep in range(a.scenario_reps):
            tag = f"{kind}-{seg}s-{rate}-r{rep}"
            olog = os.path.join(out, "logs", f"origin-{tag}.jsonl")
            extra = ["--rate", rate, "--rtt", a.rtt]
            if kind == "collapse":
                extra += arg
            else:
                faults = os.path.join(out, "stores", f"faults-{tag}.json")
                json.dump({"faults": [{"pathPattern": f"*/seg_{arg:05d}.ts", "requestIndex": 0,
                                       "action": {"type": "blackHole"}}]}, open(faults, "w"))
                extra += ["--faults", faults]
            origin = Origin(bins["origin"], folder, extra, olog)
            log = os.path.join(out, "logs", f"{tag}.jsonl")
            store = os.path.join(out, "stores", f"{tag}.json")
            if os.path.exists(store):
                os.remove(store)
            try:
                sums, rc, wall = run_player(bins["player"], origin.base + "master.m3u8", log,
                                            ["--duration", str(a.scenario_duration), "--estimate-store", store],
                                            a.timeout + 90)
            finally:
                origin.stop()
            ev = read_jsonl(log)
            s = sums[0] if sums else {}
            off = align_offset(olog, ev)
            rec = {"scenario": kind, "seg": seg, "rate": rate, "rep": rep, "rc": rc,
                   "stalls": s.get("stallCount"), "stallSeconds": s.get("stallSeconds"),
                   "wedges": s.get("wedgesDetected"), "avgBitrate": s.get("averageBitrateBps"),
                   "exit": s.get("exitReason"), "offset": off, "log": log}
            stalls = []  # (start, end) on the player clock
            for e in ev:
                if e.get("type") == "stall.start":
                    stalls.append([e.get("atSeconds", e["t"]), None])
                elif e.get("type") == "stall.end" and stalls and stalls[-1][1] is None:
                    stalls[-1][1] = e.get("atSeconds", e["t"])
            resume = None
            if kind == "collapse" and off is not None:
                at_p, back_p = back - dur_of(arg) - off, back - off  # player clock
                rec["linkBackPlayer"] = back_p
                hit = [st for st in stalls if st[0] <= back_p + 2 * seg and (st[1] is None or st[1] >= at_p)]
                if not hit:
                    resume = 0.0  # the buffer covered the collapse
                elif all(st[1] is not None for st in hit):
                    resume = max(0.0, max(st[1] for st in hit) - back_p)
                rec["playbackInterrupted"] = bool(hit)
            elif kind == "black-hole":
                # the first request for that segment (any rung) is the one the origin black-holed
                first = next((e for e in ev if e.get("type") == "request.start" and e.get("purpose") == "segment"
                              and e.get("mediaSequence") == arg), None)
                if first:
                    t_bh = first["t"]
                    rec["blackHoleAtPlayer"] = t_bh
                    buf = next((e for e in ev if e.get("type") == "segment.buffered" and e["t"] >= t_bh
                                and e.get("mediaSequence") == arg), None)
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
            sink.write(json.dumps(rec) + "\n")
            sink.flush()
            print(f"{tag}: stalls={rec['stalls']} resume={fmt(resume)} wedges={rec['wedges']}", file=sys.stderr, flush=True)
            lines.append(f"| {kind}{' ' + arg[1] if kind == 'collapse' else ' seg ' + str(arg)} | {seg} s | {rate} | {rep} | "
                         f"{rec['stalls']} | {fmt(rec['stallSeconds'])} | {rec['wedges']} | {fmt(resume)}"
                         f"{'' if kind == 'collapse' else ' (buffered ' + fmt(rec.get('bufferedAfter')) + ')'} | "
                         f"{fmt(resume / seg) if resume is not None else '—'} | "
                         f"{fmt((rec['avgBitrate'] or 0) / 1e6)} | {rec['exit']} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="/tmp/hlsplay-grid")
    ap.add_argument("--samples", default=os.path.join(ROOT, "Samples", "build"))
    ap.add_argument("--bin", default=os.path.join(ROOT, ".build", "release"))
    ap.add_argument("--rates", default="2mbit,6mbit,20mbit")
    ap.add_argument("--segments", default="2,6")
    ap.add_argument("--policies", default="auto,off,first-variant")
    ap.add_argument("--kinds", default="cold,warm,channel-change")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--duration", type=float, default=6)
    ap.add_argument("--scenario-duration", type=float, default=30)
    ap.add_argument("--scenario-reps", type=int, default=2,
                    help="repetitions of each recovery scenario and of the non-auto over-select runs")
    ap.add_argument("--rtt", default="40ms")
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--only", default="grid,overselect,recovery")
    a = ap.parse_args()
    a.rates = a.rates.split(",")
    a.segments = [int(x) for x in a.segments.split(",")]
    a.policies = a.policies.split(",")
    a.kinds = a.kinds.split(",")
    bins = {"player": os.path.join(a.bin, "hlsplay"), "origin": os.path.join(a.bin, "hls-origin")}
    for b in bins.values():
        if not os.access(b, os.X_OK):
            sys.exit(f"grid: {b} missing; run Tools/grid.sh (it builds the release binaries)")
    for d in ("logs", "stores"):
        os.makedirs(os.path.join(a.out, d), exist_ok=True)
    only = a.only.split(",")
    t0 = time.time()
    with open(os.path.join(a.out, "sessions.jsonl"), "a") as sink:
        if "grid" in only:
            recs = run_grid(a, bins, a.out, sink)
            print(grid_tables(recs, a), flush=True)
        if "overselect" in only:
            print("\n" + run_overselect(bins, a, a.out, sink), flush=True)
        if "recovery" in only:
            print("\n" + run_recovery(bins, a, a.out, sink), flush=True)
    print(f"\n_wall time {time.time() - t0:.0f} s; 1-min load average at the end {os.getloadavg()[0]:.1f}; "
          f"raw records in {a.out}/sessions.jsonl_")


if __name__ == "__main__":
    main()
