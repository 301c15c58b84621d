#!/usr/bin/env python3
"""Train and evaluate the stall-risk logistic model (issue 5 §4).

    python3 Tools/train/train.py [--traces ../shared/data/traces] [--out models/stall-logistic-v1.json]
    python3 Tools/train/train.py --evaluate-only    # the committed v1 file evaluated, nothing refitted

Data: the trace-driven virtual-time simulator in sim.py replaying the real
traces in shared/data/traces. The split is BY TRACE: held-out traces (every
third trace of each source folder, in name order) are never seen in training.
Labels, metrics and the model's inference are the same definitions as
HLSCore's StallLabelling / StallMetrics / LogisticModelPredictor.

Outputs: the model JSON, a golden file of feature vectors with the
probabilities this script computes (the Swift golden test reproduces them),
and a results JSON with held-out metrics for the model and both baselines.
With --evaluate-only the model file is read instead of fitted and neither it
nor the golden file is written: the results' metrics are recomputed.

The results also hold "heldOutShippedModel": the model the player loads
(SHIPPED_MODEL, models/stall-logistic-v2.json) at its file's
operatingThreshold and at the controller's preload threshold, beside the
baselines, on the simulator's sessions of those held-out traces whose
recording group (recording_groups.py) none of v2's training traces (real, or
v1's simulated ones) belongs to; and v2 against "buffer < 2 s" and the
heuristic, paired by session (stats.paired_comparison): the mean lead before
each session's healthy stalls, and false alarms per hour.

Every predictor's evaluation includes the warning lead before stalls
preceded by a healthy buffer (healthy_stalls) and false alarms per hour of
playback (false_alarms), each with its count, so a reader sees its support.

Needs numpy, SciPy and scikit-learn (Tools/install-deps.sh: python3-numpy,
python3-scipy, python3-sklearn). The logistic regression is fitted here by
Newton's method with an L2 penalty on the weights (its arithmetic must match
LogisticModelPredictor's); the metrics (AUC, Brier, precision/recall, F1,
calibration bins) come from scikit-learn and SciPy.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import sys

import numpy as np
import scipy.stats
import sklearn.metrics as skm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import recording_groups  # noqa: E402
import results_file  # noqa: E402
import sim  # noqa: E402
import stats  # noqa: E402

HORIZON_SECONDS = 5.0
OFFSET_FRACTIONS = [0.0, 1 / 3, 2 / 3]  # three sessions per trace, starting at different points
L2_PENALTY = 1.0
HELD_OUT_EVERY = 3
MIN_ESTIMATE_BPS = 1_000.0  # StallFeatures.minimumEstimateBps
# The model file the player loads (HLSPlayer PlayerSession+Policy.swift, modelFile), and
# the risk at which its controller first acts (PolicyController.Configuration.preloadEnterRisk).
SHIPPED_MODEL = os.path.join("models", "stall-logistic-v2.json")
PRELOAD_ENTER_RISK = 0.30
MODEL_NAME = "stall-logistic"
MODEL_VERSION = "1.0.0"
CALIBRATION_BINS = 10  # equal-width bins of the score over [0, 1]
# Warning lead that can fail (issue 17 §3): a stall counts for the "healthy" lead only
# if, HEALTHY_LOOKBACK_SECONDS before it began, the player was playing (no stall since)
# with a forward buffer of at least HEALTHY_BUFFER_SECONDS. Every stall begins with an
# empty buffer, so over all stalls even "buffer < 2 s" warns before each one; from a
# healthy buffer, a warning must come while the buffer is still high to be early.
HEALTHY_LOOKBACK_SECONDS = 8.0
HEALTHY_BUFFER_SECONDS = 4.0  # PlaybackConfiguration.resumeBufferSeconds (HLSCore PlaybackTimeline.swift)
# The buffer "at" the lookback instant is that of the last sample at or before it, no
# older than this (the monitor samples every 0.25 s; a longer gap has no reading).
HEALTHY_SAMPLE_MAX_AGE_SECONDS = 1.0
SECONDS_PER_HOUR = 3600.0

# (name, transform, clipMin, clipMax): the model's inputs.
MODEL_FEATURES = [
    ("bufferSeconds", "log1p", 0.0, 60.0),
    ("bandwidthEstimateBps", "log10", 1e4, 1e9),
    ("bandwidthTrendRatio", "log10", 0.05, 20.0),
    ("overSelectionRatio", "log10", 0.01, 100.0),
    ("currentRungBitrateBps", "log10", 1e4, 1e9),
    ("projectedShortfallSeconds", "identity", -30.0, 30.0),
    ("inFlightProgressFraction", "identity", 0.0, 1.0),
    ("inFlightSecondsSinceLastByte", "log1p", 0.0, 30.0),
    ("firstByteSeconds", "log1p", 0.0, 10.0),
]


def family(trace_name: str) -> str:
    """Traces that may be cuts of one recording stay on one side of the split:
    Mahimahi files are grouped by carrier and technology (TMobile-LTE-short and
    TMobile-LTE-driving are one family); every other file is its own family."""
    if trace_name.startswith("mahimahi/"):
        return "-".join(os.path.basename(trace_name).split("-")[:2])
    return trace_name


# ---- StallFeatures derived values (same as Swift) -------------------------

def value(f: dict, name: str):
    if name in f:
        return f[name]
    fast, slow = f["bandwidthFastBps"], f["bandwidthSlowBps"]
    est = min(fast, slow) if fast is not None and slow is not None else None
    if name == "bandwidthEstimateBps":
        return est
    if name == "bandwidthTrendRatio":
        return fast / slow if fast is not None and slow is not None and slow > 0 else None
    if name == "overSelectionRatio":
        return f["currentRungBitrateBps"] / max(est, MIN_ESTIMATE_BPS) if est is not None else None
    if name == "projectedCompletionSeconds":
        exp_, rec = f["inFlightBytesExpected"], f["inFlightBytesReceived"]
        if exp_ is None or rec is None:
            return None
        remaining_bits = max(0.0, exp_ - rec) * 8
        if remaining_bits == 0:
            return 0.0
        el = f["inFlightElapsedSeconds"]
        if el is not None and el > 0 and rec > 0:
            return remaining_bits / max(rec * 8 / el, MIN_ESTIMATE_BPS)
        if est is None:
            return None
        return remaining_bits / max(est, MIN_ESTIMATE_BPS)
    if name == "projectedShortfallSeconds":
        p = value(f, "projectedCompletionSeconds")
        return None if p is None else p - f["bufferSeconds"]
    if name == "inFlightProgressFraction":
        exp_, rec = f["inFlightBytesExpected"], f["inFlightBytesReceived"]
        if exp_ is None or rec is None or exp_ <= 0:
            return None
        return min(1.0, max(0.0, rec / exp_))
    raise KeyError(name)


def transform(x, kind, lo, hi):
    if lo is not None:
        x = max(lo, x)
    if hi is not None:
        x = min(hi, x)
    if kind == "identity":
        return x
    if kind == "log1p":
        return math.log1p(x)
    if kind == "log10":
        return math.log10(x)
    raise ValueError(kind)


# ---- predictors ------------------------------------------------------------

def model_probability(model: dict, f: dict) -> float:
    """Same arithmetic, in the same order, as LogisticModelPredictor.logit."""
    logit = model["bias"]
    for spec in model["features"]:
        raw = value(f, spec["name"])
        if raw is not None:
            t = transform(raw, spec["transform"], spec.get("clipMin"), spec.get("clipMax"))
            logit += spec["weight"] * (t - spec["mean"]) / spec["std"]
        else:
            logit += spec["weight"] * ((spec["imputeValue"] - spec["mean"]) / spec["std"]) + spec["missingWeight"]
    return 1 / (1 + math.exp(-logit)) if logit >= 0 else math.exp(logit) / (1 + math.exp(logit))


def heuristic(f: dict) -> float:
    """HeuristicPredictor (device pressure is missing in the simulator: no penalty)."""
    bp = max(0.0, 3.0 - f["bufferSeconds"]) / 3.0
    osr = value(f, "overSelectionRatio")
    br = osr if osr is not None else 1.0
    return min(1.0, max(0.0, bp + br * 0.25))


def threshold_step(f: dict) -> float:
    return 1.0 if f["bufferSeconds"] < 2.0 else 0.0


def threshold_ramp(f: dict) -> float:
    """BufferThresholdPredictor(thresholdSeconds: 2, rampWidthSeconds: 3): ranks by buffer."""
    b = f["bufferSeconds"]
    if b < 2.0:
        return 1.0
    return min(1.0, max(0.0, (5.0 - b) / 3.0))


# ---- labelling and metrics (same as StallLabelling / StallMetrics) ---------

def label_session(sess, horizon):
    starts = sorted(s for s, _ in sess.stalls)
    out = []
    for t, f in sess.samples:
        if any(t >= s and t < (e if e is not None else math.inf) for s, e in sess.stalls):
            continue
        nxt = next((s for s in starts if s > t), None)
        if nxt is not None and nxt <= t + horizon:
            out.append((t, f, 1))
        elif t + horizon <= sess.duration:
            out.append((t, f, 0))
    return out


def _binary(scores, labels):
    return np.asarray(scores, float), np.asarray(labels, bool)


def auc(scores, labels):
    """ROC AUC (sklearn.metrics.roc_auc_score; ties count one half, as StallMetrics
    does); None when the labels hold one class only (the AUC is undefined)."""
    s, y = _binary(scores, labels)
    if y.all() or not y.any():
        return None
    return float(skm.roc_auc_score(y, s))


def precision_recall(scores, labels, thr):
    """A warning is a score >= thr. Counts from sklearn.metrics.confusion_matrix;
    precision (recall) is None when nothing warned (nothing was positive)."""
    s, y = _binary(scores, labels)
    warn = s >= thr
    (_, fp), (fn, tp) = skm.confusion_matrix(y, warn, labels=[False, True])
    tp, fp, fn = int(tp), int(fp), int(fn)
    return dict(threshold=thr, tp=tp, fp=fp, fn=fn,
                precision=float(skm.precision_score(y, warn, zero_division=0)) if tp + fp else None,
                recall=float(skm.recall_score(y, warn, zero_division=0)) if tp + fn else None)


def brier(scores, labels):
    """Mean squared difference between score and outcome (sklearn.metrics.brier_score_loss)."""
    s, y = _binary(scores, labels)
    return float(skm.brier_score_loss(y.astype(int), s, pos_label=1))


def calibration(scores, labels, bins=CALIBRATION_BINS):
    """Equal-width bins of the score over [0, 1]: count, mean score and observed positive
    rate per bin. A score's bin is min(bins - 1, floor(score * bins)), StallMetrics'
    rule, so a score on an edge goes to the bin above it; the per-bin count and means are
    scipy.stats.binned_statistic over those bin numbers. (sklearn's calibration_curve puts
    a score on an edge in the bin below, leaves empty bins out and gives no counts.)"""
    s, y = _binary(scores, labels)
    idx = np.clip(np.floor(s * bins), 0, bins - 1)
    edges = np.arange(bins + 1) - 0.5  # one integer bin number per bin

    def per_bin(values, statistic):
        return scipy.stats.binned_statistic(idx, values, statistic, bins=edges).statistic

    count, predicted, observed = per_bin(s, "count"), per_bin(s, "mean"), per_bin(y.astype(float), "mean")
    return [dict(lower=b / bins, upper=(b + 1) / bins, count=int(count[b]),
                 meanPredicted=float(predicted[b]) if count[b] else None,
                 observedRate=float(observed[b]) if count[b] else None)
            for b in range(bins)]


def lead_times(scored, stall_starts, thr, lookback):
    """scored: [(t, score)] of non-stalled samples in time order."""
    leads, missed = [], 0
    for s in sorted(stall_starts):
        window = [(t, sc) for t, sc in scored if s - lookback <= t < s]
        if not window or window[-1][1] < thr:
            missed += 1
            continue
        first = window[-1][0]
        for t, sc in reversed(window):
            if sc < thr:
                break
            first = t
        leads.append(s - first)
    return leads, missed


def stalled_at(sess, t) -> bool:
    return any(t >= st and t < (e if e is not None else math.inf) for st, e in sess.stalls)


def healthy_stalls(sess, lookback=HEALTHY_LOOKBACK_SECONDS, level=HEALTHY_BUFFER_SECONDS,
                   max_age=HEALTHY_SAMPLE_MAX_AGE_SECONDS):
    """Stall starts preceded by a healthy buffer: playing since at least `lookback` before the
    stall (playback had started and no earlier stall ended later than that instant), and
    the last sample at or before that instant, no older than `max_age`, has a buffer of at
    least `level` seconds."""
    out = []
    for i, (st, _) in enumerate(sess.stalls):
        since = st - lookback
        prev_end = sess.stalls[i - 1][1] if i > 0 else sess.play_start
        if prev_end is None or prev_end > since:
            continue
        before = [(t, f) for t, f in sess.samples if t <= since and not stalled_at(sess, t)]
        if before and since - before[-1][0] <= max_age and before[-1][1]["bufferSeconds"] >= level:
            out.append(st)
    return out


def warning_episodes(sess, fn, thr):
    """Runs of consecutive non-stalled samples scoring >= thr: [(first t, last t)]. A sample
    below the threshold or a stall ends a run."""
    episodes, run = [], None
    stall_iter = sorted(st for st, _ in sess.stalls)
    for t, f in sess.samples:
        if stalled_at(sess, t):
            run = None
            continue
        if run is not None and any(run[1] < st <= t for st in stall_iter):
            run = None  # a stall began between the two samples
        if fn(f) >= thr:
            if run is None:
                run = [t, t]
                episodes.append(run)
            else:
                run[1] = t
        else:
            run = None
    return [tuple(e) for e in episodes]


def false_alarms(sess, fn, thr, horizon):
    """(warning episodes, false alarms, unresolved): an episode from ta to tb is a false
    alarm when no stall begins in (ta, tb + horizon]; unresolved (not counted either way)
    when tb + horizon runs past the session's end without a stall, as the labelling drops
    such samples."""
    starts = [st for st, _ in sess.stalls]
    eps = warning_episodes(sess, fn, thr)
    false, unresolved = 0, 0
    for ta, tb in eps:
        if any(ta < st <= tb + horizon for st in starts):
            continue
        if tb + horizon > sess.duration:
            unresolved += 1
        else:
            false += 1
    return len(eps), false, unresolved


def playback_seconds(sess) -> float:
    """Seconds the media clock ran: from playback start to the session's end, less the
    time stalled."""
    if sess.play_start is None:
        return 0.0
    stalled = sum(max(0.0, min(e if e is not None else sess.duration, sess.duration) - max(st, sess.play_start))
                  for st, e in sess.stalls)
    return max(0.0, sess.duration - sess.play_start - stalled)


# ---- training ---------------------------------------------------------------

def design(examples, specs, fit_stats=None):
    """Standardized design matrix with missing indicators; learns stats when fit_stats is None."""
    n = len(examples)
    raw = {name: [value(f, name) for _, f, _ in examples] for name, *_ in specs}
    stats = fit_stats or {}
    cols, names = [], []
    for name, kind, lo, hi in specs:
        vals = raw[name]
        present = [transform(v, kind, lo, hi) for v in vals if v is not None]
        if fit_stats is None:
            mean = float(np.mean(present)) if present else 0.0
            std = float(np.std(present)) if present else 1.0
            std = std if std > 1e-9 else 1.0
            stats[name] = dict(mean=mean, std=std, impute=mean, anyMissing=len(present) < n)
        st = stats[name]
        z = np.array([((transform(v, kind, lo, hi) if v is not None else st["impute"]) - st["mean"]) / st["std"]
                      for v in vals])
        cols.append(z)
        names.append((name, "z"))
        if st["anyMissing"]:
            cols.append(np.array([1.0 if v is None else 0.0 for v in vals]))
            names.append((name, "missing"))
    X = np.column_stack(cols) if cols else np.zeros((n, 0))
    return X, names, stats


def fit_logistic(X, y, l2, iters=50):
    n, d = X.shape
    Xb = np.hstack([np.ones((n, 1)), X])
    w = np.zeros(d + 1)
    reg = np.full(d + 1, l2)
    reg[0] = 0.0
    for _ in range(iters):
        z = Xb @ w
        p = 1 / (1 + np.exp(-z))
        g = Xb.T @ (p - y) + reg * w
        h = (Xb * (p * (1 - p))[:, None]).T @ Xb + np.diag(reg)
        step = np.linalg.solve(h, g)
        w -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    return w[0], w[1:]


def best_f1_threshold(scores, labels):
    """The threshold on the 0.05…0.95 grid (step 0.01) with the highest F1
    (sklearn.metrics.f1_score of score >= threshold); the lowest such threshold on a
    tie, 0.5 when no threshold has both precision and recall above 0."""
    s, y = _binary(scores, labels)
    best, best_thr = 0.0, 0.5
    for thr in np.round(np.arange(0.05, 0.96, 0.01), 2):
        f1 = float(skm.f1_score(y, s >= thr, zero_division=0))
        if f1 > best:
            best, best_thr = f1, float(thr)
    return best_thr


def evaluate(name, fn, sessions, thr, horizon):
    scores, labels, leads, missed, nstalls = [], [], [], 0, 0
    iso_leads, iso_missed, n_iso = [], 0, 0
    healthy_leads, healthy_missed, n_healthy = [], 0, 0
    episodes, n_false, n_unresolved, played = 0, 0, 0, 0.0
    for sess in sessions:
        ex = label_session(sess, horizon)
        scores += [fn(f) for _, f, _ in ex]
        labels += [y for _, _, y in ex]
        non_stalled = [(t, f) for t, f in sess.samples
                       if not any(t >= s and t < (e if e is not None else math.inf) for s, e in sess.stalls)]
        scored = [(t, fn(f)) for t, f in non_stalled]
        starts = [s for s, _ in sess.stalls]
        nstalls += len(starts)
        l, m = lead_times(scored, starts, thr, horizon)
        leads += l
        missed += m
        # "Isolated" stalls: playing for at least H before them (not a repeat
        # stall soon after resuming, nor one right after startup), so a lead
        # of up to H is possible.
        iso = []
        for i, (st, _) in enumerate(sess.stalls):
            prev_end = sess.stalls[i - 1][1] if i > 0 else sess.play_start
            if prev_end is not None and st - prev_end >= horizon:
                iso.append(st)
        n_iso += len(iso)
        l, m = lead_times(scored, iso, thr, horizon)
        iso_leads += l
        iso_missed += m
        healthy = healthy_stalls(sess)
        n_healthy += len(healthy)
        l, m = lead_times(scored, healthy, thr, horizon)
        healthy_leads += l
        healthy_missed += m
        e, fa, un = false_alarms(sess, fn, thr, horizon)
        episodes += e
        n_false += fa
        n_unresolved += un
        played += playback_seconds(sess)
    pr = precision_recall(scores, labels, thr)
    hours = played / SECONDS_PER_HOUR
    return dict(predictor=name, threshold=thr, examples=len(labels), positives=int(sum(labels)),
                auc=auc(scores, labels), precision=pr["precision"], recall=pr["recall"],
                brier=brier(scores, labels), calibration=calibration(scores, labels),
                stalls=nstalls, warnedStalls=len(leads), missedStalls=missed,
                medianLeadSeconds=float(np.median(leads)) if leads else None,
                meanLeadSeconds=float(np.mean(leads)) if leads else None,
                isolatedStalls=n_iso, isolatedMissed=iso_missed,
                isolatedMedianLeadSeconds=float(np.median(iso_leads)) if iso_leads else None,
                isolatedLeadAtLeast3s=(sum(1 for x in iso_leads if x >= 3) / n_iso) if n_iso else None,
                # Stalls preceded by a healthy buffer (healthy_stalls): the lead that can fail.
                healthyStalls=n_healthy, healthyWarned=len(healthy_leads), healthyMissed=healthy_missed,
                healthyMedianLeadSeconds=float(np.median(healthy_leads)) if healthy_leads else None,
                healthyLeadAtLeast3s=(sum(1 for x in healthy_leads if x >= 3) / n_healthy) if n_healthy else None,
                # Warning episodes not followed by a stall within the horizon, per hour played.
                warningEpisodes=episodes, falseAlarms=n_false, unresolvedEpisodes=n_unresolved,
                playbackHours=hours, falseAlarmsPerHour=(n_false / hours) if hours > 0 else None)


def per_session_warnings(fn, thr, sess, horizon):
    """One session's healthy-stall leads (a missed stall counts 0 s) and false alarms per hour."""
    scored = [(t, fn(f)) for t, f in sess.samples if not stalled_at(sess, t)]
    healthy = healthy_stalls(sess)
    leads, missed = lead_times(scored, healthy, thr, horizon)
    _, false, _ = false_alarms(sess, fn, thr, horizon)
    hours = playback_seconds(sess) / SECONDS_PER_HOUR
    return dict(healthyLeads=leads + [0.0] * missed, falseAlarmsPerHour=false / hours if hours > 0 else None)


