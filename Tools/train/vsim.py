#!/usr/bin/env python3
"""The player's own decision code in virtual time (`hlsplay simulate`), at scale.

    python3 Tools/train/vsim.py compare [--data /tmp/hlsplay-train] [--bin .build/release] [--phases heldout,onoff]
    python3 Tools/train/vsim.py onoff   [--data ...] [--ladder DIR] [--offsets 16] [--policy FILE] [--tag NAME]

compare  For every real session in the manifest (collect.py), one simulated
         session on the very trace file hls-origin replayed, with the same
         predictor, model, policy constants and media duration. Prints, per
         arm and overall, stalls, time stalled, bitrate and time to first frame,
         real against simulated, and writes them to results-v2.json
         ("virtualSimVsReal").
onoff    The controller on (--predictor model) and off on the held-out traces
         (--traces train: the training traces, to tune on) at many start
         offsets: breadth the real runs cannot afford. Prints
         the totals (the same figures as onoff_report.py) and their paired
         statistics (onoff_report.compare_pairs: Wilcoxon, sign test,
         bootstrap CI, pairs keyed by trace and offset) and writes
         DATA/vsim-onoff-TAG.json (with the per-pair figures).

The simulated sessions' logs go to DATA/vsim-logs/ and are ordinary session
logs (reallogs.py reads them; `hlsplay report` draws them).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import collect  # noqa: E402
import onoff_report  # noqa: E402
import reallogs  # noqa: E402
import results_file  # noqa: E402

DEFAULT_MODEL = os.path.join(REPO, "models", "stall-logistic-v2.json")


def simulate(bin_dir: str, ladder: str, trace_file: str, log: str, duration: float, predictor: str,
             model: str | None = None, policy: str | None = None) -> dict:
    """One `hlsplay simulate` run; returns its summary."""
    cmd = [os.path.join(bin_dir, "hlsplay"), "simulate", ladder, "--trace", trace_file, "--trace-format", "sabre",
           "--duration", str(duration), "--predictor", predictor, "--log", log, "--json"]
    if model and predictor == "model":
        cmd += ["--model", model]
    if policy and predictor != "off":
        cmd += ["--policy", policy]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode not in (0, 69):
        raise RuntimeError(f"{' '.join(cmd)}: exit {out.returncode}: {out.stderr.strip()}")
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    summary["playbackStartSeconds"] = reallogs.playback_start(log)
    return summary


def figures(summaries: list) -> dict:
    n = len(summaries)
    bitrates = [s["averageBitrateBps"] for s in summaries if s.get("averageBitrateBps")]
    ttff = [s["timeToFirstFrameSeconds"] for s in summaries if s.get("timeToFirstFrameSeconds") is not None]
    starts = [s["playbackStartSeconds"] for s in summaries if s.get("playbackStartSeconds") is not None]
    return dict(sessions=n, stalls=sum(s["stallCount"] for s in summaries),
                sessionsWithStalls=sum(1 for s in summaries if s["stallCount"] > 0),
                stallSeconds=round(sum(s["stallSeconds"] for s in summaries), 2),
                averageBitrateBps=round(sum(bitrates) / len(bitrates)) if bitrates else None,
                meanTimeToFirstFrameSeconds=round(sum(ttff) / len(ttff), 3) if ttff else None,
                meanPlaybackStartSeconds=round(sum(starts) / len(starts), 3) if starts else None)


def _ladder_of(row: dict) -> str:
    return "ladder-low" if row["id"].endswith("-low") else "ladder"


def compare(args):
    spec = collect.load_spec(args.spec)
    rows = [r for r in reallogs.load_manifest(args.data, set(args.phases.split(","))) if r.get("exitStatus") == 0]
    logs = os.path.join(args.data, "vsim-logs")
    os.makedirs(logs, exist_ok=True)

    def one(r):
        # The real session's own binary decides its policy constants: ask it (its header) for them.
        policy = None
        if r["predictor"] != "off":
            with open(os.path.join(args.data, r["log"])) as fh:
                header = json.loads(fh.readline())
            policy = os.path.join(logs, r["id"] + ".policy.json")
            with open(policy, "w") as fh:
                json.dump(header["configuration"]["policy"], fh)
        # The ladder the real session played (manifests before the low-rung ladder do not name it).
        ladder = os.path.join(args.data, r.get("ladder") or _ladder_of(r))
        return r, simulate(args.bin, ladder, r["traceFile"], os.path.join(logs, r["id"] + ".jsonl"),
                           spec["sessionMediaSeconds"], r["predictor"], r.get("model"), policy)

    with cf.ThreadPoolExecutor(args.jobs) as pool:
        pairs = list(pool.map(one, rows))
    by_arm = {}
    for r, s in pairs:
        by_arm.setdefault(r["controller"], []).append((r, s))
    table = {}
    print(f"{'arm':10} {'n':>3} {'stalls r/s':>11} {'stall s r/s':>15} {'Mbit/s r/s':>11} {'TTFF r/s':>11} {'same stall count':>17}")
    for arm in sorted(by_arm) + ["all"]:
        ps = [p for a in by_arm for p in by_arm[a]] if arm == "all" else by_arm[arm]
        real = figures([r for r, _ in ps])
        simd = figures([s for _, s in ps])
        same = sum(1 for r, s in ps if r["stallCount"] == s["stallCount"])
        abs_stall_s = sum(abs(r["stallSeconds"] - s["stallSeconds"]) for r, s in ps) / len(ps)
        table[arm] = dict(real=real, simulated=simd, sameStallCount=same, meanAbsStallSecondsDifference=round(abs_stall_s, 2),
                          meanRealLoadAverage1m=round(sum(r.get("loadAverage1mStart", 0) for r, _ in ps) / len(ps), 2))
        print(f"{arm:10} {len(ps):3} {real['stalls']:5}/{simd['stalls']:<5} {real['stallSeconds']:7.1f}/{simd['stallSeconds']:<7.1f} "
              f"{(real['averageBitrateBps'] or 0) / 1e6:5.2f}/{(simd['averageBitrateBps'] or 0) / 1e6:<5.2f} "
              f"{real['meanTimeToFirstFrameSeconds'] or 0:5.2f}/{simd['meanTimeToFirstFrameSeconds'] or 0:<5.2f} "
              f"{same:>10}/{len(ps)}")
    sessions = [dict(id=r["id"], trace=r["trace"], offsetSeconds=r["offsetSeconds"], controller=r["controller"],
                     real=dict(stalls=r["stallCount"], stallSeconds=round(r["stallSeconds"], 2),
                               averageBitrateBps=round(r["averageBitrateBps"] or 0),
                               timeToFirstFrameSeconds=r.get("timeToFirstFrameSeconds")),
                     simulated=dict(stalls=s["stallCount"], stallSeconds=round(s["stallSeconds"], 2),
                                    averageBitrateBps=round(s.get("averageBitrateBps") or 0),
                                    timeToFirstFrameSeconds=s.get("timeToFirstFrameSeconds")))
                for r, s in pairs]
    if args.results:
        results_file.update(args.results, {args.results_key: dict(
            dataDirectory=args.data, phases=args.phases, byArm=table, sessions=sessions,
            note="hlsplay simulate (the player's decision code, virtual time) on each real "
                 "session's trace file, predictor, model and policy constants")},
            f"Tools/train/vsim.py compare --phases {args.phases} --results-key {args.results_key}")


def onoff(args):
    ladder = args.ladder or os.path.join(args.data, "ladder")
    logs = os.path.join(args.data, "vsim-logs", "onoff-" + args.tag)
    traces = os.path.join(args.data, "vsim-traces")
    os.makedirs(logs, exist_ok=True)
    os.makedirs(traces, exist_ok=True)
    jobs = []
    spec = collect.load_spec(args.spec)
    for ti, rel in enumerate(spec["traces"][args.traces]):
        for k in range(args.offsets):
            fraction = k / args.offsets
            path, offset, scale = collect.derive_trace(rel, fraction, traces, spec["scaling"])
            for arm in ("on", "off"):
                jobs.append(dict(trace=rel, offset=offset, file=path, arm=arm, id=f"{ti:02d}-{k:02d}-{arm}"))

    def one(j):
        s = simulate(args.bin, ladder, j["file"], os.path.join(logs, j["id"] + ".jsonl"), spec["sessionMediaSeconds"],
                     "model" if j["arm"] == "on" else "off", args.model, args.policy)
        return j, s

    with cf.ThreadPoolExecutor(args.jobs) as pool:
        done = list(pool.map(one, jobs))
    on = [s for j, s in done if j["arm"] == "on"]
    off = [s for j, s in done if j["arm"] == "off"]
    f_on, f_off = figures(on), figures(off)
    ratio = (f_on["averageBitrateBps"] / f_off["averageBitrateBps"]) if f_off["averageBitrateBps"] else None
    verdict = dict(fewerStalls=f_on["stalls"] < f_off["stalls"], lessTimeStalled=f_on["stallSeconds"] < f_off["stallSeconds"],
                   bitrateRatioOnOverOff=round(ratio, 4) if ratio else None,
                   bitrateWithinTolerance=ratio is not None and ratio >= 0.9)
    verdict["targetMet"] = verdict["fewerStalls"] and verdict["lessTimeStalled"] and verdict["bitrateWithinTolerance"]
    arms = {}
    for j, s in done:
        arms.setdefault((j["trace"], j["offset"]), {})[j["arm"]] = s
    fields = ("stallCount", "stallSeconds", "averageBitrateBps")
    pairs = [dict(trace=t, offsetSeconds=o, on={k: a["on"].get(k) for k in fields},
                  off={k: a["off"].get(k) for k in fields}) for (t, o), a in arms.items()]
    comparison = onoff_report.compare_pairs(pairs)
    onoff_report.print_comparison("paired", comparison)
    out = dict(tag=args.tag, ladder=ladder, policy=args.policy, model=args.model, traces=args.traces, offsetsPerTrace=args.offsets,
               on=f_on, off=f_off, verdict=verdict, comparison=comparison, pairs=pairs)
    with open(os.path.join(args.data, f"vsim-onoff-{args.tag}.json"), "w") as fh:
        json.dump(out, fh, indent=2)
    print(json.dumps(dict(on=f_on, off=f_off, verdict=verdict), indent=1))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("compare", "onoff"):
        p = sub.add_parser(name)
        p.add_argument("--data", default="/tmp/hlsplay-train")
        p.add_argument("--bin", default=os.path.join(REPO, ".build", "release"))
        p.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
        p.add_argument("--model", default=DEFAULT_MODEL)
        p.add_argument("--spec", default=collect.DEFAULT_SPEC,
                       help="the collection spec (traces, scaling, media seconds; default specs/stall-v2.json)")
    sub.choices["compare"].add_argument("--phases", default="heldout,onoff")
    sub.choices["compare"].add_argument("--results", default=os.path.join(HERE, "results-v2.json"))
    sub.choices["compare"].add_argument("--results-key", default="virtualSimVsReal")
    sub.choices["onoff"].add_argument("--ladder")
    sub.choices["onoff"].add_argument("--offsets", type=int, default=16)
    sub.choices["onoff"].add_argument("--policy")
    sub.choices["onoff"].add_argument("--tag", default="default")
    sub.choices["onoff"].add_argument("--traces", choices=["train", "heldout"], default="heldout",
                                      help="which side of the split: tune on train, judge on heldout")
    args = ap.parse_args()
    {"compare": compare, "onoff": onoff}[args.cmd](args)


if __name__ == "__main__":
    main()
