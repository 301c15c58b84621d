"""Tests of ABR evaluation specs with arms (Tools/abr/evaluate.py): one rule run with different hlsplay
arguments per arm (the predictor and its controller on, and `--predictor off`), reported as arm A against
arm B per algorithm, paired by trace.

- the committed sample (Tools/abr/sample-predictor: 2 traces × 1 algorithm × 2 arms, 20 s sessions, its
  manifest and raw logs) gives, through the report step, exactly the block docs/abr.md shows between the
  sample's markers (byte for byte), and the runner re-runs it from scratch with the same logs and block;
- the paired figures are Tools/train/stats.py's `paired_comparison` on the per-trace figures of the raw
  logs' summaries (checked on the sample and on a hand-made results folder whose arms differ);
- what the report says each arm ran comes from the logs (the off arm's logs have no predictor);
- the spec checks, and the committed abr-virtual-predictor spec's shape.

When a change of hlsplay's decisions changes the sample, re-derive it (and say why in the commit):

    python3 Tools/abr/evaluate.py run Tools/abr/sample-predictor/spec.json --out Tools/abr/sample-predictor/run --build debug
    rm Tools/abr/sample-predictor/run/report.*
    python3 Tools/abr/evaluate.py docs Tools/abr/sample-predictor/run docs/abr.md

Run: /opt/hlsplay/python/bin/python3 -B -m unittest discover -s Tools/tests -p 'test_abr*'
"""
import json, os, shutil, sys, tempfile, unittest
from unittest import mock

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from support import ABR, ABR_DOC as DOC, BUILD, sample, write_spec  # noqa: E402
import evaluate  # noqa: E402
import stats  # noqa: E402  the module evaluate.py's report imports
from test_abr_evaluate import comparable  # noqa: E402

SAMPLE, SAMPLE_SPEC, SAMPLE_RUN, _ = sample("abr", "sample-predictor")


def summary(path):
    with open(path) as f:
        lines = f.read().splitlines()
    return json.loads(lines[-1])


def summary_figure(s, key):
    """The report's figure `key` read straight from a summary (independently of evaluate.session_figures)."""
    return {"qoe": s["qoe"]["linearQoE"], "stalls": s["stallCount"], "rebufferSeconds": s["stallSeconds"],
            "bitrateMbps": s["averageBitrateBps"] / 1e6, "switches": s["qoe"]["playedSwitches"],
            "startSeconds": s["timeToPlaybackStartSeconds"]}[key]


class ArmsSampleTests(unittest.TestCase):
    def test_docs_block_is_what_the_report_derives_from_the_committed_logs(self):
        data = evaluate.report_data(SAMPLE_RUN)
        self.assertEqual(data["problems"], [])
        self.assertEqual(data["complete"], {"hlsplay-mpc": data["traces"]})
        self.assertIsNone(evaluate.block_mismatch(SAMPLE_RUN, DOC))

    def test_sample_is_small_and_has_one_log_per_trace_and_arm(self):
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(SAMPLE_RUN) for f in fs)
        self.assertLess(size, 1_000_000)
        with open(os.path.join(SAMPLE_RUN, "manifest.json")) as f:
            m = json.load(f)
        self.assertEqual(sorted(s["log"] for s in m["sessions"]),
                         sorted(evaluate.log_name("hlsplay-mpc", t, 1, arm) for t in m["traceList"]
                                for arm in ("on", "off")))
        off = [s for s in m["sessions"] if "/off/" in s["log"]]
        self.assertTrue(off and all(s["command"][-2:] == ["--predictor", "off"] for s in off), off)

    def test_the_logs_say_which_arm_ran_the_predictor(self):
        ev = evaluate.report_data(SAMPLE_RUN)["armEvidence"]
        self.assertEqual(ev["off"]["configuredPredictor"], {"off": 2})
        self.assertEqual(ev["off"]["summaryPredictor"], {"absent": 2})
        self.assertEqual(ev["off"]["sessionsWithRiskSamples"], 0)
        self.assertEqual(ev["on"]["configuredPredictor"], {"model": 2})
        self.assertEqual(ev["on"]["sessionsWithRiskSamples"], 2)

    def test_paired_figures_are_stats_paired_comparison_on_the_summaries(self):
        with open(os.path.join(SAMPLE_RUN, "manifest.json")) as f:
            traces = json.load(f)["traceList"]
        with mock.patch.object(stats, "paired_comparison", wraps=stats.paired_comparison) as spy:
            data = evaluate.report_data(SAMPLE_RUN)
        self.assertEqual(spy.call_count, len(evaluate.ARM_METRICS))
        for (args, _), (key, *_) in zip(spy.call_args_list, evaluate.ARM_METRICS):
            on = [summary_figure(summary(os.path.join(SAMPLE_RUN, evaluate.log_name("hlsplay-mpc", t, 1, "on"))), key)
                  for t in traces]
            off = [summary_figure(summary(os.path.join(SAMPLE_RUN, evaluate.log_name("hlsplay-mpc", t, 1, "off"))), key)
                   for t in traces]
            self.assertEqual(list(args), [on, off, traces], key)
            self.assertEqual(data["comparisons"]["hlsplay-mpc"][key], stats.paired_comparison(on, off, traces))

    def test_runner_reproduces_the_sample_from_scratch(self):
        out = tempfile.mkdtemp(prefix="abr-sample-predictor-")
        self.addCleanup(shutil.rmtree, out, True)
        manifest = evaluate.run(SAMPLE_SPEC, out, jobs=2, build=BUILD)
        self.assertTrue(all(s["exitStatus"] == 0 for s in manifest["sessions"]), manifest["sessions"])
        with open(os.path.join(SAMPLE_RUN, "manifest.json")) as f:
            committed = json.load(f)
        self.assertEqual(manifest["traceSha256"], committed["traceSha256"], "the sample's traces changed")
        self.assertEqual(manifest["ladder"]["masterSha256"], committed["ladder"]["masterSha256"])
        for s in committed["sessions"]:
            self.assertEqual(comparable(os.path.join(out, s["log"]), manifest["ladder"]["path"]),
                             comparable(os.path.join(SAMPLE_RUN, s["log"]), committed["ladder"]["path"]),
                             f"{s['log']} differs from the sample's")
        self.assertEqual(evaluate.render(evaluate.report_data(out)),
                         evaluate.render(evaluate.report_data(SAMPLE_RUN)))