def compare_predictors(a, b, sessions, keys, horizon):
    """Predictor A against B (each (fn, threshold)) on the same sessions, paired by session
    key (trace, offset): the mean lead before the session's healthy stalls (sessions with
    at least one), and false alarms per hour of playback."""
    pa = [per_session_warnings(a[0], a[1], s, horizon) for s in sessions]
    pb = [per_session_warnings(b[0], b[1], s, horizon) for s in sessions]
    lead = [(k, float(np.mean(x["healthyLeads"])), float(np.mean(y["healthyLeads"])))
            for k, x, y in zip(keys, pa, pb) if x["healthyLeads"]]
    fa = [(k, x["falseAlarmsPerHour"], y["falseAlarmsPerHour"])
          for k, x, y in zip(keys, pa, pb) if x["falseAlarmsPerHour"] is not None]
    return dict(
        meanHealthyLeadSeconds=stats.paired_comparison([x for _, x, _ in lead], [y for _, _, y in lead],
                                                       [k for k, _, _ in lead]),
        falseAlarmsPerHour=stats.paired_comparison([x for _, x, _ in fa], [y for _, _, y in fa],
                                                   [k for k, _, _ in fa]))


def shipped_model_results(repo, test_tr, test_s):
    """The player's model (SHIPPED_MODEL) and the baselines on the held-out sessions whose
    trace's recording group is in none of that model's training traces."""
    with open(os.path.join(repo, SHIPPED_MODEL)) as fh:
        shipped = json.load(fh)
    with open(os.path.join(repo, "models", "stall-logistic-v1.json")) as fh:
        sim_train = json.load(fh)["training"]["trainTraces"]  # v2's simulated training sessions
    seen = {recording_groups.group_of(t) for t in shipped["training"]["trainTraces"] + sim_train}
    keep = {t.name for t in test_tr if recording_groups.group_of(t.name) not in seen}
    kept = [(s, (tr.name, k)) for s, (tr, k) in zip(test_s, [(t, k) for t in test_tr
                                                            for k in range(len(OFFSET_FRACTIONS))])
            if tr.name in keep]
    sessions, keys = [s for s, _ in kept], [k for _, k in kept]
    thr = shipped["operatingThreshold"]
    h = HORIZON_SECONDS
    v2 = (lambda f: model_probability(shipped, f), thr)
    comparisons = {
        "model v2 at its file's threshold vs threshold (buffer < 2 s)":
            compare_predictors(v2, (threshold_step, 0.5), sessions, keys, h),
        "model v2 at its file's threshold vs heuristic": compare_predictors(v2, (heuristic, 0.5), sessions, keys, h),
    }
    return dict(comparisons=comparisons,
        model=SHIPPED_MODEL, operatingThreshold=thr, traces=sorted(keep), sessions=len(sessions),
        rows=[evaluate(f"model v2 at its file's threshold ({thr})", lambda f: model_probability(shipped, f),
                       sessions, thr, h),
              evaluate(f"model v2 at the preload threshold ({PRELOAD_ENTER_RISK})",
                       lambda f: model_probability(shipped, f), sessions, PRELOAD_ENTER_RISK, h),
              evaluate("heuristic", heuristic, sessions, 0.5, h),
              evaluate("threshold (buffer < 2 s)", threshold_step, sessions, 0.5, h),
              evaluate("threshold ramp (2 s + 3 s ramp)", threshold_ramp, sessions, 0.5, h)])


