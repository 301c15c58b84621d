"""Tests of Tools/lib/distribute.py and of the characterization grid run through it (docs/cluster.md).

DistributeTests: run_units with a trivial unit (no binaries): results in unit order, a failing unit named,
one output directory per unit, and a Dask cluster's worker output shipped back.
GridAcrossWorkersTests: a small real grid (2 units x 2 sessions, the debug binaries, Samples/build/ladder-2s)
run three ways, one process (--jobs 1), a local pool (--jobs 2) and a local Dask cluster of 2 worker
processes on 127.0.0.1 (--scheduler), must give the same merged results (what is compared and why: the
class doc). About a minute on 2 cores. The Dask tests need Dask distributed (Tools/install-deps.sh installs
it into /opt/hlsplay/python; Tools/test.sh runs these tests with that interpreter) and are skipped, saying
so, without it.

Run: /opt/hlsplay/python/bin/python3 -B -m unittest discover -s Tools/tests -p test_distribute.py
HLSPLAY_TOOLS_TEST_BUILD=release|debug|DIR picks the binaries (default debug).
"""
import contextlib, importlib.util, io, json, os, re, shutil, sys, tempfile, unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "Tools", "lib"))
import distribute  # noqa: E402
sys.path.insert(0, HERE)
import distribute_units  # noqa: E402
UNITS_MODULE = os.path.join(HERE, "distribute_units.py")


def unit_fn():
    """distribute_units.square_unit as the module now holds it: upload_file imports the uploaded module on
    the scheduler too, which a LocalCluster runs in this process, and pickling by reference needs the
    object sys.modules holds now."""
    return sys.modules["distribute_units"].square_unit
import hlsplay_tools  # noqa: E402

_spec = importlib.util.spec_from_file_location("grid", os.path.join(REPO, "Tools", "characterize", "grid.py"))
grid = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(grid)

BUILD = os.environ.get("HLSPLAY_TOOLS_TEST_BUILD", "debug")
try:
    from dask.distributed import LocalCluster
except ImportError:
    LocalCluster = None
NO_DASK = "Dask distributed is not installed (Tools/install-deps.sh puts it in /opt/hlsplay/python)"


_cluster = None


def local_cluster_address():
    """The scheduler of two worker processes, one task at a time each, on loopback, no dashboard; started
    once for the module (starting one costs seconds to tens of seconds on a loaded machine)."""
    global _cluster
    if _cluster is None:
        _cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                dashboard_address=None, silence_logs=40)
    return _cluster.scheduler_address


def tearDownModule():
    global _cluster
    if _cluster is not None:
        _cluster.close()
        _cluster = None


