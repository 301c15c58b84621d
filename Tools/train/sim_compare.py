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
import train  # noqa: E402

H = train.HORIZON_SECONDS


def sim_bitrate(s) -> float | None:
    if s.play_start is None:
        return None
    stalled = sum(((e if e is not None else s.duration) - b) for b, e in s.stalls)
    played = s.duration - s.play_start - stalled
    return s.bits_played / played if played > 0 else None


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
    args = ap.parse_args()
    model = json.load(open(args.model))
    rows = reallogs.load_manifest(args.data, set(args.phases.split(",")))
    real = reallogs.load_sessions(args.data, rows)
    by_trace = {}
    for s in real:
        by_trace.setdefault(s.trace, []).append(s)
    table = []
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
    results_file.update(args.results, {"simVsReal": dict(
        perTrace=table, overall=overall,
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


if __name__ == "__main__":
    main()
