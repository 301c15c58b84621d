#!/usr/bin/env python3
"""The results tables of docs/stall-prediction.md, generated from the stored results and model files.

    # write every block (between its markers) from the stored files
    python3 Tools/train/doc_tables.py docs docs/stall-prediction.md

    # compare: exit 1, naming each block that is not what the files give
    python3 Tools/train/doc_tables.py check docs/stall-prediction.md

    # other files than the committed ones (a test points them at temporary copies)
    python3 Tools/train/doc_tables.py check DOC --results-v2 FILE --results-v1 FILE --models DIR

Each table sits between the markers hlsplay_tools.block_markers(TOOL, NAME) gives; BLOCKS lists the names
and the key each is read from. Every figure is a stored one (Tools/train/results-v2.json,
Tools/train/results-v1.json, models/stall-logistic-v{1,2}.json) or a sum, mean or ratio of stored ones,
printed with the digits, units and labels the doc uses. The labels of the rows (the doc's prose for a
predictor, an arm or a batch) and the cells the doc sets in bold are declared below, next to each table.
The same files give the same bytes. The two blocks heldout_round.py and vsim.py write are theirs, not
this script's; CI checks all of them (Tools/tests/test_train_doc_tables.py).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "Tools", "lib"))
import hlsplay_tools  # noqa: E402

TOOL = "Tools/train/doc_tables.py"
DOC = os.path.join(REPO, "docs", "stall-prediction.md")
RESULTS_V2 = os.path.join(HERE, "results-v2.json")
RESULTS_V1 = os.path.join(HERE, "results-v1.json")
MODELS = os.path.join(REPO, "models")

MINUS = "\u2212"


# ---------------------------------------------------------------- number formats, as the doc prints them

def num(x, digits, sign=False, unit=""):
    """x with `digits` decimals, a real minus sign, "+" before a positive value when `sign`; "—" for None."""
    if x is None:
        return "—"
    s = f"{x:.{digits}f}"
    if s.strip("-0.") == "":
        s = s.lstrip("-")  # no "−0.00"
    elif s.startswith("-"):
        s = MINUS + s[1:]
    elif sign:
        s = "+" + s
    return s + unit


def seconds(x, digits=2):
    return num(x, digits, unit=" s")


def percent(x):
    return "—" if x is None else f"{x * 100:.0f} %"


def count(n):
    """An integer with a space between thousands, as the doc writes counts: 20 238."""
    return f"{n:,}".replace(",", " ")


def p_value(p):
    """A p-value with three decimals ("—" when the pairs gave no test: no pair differed)."""
    return "—" if p is None else f"{p:.3f}"


def mbit(bps):
    return num(bps / 1e6, 2)


def bold(text, on=True):
    return f"**{text}**" if on else text


def pair(a, b):
    return f"{a} · {b}"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- the models' parameters

def model_parameters(model, missing_weight):
    """A model file's features, in its order: transform, mean and std of the transformed value, the weight
    (per standard deviation) and, when `missing_weight`, the missing indicator's weight (0 when none)."""
    header = ["feature", "transform", "mean", "std", "weight"] + (["missingWeight"] if missing_weight else [])
    rows = []
    for f in model["features"]:
        row = [f["name"], f["transform"], num(f["mean"], 3), num(f["std"], 3), num(f["weight"], 3, sign=True)]
        if missing_weight:
            row.append("0" if f["missingWeight"] == 0 else num(f["missingWeight"], 3, sign=True))
        rows.append(row)
    return table(header, rows)


def model_v1_parameters(src):
    return model_parameters(src.model("stall-logistic-v1.json"), missing_weight=False)


def model_v2_parameters(src):
    return model_parameters(src.model("stall-logistic-v2.json"), missing_weight=True)


# ---------------------------------------------------------------- results-v1.json, heldOutShippedModel

SHIPPED_MODEL_LABELS = {
    "model v2 at its file's threshold (0.56)": "model v2, the file's threshold",
    "model v2 at the preload threshold (0.3)": "model v2, where preload acts",
    "heuristic": "heuristic (no device penalty in the simulator)",
}
# The model the player loads, at its file's threshold: its label, its healthy lead and its false alarms.
SHIPPED_MODEL_BOLD = {"model v2 at its file's threshold (0.56)"}


