"""Tests of the ABR evaluation's real mode (Tools/abr/real.py through Tools/abr/evaluate.py):

- the committed sample (Tools/abr/sample-real/run: its manifest, the ladder's playlists and sizes,
  and each session's raw files) gives, through the report step, exactly the block docs/abr.md shows
  between the sample's markers (byte for byte), and the report reads nothing but that folder;
- the runner plays a tiny spec end to end (one trace, hlsplay then GStreamer, 8 s each, in real
  time against their own hls-origin) and keeps every raw file the report needs;
- the committed real spec's trace rule takes its traces from the evaluation side only.

GStreamer runs from Debian's python3 with python3-gi (Tools/install-deps.sh); hlsplay and hls-origin
are the debug build's (`swift build --build-tests`), HLSPLAY_TOOLS_TEST_BUILD=release|debug|DIR picks
others. Nothing here skips: a missing package, binary or sample fails, naming what to run. When the
report's format changes, re-derive the block:

    python3 Tools/abr/evaluate.py docs Tools/abr/sample-real/run docs/abr.md

and when hlsplay's or the tool's behaviour changes, re-run the sample (about 2 minutes, real time):

    python3 Tools/abr/evaluate.py run Tools/abr/sample-real/spec.json --out Tools/abr/sample-real/run --build debug
    python3 Tools/abr/evaluate.py docs Tools/abr/sample-real/run docs/abr.md

Run: python3 -B -m unittest discover -s Tools/tests -p test_abr_real.py
"""
import contextlib, io, json, os, shutil, sys, tempfile, unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from support import ABR, ABR_DOC as DOC, BUILD, REPO, sample, temp_dir, write_spec  # noqa: E402
import evaluate  # noqa: E402
import real  # noqa: E402
import hlsplay_tools as tools  # noqa: E402  (Tools/lib, on the path once real is imported)

_, SAMPLE_SPEC, SAMPLE_RUN, _ = sample("abr", "sample-real")


