"""Tests of the stall-model trainer's metrics and the reports' paired statistics (Tools/train):
train.py's AUC, Brier, precision/recall, best-F1 threshold and calibration bins (scikit-learn
and SciPy) on small sets whose answers are worked out by hand here; the same functions against
the figures the earlier hand-written code stored in the models' golden files; and
stats.paired_comparison (Wilcoxon signed-rank, sign test, bootstrap CI) on pairs whose
tests are known. Needs numpy, SciPy and scikit-learn (Tools/install-deps.sh).

Run: python3 -B -m unittest discover -s Tools/tests
"""
import json, math, os, shutil, subprocess, sys, tempfile, types, unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from support import REPO, TRAIN  # noqa: E402
import results_file  # noqa: E402
import stats  # noqa: E402
import train  # noqa: E402

# Four samples: negatives score 0.1 and 0.4, positives 0.35 and 0.8.
SCORES = [0.1, 0.4, 0.35, 0.8]
LABELS = [False, False, True, True]


class MetricTests(unittest.TestCase):
    def test_auc_counts_each_positive_negative_pair_and_ties_as_half(self):
        # Pairs (pos, neg): (0.35, 0.1) right, (0.35, 0.4) wrong, (0.8, 0.1) right, (0.8, 0.4) right: 3/4.
        self.assertAlmostEqual(train.auc(SCORES, LABELS), 0.75, places=12)
        # A tie counts one half: pos {0.5, 0.9} against neg {0.2, 0.5} → (1 + 0.5 + 1 + 1) / 4.
        self.assertAlmostEqual(train.auc([0.2, 0.5, 0.5, 0.9], [0, 0, 1, 1]), 0.875, places=12)
        self.assertIsNone(train.auc([0.2, 0.7], [1, 1]))
        self.assertIsNone(train.auc([0.2, 0.7], [0, 0]))

    def test_brier_is_the_mean_squared_error(self):
        # (0.1² + 0.4² + 0.65² + 0.2²) / 4 = 0.6325 / 4
        self.assertAlmostEqual(train.brier(SCORES, LABELS), 0.158125, places=12)
        self.assertAlmostEqual(train.brier([0.0, 1.0], [0, 1]), 0.0, places=12)

    def test_precision_recall_at_a_threshold(self):
        # At 0.35 warn on 0.4, 0.35, 0.8: two right, one false alarm, none missed.
        pr = train.precision_recall(SCORES, LABELS, 0.35)
        self.assertEqual((pr["tp"], pr["fp"], pr["fn"]), (2, 1, 0))
        self.assertAlmostEqual(pr["precision"], 2 / 3, places=12)
        self.assertEqual(pr["recall"], 1.0)
        nothing = train.precision_recall(SCORES, LABELS, 0.9)  # no warning: precision undefined
        self.assertEqual((nothing["tp"], nothing["fp"], nothing["fn"], nothing["precision"], nothing["recall"]),
                         (0, 0, 2, None, 0.0))
        no_pos = train.precision_recall([0.5], [False], 0.4)  # no positive: recall undefined
        self.assertEqual((no_pos["precision"], no_pos["recall"]), (0.0, None))

    def test_best_f1_threshold_is_the_lowest_grid_point_with_the_highest_f1(self):
        # F1 by threshold: ≤ 0.10 → 2/3 (all warn); 0.11–0.35 → 0.8; 0.36–0.40 → 0.5; 0.41–0.80 → 2/3.
        self.assertEqual(train.best_f1_threshold(SCORES, LABELS), 0.11)
        # No threshold with precision and recall above 0: the 0.5 default.
        self.assertEqual(train.best_f1_threshold([0.9, 0.95], [False, False]), 0.5)

    def test_calibration_bins_put_a_score_on_an_edge_in_the_bin_above(self):
        table = train.calibration([0.0, 0.1, 0.15, 0.5, 1.0], [0, 1, 0, 1, 1])
        self.assertEqual([b["count"] for b in table], [1, 2, 0, 0, 0, 1, 0, 0, 0, 1])
        self.assertEqual((table[0]["lower"], table[0]["upper"], table[9]["upper"]), (0.0, 0.1, 1.0))
        self.assertAlmostEqual(table[1]["meanPredicted"], 0.125, places=12)
        self.assertEqual(table[1]["observedRate"], 0.5)
        self.assertEqual((table[5]["meanPredicted"], table[5]["observedRate"]), (0.5, 1.0))
        self.assertEqual((table[2]["meanPredicted"], table[2]["observedRate"]), (None, None))

    def test_the_library_metrics_reproduce_the_figures_the_hand_written_code_stored(self):
        # Each golden file's metricsCheck holds 400 held-out (score, label) pairs and the AUC, Brier,
        # precision and recall that the trainer's earlier hand-written functions computed on them.
        for name in ("stall-logistic-v1.golden.json", "stall-logistic-v2.golden.json"):
            with open(os.path.join(REPO, "models", name)) as fh:
                check = json.load(fh)["metricsCheck"]
            s, y, thr = check["scores"], check["labels"], check["threshold"]
            pr = train.precision_recall(s, y, thr)
            self.assertAlmostEqual(train.auc(s, y), check["auc"], places=12, msg=name)
            self.assertAlmostEqual(train.brier(s, y), check["brier"], places=12, msg=name)
            self.assertAlmostEqual(pr["precision"], check["precision"], places=12, msg=name)
            self.assertAlmostEqual(pr["recall"], check["recall"], places=12, msg=name)