def shipped_model_on_simulator(src):
    rows = []
    for r in src.v1["heldOutShippedModel"]["rows"]:
        b = r["predictor"] in SHIPPED_MODEL_BOLD
        rows.append([bold(SHIPPED_MODEL_LABELS.get(r["predictor"], r["predictor"]), b), num(r["threshold"], 2),
                     str(r["healthyStalls"]), bold(seconds(r["healthyMedianLeadSeconds"]), b),
                     percent(r["healthyLeadAtLeast3s"]),
                     f"{bold(num(r['falseAlarmsPerHour'], 1), b)} ({count(r['falseAlarms'])})",
                     seconds(r["medianLeadSeconds"])])
    return table(["predictor", "threshold", "healthy stalls", "median lead, healthy", "healthy warned ≥ 3 s ahead",
                  "false alarms per hour (count)", "median lead, all stalls"], rows)


# ---------------------------------------------------------------- results-v2.json, heldOut (real, held out)

V2 = "model v2 (v1-inputs+elapsed, real+sim)"
HELD_OUT_LABELS = {
    V2: "model v2",
    "model v2 (TRAIN, for reference)": "model v2 on its *training* traces (reference)",
}
HELD_OUT_BOLD = {V2}
CANDIDATE = "candidate "


def heldout_predictors(src):
    """Every predictor of heldOut but the other candidates, in the key's order, then v2 on its training traces
    (the key train) for reference."""
    rows = []
    for r in src.v2["heldOut"] + [src.v2["train"]]:
        if r["predictor"].startswith(CANDIDATE):
            continue
        rows.append([bold(HELD_OUT_LABELS.get(r["predictor"], r["predictor"]), r["predictor"] in HELD_OUT_BOLD),
                     num(r["threshold"], 2), num(r["auc"], 3), num(r["precision"], 3), num(r["recall"], 3),
                     num(r["brier"], 3), seconds(r["medianLeadSeconds"]), seconds(r["isolatedMedianLeadSeconds"]),
                     percent(r["isolatedLeadAtLeast3s"])])
    return table(["predictor", "threshold", "AUC", "precision", "recall", "Brier", "median lead, all stalls",
                  "median lead, isolated", "isolated warned ≥ 3 s ahead"], rows)


def heldout_candidates(src):
    rows = [[r["predictor"], num(r["threshold"], 2), num(r["auc"], 3), num(r["precision"], 3), num(r["recall"], 3),
             seconds(r["medianLeadSeconds"])]
            for r in src.v2["heldOut"] if r["predictor"].startswith(CANDIDATE)]
    return table(["candidate", "threshold", "AUC", "precision", "recall", "median lead"], rows)


def calibration(bins):
    """A reliability table: one column per bin (its bounds as ".1–.2"), samples, mean predicted, observed."""
    def bound(x):
        return f"{x:g}".lstrip("0") if 0 < x < 1 else f"{x:g}"
    header = ["predicted"] + [f"{bound(b['lower'])}–{bound(b['upper'])}" for b in bins]
    rows = [["samples"] + [count(b["count"]) for b in bins],
            ["mean predicted"] + [num(b["meanPredicted"], 3) for b in bins],
            ["observed"] + [num(b["observedRate"], 3) for b in bins]]
    return table(header, rows)


def heldout_row(results, predictor):
    return next(r for r in results["heldOut"] if r["predictor"] == predictor)


def heldout_calibration_v2(src):
    return calibration(heldout_row(src.v2, V2)["calibration"])


def heldout_threshold_curve(src):
    rows = [[num(r["threshold"], 2), num(r["precision"], 3), num(r["recall"], 3), seconds(r["medianLeadSeconds"]),
             seconds(r["isolatedMedianLeadSeconds"])] for r in src.v2["heldOutThresholdCurve"]]
    return table(["v2 threshold", "precision", "recall", "median lead, all", "median lead, isolated"], rows)


# ---------------------------------------------------------------- results-v2.json, simVsReal

