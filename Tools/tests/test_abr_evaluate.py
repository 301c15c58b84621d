"""Tests of the ABR evaluation as a declared experiment (Tools/abr/evaluate.py):

- the committed sample run (Tools/abr/sample/run: its manifest and raw session logs) gives, through
  the report step, exactly the block docs/abr.md shows between the sample's markers (byte for byte);
- the runner re-runs the sample spec from scratch with the binary just built and gets the same
  figures and the same block (virtual time is deterministic), and the same raw logs apart from the
  header's when-and-where fields (its start time and host);
- the sample spec run on a local Dask distributed cluster of 2 worker processes (`run --scheduler`)
  gives the same raw logs (but for the header's `startedAt`), the same manifest apart from times, load
  and where it ran, and the same report and docs block, byte for byte, as a run in one process;
- the report, splice and spec checks on small hand-made inputs.
- `run` refuses a binary older than the sources unless --allow-stale-binary, walks Sources/ once for
  that check and hands its result to the runner for the manifest's binaryOlderThanSources.

The re-run uses the debug binaries `swift build --build-tests` makes (Tools/test.sh builds them first);
HLSPLAY_TOOLS_TEST_BUILD=release|debug|DIR picks others. When a change of hlsplay's decisions changes
the sample, re-derive it (and say why in the commit):

    python3 Tools/abr/evaluate.py run Tools/abr/sample/spec.json --out Tools/abr/sample/run --build debug
    python3 Tools/abr/evaluate.py docs Tools/abr/sample/run docs/abr.md

Run: python3 -B -m unittest discover -s Tools/tests
"""
import io, json, os, shutil, sys, tempfile, time, unittest
from unittest import mock

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from support import ABR, ABR_DOC as DOC, BUILD, REPO, sample, temp_dir, write_spec  # noqa: E402
import evaluate  # noqa: E402
import real  # noqa: E402
import recording_groups  # noqa: E402  (Tools/train, on the path evaluate sets)
try:
    from dask.distributed import LocalCluster
except ImportError:
    LocalCluster = None

_, SAMPLE_SPEC, SAMPLE_RUN, _ = sample("abr", "sample")
REAL_SPEC = sample("abr", "sample-real").spec
# The header fields that say when and where a session ran: the wall clock (a simulated session's events and
# summary are in virtual time and the same on every run: two runs of one simulate differ in startedAt only) and
# the host (its kernel release and name differ between machines; the committed samples were made on others).
WHEN_AND_WHERE_FIELDS = {"startedAt", "host"}


def comparable(path, ladder):
    """A raw log's lines as JSON, the ladder's absolute path (in every URL) replaced by <ladder> and
    the header's when-and-where fields (WHEN_AND_WHERE_FIELDS) dropped: what must be equal between two runs of one spec."""
    out = []
    with open(path) as f:
        for line in f:
            e = json.loads(line.replace(ladder, "<ladder>"))
            if e.get("type") == "header":
                e = {k: v for k, v in e.items() if k not in WHEN_AND_WHERE_FIELDS}
            out.append(e)
    return out


class SampleTests(unittest.TestCase):
    def test_docs_block_is_what_the_report_derives_from_the_committed_logs(self):
        data = evaluate.report_data(SAMPLE_RUN)
        self.assertEqual(data["problems"], [])
        self.assertEqual(len(data["complete"]), 2)
        self.assertIsNone(evaluate.block_mismatch(SAMPLE_RUN, DOC))

    def test_sample_is_small(self):
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(SAMPLE_RUN) for f in fs)
        self.assertLess(size, 1_000_000)

    def test_runner_reproduces_the_sample_from_scratch(self):
        out = tempfile.mkdtemp(prefix="abr-sample-")
        self.addCleanup(shutil.rmtree, out, True)
        manifest = evaluate.run(SAMPLE_SPEC, out, jobs=2, build=BUILD)
        self.assertTrue(all(s["exitStatus"] == 0 for s in manifest["sessions"]), manifest["sessions"])
        for key in ("commit", "hlsplay", "machine", "startedAt", "endedAt", "loadAverageAtStart",
                    "loadAverageAtEnd", "spec", "traceSha256", "ladder"):
            self.assertIn(key, manifest)
        self.assertEqual(len(manifest["hlsplay"]["sha256"]), 64)
        with open(os.path.join(SAMPLE_RUN, "manifest.json")) as f:
            committed = json.load(f)
        self.assertEqual(manifest["traceSha256"], committed["traceSha256"], "the sample's traces changed")
        self.assertEqual(manifest["ladder"]["masterSha256"], committed["ladder"]["masterSha256"],
                         "the sample ladder changed (Samples/make-ladder.sh)")
        for s in committed["sessions"]:
            new = comparable(os.path.join(out, s["log"]), manifest["ladder"]["path"])
            old = comparable(os.path.join(SAMPLE_RUN, s["log"]), committed["ladder"]["path"])
            self.assertEqual(new, old, f"{s['log']} differs from the sample's")
        self.assertEqual(evaluate.render(evaluate.report_data(out)), evaluate.render(evaluate.report_data(SAMPLE_RUN)))


