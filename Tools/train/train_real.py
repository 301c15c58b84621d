#!/usr/bin/env python3
"""Train the stall model on REAL hlsplay session logs and judge it on real held-out traces.

    python3 Tools/train/collect.py train    --bin DIR     # real training sessions
    python3 Tools/train/collect.py heldout  --bin DIR     # real held-out sessions (controller on/off)
    python3 Tools/train/train_real.py [--data /tmp/hlsplay-train]

Examples: every `risk.sample` while playing → label 1 if a stall begins in
(t, t+H], H = 5 s (train.label_session: samples during a stall excluded,
negatives whose t+H is past the session end dropped) — the same definitions
as HLSCore's StallLabelling.

Candidates (chosen by leave-traces-out cross-validation on the TRAINING
traces only; the held-out traces are touched once, for the figures):
  real        the real training sessions only
  real+sim    plus the simulator's sessions on the v1 training traces, with
              weights so that simulated examples together weigh as much as the
              real ones
each with the v1 inputs, or the v1 inputs plus the in-flight request's
elapsed time. The operating threshold is the highest at which the
out-of-fold warnings on the training traces come a median 3 s or more before
the stalls (the issue's lead-time target); the best-F1 threshold is reported
beside it.

Writes models/stall-logistic-v2.json (schema hlsplay.stall-model v1, what
LogisticModelPredictor loads), models/stall-logistic-v2.golden.json (vectors +
probabilities + a metric cross-check for the Swift tests) and its own keys of
Tools/train/results-v2.json (figures for docs/stall-prediction.md; the keys the
other scripts wrote stay, see results_file.py).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import collect  # noqa: E402
import reallogs  # noqa: E402
import results_file  # noqa: E402
import sim  # noqa: E402
import train  # noqa: E402

H = train.HORIZON_SECONDS
MODEL_VERSION = "2.0.0"
L2_PENALTY = 1.0
CV_FOLDS = 4
# The lead-time target. The shipped operating threshold is the highest
# one whose out-of-fold median lead on the TRAINING traces reaches it (a
# warning is only useful if it comes early enough to act on); the best-F1
# threshold is reported beside it.
TARGET_MEDIAN_LEAD_SECONDS = 3.0
EXTRA_FEATURES = [("inFlightElapsedSeconds", "log1p", 0.0, 60.0)]
FEATURE_SETS = {"v1-inputs": train.MODEL_FEATURES, "v1-inputs+elapsed": train.MODEL_FEATURES + EXTRA_FEATURES}
RESULTS_WRITER = "Tools/train/train_real.py"


def write_results(path, results):
    """Stores this script's keys in the shared results file; every key another script
    wrote (or that was merged by hand) stays as it was."""
    res = results_file.update(path, results, RESULTS_WRITER)
    if "heldOutThresholdCurve" in results:
        # operatingPoint is that curve's row at the controller's preload risk: re-derived with it.
        import operating_point
        operating_point.main(["--results", path])
        res = results_file.load(path)
    return res


# ---- baselines as the runtime computes them (with the device penalty) ----------

def _penalty(v, levels):
    if v is None:
        return 0.0
    fair, serious, critical = levels
    return 0.40 if v >= critical else 0.25 if v >= serious else 0.10 if v >= fair else 0.0


def heuristic_runtime(f: dict) -> float:
    """HeuristicPredictor exactly: buffer + over-selection + device penalty (CPU PSI, decode lag, thermal)."""
    dev = max(_penalty(f.get("cpuPressureAvg10Percent"), (10, 25, 50)),
              _penalty(f.get("decodeLagRatio"), (0.5, 0.8, 1.0)),
              _penalty(f.get("thermalMaxCelsius"), (70, 80, 90)))
    bp = max(0.0, 3.0 - f["bufferSeconds"]) / 3.0
    osr = train.value(f, "overSelectionRatio")
    return min(1.0, max(0.0, bp + (osr if osr is not None else 1.0) * 0.25 + dev))


# ---- training ----------------------------------------------------------------

def fit_weighted(X, y, sw, l2, iters=60):
    n, d = X.shape
    Xb = np.hstack([np.ones((n, 1)), X])
    w = np.zeros(d + 1)
    reg = np.full(d + 1, l2)
    reg[0] = 0.0
    for _ in range(iters):
        p = 1 / (1 + np.exp(-(Xb @ w)))
        g = Xb.T @ (sw * (p - y)) + reg * w
        h = (Xb * (sw * p * (1 - p))[:, None]).T @ Xb + np.diag(reg)
        step = np.linalg.solve(h, g)
        w -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    return w[0], w[1:]


def build_model(examples, weights, specs, source):
    X, cols, stats = train.design(examples, specs)
    y = np.array([lab for _, _, lab in examples], float)
    bias, w = fit_weighted(X, y, np.asarray(weights, float), L2_PENALTY)
    weight = {c: wi for c, wi in zip(cols, w)}
    feats = [dict(name=name, transform=kind, clipMin=lo, clipMax=hi, imputeValue=stats[name]["impute"],
                  mean=stats[name]["mean"], std=stats[name]["std"], weight=float(weight[(name, "z")]),
                  missingWeight=float(weight.get((name, "missing"), 0.0)))
             for name, kind, lo, hi in specs]
    return dict(schema="hlsplay.stall-model", schemaVersion=1, name=train.MODEL_NAME, version=MODEL_VERSION,
                kind="logistic", horizonSeconds=H, operatingThreshold=0.5, bias=float(bias), features=feats,
                training=dict(dataSource=source))


def examples_of(sessions):
    return [(t, f, lab) for s in sessions for t, f, lab in train.label_session(s, H)]


def weights_for(real_ex, sim_ex):
    if not sim_ex:
        return [1.0] * len(real_ex)
    return [1.0] * len(real_ex) + [len(real_ex) / len(sim_ex)] * len(sim_ex)


def sim_training_sessions():
    """The simulator's sessions on the v1 training traces (train.py's split and offsets)."""
    v1 = json.load(open(os.path.join(REPO, "models", "stall-logistic-v1.json")))
    names = set(v1["training"]["trainTraces"])
    out = []
    for tr in sim.load_all(collect.TRACES_ROOT):
        if tr.name in names:
            for k, frac in enumerate(train.OFFSET_FRACTIONS):
                out.append(sim.simulate(tr, frac * tr.duration, sum(ord(c) for c in tr.name) * 10 + k))
    return out


def cross_validate(real_train, sim_train, specs, use_sim):
    """Leave-traces-out CV on the training traces: out-of-fold scores and labels."""
    traces = sorted({s.trace for s in real_train})
    folds = [traces[i::CV_FOLDS] for i in range(CV_FOLDS)]
    scores, labels, oof = [], [], {}
    sim_ex = examples_of(sim_train) if use_sim else []
    for fold in folds:
        tr = [s for s in real_train if s.trace not in fold]
        te = [s for s in real_train if s.trace in fold]
        ex = examples_of(tr)
        m = build_model(ex + sim_ex, weights_for(ex, sim_ex), specs, "cv")
        for s in te:
            for _, f in s.samples:
                oof[id(f)] = train.model_probability(m, f)
        for _, f, lab in examples_of(te):
            scores.append(oof[id(f)])
            labels.append(lab)
    return scores, labels, oof


def lead_threshold(real_train, oof):
    """The highest threshold at which the out-of-fold warnings come at least
    TARGET_MEDIAN_LEAD_SECONDS (median, all stalls) before the training stalls."""
    best = None
    for thr in np.round(np.arange(0.05, 0.96, 0.01), 2):
        r = train.evaluate("oof", lambda f: oof[id(f)], real_train, float(thr), H)
        if r["medianLeadSeconds"] is not None and r["medianLeadSeconds"] >= TARGET_MEDIAN_LEAD_SECONDS:
            best = float(thr)
    return best


def parity(sessions, fn, predictor, model_file=None):
    """Largest |logged risk − this script's risk| on sessions run with that predictor (and model file)."""
    worst, n = 0.0, 0
    for s in sessions:
        if not s.samples or s.meta.get("predictor") != predictor:
            continue
        if model_file and model_file not in (s.meta.get("model") or ""):
            continue
        for (t, f), (_, r) in zip(s.samples, s.risks):
            worst = max(worst, abs(fn(f) - r))
            n += 1
    return dict(samples=n, maxAbsDifference=worst)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/tmp/hlsplay-train")
    ap.add_argument("--out", default=os.path.join(REPO, "models", "stall-logistic-v2.json"))
    ap.add_argument("--golden", default=os.path.join(REPO, "models", "stall-logistic-v2.golden.json"))
    ap.add_argument("--results", default=os.path.join(HERE, "results-v2.json"))
    ap.add_argument("--spec", default=collect.DEFAULT_SPEC,
                    help="the collection spec the sessions ran (its traces, offsets and media seconds are recorded)")
    args = ap.parse_args()
    spec = collect.load_spec(args.spec)

    rows = reallogs.load_manifest(args.data)
    sessions = reallogs.load_sessions(args.data, rows)
    real_train = [s for s in sessions if s.meta["split"] == "train" and s.samples]
    held = [s for s in sessions if s.meta["split"] == "heldout" and s.samples]
    assert not ({s.trace for s in real_train} & {s.trace for s in held}), "a trace on both sides of the split"
    sim_train = sim_training_sessions()
    v1 = json.load(open(os.path.join(REPO, "models", "stall-logistic-v1.json")))

    # 1. choose the candidate by CV on the training traces
    cv = []
    for fs_name, specs in FEATURE_SETS.items():
        for use_sim in (False, True):
            sc, lab, oof = cross_validate(real_train, sim_train, specs, use_sim)
            f1_thr = train.best_f1_threshold(sc, np.array(lab, bool))
            lead_thr = lead_threshold(real_train, oof)
            thr = lead_thr if lead_thr is not None else f1_thr
            pr = train.precision_recall(sc, lab, thr)
            pr_f1 = train.precision_recall(sc, lab, f1_thr)
            cv.append(dict(features=fs_name, data="real+sim" if use_sim else "real", auc=train.auc(sc, lab),
                           threshold=thr, precision=pr["precision"], recall=pr["recall"],
                           bestF1Threshold=f1_thr, bestF1Precision=pr_f1["precision"], bestF1Recall=pr_f1["recall"],
                           leadTargetThreshold=lead_thr, brier=train.brier(sc, lab)))
            print(f"CV {fs_name:20} {cv[-1]['data']:9} AUC {cv[-1]['auc']:.4f} thr {thr:.2f} "
                  f"P {pr['precision']:.3f} R {pr['recall']:.3f} (best-F1 thr {f1_thr:.2f} "
                  f"P {pr_f1['precision']:.3f} R {pr_f1['recall']:.3f})", flush=True)
    best = max(cv, key=lambda r: r["auc"])

    # 2. fit every candidate on all training traces (held-out figures for all are reported; the CV pick ships)
    real_ex = examples_of(real_train)
    sim_ex = examples_of(sim_train)
    candidates = {}
    for r in cv:
        specs = FEATURE_SETS[r["features"]]
        s_ex = sim_ex if r["data"] == "real+sim" else []
        m = build_model(real_ex + s_ex, weights_for(real_ex, s_ex), specs, r["data"])
        m["operatingThreshold"] = r["threshold"]
        candidates[(r["features"], r["data"])] = m
    model = candidates[(best["features"], best["data"])]

    def ev(name, fn, sess, thr):
        return train.evaluate(name, fn, sess, thr, H)

    held_on_v1 = [s for s in held if "stall-logistic-v1" in (s.meta.get("model") or "")]
    held_on_v2 = [s for s in held if "stall-logistic-v2" in (s.meta.get("model") or "")]
    mp = train.model_probability
    predictors = [
        ("model v2 (" + best["features"] + ", " + best["data"] + ")", lambda f: mp(model, f),
         model["operatingThreshold"]),
        ("model v1 (simulator-trained)", lambda f: mp(v1, f), v1["operatingThreshold"]),
        ("model v2 at its best-F1 threshold", lambda f: mp(model, f), best["bestF1Threshold"]),
        ("heuristic (article, with device penalty)", heuristic_runtime, 0.5),
        ("heuristic without device penalty", train.heuristic, 0.5),
        ("threshold (buffer < 2 s)", train.threshold_step, 0.5),
        ("threshold ramp (2 s + 3 s ramp)", train.threshold_ramp, 0.5),
    ]
    for (fs, data), m in candidates.items():
        if m is not model:
            predictors.append((f"candidate {fs}, {data}", (lambda mm: lambda f: mp(mm, f))(m),
                               m["operatingThreshold"]))
    results = dict(
        horizonSeconds=H, dataDirectory=args.data,
        trainTraces=spec["traces"]["train"], heldOutTraces=spec["traces"]["heldout"],
        offsetsFractions=spec["offsetFractions"]["default"], sessionMediaSeconds=spec["sessionMediaSeconds"],
        trainSessions=len(real_train), heldOutSessionsWithFeatures=len(held),
        trainExamples=len(real_ex), trainPositives=int(sum(lab for _, _, lab in real_ex)),
        simTrainExamples=len(sim_ex),
        crossValidation=cv, chosen=dict(features=best["features"], data=best["data"]),
        parity=dict(heuristic=parity(sessions, heuristic_runtime, "heuristic"),
                    modelV1=parity(sessions, lambda f: mp(v1, f), "model", "stall-logistic-v1.json"),
                    modelV2=parity(sessions, lambda f: mp(model, f), "model", "stall-logistic-v2.json")),
        heldOut=[ev(n, fn, held, thr) for n, fn, thr in predictors],
        heldOutControllerV1=[ev(n, fn, held_on_v1, thr) for n, fn, thr in predictors[:7]] if held_on_v1 else [],
        heldOutControllerV2=[ev(n, fn, held_on_v2, thr) for n, fn, thr in predictors[:7]] if held_on_v2 else [],
        # Descriptive only (nothing is chosen on it): how v2's warning lead and
        # precision trade off on the held-out traces as the threshold moves.
        heldOutThresholdCurve=[dict(threshold=t, **{k: r[k] for k in ("precision", "recall", "medianLeadSeconds",
                                                                       "isolatedMedianLeadSeconds", "healthyStalls",
                                                                       "healthyMedianLeadSeconds",
                                                                       "healthyLeadAtLeast3s", "falseAlarms",
                                                                       "falseAlarmsPerHour")})
                               for t in (0.1, 0.2, 0.3, 0.4, 0.5, model["operatingThreshold"], 0.7)
                               for r in [ev("v2", lambda f: mp(model, f), held, t)]],
        train=ev("model v2 (TRAIN, for reference)", lambda f: mp(model, f), real_train, model["operatingThreshold"]),
    )
    hm = results["heldOut"][0]
    model["training"] = dict(
        tool="Tools/train/train_real.py (sessions: Tools/train/collect.py)",
        dataSource=("REAL: hlsplay sessions (--no-decode) on hls-origin replaying shared/data/traces "
                    "(rotated, 4G scaled to a 2.5 Mbit/s mean), ladder-2s looped to 248 s, 90 s per session"
                    + (", plus simulator sessions weighted to the real total" if best["data"] == "real+sim" else "")),
        trainTraces=spec["traces"]["train"], heldOutTraces=spec["traces"]["heldout"],
        trainExamples=len(real_ex), trainPositives=results["trainPositives"], l2Penalty=L2_PENALTY,
        notes=("Chosen by leave-traces-out CV on the training traces; operating threshold = the highest whose "
               "out-of-fold median warning lead on the training traces is >= 3 s. RTT (loopback TCP RTT, microseconds) and CPU PSI (this shared build "
               "machine) are logged but not inputs: neither would transfer to a viewer's device. Trained "
               + datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d") + "."),
        heldOutMetrics={k: hm[k] for k in ("auc", "precision", "recall", "brier", "medianLeadSeconds",
                                           "isolatedMedianLeadSeconds") if hm[k] is not None},
    )
    with open(args.out, "w") as fh:
        json.dump(model, fh, indent=2)
        fh.write("\n")

    # golden vectors for the Swift test: real held-out feature vectors of several kinds
    pool = [f for s in held for _, f in s.samples]
    rng = np.random.default_rng(5)
    picks = []
    for cond in (lambda f: f["bandwidthFastBps"] is None,
                 lambda f: f["inFlightBytesReceived"] is None,
                 lambda f: f["inFlightBytesReceived"] is not None and f["bufferSeconds"] < 2,
                 lambda f: f["inFlightBytesReceived"] is not None and f["bufferSeconds"] > 10,
                 lambda f: f["nextHigherRungBitrateBps"] is None,
                 lambda f: f["inFlightBytesExpected"] is None and f["inFlightBytesReceived"] is not None):
        cands = [f for f in pool if cond(f)]
        for i in (rng.choice(len(cands), size=min(2, len(cands)), replace=False) if cands else []):
            picks.append(cands[int(i)])
    mid = [f for f in pool if 0.1 < mp(model, f) < 0.9]
    for i in (rng.choice(len(mid), size=min(6, len(mid)), replace=False) if mid else []):
        picks.append(mid[int(i)])
    golden = [dict(features={k: v for k, v in f.items() if v is not None}, probability=mp(model, f)) for f in picks]
    ex = examples_of(held)
    sub = [ex[int(i)] for i in sorted(rng.choice(len(ex), size=min(400, len(ex)), replace=False))]
    sub_scores = [mp(model, f) for _, f, _ in sub]
    sub_labels = [bool(y) for _, _, y in sub]
    pr = train.precision_recall(sub_scores, sub_labels, model["operatingThreshold"])
    check = dict(scores=sub_scores, labels=sub_labels, threshold=model["operatingThreshold"],
                 auc=train.auc(sub_scores, sub_labels), brier=train.brier(sub_scores, sub_labels),
                 precision=pr["precision"], recall=pr["recall"])
    with open(args.golden, "w") as fh:
        json.dump(dict(model=os.path.basename(args.out), vectors=golden, metricsCheck=check), fh, indent=2)
        fh.write("\n")
    write_results(args.results, results)

    def fmt(x, p=3):
        return "—" if x is None else f"{x:.{p}f}"
    print(f"real: {len(real_train)} train sessions ({len(real_ex)} examples), {len(held)} held-out sessions; "
          f"chosen {best}")
    print("parity", results["parity"])
    for c in results["heldOutThresholdCurve"]:
        print("held-out curve", {k: (round(v, 3) if isinstance(v, float) else v) for k, v in c.items()})
    for block in ("heldOut", "heldOutControllerV1", "heldOutControllerV2"):
        if not results[block]:
            continue
        print(f"-- {block}")
        print(f"{'predictor':44} {'AUC':>6} {'prec':>6} {'recall':>6} {'Brier':>6} {'lead med':>8} {'warned':>7}"
              f" {'iso med':>7} {'iso>=3s':>7} {'healthy med':>11} {'>=3s':>5} {'false/h':>7}")
        for r in results[block] + ([dict(results["train"])] if block == "heldOut" else []):
            print(f"{r['predictor'][:44]:44} {fmt(r['auc'])} {fmt(r['precision'])} {fmt(r['recall'])} "
                  f"{fmt(r['brier'])} {fmt(r['medianLeadSeconds'], 2):>8} {r['warnedStalls']:>3}/{r['stalls']}"
                  f" {fmt(r['isolatedMedianLeadSeconds'], 2):>7} {fmt(r['isolatedLeadAtLeast3s'], 2):>7}"
                  f" (of {r['isolatedStalls']}) {fmt(r['healthyMedianLeadSeconds'], 2):>11}"
                  f" {fmt(r['healthyLeadAtLeast3s'], 2):>5} {fmt(r['falseAlarmsPerHour'], 1):>7}"
                  f" (healthy {r['healthyStalls']}, false {r['falseAlarms']} in {r['playbackHours']:.2f} h)"
                  f" ex {r['examples']}/{r['positives']}")


if __name__ == "__main__":
    main()