def sim_vs_real(src):
    rows = []
    for t in src.v2["simVsReal"]["perTrace"]:
        scale = "" if t["scale"] == 1 else f" ×{t['scale']:.2f}"
        rows.append([f"`{t['trace']}`{scale}", t["split"], str(t["realSessions"]),
                     pair(num(t["realStallsPerSession"], 1), num(t["simStallsPerSession"], 1)),
                     pair(num(t["realStallSecondsPerSession"], 1), num(t["simStallSecondsPerSession"], 1)),
                     pair(mbit(t["realAverageBitrateBps"]), mbit(t["simAverageBitrateBps"])),
                     pair(num(t["realModelAUC"], 2), num(t["simModelAUC"], 2))])
    return table(["trace", "split", "sessions (real)", "stalls / session real · sim",
                  "stalled s / session real · sim", "avg Mbit/s real · sim", "v2 AUC real · sim"], rows)


# ---------------------------------------------------------------- results-v2.json, onOff and onOffPaired

def onoff_totals(results, tags):
    """The on and off totals of one or more onOff tags (their sessions pooled): pairs, stalls, sessions with
    a stall, seconds stalled (summed over the stored pairs, not from the rounded per-tag totals), the mean
    average bitrate and mean playback start over the sessions (None when a tag has none)."""
    entries = [results["onOff"][t] for t in tags]
    out = {"pairs": sum(len(e["pairs"]) for e in entries)}
    for arm in ("on", "off"):
        n = sum(e[arm]["sessions"] for e in entries)
        starts = [e[arm].get("meanPlaybackStartSeconds") for e in entries]
        out[arm] = {
            "stalls": sum(e[arm]["stalls"] for e in entries),
            "sessionsWithStalls": sum(e[arm]["sessionsWithStalls"] for e in entries),
            "stallSeconds": sum(p[arm]["stallSeconds"] for e in entries for p in e["pairs"]),
            "averageBitrateBps": sum(e[arm]["averageBitrateBps"] * e[arm]["sessions"] for e in entries) / n,
            "meanPlaybackStartSeconds": (None if None in starts else
                                         sum(s * e[arm]["sessions"] for s, e in zip(starts, entries)) / n),
        }
    return out


def per_stall(arm):
    return num(arm["stallSeconds"] / arm["stalls"], 1) if arm["stalls"] else "—"


# The first two rounds (collect.sh): the arm's label, and whether its stall and seconds cells are bold.
ONOFF_FIRST_ROUNDS = [
    ("v1-original-constants", "v1 model, first constants (6/15/30 s buffer, resume 2/4/6 s)", False),
    ("v2-original-constants", "v2 model, first constants", False),
    ("v2-tuned-constants", "**v2 model, new constants** (30/45/60 s, resume 2/4/4 s)", True),
]


def onoff_first_rounds(src):
    rows = []
    for tag, label, b in ONOFF_FIRST_ROUNDS:
        t = onoff_totals(src.v2, [tag])
        on, off = t["on"], t["off"]
        met = src.v2["onOff"][tag]["verdict"]["targetMet"]
        rows.append([label, str(t["pairs"]), bold(pair(on["stalls"], off["stalls"]), b),
                     bold(pair(num(on["stallSeconds"], 1), num(off["stallSeconds"], 1)), b),
                     pair(per_stall(on), per_stall(off)), num(on["averageBitrateBps"] / off["averageBitrateBps"], 3),
                     # met on the totals; the doc reads the tuned constants' 21 · 22 as "on paper" (its paired
                     # test, p = 1, shows no difference)
                     "on paper" if met else "no"])
    return table(["arm", "pairs", "stalls on · off", "seconds stalled on · off", "s per stall on · off",
                  "avg bitrate on ÷ off", "target met on the totals"], rows)


POOLED_4_RUNGS = ("v2-start-gate-4-rungs", "v2-start-gate-4-rungs-b")
# The third round's real batches: (the onOffPaired key, its tags, its label, bold stall and seconds cells).
ONOFF_THIRD_ROUND = [
    ("v2-start-gate-4-rungs", ["v2-start-gate-4-rungs"], "4 rungs", True),
    ("v2-start-gate-4-rungs-b", ["v2-start-gate-4-rungs-b"], "4 rungs, second batch", True),
    ("+".join(POOLED_4_RUNGS), list(POOLED_4_RUNGS), "4 rungs, both batches", True),
    ("v2-start-gate-low-rung", ["v2-start-gate-low-rung"], "with a 0.25 Mbit/s rung", False),
]


