#!/usr/bin/env python3
"""Controller on vs off on the held-out traces, from the collector's manifest.

    python3 Tools/train/onoff_report.py --phase onoff [--data /tmp/hlsplay-train] [--tag NAME]

Each held-out trace and offset ran twice at the same time, once with the
controller on (--predictor model --model M) and once off (--predictor off),
the order alternating (collect.py). Prints per pair and in total: stalls, time
stalled, average bitrate (the summary's media-time-weighted BANDWIDTH), and
the 1-min load average; checks the issue's target (fewer stalls and less time
stalled with the controller on, at an average bitrate at most 10 % lower).
With --tag, stores the totals in results-v2.json under "onOff"[tag].

Each claim (fewer stalls, less time stalled, the bitrate) comes with its
paired statistics (stats.paired_comparison: Wilcoxon signed-rank, sign test,
bootstrap 95 % CI of the mean on − off difference per pair; pairs keyed by
(trace, offset)), printed beside the totals and stored with them
(onOff[tag]["comparison"]).

    python3 Tools/train/onoff_report.py --compare [TAG[+TAG…] …]

needs no session logs: it recomputes the paired statistics from the per-pair
figures already stored under "onOff" (every tag alone, and the published
combinations in COMBINED_TAGS; a trace offset that ran in several of the
combined tags counts once, its replicates averaged) and stores them under
"onOffPaired" (its own key; "onOff" is left as it was).
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reallogs  # noqa: E402  (it puts Tools/lib on the path)
import results_file  # noqa: E402
import stats  # noqa: E402
from hlsplay_tools import read_jsonl  # noqa: E402

BITRATE_TOLERANCE = 0.10  # the issue's "no more than 10 % lower"
# The per-pair figures each claim is tested on: (name in the results, pair field, unit).
COMPARED = [("stalls", "stallCount", ""), ("stallSeconds", "stallSeconds", " s"),
            ("averageBitrateBps", "averageBitrateBps", " bit/s")]
# Tags whose pairs docs/stall-prediction.md reports together ("39 stalls against 48":
# the third round's two 4-rung batches).
COMBINED_TAGS = [("v2-start-gate-4-rungs", "v2-start-gate-4-rungs-b")]


def compare_pairs(pairs: list) -> dict:
    """Controller on (A) against off (B) over stored pairs ({trace, offsetSeconds, on, off});
    a (trace, offset) that appears more than once counts once, its replicates averaged; a
    pair missing a figure on either side (no bitrate: never played) is left out of that claim."""
    out = {}
    for name, field, _ in COMPARED:
        kept = [p for p in pairs if p["on"].get(field) is not None and p["off"].get(field) is not None]
        keys = [(p["trace"], p["offsetSeconds"]) for p in kept]
        on, replicated = stats.mean_by_key(keys, [p["on"][field] for p in kept])
        off, _ = stats.mean_by_key(keys, [p["off"][field] for p in kept])
        out[name] = stats.paired_comparison([v for _, v in on], [v for _, v in off], [k for k, _ in on])
        out[name]["replicatedKeysAveraged"] = replicated
    return out


def print_comparison(title: str, comparison: dict):
    print(f"{title}: controller on (A) against off (B), paired by (trace, offset)")
    for name, _, unit in COMPARED:
        print(f"  {name:18} {stats.describe(comparison[name], unit, 0 if name == 'averageBitrateBps' else 2)}")


def compare_stored(path: str, groups: list) -> dict:
    """The paired statistics of stored "onOff" tags (each group: tags whose pairs are pooled)."""
    on_off = results_file.load(path).get("onOff", {})
    out = {}
    for tags in groups:
        missing = [t for t in tags if t not in on_off]
        if missing:
            raise SystemExit(f"onoff_report: no stored onOff tag {', '.join(missing)} in {path}")
        pairs = [p for t in tags for p in on_off[t]["pairs"]]
        name = "+".join(tags)
        out[name] = dict(tags=list(tags), arms=sorted({on_off[t]["arm"] for t in tags}), **compare_pairs(pairs))
        print_comparison(name, out[name])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/tmp/hlsplay-train")
    ap.add_argument("--phase", default="onoff")
    ap.add_argument("--arm", default="on", help="the controller-on arm to compare with off: on | on-tuned")
    ap.add_argument("--tag")
    ap.add_argument("--run-tag", help="only sessions whose id ends with -RUN_TAG (collect.py --tag)")
    ap.add_argument("--results", default=os.path.join(HERE, "results-v2.json"))
    ap.add_argument("--compare", nargs="*", metavar="TAG[+TAG]",
                    help="no logs: paired statistics of stored onOff tags (default: every tag, and COMBINED_TAGS)")
    args = ap.parse_args()
    if args.compare is not None:
        groups = [tuple(g.split("+")) for g in args.compare]
        if not groups:
            groups = [(t,) for t in results_file.load(args.results).get("onOff", {})] + COMBINED_TAGS
        paired = compare_stored(args.results, groups)
        results_file.update(args.results, {"onOffPaired": paired},
                            "Tools/train/onoff_report.py --compare (from the stored onOff pairs)")
        return
    rows = reallogs.load_manifest(args.data, {args.phase})
    if args.run_tag:
        rows = [r for r in rows if r["id"].endswith("-" + args.run_tag)]
    pairs = {}
    for r in rows:
        if r.get("stallCount") is None:
            print("no summary:", r["id"], r.get("stderr"))
            continue
        pairs.setdefault((r["trace"], r["offsetSeconds"]), {})[r["controller"]] = r
    tot = {arm: dict(sessions=0, stalls=0, stallSeconds=0.0, bitrateSum=0.0, playedSeconds=0.0, load=0.0,
                     sessionsWithStalls=0, starts=[]) for arm in ("on", "off")}
    per = []
    print(f"{'trace':50} {'offset':>7}  {'stalls on/off':>13} {'stall s on/off':>15} {'Mbit/s on/off':>14} {'load':>9}")
    for (trace, off), arms in sorted(pairs.items()):
        if args.arm not in arms or "off" not in arms:
            continue
        arms = {"on": arms[args.arm], "off": arms["off"]}
        for arm, r in arms.items():
            t = tot[arm]
            t["sessions"] += 1
            t["stalls"] += r["stallCount"]
            t["sessionsWithStalls"] += 1 if r["stallCount"] else 0
            t["stallSeconds"] += r["stallSeconds"]
            t["bitrateSum"] += r["averageBitrateBps"] * r["playedSeconds"]
            t["playedSeconds"] += r["playedSeconds"]
            t["load"] += (r["loadAverage1mStart"] + r["loadAverage1mEnd"]) / 2
            start = reallogs.playback_start(os.path.join(args.data, r["log"]))
            if start is not None:
                t["starts"].append(start)
        on, offr = arms["on"], arms["off"]
        per.append(dict(trace=trace, offsetSeconds=off,
                        on={k: on[k] for k in ("stallCount", "stallSeconds", "averageBitrateBps", "policyChanges")},
                        off={k: offr[k] for k in ("stallCount", "stallSeconds", "averageBitrateBps")}))
        print(f"{trace[-50:]:50} {off:7.0f}  {on['stallCount']:5d}/{offr['stallCount']:<7d} "
              f"{on['stallSeconds']:6.1f}/{offr['stallSeconds']:<8.1f} "
              f"{on['averageBitrateBps'] / 1e6:5.2f}/{offr['averageBitrateBps'] / 1e6:<8.2f} "
              f"{(on['loadAverage1mStart'] + on['loadAverage1mEnd']) / 2:4.1f}/"
              f"{(offr['loadAverage1mStart'] + offr['loadAverage1mEnd']) / 2:.1f}")
    # Why: the policy in force when each stall began, and the time per stall.
    onset = {"on": {}, "off": {}}
    for (trace, off), arms in pairs.items():
        if args.arm not in arms or "off" not in arms:
            continue
        for arm, r in (("on", arms[args.arm]), ("off", arms["off"])):
            pol = "lowLatency" if arm == "on" else "none"
            for rec in read_jsonl(os.path.join(args.data, r["log"]), strict=True):
                if rec["type"] == "policy.change":
                    pol = rec["to"]
                elif rec["type"] == "stall.start":
                    onset[arm][pol] = onset[arm].get(pol, 0) + 1
    print("stalls by policy at onset:", onset)
    out = {}
    for arm, t in tot.items():
        n = max(t["sessions"], 1)
        out[arm] = dict(sessions=t["sessions"], stalls=t["stalls"], sessionsWithStalls=t["sessionsWithStalls"],
                        stallSeconds=round(t["stallSeconds"], 2),
                        averageBitrateBps=round(t["bitrateSum"] / t["playedSeconds"]) if t["playedSeconds"] else None,
                        meanLoadAverage1m=round(t["load"] / n, 2),
                        secondsPerStall=round(t["stallSeconds"] / t["stalls"], 2) if t["stalls"] else None,
                        meanPlaybackStartSeconds=round(sum(t["starts"]) / len(t["starts"]), 3) if t["starts"] else None,
                        stallsByPolicyAtOnset=onset[arm])
    on, off = out["on"], out["off"]
    ratio = on["averageBitrateBps"] / off["averageBitrateBps"] if off["averageBitrateBps"] else None
    verdict = dict(fewerStalls=on["stalls"] < off["stalls"], lessTimeStalled=on["stallSeconds"] < off["stallSeconds"],
                   bitrateRatioOnOverOff=round(ratio, 4) if ratio else None,
                   bitrateWithinTolerance=ratio is not None and ratio >= 1 - BITRATE_TOLERANCE)
    verdict["targetMet"] = all(verdict[k] for k in ("fewerStalls", "lessTimeStalled", "bitrateWithinTolerance"))
    print("on :", on)
    print("off:", off)
    print("verdict:", verdict)
    comparison = compare_pairs(per)
    print_comparison("paired", comparison)
    if args.tag:
        # One entry per tag: the other tags' entries stay.
        on_off = results_file.load(args.results).get("onOff", {})
        on_off[args.tag] = dict(phase=args.phase, arm=args.arm, on=on, off=off, verdict=verdict, pairs=per,
                             comparison=comparison)
        results_file.update(args.results, {"onOff": on_off}, "Tools/train/onoff_report.py --tag TAG (one entry per tag)")


if __name__ == "__main__":
    main()