def write_log(path, predictor, qoe, stalls, stall_seconds, bitrate_bps, switches, risk_samples):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(json.dumps({"type": "header", "configuration": {"predictor": predictor}}) + "\n")
        for k in range(risk_samples):
            f.write(json.dumps({"t": k, "type": "risk.sample", "risk": 0.1}) + "\n")
        f.write(json.dumps({"t": 99, "type": "buffer.sample"}) + "\n")
        s = {"type": "summary", "averageBitrateBps": bitrate_bps, "stallCount": stalls, "stallSeconds": stall_seconds,
             "timeToPlaybackStartSeconds": 1.0,
             "policyChanges": 0, "qoe": {"playedSwitches": switches, "linearQoE": qoe}}
        if predictor != "off":
            s["predictor"] = predictor
        f.write(json.dumps(s) + "\n")


class ArmsReportTests(unittest.TestCase):
    """A hand-made results folder whose arms differ: the report's paired row is stats.py's, and its
    verdict follows the p-value and the sign."""

    ON_QOE = [10.0, 12.0, 9.0, 15.0, 20.0, 8.0, 30.0]
    OFF_QOE = [8.0, 11.0, 9.0, 10.0, 14.0, 3.0, 21.0]

    def make(self, on_qoe, off_qoe):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d, True)
        traces = [f"set/t{k}" for k in range(len(on_qoe))]
        spec = {"name": "arms-test", "ladder": {"path": "x"}, "traces": {"list": traces}, "algorithms": ["r"],
                "arms": [{"name": "on", "hlsplayArgs": []}, {"name": "off", "hlsplayArgs": ["--predictor", "off"]}],
                "pairedArms": ["on", "off"], "durationSeconds": 10, "reps": 1}
        with open(os.path.join(d, "manifest.json"), "w") as f:
            json.dump({"spec": spec, "traceList": traces}, f)
        for k, t in enumerate(traces):
            write_log(os.path.join(d, evaluate.log_name("r", t, 1, "on")), "model", on_qoe[k], 0, 0.0, 2e6, 1, 3)
            write_log(os.path.join(d, evaluate.log_name("r", t, 1, "off")), "off", off_qoe[k], k % 2, 0.5 * (k % 2),
                      1e6, 2, 0)
        return d, traces

    def test_gain_row_and_verdict_are_stats_py_figures(self):
        d, traces = self.make(self.ON_QOE, self.OFF_QOE)
        data = evaluate.report_data(d)
        expected = stats.paired_comparison(self.ON_QOE, self.OFF_QOE, traces)
        self.assertEqual(data["comparisons"]["r"]["qoe"], expected)
        self.assertEqual((expected["pairsAAbove"], expected["pairsABelow"], expected["pairsEqual"]), (6, 0, 1))
        self.assertLess(expected["wilcoxon"]["pValue"], 0.05)
        text = evaluate.render(data)
        ci = expected["meanDifferenceCI"]
        self.assertIn(f"| r | linear QoE | 7 | {evaluate.fmt(expected['meanA'], 1)} | {evaluate.fmt(expected['meanB'], 1)} | "
                      f"{evaluate.fmt(expected['meanDifference'], 1)} | {evaluate.fmt(ci['low'], 1)} … "
                      f"{evaluate.fmt(ci['high'], 1)} | 6/0/1 | {evaluate.tools.p_text(expected['wilcoxon']['pValue'])} | "
                      f"{evaluate.tools.p_text(expected['signTest']['pValue'])} |", text)
        self.assertIn(": a gain at p < 0.05.", text)
        stalls = stats.paired_comparison([0] * 7, [k % 2 for k in range(7)], traces)
        self.assertEqual(data["comparisons"]["r"]["stalls"], stalls)
        self.assertIn("`off`: header `configuration.predictor` off (7), summary `predictor` absent (7), "
                      "`risk.sample` events in 0 of 7 sessions", text)

    def test_no_gain_when_the_arms_tie_or_differ_both_ways(self):
        d, _ = self.make([10.0, 8.0, 9.0, 12.0], [8.0, 10.0, 9.0, 11.0])
        text = evaluate.render(evaluate.report_data(d))
        self.assertIn(": no difference at p < 0.05.", text)
        self.assertNotIn("a gain at", text)

    def test_a_missing_log_is_a_problem_and_its_trace_is_not_paired(self):
        d, traces = self.make(self.ON_QOE, self.OFF_QOE)
        os.remove(os.path.join(d, evaluate.log_name("r", traces[0], 1, "off")))
        data = evaluate.report_data(d)
        self.assertEqual(len(data["problems"]), 1)
        self.assertEqual(data["complete"]["r"], traces[1:])
        self.assertEqual(data["comparisons"]["r"]["qoe"]["pairs"], len(traces) - 1)