def fewer_stalls_verdict(stalls):
    """"yes (p = …)" when the controller had fewer stalls in a paired test at p < 0.05 (the larger of the sign
    test's and Wilcoxon's p), "no (p = …)" when not, "no: a tie" when no pair differed."""
    if stalls["pairsAAbove"] == 0 and stalls["pairsABelow"] == 0:
        return "no: a tie"
    p = max(stalls["signTest"]["pValue"], stalls["wilcoxon"]["pValue"])
    fewer = p < 0.05 and stalls["meanDifference"] < 0
    return f"{'yes' if fewer else 'no'} (p = {p_value(p)})"


def onoff_third_round(src):
    rows = []
    for key, tags, label, b in ONOFF_THIRD_ROUND:
        t = onoff_totals(src.v2, tags)
        on, off = t["on"], t["off"]
        rows.append([label, str(t["pairs"]), bold(pair(on["stalls"], off["stalls"]), b),
                     pair(on["sessionsWithStalls"], off["sessionsWithStalls"]),
                     bold(pair(num(on["stallSeconds"], 1), num(off["stallSeconds"], 1)), b),
                     pair(per_stall(on), per_stall(off)), num(on["averageBitrateBps"] / off["averageBitrateBps"], 3),
                     pair(num(on["meanPlaybackStartSeconds"], 2), seconds(off["meanPlaybackStartSeconds"])),
                     fewer_stalls_verdict(src.v2["onOffPaired"][key]["stalls"])])
    return table(["ladder", "pairs", "stalls on · off", "sessions with a stall", "seconds stalled on · off",
                  "s per stall on · off", "bitrate on ÷ off", "playback start on · off",
                  "fewer stalls, paired, p < 0.05"], rows)


# The paired tests of the third round's batches: (onOffPaired key, label, which offsets, decimals of seconds).
ONOFF_PAIRED = [
    ("v2-start-gate-4-rungs", "4 rungs, first batch", "offsets the redesign saw", 2),
    ("v2-start-gate-4-rungs-b", "4 rungs, second batch", "**held out**", 2),
    ("+".join(POOLED_4_RUNGS), "4 rungs, both batches", "mixed", 2),
    # its differences are thousandths of a second: two decimals would show +0.00
    ("v2-start-gate-low-rung", "with a 0.25 Mbit/s rung", "the first batch's offsets, another ladder", 3),
]


def mean_ci(c, digits):
    """The mean difference with its 95 % interval; "0" alone when every pair tied (no interval to give)."""
    ci = c["meanDifferenceCI"]
    if c["meanDifference"] == 0 and c["pairsAAbove"] == 0 and c["pairsABelow"] == 0:
        return "0"
    sign = any(x > 0 for x in (c["meanDifference"], ci["low"], ci["high"]))
    return (f"{num(c['meanDifference'], digits, sign)} "
            f"({num(ci['low'], digits, sign)} … {num(ci['high'], digits, sign)})")


def onoff_paired(src):
    rows = []
    for key, label, split, digits in ONOFF_PAIRED:
        v = src.v2["onOffPaired"][key]
        s, sec = v["stalls"], v["stallSeconds"]
        rows.append([label, split, str(s["pairs"]), pair(s["pairsABelow"], s["pairsAAbove"]),
                     p_value(s["signTest"]["pValue"]), p_value(s["wilcoxon"]["pValue"]), mean_ci(s, 2),
                     pair(sec["pairsABelow"], sec["pairsAAbove"]), p_value(sec["wilcoxon"]["pValue"]),
                     mean_ci(sec, digits)])
    return table(["ladder, batch", "split", "pairs", "stalls: fewer · more", "sign test p", "Wilcoxon p",
                  "mean stalls on − off (95 % CI)", "seconds stalled: fewer · more", "Wilcoxon p",
                  "mean s on − off (95 % CI)"], rows)


# ---------------------------------------------------------------- results-v2.json, hlsplay simulate vs real