def session(buffer_at, stalls, duration, play_start=0.0, every=0.5, gaps=()):
    """A synthetic session: a sample every `every` s from play_start to the end (none inside
    `gaps`, [(from, to)]), each with bufferSeconds = buffer_at(t); the other features are
    not needed by the buffer predictors."""
    samples, t = [], play_start
    while t <= duration + 1e-9:
        if not any(a < t < b for a, b in gaps):
            samples.append((round(t, 3), dict(bufferSeconds=buffer_at(t))))
        t += every
    return types.SimpleNamespace(samples=samples, stalls=[list(x) for x in stalls], duration=duration,
                                 play_start=play_start)


def drain_then_dip(t):
    """10 s of buffer; from 20 s it drains 1 s/s to empty at 30 s (stall 30–34); resumes at
    4 s and drains to empty at 40 s (stall 40–44); 10 s again after, but for a dip to
    1.5 s at 50–50.5 s with no stall after it."""
    if t < 20:
        return 10.0
    if t < 30:
        return 10.0 - (t - 20)
    if 34 <= t < 40:
        return 4.0 - (t - 34) * 4 / 6
    if 50 <= t <= 50.5:
        return 1.5
    return 10.0


class LeadAndFalseAlarmTests(unittest.TestCase):
    def setUp(self):
        self.main = session(drain_then_dip, [(30, 34), (40, 44)], 60.0)
        # No stall; the buffer falls below 2 s at 18 s and the session ends at 20 s: that
        # episode's outcome is unknown.
        self.tail = session(lambda t: 1.0 if t >= 18 else 10.0, [], 20.0, play_start=2.0)

    def test_only_stalls_after_a_healthy_buffer_count(self):
        # Stall 30: 8 s before (22 s) the buffer was 8 s ≥ 4 s. Stall 40: the player was stalled
        # until 34 s, 6 s before it: not playing since 32 s.
        self.assertEqual(train.healthy_stalls(self.main), [30])
        low = session(lambda t: 3.0 if t < 30 else 10.0, [(30, 34)], 60.0)  # 3 s < 4 s at 22 s
        self.assertEqual(train.healthy_stalls(low), [])
        gap = session(drain_then_dip, [(30, 34)], 60.0, gaps=[(20, 23)])  # last sample 19.5 s: too old
        self.assertEqual(train.healthy_stalls(gap), [])
        late_start = session(drain_then_dip, [(30, 34)], 60.0, play_start=23.0)  # playing only 7 s
        self.assertEqual(train.healthy_stalls(late_start), [])

    def test_buffer_below_2s_warns_late_before_a_healthy_stall(self):
        r = train.evaluate("buffer < 2 s", train.threshold_step, [self.main, self.tail], 0.5, 5.0)
        # Below 2 s from 28.5 s (buffer 1.5 s): 1.5 s before the healthy stall. Over all stalls it
        # warned before both (the second one 2.5 s ahead), which says nothing.
        self.assertEqual((r["stalls"], r["warnedStalls"]), (2, 2))
        self.assertEqual((r["healthyStalls"], r["healthyWarned"], r["healthyMissed"]), (1, 1, 0))
        self.assertEqual(r["healthyMedianLeadSeconds"], 1.5)
        self.assertEqual(r["healthyLeadAtLeast3s"], 0.0)
        # Episodes 28.5–29.5 and 37.5–39.5 end in stalls; 50–50.5 does not (false); 18–20 in the
        # second session runs past its end (unresolved). Played: 60 − 8 s stalled, plus 18 s.
        self.assertEqual((r["warningEpisodes"], r["falseAlarms"], r["unresolvedEpisodes"]), (4, 1, 1))
        self.assertAlmostEqual(r["playbackHours"], 70 / 3600, places=12)
        self.assertAlmostEqual(r["falseAlarmsPerHour"], 3600 / 70, places=9)

    def test_an_earlier_warning_has_a_longer_healthy_lead(self):
        def early(f):
            return 1.0 if f["bufferSeconds"] < 6 else 0.0
        r = train.evaluate("buffer < 6 s", early, [self.main], 0.5, 5.0)
        # Below 6 s from 24.5 s; the lead is measured within the horizon: 5 s.
        self.assertEqual((r["healthyStalls"], r["healthyMedianLeadSeconds"], r["healthyLeadAtLeast3s"]),
                         (1, 5.0, 1.0))
        # It warns from 34 s (buffer 4 s) straight into the second stall: still 3 episodes, 1 false.
        self.assertEqual((r["warningEpisodes"], r["falseAlarms"]), (3, 1))

    def test_a_warning_that_misses_the_healthy_stall(self):
        def never(f):
            return 0.0
        r = train.evaluate("never", never, [self.main], 0.5, 5.0)
        self.assertEqual((r["healthyStalls"], r["healthyWarned"], r["healthyMissed"]), (1, 0, 1))
        self.assertIsNone(r["healthyMedianLeadSeconds"])
        self.assertEqual((r["healthyLeadAtLeast3s"], r["warningEpisodes"], r["falseAlarmsPerHour"]), (0.0, 0, 0.0))

    def test_two_predictors_paired_by_session(self):
        def early(f):
            return 1.0 if f["bufferSeconds"] < 6 else 0.0
        c = train.compare_predictors((early, 0.5), (train.threshold_step, 0.5), [self.main, self.tail],
                                     [("main", 0), ("tail", 0)], 5.0)
        # Only the first session has a healthy stall: 5 s ahead against 1.5 s.
        lead = c["meanHealthyLeadSeconds"]
        self.assertEqual((lead["pairs"], lead["meanA"], lead["meanB"], lead["pairsAAbove"]), (1, 5.0, 1.5, 1))
        # One false alarm each in the first session (the dip), none resolved in the second.
        fa = c["falseAlarmsPerHour"]
        self.assertEqual((fa["pairs"], fa["pairsEqual"]), (2, 2))
        self.assertAlmostEqual(fa["meanB"], 3600 / 52 / 2, places=9)

    def test_a_stall_between_two_warning_samples_ends_the_episode(self):
        # Warning at 9.5 s, a 0.2 s stall at 9.6 s with no sample inside it, warning again at 10 s
        # and no stall after: the first episode came true, the second is a false alarm.
        s = session(lambda t: 1.0 if 9.5 <= t <= 10.0 else 10.0, [(9.6, 9.8)], 30.0)
        self.assertEqual(train.warning_episodes(s, train.threshold_step, 0.5), [(9.5, 9.5), (10.0, 10.0)])
        self.assertEqual(train.false_alarms(s, train.threshold_step, 0.5, 5.0), (2, 1, 0))