class SampleTests(unittest.TestCase):
    def test_docs_block_is_what_the_report_derives_from_the_committed_raw_files(self):
        data = real.report_data(SAMPLE_RUN)
        self.assertEqual(data["problems"], [])
        self.assertEqual(len(data["complete"]), 2)
        self.assertIsNone(evaluate.block_mismatch(SAMPLE_RUN, DOC))

    def test_report_needs_nothing_outside_the_folder(self):
        # A copy of the folder, with the ladder path the manifest names made unreachable, gives the same block.
        d = tempfile.mkdtemp(prefix="abr-real-copy-")
        self.addCleanup(shutil.rmtree, d, True)
        copy = os.path.join(d, "run")
        shutil.copytree(SAMPLE_RUN, copy)
        with open(os.path.join(copy, "manifest.json")) as f:
            m = json.load(f)
        m["ladder"]["path"] = os.path.join(d, "no-such-ladder")
        with open(os.path.join(copy, "manifest.json"), "w") as f:
            json.dump(m, f)
        self.assertEqual(real.render(real.report_data(copy)), real.render(real.report_data(SAMPLE_RUN)))

    def test_played_bitrate_is_read_from_each_origin_log_the_same_way(self):
        data = real.report_data(SAMPLE_RUN)
        ladder = real.folder_ladder(SAMPLE_RUN)
        with open(os.path.join(SAMPLE_RUN, "manifest.json")) as f:
            sessions = json.load(f)["sessions"]
        for e in sessions:
            rec, problem = real.session_record(SAMPLE_RUN, e, ladder, 20)
            self.assertIsNone(problem)
            # hlsplay's own summary figure agrees with the origin log's (same rungs, same media seconds).
            if e["player"] == "hlsplay":
                self.assertIsNotNone(rec["summaryAverageBitrateBps"])
                # The record as hlsplay_record builds it holds the summary's linear QoE, which the arm
                # comparisons read.
                summary = tools.read_jsonl(os.path.join(SAMPLE_RUN, e["folder"], "session.jsonl"))[-1]
                self.assertEqual(rec["linearQoE"], summary["qoe"]["linearQoE"])
                self.assertIsNotNone(rec["linearQoE"])
            self.assertEqual(data["perTrace"][f"{e['player']}|{e['trace']}"]["bitrateMbps"],
                             rec["playedBitrateBps"] / 1e6)
            self.assertGreater(rec["playedBitrateBps"], 0)

    def test_link_megabits_integrates_the_trace_and_wraps(self):
        steps = [(10.0, 1e6), (5.0, 4e6)]  # 10 s at 1 Mbit/s, then 5 s at 4 Mbit/s
        self.assertAlmostEqual(real.link_megabits(steps, 10), 10.0)
        self.assertAlmostEqual(real.link_megabits(steps, 12), 18.0)
        self.assertAlmostEqual(real.link_megabits(steps, 20), 30.0 + 5.0)  # wraps: 5 more s at 1 Mbit/s
        self.assertEqual(real.link_megabits([], 20), 0.0)

    def test_bitrate_target_possible_is_the_link_budget_at_the_cheapest_mix_of_rungs(self):
        hull = [(1.0, 0.9), (3.0, 2.7), (10.0, 9.0)]  # (BANDWIDTH, media rate) Mbit/s
        self.assertAlmostEqual(real.cost_of(hull, 2.0), 1.8)
        self.assertAlmostEqual(real.cost_of(hull, 0.5), 0.45)
        self.assertIsNone(real.cost_of(hull, 12.0))  # above the top rung: never
        # 2.0 Mbit/s of ladder rate for 100 s costs 180 Mbit: a link that carried 179 cannot, 181 can.
        self.assertFalse(real.bitrate_target_possible(2.0, 179.0, 100.0, hull))
        self.assertTrue(real.bitrate_target_possible(2.0, 181.0, 100.0, hull))
        self.assertFalse(real.bitrate_target_possible(11.0, 1e9, 100.0, hull))

    def test_rung_costs_keep_the_lower_hull(self):
        class L:  # two segments per rung, 2 s each
            rungs = [type("R", (), dict(bandwidth_bps=b, segments=[(f"/{b}/{i}", 2 * i, 2.0) for i in range(2)]))
                     for b in (1_000_000, 2_000_000, 4_000_000)]
            sizes = {}
        for r, rate in zip(L.rungs, (0.9e6, 1.95e6, 3.6e6)):  # the middle rung costs more than mixing the others
            for p, _, _ in r.segments:
                L.sizes[p] = rate * 2 / 8
        hull = real.rung_costs(L)
        self.assertEqual([round(x, 3) for x, _ in hull], [1.0, 4.0])
        self.assertAlmostEqual(hull[0][1], 0.9)

    def test_arms_compare_their_linear_qoe_and_leave_out_a_trace_without_one(self):
        import stats
        per = {("a", "t1"): dict(bitrateMbps=2.0, stallSeconds=0.0, timeToPlayingSeconds=1.0,
                                 timeToFirstFrameSeconds=0.5, linearQoE=100.0),
               ("b", "t1"): dict(bitrateMbps=3.0, stallSeconds=1.0, timeToPlayingSeconds=1.2,
                                 timeToFirstFrameSeconds=0.6, linearQoE=130.0),
               ("a", "t2"): dict(bitrateMbps=1.0, stallSeconds=0.0, timeToPlayingSeconds=1.0,
                                 timeToFirstFrameSeconds=0.5, linearQoE=None),
               ("b", "t2"): dict(bitrateMbps=1.5, stallSeconds=0.0, timeToPlayingSeconds=1.1,
                                 timeToFirstFrameSeconds=0.5, linearQoE=40.0)}
        (ac,) = real.arm_comparisons(per, ["t1", "t2"], ["a", "b"], stats)
        self.assertEqual((ac["a"], ac["b"]), ("b", "a"))
        self.assertEqual(set(ac["comparisons"]), {k for k, *_ in real.ARM_METRICS})
        self.assertEqual(ac["comparisons"]["bitrateMbps"]["pairs"], 2)
        q = ac["comparisons"]["linearQoE"]
        self.assertEqual(q["pairs"], 1)  # t2: arm a played no chunk, so no QoE to pair
        self.assertAlmostEqual(q["meanDifference"], 30.0)

    def test_a_trace_copy_that_is_not_the_runs_trace_is_a_problem(self):
        with tempfile.TemporaryDirectory() as d:
            copy = os.path.join(d, "run")
            shutil.copytree(SAMPLE_RUN, copy)
            with open(os.path.join(copy, "manifest.json")) as f:
                trace = json.load(f)["traceList"][0]
            with open(os.path.join(copy, "traces", trace), "a") as f:
                f.write("\n0\t0\n")
            data = real.report_data(copy)
            self.assertTrue(any("sha256 differs" in p for p in data["problems"]), data["problems"])
            self.assertNotIn(trace, data["linkMeanMbps"])

    def test_sample_is_small(self):
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(SAMPLE_RUN) for f in fs)
        self.assertLess(size, 1_000_000)