def print_results(results, n_train, n_test, n_train_ex):
    def fmt(x, p=3):
        return "—" if x is None else f"{x:.{p}f}"

    def table(rows):
        print(f"{'predictor':44} {'thr':>4} {'AUC':>6} {'prec':>6} {'recall':>6} {'Brier':>6} {'lead med':>8}"
              f" {'warned':>7} {'healthy med':>11} {'>=3s':>5} {'false/h':>7}")
        for r in rows:
            print(f"{r['predictor'][:44]:44} {r['threshold']:4.2f} {fmt(r['auc'])} {fmt(r['precision'])} "
                  f"{fmt(r['recall'])} {fmt(r['brier'])} {fmt(r['medianLeadSeconds'], 2):>8} "
                  f"{r['warnedStalls']:>3}/{r['stalls']} {fmt(r['healthyMedianLeadSeconds'], 2):>11} "
                  f"{fmt(r['healthyLeadAtLeast3s'], 2):>5} {fmt(r['falseAlarmsPerHour'], 1):>7}"
                  f" (healthy stalls {r['healthyStalls']}, false alarms {r['falseAlarms']} in "
                  f"{r['playbackHours']:.2f} h)")
    print(f"traces: {n_train} train, {n_test} held out; examples train {n_train_ex}")
    table(results["heldOut"] + [dict(results["train"], predictor="model (TRAIN, for reference)")])
    sh = results["heldOutShippedModel"]
    print(f"-- {sh['model']} (the player's model) on {len(sh['traces'])} held-out traces it never trained on, "
          f"{sh['sessions']} sessions")
    table(sh["rows"])
    for name, c in sh["comparisons"].items():
        print(f"{name} (A vs B), paired by session (trace, offset):")
        for k, unit in (("meanHealthyLeadSeconds", " s"), ("falseAlarmsPerHour", " /h")):
            print(f"  {k:22} {stats.describe(c[k], unit)}")