def vsim_vs_real(arms, key, ending=False):
    """A `vsim.py compare` key by arm: its rows (arm key, label); with `ending`, the same-ending and load
    columns of the later comparisons."""
    def build(src):
        by_arm = src.v2[key]["byArm"]
        rows = []
        for arm, label in arms:
            a = by_arm[arm]
            real, sim = a["real"], a["simulated"]
            row = [label, str(real["sessions"]), pair(real["stalls"], sim["stalls"]),
                   pair(num(real["stallSeconds"], 1), num(sim["stallSeconds"], 1)),
                   pair(mbit(real["averageBitrateBps"]), mbit(sim["averageBitrateBps"])),
                   pair(num(real["meanTimeToFirstFrameSeconds"], 2), seconds(sim["meanTimeToFirstFrameSeconds"])),
                   f"{a['sameStallCount']} of {real['sessions']}"]
            if ending:
                row += [f"{a['sameEnding']} of {real['sessions']}", num(a["meanRealLoadAverage1m"], 2)]
            rows.append(row)
        return table(["arm", "sessions", "stalls real · sim", "seconds stalled real · sim", "Mbit/s real · sim",
                      "TTFF real · sim", "same stall count"] + (["same ending", "load"] if ending else []), rows)
    return build


# ---------------------------------------------------------------- results-v1.json, v1 on the simulator

V1_LABELS = {
    "model": "logistic model v1",
    "heuristic": "heuristic (article)",
    "threshold (buffer < 2 s)": "buffer < 2 s",
    "threshold ramp (2 s + 3 s ramp)": "buffer ramp 2 s + 3 s (reference)",
}
# v1's own row: the cells of the held-out table it leads (AUC, precision, Brier, isolated lead) are bold.
V1_BOLD_ROW = "model"


def v1_heldout_predictors(src):
    held = src.v1["heldOut"]
    labelled = [(r, V1_LABELS.get(r["predictor"], r["predictor"]), r["predictor"] == V1_BOLD_ROW) for r in held]
    labelled.append((src.v1["train"], "model on its *training* traces (for reference)", False))
    rows = []
    for r, label, b in labelled:
        rows.append([bold(label, b), bold(num(r["auc"], 3), b), bold(num(r["precision"], 3), b),
                     num(r["recall"], 3), bold(num(r["brier"], 3), b), seconds(r["medianLeadSeconds"]),
                     bold(seconds(r["isolatedMedianLeadSeconds"]), b), percent(r["isolatedLeadAtLeast3s"])])
    first = held[0]
    return table(["predictor", "AUC", "precision", "recall", "Brier", f"median lead, all {first['stalls']} stalls",
                  f"median lead, {first['isolatedStalls']} isolated stalls", "isolated stalls warned ≥ 3 s ahead"],
                 rows)


def v1_heldout_healthy(src):
    held = src.v1["heldOut"]
    rows = []
    for r in held:
        b = r["predictor"] == V1_BOLD_ROW
        label = bold(V1_LABELS.get(r["predictor"], r["predictor"]), b) + (f" ({r['threshold']:.2f})" if b else "")
        rows.append([label, seconds(r["healthyMedianLeadSeconds"]), percent(r["healthyLeadAtLeast3s"]),
                     f"{bold(num(r['falseAlarmsPerHour'], 1), b)} ({count(r['falseAlarms'])})"])
    return table(["predictor", f"median lead, {held[0]['healthyStalls']} healthy stalls",
                  "healthy warned ≥ 3 s ahead", "false alarms per hour (count)"], rows)


def v1_heldout_calibration(src):
    return calibration(heldout_row(src.v1, "model")["calibration"])


# ---------------------------------------------------------------- the blocks, in the doc's order