# The manifest fields that say when, under what load and where a run ran: all the rest must be equal
# between a one-process run and a cluster run of one spec on one checkout.
WHEN_AND_WHERE = {"startedAt", "endedAt", "loadAverageAtStart", "loadAverageAtEnd", "jobs", "backend", "sessions"}
# The per-session fields of the same kind (a session's command and exit status must be equal).
SESSION_WHEN_AND_WHERE = {"wallSeconds", "host"}


class DistributedSampleTests(unittest.TestCase):
    """The sample spec in one process (--jobs 1) and on a local Dask cluster of two worker processes on
    127.0.0.1 (the runner's --scheduler path: each session a Dask task whose output folder is shipped back
    as a tar) gives the same results folder. Virtual time is deterministic, so the raw logs must be equal
    line for line but for the header's wall-clock `startedAt` (the header's `host` is this machine in both:
    on a real cluster it names the worker's machine, and is not compared there either)."""

    @classmethod
    def setUpClass(cls):
        if LocalCluster is None:
            raise unittest.SkipTest("Dask distributed is not installed (Tools/install-deps.sh puts it in "
                                    "/opt/hlsplay/python; run with that interpreter)")
        try:
            cls.binary = evaluate.tools.find_binary("hlsplay", BUILD)
        except evaluate.tools.ToolError as e:
            raise unittest.SkipTest(f"{e} (Tools/test.sh builds it first)")
        cls.tmp = tempfile.mkdtemp(prefix="abr-distributed-")
        cls.cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                   dashboard_address=None, silence_logs=40)
        cls.one = os.path.join(cls.tmp, "one-process")
        cls.dask = os.path.join(cls.tmp, "dask")
        cls.one_manifest = evaluate.run(SAMPLE_SPEC, cls.one, jobs=1, binary=cls.binary)
        cls.dask_manifest = evaluate.run(SAMPLE_SPEC, cls.dask, binary=cls.binary,
                                         scheduler=cls.cluster.scheduler_address)
        from dask.distributed import Client
        with Client(cls.cluster.scheduler_address) as client:  # how many sessions each worker ran
            cls.executed = client.run(lambda dask_worker: dask_worker.state.executed_count)

    @classmethod
    def tearDownClass(cls):
        cls.cluster.close()
        shutil.rmtree(cls.tmp, True)

    def test_same_raw_logs(self):
        def files(d):
            return sorted(os.path.relpath(os.path.join(r, f), d) for r, _, fs in os.walk(d) for f in fs)
        self.assertEqual(files(self.dask), files(self.one))  # no leftover unit folders, nothing missing
        ladder = self.one_manifest["ladder"]["path"]
        for s in self.one_manifest["sessions"]:
            self.assertEqual(comparable(os.path.join(self.dask, s["log"]), ladder),
                             comparable(os.path.join(self.one, s["log"]), ladder), s["log"])

    def test_both_workers_ran_sessions(self):
        # the scheduler spread the 6 sessions (one Dask task each) over the two worker processes
        self.assertEqual(len(self.executed), 2, self.executed)
        self.assertEqual(sum(self.executed.values()), len(self.one_manifest["sessions"]), self.executed)
        self.assertTrue(all(n >= 1 for n in self.executed.values()), self.executed)

    def test_same_manifest_but_for_when_and_where(self):
        one, dask = self.one_manifest, self.dask_manifest
        self.assertEqual({k: v for k, v in dask.items() if k not in WHEN_AND_WHERE},
                         {k: v for k, v in one.items() if k not in WHEN_AND_WHERE})
        self.assertEqual(dask["backend"], {"kind": "dask", "scheduler": self.cluster.scheduler_address})
        self.assertEqual(one["backend"], {"kind": "local", "workers": 1})
        strip = lambda ss: [{k: v for k, v in s.items() if k not in SESSION_WHEN_AND_WHERE} for s in ss]
        self.assertEqual(strip(dask["sessions"]), strip(one["sessions"]))
        self.assertTrue(all(s["exitStatus"] == 0 for s in dask["sessions"]), dask["sessions"])
        # the command names the log by its place in the results folder, not the worker's temporary folder
        self.assertEqual([s["command"][s["command"].index("--log") + 1] for s in dask["sessions"]],
                         [s["log"] for s in dask["sessions"]])

    def test_same_report_and_docs_block_byte_for_byte(self):
        _, one_text = evaluate.report(self.one)
        _, dask_text = evaluate.report(self.dask)
        self.assertEqual(dask_text, one_text)
        for name in ("report.md", "report.json"):
            with open(os.path.join(self.one, name), "rb") as a, open(os.path.join(self.dask, name), "rb") as b:
                self.assertEqual(b.read(), a.read(), name)
        with open(DOC) as f:
            self.assertEqual(evaluate.generated_block(f.read(), "abr-sample"), dask_text,
                             "the cluster run's block is not docs/abr.md's")