def fit_model(train_ex, y):
    """The logistic model on the training examples, its operating threshold the best-F1 one
    on them."""
    X, cols, stats = design(train_ex, MODEL_FEATURES)
    bias, w = fit_logistic(X, y, L2_PENALTY)
    weight = {c: wi for c, wi in zip(cols, w)}

    feats = []
    for name, kind, lo, hi in MODEL_FEATURES:
        st = stats[name]
        feats.append(dict(name=name, transform=kind, clipMin=lo, clipMax=hi, imputeValue=st["impute"],
                          mean=st["mean"], std=st["std"], weight=float(weight[(name, "z")]),
                          missingWeight=float(weight.get((name, "missing"), 0.0))))
    model = dict(schema="hlsplay.stall-model", schemaVersion=1, name=MODEL_NAME, version=MODEL_VERSION,
                 kind="logistic", horizonSeconds=HORIZON_SECONDS, operatingThreshold=0.5, bias=float(bias),
                 features=feats, training={})
    train_scores = [model_probability(model, f) for _, f, _ in train_ex]
    model["operatingThreshold"] = best_f1_threshold(train_scores, y.astype(bool))
    return model


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser()
    ap.add_argument("--traces", default=os.path.join(os.path.dirname(repo), "shared", "data", "traces"))
    ap.add_argument("--out", default=os.path.join(repo, "models", "stall-logistic-v1.json"))
    ap.add_argument("--golden", default=os.path.join(repo, "models", "stall-logistic-v1.golden.json"))
    ap.add_argument("--results", default=os.path.join(here, "results-v1.json"))
    ap.add_argument("--evaluate-only", action="store_true",
                    help="read the model from --out instead of fitting it; write neither it nor --golden")
    args = ap.parse_args()

    traces = sim.load_all(args.traces)
    groups = {}
    for tr in traces:
        groups.setdefault(os.path.dirname(tr.name), []).append(tr)
    train_tr, test_tr = [], []
    for g in sorted(groups):
        fams = sorted({family(t.name) for t in groups[g]})
        held = {f for i, f in enumerate(fams) if i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1}
        for tr in sorted(groups[g], key=lambda t: t.name):
            (test_tr if family(tr.name) in held else train_tr).append(tr)

    def run(trs):
        out = []
        for tr in trs:
            for k, frac in enumerate(OFFSET_FRACTIONS):
                seed = sum(ord(c) for c in tr.name) * 10 + k
                out.append(sim.simulate(tr, frac * tr.duration, seed))
        return out

    train_s, test_s = run(train_tr), run(test_tr)
    train_ex = [e for s in train_s for e in label_session(s, HORIZON_SECONDS)]
    y = np.array([lab for _, _, lab in train_ex], float)
    if args.evaluate_only:
        with open(args.out) as fh:
            model = json.load(fh)
    else:
        model = fit_model(train_ex, y)

    results = dict(
        horizonSeconds=HORIZON_SECONDS,
        trainTraces=[t.name for t in train_tr], heldOutTraces=[t.name for t in test_tr],
        trainSessions=len(train_s), heldOutSessions=len(test_s),
        heldOut=[
            evaluate("model", lambda f: model_probability(model, f), test_s, model["operatingThreshold"], HORIZON_SECONDS),
            evaluate("heuristic", heuristic, test_s, 0.5, HORIZON_SECONDS),
            evaluate("threshold (buffer < 2 s)", threshold_step, test_s, 0.5, HORIZON_SECONDS),
            evaluate("threshold ramp (2 s + 3 s ramp)", threshold_ramp, test_s, 0.5, HORIZON_SECONDS),
        ],
        train=evaluate("model", lambda f: model_probability(model, f), train_s, model["operatingThreshold"],
                       HORIZON_SECONDS),
        heldOutShippedModel=shipped_model_results(repo, test_tr, test_s),
    )
    if args.evaluate_only:
        results_file.update(args.results, results, "Tools/train/train.py")
        print_results(results, len(train_tr), len(test_tr), len(train_ex))
        return
    m = results["heldOut"][0]
    model["training"] = dict(
        tool="Tools/train/train.py (simulator Tools/train/sim.py)",
        dataSource="SIMULATED: trace-driven virtual-time simulator replaying shared/data/traces "
                   "(4-rung ladder 0.62/1.31/3.72/7.23 Mbit/s, 2 s segments, BBA-0 ABR); "
                   "to be replaced by real hlsplay session logs",
        trainTraces=results["trainTraces"], heldOutTraces=results["heldOutTraces"],
        trainExamples=len(train_ex), trainPositives=int(y.sum()), l2Penalty=L2_PENALTY,
        notes=("Missing features: z = (imputeValue - mean)/std with imputeValue = training mean of the present "
               "transformed values, plus missingWeight. Device pressure (CPU PSI, decode lag, thermal) and RTT "
               "are not modelled by the simulator and are not model inputs in v1. Trained "
               + datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d") + "."),
        heldOutMetrics={k: m[k] for k in ("auc", "precision", "recall", "brier", "medianLeadSeconds",
                                                "isolatedMedianLeadSeconds")
                        if m[k] is not None},
    )
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(model, fh, indent=2)
        fh.write("\n")

    # Golden vectors: a spread of held-out samples (idle / in flight / no estimate / stalling soon).
    pool = [f for s in test_s for _, f in s.samples]
    picks = []
    rng = np.random.default_rng(5)
    for cond in (lambda f: f["bandwidthFastBps"] is None,
                 lambda f: f["inFlightBytesReceived"] is None,
                 lambda f: f["inFlightBytesReceived"] is not None and f["bufferSeconds"] < 2,
                 lambda f: f["inFlightBytesReceived"] is not None and f["bufferSeconds"] > 10,
                 lambda f: f["nextHigherRungBitrateBps"] is None,
                 lambda f: f["inFlightBytesReceived"] == 0.0):
        cands = [f for f in pool if cond(f)]
        for i in rng.choice(len(cands), size=min(2, len(cands)), replace=False) if cands else []:
            picks.append(cands[int(i)])
    mid = [f for f in pool if 0.1 < model_probability(model, f) < 0.9]
    for i in rng.choice(len(mid), size=min(6, len(mid)), replace=False) if mid else []:
        picks.append(mid[int(i)])  # mid-range probabilities, where arithmetic differences show
    golden = [dict(features={k: v for k, v in f.items() if v is not None},
                   probability=model_probability(model, f)) for f in picks]
    # Metric cross-check: a fixed subsample of held-out (score, label) pairs and
    # this script's metrics on it; the Swift test recomputes them with StallMetrics.
    ex = [e for s in test_s for e in label_session(s, HORIZON_SECONDS)]
    sub = [ex[int(i)] for i in sorted(rng.choice(len(ex), size=min(400, len(ex)), replace=False))]
    sub_scores = [model_probability(model, f) for _, f, _ in sub]
    sub_labels = [bool(y_) for _, _, y_ in sub]
    pr = precision_recall(sub_scores, sub_labels, model["operatingThreshold"])
    check = dict(scores=sub_scores, labels=sub_labels, threshold=model["operatingThreshold"],
                 auc=auc(sub_scores, sub_labels), brier=brier(sub_scores, sub_labels),
                 precision=pr["precision"], recall=pr["recall"])
    with open(args.golden, "w") as fh:
        json.dump(dict(model=os.path.basename(args.out), vectors=golden, metricsCheck=check), fh, indent=2)
        fh.write("\n")
    results_file.update(args.results, results, "Tools/train/train.py")

    print_results(results, len(train_tr), len(test_tr), len(train_ex))

if __name__ == "__main__":
    main()
