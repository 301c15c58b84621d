"""Writes `operatingPoint` into Tools/train/results-v2.json: the row of
`heldOutThresholdCurve` (train_real.py writes it) at the risk where the policy
controller first acts, `PolicyController.Configuration.preloadEnterRisk`, read from
its Swift source so that the published operating point follows the shipped constant.

    python3 Tools/train/operating_point.py            # derive and write the key
    python3 Tools/train/operating_point.py --check    # exit 1 when the file's key is not the derivation

Nothing is chosen here: the threshold is the controller's (chosen on its outcome in
virtual time, docs/stall-prediction.md), the figures are the curve's row.
"""

from __future__ import annotations

import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import results_file  # noqa: E402

RESULTS = os.path.join(HERE, "results-v2.json")
CONTROLLER = os.path.join(REPO, "Sources", "HLSCore", "Prediction", "PolicyController.swift")
KEY = "operatingPoint"
WRITER = "Tools/train/operating_point.py"
WHY = ("the risk at which the policy controller first acts (PolicyController.Configuration.preloadEnterRisk), "
       "chosen on the controller's outcome in virtual time, not on this curve")


def preload_enter_risk(source_path: str = CONTROLLER) -> float:
    with open(source_path) as fh:
        m = re.search(r"var\s+preloadEnterRisk\s*:\s*Double\s*=\s*([0-9.]+)", fh.read())
    if not m:
        raise SystemExit(f"{source_path}: no `var preloadEnterRisk: Double = …` default found")
    return float(m.group(1))


def derive(results: dict, threshold: float) -> dict:
    """The curve's row at `threshold` (to 1e-9), with the reason that threshold is read."""
    curve = results.get("heldOutThresholdCurve")
    if not curve:
        raise SystemExit("the results file has no heldOutThresholdCurve (Tools/train/train_real.py writes it)")
    rows = [r for r in curve if abs(r["threshold"] - threshold) < 1e-9]
    if len(rows) != 1:
        raise SystemExit(f"heldOutThresholdCurve has {len(rows)} rows at threshold {threshold} "
                         f"(thresholds: {[r['threshold'] for r in curve]})")
    row = rows[0]
    return dict(threshold=row["threshold"], why=WHY, precision=row["precision"], recall=row["recall"],
                medianLeadSeconds=row["medianLeadSeconds"],
                isolatedMedianLeadSeconds=row["isolatedMedianLeadSeconds"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", default=RESULTS)
    ap.add_argument("--check", action="store_true", help="compare, do not write")
    a = ap.parse_args(argv)
    res = results_file.load(a.results)
    value = derive(res, preload_enter_risk())
    if a.check:
        if res.get(KEY) != value:
            print(f"{a.results}: {KEY} is not the derivation:\n  file:    {res.get(KEY)}\n  derived: {value}",
                  file=sys.stderr)
            return 1
        return 0
    results_file.update(a.results, {KEY: value}, WRITER)
    return 0


if __name__ == "__main__":
    sys.exit(main())