class ReportTests(unittest.TestCase):
    def test_splice_replaces_only_between_the_markers_and_is_idempotent(self):
        b, e = evaluate.MARK_BEGIN.format(name="x"), evaluate.MARK_END.format(name="x")
        doc = f"intro\n{b}\nold\n{e}\nafter\n"
        new = evaluate.splice(doc, "x", "new\n")
        self.assertEqual(new, f"intro\n{b}\nnew\n{e}\nafter\n")
        self.assertEqual(evaluate.splice(new, "x", "new\n"), new)
        self.assertEqual(evaluate.generated_block(new, "x"), "new\n")
        with self.assertRaises(SystemExit):
            evaluate.splice("no markers", "x", "new\n")

    def test_a_log_without_summary_is_a_problem_not_a_figure(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d, True)
        p = os.path.join(d, "s.jsonl")
        with open(p, "w") as f:
            f.write('{"type":"header"}\n{"t":1,"type":"stall.start"}\n')
        fig, problem = evaluate.session_figures(p)
        self.assertIsNone(fig)
        self.assertIn("summary", problem)

    def test_figures_come_from_the_summary(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d, True)
        p = os.path.join(d, "s.jsonl")
        with open(p, "w") as f:
            f.write('{"type":"header"}\n{"t":1,"type":"x"}\n'
                    '{"type":"summary","averageBitrateBps":2500000,"stallSeconds":1.5,'
                    '"qoe":{"playedSwitches":3,"linearQoE":12.25}}\n')
        fig, problem = evaluate.session_figures(p)
        self.assertIsNone(problem)
        self.assertEqual((fig["bitrateMbps"], fig["rebufferSeconds"], fig["switches"], fig["qoe"]),
                         (2.5, 1.5, 3.0, 12.25))

    def assert_sample_spec_refused(self, refusal, **changes):
        """load_spec refuses the CI sample's spec with `changes` applied, with a message matching `refusal`."""
        with open(SAMPLE_SPEC) as f:
            spec = json.load(f)
        spec.update(changes)
        with self.assertRaisesRegex(SystemExit, refusal):
            evaluate.load_spec(write_spec(self, spec))

    def test_spec_must_name_its_default_among_its_algorithms(self):
        self.assert_sample_spec_refused("default 'nope'", default="nope")

    def test_previous_default_must_be_another_algorithm_of_the_spec(self):
        self.assert_sample_spec_refused("previous default 'nope'", previous="nope")
        self.assert_sample_spec_refused("is the default", previous=evaluate.load_spec(SAMPLE_SPEC)["default"])

    def test_the_default_is_paired_against_the_previous_default_on_every_figure_outside_the_targets(self):
        import stats
        data = evaluate.report_data(SAMPLE_RUN)
        spec = evaluate.load_spec(SAMPLE_SPEC)
        self.assertEqual(data["previous"]["rule"], spec["previous"])
        d, prev, traces = data["default"], spec["previous"], data["complete"]
        for key, *_ in evaluate.METRICS:
            self.assertEqual(data["previous"]["comparisons"][prev][key],
                             stats.paired_comparison([data["perTrace"][f"{d}|{t}"][key] for t in traces],
                                                     [data["perTrace"][f"{prev}|{t}"][key] for t in traces], traces))
        # not among the rules the targets take the best of
        self.assertNotIn(prev, data["comparisons"])
        block = evaluate.render(data)
        self.assertIn(f"**The default `{d}` against the rule it replaced, `{prev}`**", block)
        # a spec without `previous` has no such block
        del data["previous"]
        self.assertNotIn("against the rule it replaced", evaluate.render(data))

    def test_committed_specs_load_and_evaluation_spec_uses_the_evaluation_side(self):
        spec = evaluate.load_spec(os.path.join(ABR, "specs", "abr-virtual.json"))
        self.assertEqual(spec["traces"], {"split": "Tools/abr/trace-split.json", "side": "evaluation",
                                          "extra": "Tools/abr/extra-traces.json"})
        self.assertGreaterEqual(spec["durationSeconds"], 120)
        tuning = evaluate.load_spec(os.path.join(ABR, "specs", "abr-virtual-tuning.json"))
        traces, tuned = evaluate.spec_traces(spec), evaluate.spec_traces(tuning)
        self.assertFalse(set(traces) & set(tuned))
        # the issue asks for at least 30 evaluation traces; no recording group on both sides
        self.assertGreaterEqual(len(set(traces)), 30)
        self.assertFalse(recording_groups.crossing_groups(tuned, [t[len("extra/"):] if t.startswith("extra/")
                                                                  else t for t in traces]))