class PairedComparisonTests(unittest.TestCase):
    def test_a_lower_in_every_differing_pair(self):
        # Ten pairs: A one below B in 8, equal in 2. Sign test: 0 of 8 above, p = 2 · 0.5⁸ = 1/128.
        keys = [("t", float(i)) for i in range(10)]
        b = [3, 2, 4, 1, 2, 5, 2, 3, 0, 1]
        a = [x - 1 for x in b[:8]] + b[8:]
        c = stats.paired_comparison(a, b, keys)
        self.assertEqual((c["pairs"], c["pairsAAbove"], c["pairsABelow"], c["pairsEqual"]), (10, 0, 8, 2))
        self.assertEqual((c["totalA"], c["totalB"], c["meanDifference"]), (15.0, 23.0, -0.8))
        self.assertAlmostEqual(c["signTest"]["pValue"], 1 / 128, places=12)
        # Wilcoxon, zeros dropped, exact: 8 differences of −1; T+ = 0, which 1 of the 2⁸ sign flips
        # reaches (and 1 the other way): p = 2/256, as the sign test.
        self.assertEqual(c["wilcoxon"]["statistic"], 0.0)
        self.assertAlmostEqual(c["wilcoxon"]["pValue"], 1 / 128, places=12)
        ci = c["meanDifferenceCI"]
        self.assertEqual((ci["method"], ci["confidence"]), ("BCa", 0.95))
        self.assertTrue(-1.0 <= ci["low"] < -0.8 < ci["high"] <= 0.0, ci)
        self.assertEqual(stats.paired_comparison(a, b, keys), c)  # the fixed seed: the same interval again

    def test_wilcoxon_drops_zero_differences_before_ranking(self):
        # Differences −1, −2, −3, +1, 0: the zero dropped, |d| 1, 2, 3, 1 rank 1.5, 3, 4, 1.5;
        # T+ = 1.5. Of the 16 sign flips, T+ ≤ 1.5 in 3 (0, and 1.5 twice): p = 2 · 3/16.
        # (With the zero kept in the ranking, as Pratt's method does, T+ would be 2.5.)
        c = stats.paired_comparison([0, 0, 0, 2, 5], [1, 2, 3, 1, 5], [("t", float(i)) for i in range(5)])
        self.assertEqual(c["wilcoxon"]["statistic"], 1.5)
        self.assertAlmostEqual(c["wilcoxon"]["pValue"], 0.375, places=12)
        self.assertEqual((c["signTest"]["aAbove"], c["signTest"]["differing"]), (1, 4))
        self.assertAlmostEqual(c["signTest"]["pValue"], 10 / 16, places=12)  # P(X ≤ 1) + P(X ≥ 3), X ~ B(4, ½)

    def test_many_differing_pairs_use_the_normal_approximation(self):
        # 25 differences of −1 (more than WILCOXON_EXACT_MAX_PAIRS, 16): T = 0, mean 25·26/4 = 162.5,
        # variance 25·26·51/24 − (25³ − 25)/48 = 1056.25, so z = −162.5/32.5 = −5.
        n = 25
        self.assertGreater(n, stats.WILCOXON_EXACT_MAX_PAIRS)
        c = stats.paired_comparison([0] * n, [1] * n, [("t", float(i)) for i in range(n)])
        self.assertEqual((c["wilcoxon"]["method"], c["wilcoxon"]["statistic"]), ("approx", 0.0))
        self.assertAlmostEqual(c["wilcoxon"]["pValue"], math.erfc(5 / math.sqrt(2)), places=12)

    def test_no_difference_has_no_p_value_and_a_point_interval(self):
        c = stats.paired_comparison([1, 2, 0], [1, 2, 0], [("t", 0), ("t", 1), ("u", 0)])
        self.assertEqual((c["wilcoxon"]["pValue"], c["signTest"]["pValue"]), (None, None))
        self.assertEqual((c["meanDifferenceCI"]["low"], c["meanDifferenceCI"]["high"]), (0.0, 0.0))

    def test_a_repeated_key_is_refused_and_mean_by_key_averages_replicates(self):
        with self.assertRaisesRegex(ValueError, "repeat a key"):
            stats.paired_comparison([1, 2], [0, 0], [("t", 0.0), ("t", 0.0)])
        means, replicated = stats.mean_by_key([("t", 0), ("u", 0), ("t", 0)], [1, 5, 2])
        self.assertEqual((means, replicated), ([(("t", 0), 1.5), (("u", 0), 5.0)], 1))

    def test_onoff_report_pairs_by_trace_and_offset(self):
        import onoff_report
        pairs = [dict(trace="a", offsetSeconds=0.0, on=dict(stallCount=1, stallSeconds=4.0, averageBitrateBps=1e6),
                      off=dict(stallCount=2, stallSeconds=9.0, averageBitrateBps=1e6)),
                 dict(trace="a", offsetSeconds=0.0, on=dict(stallCount=0, stallSeconds=0.0, averageBitrateBps=1e6),
                      off=dict(stallCount=2, stallSeconds=8.0, averageBitrateBps=1e6)),
                 dict(trace="b", offsetSeconds=0.0, on=dict(stallCount=1, stallSeconds=1.0, averageBitrateBps=2e6),
                      off=dict(stallCount=1, stallSeconds=1.0, averageBitrateBps=1e6))]
        c = onoff_report.compare_pairs(pairs)
        # ("a", 0) ran twice: one pair, on 0.5 against off 2 stalls.
        self.assertEqual((c["stalls"]["pairs"], c["stalls"]["replicatedKeysAveraged"]), (2, 1))
        self.assertEqual((c["stalls"]["totalA"], c["stalls"]["totalB"]), (1.5, 3.0))
        self.assertEqual(c["stallSeconds"]["meanDifference"], -3.25)
        self.assertEqual(c["averageBitrateBps"]["pairsAAbove"], 1)


