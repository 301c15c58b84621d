#!/usr/bin/env python3
"""The paired figures docs/stall-prediction.md computes from results-v2.json's stored pairs and sessions
and writes into no key of it (each comparison a paired test and a BCa interval, Tools/train/stats.py):

- controller on against off on the 4-rung ladder, both batches and the held-out batch, without the four
  Norway HSDPA traces (their recordings are on the training side too);
- the off arm on the low-rung ladder against the 4-rung ladder (stalls and seconds stalled);
- the simulator against the real sessions: the third round's seconds stalled, the earlier sessions' first
  frame, the v2 model's AUC per trace;
- the third round's real first frame, controller on against off.

    python3 Tools/train/doc_figures.py [--results Tools/train/results-v2.json]

A second of wall clock; Tools/tests/test_train_doc_figures.py checks that the doc quotes each interval.
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import onoff_report  # noqa: E402
import recording_groups  # noqa: E402
import stats  # noqa: E402

RESULTS = os.path.join(HERE, "results-v2.json")
# The recording groups stall-v2's split puts on both sides (the Norway HSDPA recordings: Pensieve's cut
# trains, Sabre's is held out), left out of the "without Norway" figures.
CROSSING = recording_groups.PUBLISHED_SPLIT_CROSSINGS
FOUR_RUNGS = ("v2-start-gate-4-rungs", "v2-start-gate-4-rungs-b")


def figures(results: dict) -> list[tuple[str, dict, str, int]]:
    """[(label, stats.paired_comparison result, unit, digits)] in the order the doc quotes them."""
    out = []
    onoff = results["onOff"]
    for tags in (FOUR_RUNGS, FOUR_RUNGS[1:]):
        kept = [p for t in tags for p in onoff[t]["pairs"] if recording_groups.group_of(p["trace"]) not in CROSSING]
        comparisons = onoff_report.compare_pairs(kept)
        for name, _, unit in onoff_report.COMPARED:
            digits = 0 if name == "averageBitrateBps" else 2
            out.append((f"on − off without Norway, {'+'.join(tags)}: {name}", comparisons[name], unit, digits))
    low, four = ({(p["trace"], p["offsetSeconds"]): p["off"] for p in onoff[t]["pairs"]}
                 for t in ("v2-start-gate-low-rung", FOUR_RUNGS[0]))
    for field in ("stallCount", "stallSeconds"):
        c = stats.paired_comparison([low[k][field] for k in low], [four[k][field] for k in low], list(low))
        out.append((f"off arm, low rung − 4 rungs: {field}", c, "", 2))
    for key, field in (("virtualSimVsRealStartGate", "stallSeconds"), ("virtualSimVsReal", "timeToFirstFrameSeconds")):
        s = results[key]["sessions"]
        c = stats.paired_comparison([x["simulated"][field] for x in s], [x["real"][field] for x in s],
                                    [x["id"] for x in s])
        out.append((f"{key}, simulated − real: {field}", c, " s", 3))
    t = auc_traces(results)
    c = stats.paired_comparison([x["simModelAUC"] for x in t], [x["realModelAUC"] for x in t], [x["trace"] for x in t])
    out.append(("v2 AUC per trace, simulated − real", c, "", 3))
    s = results["virtualSimVsRealStartGate"]["sessions"]
    first_frame = {a: {x["id"].replace(f"-{a}-", "-"): x["real"]["timeToFirstFrameSeconds"]
                       for x in s if x["controller"] == a} for a in ("on", "off")}
    keys = list(first_frame["on"])
    c = stats.paired_comparison([first_frame["on"][k] for k in keys], [first_frame["off"][k] for k in keys], keys)
    out.append(("third round, real, on − off: timeToFirstFrameSeconds", c, " s", 3))
    return out


def auc_traces(results: dict) -> list[dict]:
    """simVsReal's per-trace rows that have the v2 model's AUC both real and simulated."""
    return [x for x in results["simVsReal"]["perTrace"] if None not in (x["realModelAUC"], x["simModelAUC"])]


def largest_auc_gap(results: dict) -> float:
    return max(abs(x["simModelAUC"] - x["realModelAUC"]) for x in auc_traces(results))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=RESULTS)
    args = ap.parse_args(argv)
    with open(args.results) as f:
        results = json.load(f)
    for label, c, unit, digits in figures(results):
        print(f"{label}: {stats.describe(c, unit, digits)}")
    print(f"largest |simulated − real| AUC of one trace: {largest_auc_gap(results):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
