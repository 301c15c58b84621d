#!/usr/bin/env python3
"""Simulator vs real: the same derived trace files, the same session lengths.

    python3 Tools/train/sim_compare.py [--data /tmp/hlsplay-train] [--model models/stall-logistic-v2.json]

For every real session in the manifest, sim.py runs one virtual session on the
very trace file hls-origin replayed (rotated and scaled by collect.py; offset
0; the same first-byte latency) for as long as the real session lasted. Per
trace it prints and writes (into results-v2.json, key "simVsReal") stalls,
time stalled and average bitrate in sim and real, and the model's AUC on each.

Which real sessions: for held-out traces the controller-off arm for stalls,
stall time and bitrate (the simulator has no controller), the on arm for the
AUC (only those log features); for training traces every session (they all
ran with a controller, v1 model or heuristic).

The claims "the simulator stalls more, stalls longer, plays a higher bitrate"
come with paired statistics (stats.paired_comparison, simulated (A) against
real (B): Wilcoxon signed-rank, sign test, bootstrap 95 % CI of the mean
difference), each real session paired with its simulated twin by (trace,
offset), a (trace, offset) with several real sessions averaged; stored as
simVsReal["comparison"].

    python3 Tools/train/sim_compare.py --compare

needs no session logs: the same statistics over the stored per-trace figures
(simVsReal["perTrace"], one pair per trace: that trace's per-session means),
stored under "simVsRealPaired" ("simVsReal" is left as it was).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import reallogs  # noqa: E402
import results_file  # noqa: E402
import sim  # noqa: E402
import stats  # noqa: E402
import train  # noqa: E402

H = train.HORIZON_SECONDS


def sim_bitrate(s) -> float | None:
    if s.play_start is None:
        return None
    stalled = sum(((e if e is not None else s.duration) - b) for b, e in s.stalls)
    played = s.duration - s.play_start - stalled
    return s.bits_played / played if played > 0 else None


# (claim, real per-session value, simulated per-session value, per-trace field stem, unit)
COMPARED = [
    ("stallsPerSession", lambda s: s.summary["stallCount"], lambda s: len(s.stalls), "StallsPerSession", ""),
    ("stallSecondsPerSession", lambda s: s.summary["stallSeconds"],
     lambda s: sum(((e if e is not None else s.duration) - b) for b, e in s.stalls), "StallSecondsPerSession", " s"),
    ("averageBitrateBps", lambda s: s.summary.get("averageBitrateBps"), sim_bitrate, "AverageBitrateBps", " bit/s"),
]


def compare_sessions(pairs) -> dict:
    """Simulated (A) against real (B) over [((trace, offset), real session, sim session)]; a
    (trace, offset) with several real sessions counts once, its values averaged. A pair
    where either side has no value (no bitrate: never played) is left out of that claim."""
    out = {}
    for name, real_value, sim_value, _, _ in COMPARED:
        kept = [(k, sim_value(sm), real_value(r)) for k, r, sm in pairs]
        kept = [(k, a, b) for k, a, b in kept if a is not None and b is not None]
        a, replicated = stats.mean_by_key([k for k, _, _ in kept], [a for _, a, _ in kept])
        b, _ = stats.mean_by_key([k for k, _, _ in kept], [b for _, _, b in kept])
        out[name] = stats.paired_comparison([v for _, v in a], [v for _, v in b], [k for k, _ in a])
        out[name]["replicatedKeysAveraged"] = replicated
    return out


def compare_stored(path: str) -> dict:
    """The same claims over the stored per-trace means (one pair per trace)."""
    per = results_file.load(path).get("simVsReal", {}).get("perTrace")
    if not per:
        raise SystemExit(f"sim_compare: no simVsReal.perTrace in {path}")
    out = {}
    for name, _, _, stem, _ in COMPARED:
        rows = [r for r in per if r.get("sim" + stem) is not None and r.get("real" + stem) is not None]
        out[name] = stats.paired_comparison([r["sim" + stem] for r in rows], [r["real" + stem] for r in rows],
                                            [r["trace"] for r in rows])
        out[name]["pairedBy"] = "trace (that trace's per-session means over its offsets)"
    return out


def print_comparison(title: str, comparison: dict):
    print(f"{title}: simulated (A) against real (B)")
    for name, _, _, _, unit in COMPARED:
        print(f"  {name:22} {stats.describe(comparison[name], unit, 0 if name == 'averageBitrateBps' else 2)}")


def scores(sessions, model):
    sc, lab = [], []
    for s in sessions:
        for _, f, y in train.label_session(s, H):
            sc.append(train.model_probability(model, f))
            lab.append(y)
    return sc, lab


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/tmp/hlsplay-train")
    ap.add_argument("--model", default=os.path.join(REPO, "models", "stall-logistic-v2.json"))
    ap.add_argument("--results", default=os.path.join(HERE, "results-v2.json"))
    ap.add_argument("--phases", default="train,heldout", help="manifest phases to compare")
    ap.add_argument("--compare", action="store_true",
                    help="no logs: paired statistics over the stored per-trace figures (key simVsRealPaired)")
    args = ap.parse_args()
    if args.compare:
        paired = compare_stored(args.results)
        print_comparison("per trace", paired)
        results_file.update(args.results, {"simVsRealPaired": paired},
                            "Tools/train/sim_compare.py --compare (from the stored simVsReal.perTrace)")
        return
    model = json.load(open(args.model))
    rows = reallogs.load_manifest(args.data, set(args.phases.split(",")))
    real = reallogs.load_sessions(args.data, rows)
    by_trace = {}
    for s in real:
        by_trace.setdefault(s.trace, []).append(s)
    table, session_pairs = [], []
    all_real_sc, all_real_lab, all_sim_sc, all_sim_lab = [], [], [], []
    for trace in sorted(by_trace):
        ss = by_trace[trace]
        held = ss[0].meta["split"] == "heldout"
        stat_real = [s for s in ss if s.meta.get("controller") == "off"] if held else ss
        auc_real = [s for s in ss if s.samples]
        sims = []
        for i, s in enumerate(stat_real):
            tr = sim.Trace(trace, sim.load_sabre(s.meta["traceFile"]))
            sims.append(sim.simulate(tr, 0.0, 1000 + i, duration=s.duration))
            session_pairs.append(((trace, s.meta.get("offsetSeconds")), s, sims[-1]))
        rs, rl = scores(auc_real, model)
        ssc, sl = scores(sims, model)
        all_real_sc += rs
        all_real_lab += rl
        all_sim_sc += ssc
        all_sim_lab += sl
        n_r, n_s = len(stat_real), len(sims)
        row = dict(
            trace=trace, split=ss[0].meta["split"], scale=ss[0].meta["scale"],
            realSessions=n_r, realArm="controller off" if held else "controller on (v1 model / heuristic)",
            realStallsPerSession=sum(s.summary["stallCount"] for s in stat_real) / n_r,
            realStallSecondsPerSession=sum(s.summary["stallSeconds"] for s in stat_real) / n_r,
            realAverageBitrateBps=float(np.mean([s.summary["averageBitrateBps"] for s in stat_real
                                                 if s.summary.get("averageBitrateBps")])),
            simStallsPerSession=sum(len(s.stalls) for s in sims) / n_s,
            simStallSecondsPerSession=sum(((e if e is not None else s.duration) - b) for s in sims
                                          for b, e in s.stalls) / n_s,
            simAverageBitrateBps=float(np.mean([b for b in (sim_bitrate(s) for s in sims) if b])),
            realModelAUC=train.auc(rs, rl), simModelAUC=train.auc(ssc, sl),
            realPositiveRate=(sum(rl) / len(rl)) if rl else None, simPositiveRate=(sum(sl) / len(sl)) if sl else None,
        )
        table.append(row)
    overall = dict(realModelAUC=train.auc(all_real_sc, all_real_lab), simModelAUC=train.auc(all_sim_sc, all_sim_lab),
                   model=os.path.basename(args.model))
    comparison = compare_sessions(session_pairs)
    results_file.update(args.results, {"simVsReal": dict(
        perTrace=table, overall=overall, comparison=comparison,
        note="same derived trace files and session lengths; sim player is BBA-0 with a 20 s buffer cap, no controller")},
        "Tools/train/sim_compare.py")

    def fm(x, p=2):
        return "—" if x is None else f"{x:.{p}f}"
    print(f"{'trace':52} {'split':7} {'stalls r/s':>11} {'stall s r/s':>13} {'Mbit/s r/s':>11} {'AUC r/s':>11}")
    for r in table:
        print(f"{r['trace'][:52]:52} {r['split']:7} {r['realStallsPerSession']:5.1f}/{r['simStallsPerSession']:<5.1f} "
              f"{r['realStallSecondsPerSession']:6.1f}/{r['simStallSecondsPerSession']:<6.1f} "
              f"{r['realAverageBitrateBps'] / 1e6:5.2f}/{r['simAverageBitrateBps'] / 1e6:<5.2f} "
              f"{fm(r['realModelAUC'])}/{fm(r['simModelAUC'])}")
    print("overall AUC real / sim:", fm(overall["realModelAUC"], 3), fm(overall["simModelAUC"], 3))
    print_comparison("per session, paired by (trace, offset)", comparison)


if __name__ == "__main__":
    main()