def figures(obj):
    """The statistics without what depends on the SciPy release (its version, the bootstrap's
    resampling), floats to 10 significant digits."""
    if isinstance(obj, dict):
        return {k: figures(v) for k, v in obj.items() if k not in ("scipyVersion", "meanDifferenceCI")}
    if isinstance(obj, list):
        return [figures(v) for v in obj]
    if isinstance(obj, float):
        return float(f"{obj:.10g}")
    return obj


class SimCompareTests(unittest.TestCase):
    def test_each_real_session_is_paired_with_its_simulated_twin_by_trace_and_offset(self):
        import sim_compare

        def real(stalls, seconds, bps):
            return types.SimpleNamespace(summary=dict(stallCount=stalls, stallSeconds=seconds, averageBitrateBps=bps))

        def simulated(stalls):  # 2 s stalls; 60 s session, playing from 1 s
            return types.SimpleNamespace(stalls=[[10.0 * i + 5, 10.0 * i + 7] for i in range(stalls)], duration=60.0,
                                         play_start=1.0, bits_played=59e6 - 2e6 * stalls)
        pairs = [(("a", 0.0), real(1, 4.0, 1e6), simulated(2)), (("a", 0.0), real(3, 6.0, 1e6), simulated(2)),
                 (("b", 0.0), real(0, 0.0, None), simulated(1))]
        c = sim_compare.compare_sessions(pairs)
        # ("a", 0) ran twice: one pair, real 2 stalls (mean of 1 and 3) against simulated 2.
        self.assertEqual((c["stallsPerSession"]["pairs"], c["stallsPerSession"]["replicatedKeysAveraged"]), (2, 1))
        self.assertEqual((c["stallsPerSession"]["totalA"], c["stallsPerSession"]["totalB"]), (3.0, 2.0))
        self.assertEqual(c["stallSecondsPerSession"]["meanA"], 3.0)  # (4 + 2) / 2
        # "b" never played in the real run (no bitrate): left out of the bitrate claim only.
        self.assertEqual(c["averageBitrateBps"]["pairs"], 1)