# (block name, where its figures are stored, renderer)
BLOCKS = [
    ("model-v1-parameters", "models/stall-logistic-v1.json features", model_v1_parameters),
    ("shipped-model-on-simulator", "results-v1.json heldOutShippedModel", shipped_model_on_simulator),
    ("model-v2-parameters", "models/stall-logistic-v2.json features", model_v2_parameters),
    ("heldout-predictors", "results-v2.json heldOut", heldout_predictors),
    ("heldout-candidates", "results-v2.json heldOut (candidate …)", heldout_candidates),
    ("heldout-calibration-v2", "results-v2.json heldOut (model v2) calibration", heldout_calibration_v2),
    ("heldout-threshold-curve", "results-v2.json heldOutThresholdCurve", heldout_threshold_curve),
    ("sim-vs-real", "results-v2.json simVsReal.perTrace", sim_vs_real),
    ("onoff-first-rounds", "results-v2.json onOff (v1-original-constants, v2-original-constants, "
     "v2-tuned-constants)", onoff_first_rounds),
    ("onoff-third-round", "results-v2.json onOff (v2-start-gate-*), onOffPaired", onoff_third_round),
    ("onoff-third-round-paired", "results-v2.json onOffPaired", onoff_paired),
    ("vsim-vs-real", "results-v2.json virtualSimVsReal",
     vsim_vs_real([("off", "controller off"), ("on", "on, first constants"), ("on-tuned", "on, tuned constants"),
                   ("all", "all")], "virtualSimVsReal")),
    ("vsim-vs-real-start-gate", "results-v2.json virtualSimVsRealStartGate",
     vsim_vs_real([("off", "controller off"), ("on", "controller on")], "virtualSimVsRealStartGate")),
    ("vsim-vs-real-start-gate-rerun", "results-v2.json virtualSimVsRealStartGateRerun",
     vsim_vs_real([("off", "controller off"), ("on", "controller on"), ("all", "all")],
                  "virtualSimVsRealStartGateRerun", ending=True)),
    ("v1-heldout-predictors", "results-v1.json heldOut, train", v1_heldout_predictors),
    ("v1-heldout-healthy", "results-v1.json heldOut", v1_heldout_healthy),
    ("v1-heldout-calibration", "results-v1.json heldOut (model) calibration", v1_heldout_calibration),
]
BLOCK_NAMES = [name for name, _, _ in BLOCKS]


class Sources:
    """The stored files the tables are read from."""

    def __init__(self, results_v2=RESULTS_V2, results_v1=RESULTS_V1, models=MODELS):
        self.v2 = _load(results_v2)
        self.v1 = _load(results_v1)
        self.models = models

    def model(self, name):
        return _load(os.path.join(self.models, name))


def _load(path):
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def render_all(src: Sources) -> dict[str, str]:
    """Block name -> its text (deterministic: the same files give the same bytes)."""
    return {name: build(src) for name, _, build in BLOCKS}


def differing_blocks(doc_text: str, src: Sources) -> list[str]:
    """The names of the blocks whose text in the doc (or whose markers) is not what the files give."""
    return [name for name, text in render_all(src).items()
            if hlsplay_tools.generated_block(doc_text, TOOL, name) != text]


def docs(doc: str, src: Sources, write: bool) -> int:
    """Writes (or checks) every block of the doc."""
    with open(doc, encoding="utf-8") as fh:
        current = fh.read()
    blocks = render_all(src)
    if write:
        new = current
        for name, text in blocks.items():
            new = hlsplay_tools.splice_block(new, TOOL, name, text)
        with open(doc, "w", encoding="utf-8") as fh:
            fh.write(new)
        return 0
    status = 0
    sources = {name: source for name, source, _ in BLOCKS}
    for name in differing_blocks(current, src):
        begin, end = hlsplay_tools.block_markers(TOOL, name)
        why = ("has no markers or more than one pair" if current.count(begin) != 1 or current.count(end) != 1
               else f"is not what {sources[name]} gives")
        print(f"{doc}: the block '{name}' {why}", file=sys.stderr)
        status = 1
    if status:
        print(f"re-derive: python3 {TOOL} docs {doc}", file=sys.stderr)
    return status


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("docs", "check"):
        d = sub.add_parser(name, help=("write" if name == "docs" else "check") + " every block of the doc")
        d.add_argument("doc", nargs="?", default=DOC)
        d.add_argument("--results-v2", default=RESULTS_V2)
        d.add_argument("--results-v1", default=RESULTS_V1)
        d.add_argument("--models", default=MODELS, help="the folder of stall-logistic-v{1,2}.json")
    a = ap.parse_args(argv)
    return docs(a.doc, Sources(a.results_v2, a.results_v1, a.models), a.cmd == "docs")


if __name__ == "__main__":
    sys.exit(main())