class ArmsSpecTests(unittest.TestCase):
    def write(self, spec):
        return write_spec(self, spec)

    def sample(self):
        with open(SAMPLE_SPEC) as f:
            return json.load(f)

    def test_paired_arms_must_be_two_of_the_arms(self):
        spec = self.sample()
        spec["pairedArms"] = ["on", "nope"]
        with self.assertRaisesRegex(SystemExit, "pairedArms"):
            evaluate.load_spec(self.write(spec))
        spec["pairedArms"] = ["on", "on"]
        with self.assertRaisesRegex(SystemExit, "pairedArms"):
            evaluate.load_spec(self.write(spec))

    def test_arm_names_are_distinct(self):
        spec = self.sample()
        spec["arms"][1]["name"] = "on"
        with self.assertRaisesRegex(SystemExit, "distinct"):
            evaluate.load_spec(self.write(spec))

    def test_a_spec_without_arms_keeps_its_log_paths(self):
        self.assertEqual(evaluate.log_name("bola-e", "pensieve/fcc/x", 1), "logs/bola-e/pensieve__fcc__x.rep1.jsonl")
        self.assertEqual(evaluate.log_name("bola-e", "pensieve/fcc/x", 1, "off"),
                         "logs/bola-e/off/pensieve__fcc__x.rep1.jsonl")
        self.assertEqual(evaluate.spec_arms({"algorithms": []}), [(None, [])])

    def test_committed_predictor_spec(self):
        spec = evaluate.load_spec(os.path.join(ABR, "specs", "abr-virtual-predictor.json"))
        base = evaluate.load_spec(os.path.join(ABR, "specs", "abr-virtual.json"))
        self.assertEqual(spec["traces"], {"split": "Tools/abr/trace-split.json", "side": "evaluation",
                                          "extra": "Tools/abr/extra-traces.json"})
        self.assertEqual(spec["ladder"], base["ladder"])
        self.assertEqual(spec["durationSeconds"], 120)
        self.assertEqual(spec["algorithms"], ["hlsplay-mpc", "hlsplay"])
        self.assertEqual(evaluate.spec_arms(spec), [("on", ["--predictor", "model"]), ("off", ["--predictor", "off"])])
        self.assertEqual(spec["pairedArms"], ["on", "off"])


if __name__ == "__main__":
    unittest.main()