class DistributeTests(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="distribute-test-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def dest(self, k, u):
        return os.path.join(self.tmp, f"u{k}")

    def check_results(self, results, units):
        self.assertEqual([r.unit for r in results], units)
        self.assertEqual([r.record["square"] for r in results], [u * u for u in units])
        for k, r in enumerate(results):
            self.assertEqual(r.dir, os.path.join(self.tmp, f"u{k}"))
            with open(os.path.join(r.dir, "value.txt")) as f:
                self.assertEqual(f.read(), str(units[k] ** 2))
            self.assertTrue(os.path.exists(os.path.join(r.dir, "sub", "pid")))

    def test_local_pool_keeps_unit_order_and_runs_in_other_processes(self):
        units = [5, 1, 4, 2, 3]
        results = distribute.run_units(units, unit_fn(), self.dest, workers=2)
        self.check_results(results, units)
        self.assertNotIn(os.getpid(), {r.record["pid"] for r in results})

    def test_a_failing_unit_is_named_and_fails_the_run(self):
        with self.assertRaises(distribute.DistributeError) as cm:
            distribute.run_units([1, "boom", 3], unit_fn(), self.dest, workers=2)
        self.assertIn("unit 2 of 3", str(cm.exception))
        self.assertIn("this unit fails on purpose", str(cm.exception))

    def test_refuses_two_units_writing_to_one_directory(self):
        with self.assertRaises(distribute.DistributeError):
            distribute.run_units([1, 2], unit_fn(), lambda k, u: self.tmp, workers=1)

    def test_an_unreachable_scheduler_is_named(self):
        if LocalCluster is None:
            self.skipTest(NO_DASK)
        with self.assertRaises(distribute.DistributeError) as cm:
            distribute.run_units([1], unit_fn(), self.dest, scheduler="tcp://127.0.0.1:9")
        self.assertIn("tcp://127.0.0.1:9", str(cm.exception))

    def test_dask_workers_send_their_output_directories_back(self):
        if LocalCluster is None:
            self.skipTest(NO_DASK)
        units = [3, 1, 2, 7]
        results = distribute.run_units(units, unit_fn(), self.dest, scheduler=local_cluster_address(),
                                       upload=[UNITS_MODULE])
        self.check_results(results, units)
        # the worker processes ran them, not this one
        self.assertNotIn(os.getpid(), {r.record["pid"] for r in results})


NUMBER = re.compile(r"\d+(\.\d+)?")


def report_structure(text):
    """The report with every number masked: its sections, table headers, row labels and where a cell
    is empty ('—') stay, timings and load averages go."""
    return NUMBER.sub("#", text)


# The fields of a session record that must be equal whichever machine or process ran the unit: what the
# unit is (unit, section, kind, rate, seg, policy, rep), how the player ended (rc, exit) and the start gate
# (cold without an estimate, warm from the store the cold session of the same unit wrote: it shows that
# the warm session read its own unit's store, which a wrong split across workers would break).
DETERMINISTIC = ("unit", "section", "kind", "rate", "seg", "policy", "rep", "rc", "exit", "gate")
# Not compared: ttff, decodeSeconds, floor*, ratio*, sessionSeconds, played, firstFetchOverSelection, wall,
# load1 (wall-clock measurements: they differ between two runs in one process too), avgBitrate, stalls,
# firstRequestVariant / firstFrameVariant (they follow measured throughput, which the machine's load moves),
# log (the path of the copy in the output directory).


class GridAcrossWorkersTests(unittest.TestCase):
    """The merged output of a pool run and of a Dask cluster run equals a one-process run's in:
    shard.json's spec, specHash, ladders, units and completedUnits (the plan, and every unit ran once);
    the records' DETERMINISTIC fields, record by record in plan order, and every record's set of fields;
    the set of session and origin log files; and report.md with its numbers masked (report_structure)."""

    ARGS = ["--only", "grid", "--ladder", "ladder", "--rates", "6mbit", "--segments", "2",
            "--policies", "auto,off", "--kinds", "cold,warm", "--reps", "1", "--duration", "2", "--rtt", "40ms",
            "--timeout", "60"]

    @classmethod
    def setUpClass(cls):
        try:
            player = hlsplay_tools.find_binary("hlsplay", BUILD)
            hlsplay_tools.find_binary("hls-origin", BUILD)
        except hlsplay_tools.ToolError as e:
            raise unittest.SkipTest(f"{e} (Tools/test.sh builds them first)")
        cls.bin = os.path.dirname(player)
        cls.samples = os.path.join(REPO, "Samples", "build")
        if not os.path.exists(os.path.join(cls.samples, "ladder-2s", "master.m3u8")):
            raise unittest.SkipTest("Samples/build/ladder-2s missing (Samples/make-all.sh makes it)")
        cls.tmp = tempfile.mkdtemp(prefix="grid-distribute-test-")
        cls.reference = cls.run_grid("one-process", ["--jobs", "1"])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, True)

    @classmethod
    def run_grid(cls, name, extra):
        out = os.path.join(cls.tmp, name)
        said = io.StringIO()  # the report and progress lines: shown only if the run fails
        try:
            with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
                grid.main(cls.ARGS + ["--bin", cls.bin, "--samples", cls.samples, "--out", out] + extra)
        except (SystemExit, Exception) as e:
            raise AssertionError(f"grid.py {name} run failed: {e}\n{said.getvalue()[-3000:]}")
        return out

    def load(self, out):
        with open(os.path.join(out, "shard.json")) as f:
            shard = json.load(f)
        recs = grid.read_jsonl(os.path.join(out, "sessions.jsonl"))
        with open(os.path.join(out, "report.md")) as f:
            report = f.read()
        return shard, recs, report, sorted(os.listdir(os.path.join(out, "logs")))

    def assert_same_results(self, out):
        ref_shard, ref_recs, ref_report, ref_logs = self.load(self.reference)
        shard, recs, report, logs = self.load(out)
        for key in ("spec", "specHash", "ladders", "units", "completedUnits"):
            self.assertEqual(shard[key], ref_shard[key], key)
        self.assertEqual(shard["units"], shard["completedUnits"])
        self.assertEqual(len(shard["mergedFrom"]), 2, "one shard per unit, each its own task")
        self.assertEqual(len(recs), 4)
        self.assertEqual([{k: r.get(k) for k in DETERMINISTIC} for r in recs],
                         [{k: r.get(k) for k in DETERMINISTIC} for r in ref_recs])
        self.assertEqual([sorted(r) for r in recs], [sorted(r) for r in ref_recs])
        self.assertTrue(all(r["exit"] == "durationReached" for r in recs), [r["exit"] for r in recs])
        self.assertEqual(logs, ref_logs)
        for r in recs:  # the merged records point at the merged copies of their logs
            self.assertEqual(os.path.dirname(r["log"]), os.path.join(out, "logs"))
            self.assertTrue(os.path.exists(r["log"]), r["log"])
        self.assertEqual(report_structure(report), report_structure(ref_report))

    def test_local_pool_run_equals_one_process_run(self):
        self.assert_same_results(self.run_grid("pool", ["--jobs", "2"]))

    def test_dask_cluster_run_equals_one_process_run(self):
        if LocalCluster is None:
            self.skipTest(NO_DASK)
        out = self.run_grid("dask", ["--scheduler", local_cluster_address()])
        self.assert_same_results(out)
        with open(os.path.join(out, "shard.json")) as f:
            self.assertEqual(sorted(m["shard"]["index"] for m in json.load(f)["mergedFrom"]), [1, 2])


if __name__ == "__main__":
    unittest.main()