class StoredComparisonTests(unittest.TestCase):
    def run_compare(self, script):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "results-v2.json")
            shutil.copy(os.path.join(TRAIN, "results-v2.json"), path)
            before = results_file.load(path)
            subprocess.run([sys.executable, "-B", os.path.join(TRAIN, script), "--compare", "--results", path],
                           check=True, capture_output=True, text=True)
            return before, results_file.load(path)

    def test_onoff_compare_writes_only_its_key_and_the_published_figure(self):
        before, after = self.run_compare("onoff_report.py")
        self.assertEqual({k: v for k, v in after.items() if k not in ("onOffPaired", "provenance")},
                         {k: v for k, v in before.items() if k not in ("onOffPaired", "provenance")})
        both = after["onOffPaired"]["v2-start-gate-4-rungs+v2-start-gate-4-rungs-b"]["stalls"]
        # "39 stalls against 48 over 64 pairs": 9 pairs one stall fewer, none more: p = 2/2⁹.
        self.assertEqual((both["pairs"], both["totalA"], both["totalB"]), (64, 39.0, 48.0))
        self.assertEqual((both["pairsABelow"], both["pairsAAbove"]), (9, 0))
        self.assertAlmostEqual(both["signTest"]["pValue"], 2 / 2 ** 9, places=12)
        self.assertAlmostEqual(both["wilcoxon"]["pValue"], 2 / 2 ** 9, places=12)
        held_out = after["onOffPaired"]["v2-start-gate-4-rungs-b"]["stalls"]
        self.assertAlmostEqual(held_out["signTest"]["pValue"], 2 / 2 ** 4, places=12)
        # The committed file holds what the script writes (the bootstrap interval aside, which
        # may move with the SciPy release).
        self.assertEqual(figures(after["onOffPaired"]), figures(before["onOffPaired"]))

    def test_sim_compare_writes_only_its_key(self):
        before, after = self.run_compare("sim_compare.py")
        self.assertEqual({k: v for k, v in after.items() if k not in ("simVsRealPaired", "provenance")},
                         {k: v for k, v in before.items() if k not in ("simVsRealPaired", "provenance")})
        self.assertEqual(after["simVsRealPaired"]["stallsPerSession"]["pairs"], 24)
        self.assertEqual(figures(after["simVsRealPaired"]), figures(before["simVsRealPaired"]))


if __name__ == "__main__":
    unittest.main()