class TargetTests(unittest.TestCase):
    def test_committed_spec_takes_its_traces_from_the_evaluation_side_by_its_rule(self):
        spec = real.load_spec(os.path.join(ABR, "specs", "abr-real.json"))
        traces = evaluate.spec_traces(spec)
        with open(os.path.join(REPO, "Tools", "abr", "trace-split.json")) as f:
            split = json.load(f)
        self.assertGreaterEqual(len(traces), 12)
        self.assertTrue(set(traces) <= set(split["evaluation"]))
        self.assertFalse(set(traces) & set(split["tuning"]))
        self.assertEqual(traces, sorted(split["evaluation"])[::2][:12])
        self.assertGreaterEqual(spec["durationSeconds"], 120)

    def test_a_spec_with_an_offset_is_refused(self):
        with open(SAMPLE_SPEC) as f:
            spec = json.load(f)
        spec["offsetSeconds"] = 30
        with self.assertRaisesRegex(SystemExit, "offsetSeconds"):
            real.load_spec(write_spec(self, spec))


class EndToEndTests(unittest.TestCase):
    def test_one_trace_both_players_in_real_time(self):
        d = temp_dir(self, "abr-real-e2e-")
        with open(SAMPLE_SPEC) as f:
            spec = json.load(f)
        spec.update(name="abr-real-e2e", durationSeconds=8, traces={"list": spec["traces"]["list"][:1]})
        p = write_spec(self, spec, d)
        out = os.path.join(d, "run")
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            self.assertEqual(evaluate.main(["run", p, "--out", out, "--build", BUILD]), 0)
        self.assertIn("abr-real-e2e", printed.getvalue())
        with open(os.path.join(out, "manifest.json")) as f:
            m = json.load(f)
        for key in ("commit", "hlsplay", "hlsOrigin", "gstPlay", "machine", "startedAt", "endedAt",
                    "loadAverageAtStart", "loadAverageAtEnd", "spec", "traceSha256", "ladder"):
            self.assertIn(key, m)
        self.assertIn(m["binaryOlderThanSources"], (True, False))  # run's own check, passed through
        self.assertEqual([(s["player"], s["ok"]) for s in m["sessions"]], [("hlsplay", True), ("gstreamer", True)],
                         m["sessions"])
        for s in m["sessions"]:
            files = os.listdir(os.path.join(out, s["folder"]))
            self.assertIn("origin.jsonl", files)
            self.assertIn("session.jsonl" if s["player"] == "hlsplay" else "events.jsonl", files)
        data = real.report_data(out)
        self.assertEqual(data["problems"], [])
        self.assertEqual(len(data["complete"]), 1)
        t = data["complete"][0]
        for player in ("hlsplay", "gstreamer"):
            fig = data["perTrace"][f"{player}|{t}"]
            self.assertGreater(fig["bitrateMbps"], 0, player)
            self.assertGreater(fig["timeToPlayingSeconds"], 0, player)
            self.assertLess(fig["timeToPlayingSeconds"], 8, player)
        with open(os.path.join(out, "report.md")) as f:
            self.assertEqual(f.read(), real.render(data))


if __name__ == "__main__":
    unittest.main()