class StaleBinaryTests(unittest.TestCase):
    """`run` refuses binaries older than the sources (or runs them with --allow-stale-binary), and the
    manifest's binaryOlderThanSources is that same check: Sources/ is walked once per run, in both modes.
    On a made-up checkout (tools.REPO points at it), with the runners replaced: no session plays."""

    def setUp(self):
        self.repo = temp_dir(self, "abr-stale-")
        now = time.time()
        for rel, age in (("Sources/Core/a.swift", 0), ("Sources/Core/b.c", 50), ("Package.swift", 200),
                         (".build/debug/hlsplay", 100), (".build/debug/hls-origin", 100)):
            path = os.path.join(self.repo, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write("x\n")
            os.chmod(path, 0o755)
            os.utime(path, (now - age, now - age))
        self.newer = ["Sources/Core/a.swift", "Sources/Core/b.c"]  # newest first; Package.swift is older
        for target in (mock.patch.object(evaluate.tools, "REPO", self.repo),
                       mock.patch.object(evaluate, "report", return_value=(None, "")),
                       mock.patch("sys.stdout", io.StringIO())):
            target.start()
            self.addCleanup(target.stop)

    def main(self, spec, *flags):
        sources = os.path.join(self.repo, "Sources")
        with mock.patch("os.walk", wraps=os.walk) as walk, mock.patch.object(evaluate, "run") as virtual, \
                mock.patch.object(real, "run") as real_run:
            try:
                rc = evaluate.main(["run", spec, "--out", os.path.join(self.repo, "out"), "--build", "debug", *flags])
            finally:
                self.walks = sum(1 for c in walk.call_args_list if c.args[0] == sources)
        return rc, virtual, real_run

    def test_a_stale_binary_is_refused_naming_the_newest_source(self):
        with self.assertRaises(SystemExit) as refused:
            self.main(SAMPLE_SPEC)
        self.assertEqual(str(refused.exception),
                         "hlsplay is older than 2 source file(s) (newest: Sources/Core/a.swift): it would measure "
                         "code that is no longer the tree's; run `swift build --product hlsplay`, or pass "
                         "--allow-stale-binary")
        self.assertEqual(self.walks, 1)

    def test_the_virtual_run_is_given_the_check_and_does_not_walk_again(self):
        rc, virtual, real_run = self.main(SAMPLE_SPEC, "--allow-stale-binary")
        self.assertEqual(rc, 0)
        self.assertEqual(virtual.call_args.kwargs["stale"], {"hlsplay": self.newer})
        real_run.assert_not_called()
        self.assertEqual(self.walks, 1)

    def test_the_real_run_is_given_both_binaries_check_and_does_not_walk_again(self):
        rc, virtual, real_run = self.main(REAL_SPEC, "--allow-stale-binary")
        self.assertEqual((rc, self.walks), (0, 1))  # not once per binary
        self.assertEqual(real_run.call_args.args[3], {"hlsplay": self.newer, "hls-origin": self.newer})
        virtual.assert_not_called()

    def test_a_missing_binary_is_a_clear_refusal_naming_the_build_command(self):
        os.remove(os.path.join(self.repo, ".build", "debug", "hls-origin"))  # a real spec starts the origin
        with self.assertRaises(SystemExit) as refused:
            self.main(REAL_SPEC, "--allow-stale-binary")
        self.assertEqual(str(refused.exception),
                         f"evaluate.py: {self.repo}/.build/debug/hls-origin is missing: run "
                         f"`swift build --product hls-origin` in {self.repo}")

    def test_a_binary_counts_only_the_sources_of_its_products_targets(self):
        # hls-origin is built from Core and Origin; hlsplay also from Player and from a shim kept outside Sources/.
        for rel, age in (("Sources/Player/p.swift", 10), ("Sources/Origin/o.swift", 20), ("Shim/shim.h", 30),
                         ("Sources/Loose/l.swift", 40)):
            path = os.path.join(self.repo, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write("x\n")
            os.utime(path, (time.time() - age, time.time() - age))
        folders = {"hlsplay": ["Shim", "Sources/Core", "Sources/Origin", "Sources/Player"],
                   "hls-origin": ["Sources/Core", "Sources/Origin"]}
        with mock.patch.object(evaluate.tools, "product_source_folders", return_value=folders):
            stale = evaluate.tools.stale_binaries({
                "hlsplay": os.path.join(self.repo, ".build", "debug", "hlsplay"),
                "hls-origin": os.path.join(self.repo, ".build", "debug", "hls-origin")})
        # Sources/Loose is in no known target: it counts for both.
        self.assertEqual(stale["hlsplay"], ["Sources/Core/a.swift", "Sources/Player/p.swift", "Sources/Origin/o.swift",
                                            "Shim/shim.h", "Sources/Loose/l.swift", "Sources/Core/b.c"])
        self.assertEqual(stale["hls-origin"], ["Sources/Core/a.swift", "Sources/Origin/o.swift", "Sources/Loose/l.swift",
                                               "Sources/Core/b.c"])

    def test_the_manifest_gives_each_product_its_targets_folders(self):
        folders = evaluate.tools.product_source_folders(REPO)
        self.assertIn("Sources/HLSPlayer", folders["hlsplay"])
        self.assertIn("CFFmpeg", folders["hlsplay"])
        self.assertIn("Sources/HLSOrigin", folders["hls-origin"])
        self.assertNotIn("Sources/HLSPlayer", folders["hls-origin"])
        self.assertNotIn("Sources/hlsplay", folders["hls-origin"])

    def test_binaries_newer_than_every_source_are_not_stale(self):
        for name in ("hlsplay", "hls-origin"):
            os.utime(os.path.join(self.repo, ".build", "debug", name))
        rc, _, real_run = self.main(REAL_SPEC)
        self.assertEqual((rc, real_run.call_args.args[3], self.walks), (0, {}, 1))


if __name__ == "__main__":
    unittest.main()
