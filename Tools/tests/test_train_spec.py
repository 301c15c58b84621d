"""Tests of the stall-model collection as a declared experiment (Tools/train/collect.py with a spec
under Tools/train/specs/):

- the published spec (specs/stall-v2.json) plans exactly the sessions that collect.py planned from
  its constants before they moved into the spec (read from git at support.PRE_SPEC_COMMIT, the last commit
  with them): the same ids, traces, offsets, scales, arms, models, policies, in the same order, and the
  same derived trace files, for every invocation collect.sh and onoff-start-gate.sh make;
- the spec's split crosses only the published recording group, and a spec that cuts another is refused;
- a phase run writes its run manifest (spec as run, commit, binaries' sha256, machine, load, UTC times,
  per session its commands and exit status): two real sessions of a few seconds on hls-origin.

The plan comparison needs git and the shared traces; the run needs the hlsplay and hls-origin binaries
(HLSPLAY_TOOLS_TEST_BUILD=release|debug|DIR, default debug, as test_abr_evaluate.py). Each says so when
what it needs is missing.

Run: python3 -B -m unittest Tools.tests.test_train_spec
"""
import copy, importlib.util, json, os, shutil, sys, tempfile, unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from support import BUILD, REPO, TRAIN, at_pre_spec_commit, temp_dir, write_spec  # noqa: E402
import collect  # noqa: E402
import recording_groups  # noqa: E402

SPEC_V2 = os.path.join(TRAIN, "specs", "stall-v2.json")
V1 = os.path.join(REPO, "models", "stall-logistic-v1.json")
V2 = os.path.join(REPO, "models", "stall-logistic-v2.json")
# Every collect.py invocation of collect.sh and onoff-start-gate.sh:
# (phase, --model, --tuned-bin, --offsets then, --offsets now, --skip-arm, --policy, --tag)
INVOCATIONS = [
    ("train", None, None, None, None, (), None, None),
    ("heldout", None, None, None, None, (), None, None),
    ("onoff", V2, "/bin-new", None, None, (), None, None),
    ("onoff", V2, "/bin-new", [0.25, 0.75], "extra", ("on",), None, None),
    ("onoff", V2, None, None, None, (), None, None),
    ("onoff", V2, None, [0.25, 0.75], "extra", (), None, None),
    ("onoff", V2, None, [0.0, 0.25, 0.5, 0.75], "quarters", (), None, "v2-start"),
    ("onoff", V2, None, [0.125, 0.375, 0.625, 0.875], "eighths", (), None, "v2-start-b"),
    ("onoff", V2, None, None, "0.3,0.6", (), "/p.json", "policy"),  # a list on the command line still works
]


def pre_spec_collect():
    """collect.py as it was at support.PRE_SPEC_COMMIT, imported under another name."""
    text = at_pre_spec_commit("Tools/train/collect.py")
    d = tempfile.mkdtemp(prefix="collect-pre-spec-")
    path = os.path.join(d, "collect_pre_spec.py")
    with open(path, "w") as f:
        # its own paths (REPO, the ladder source, the models) are this checkout's
        f.write(text.replace("HERE = os.path.dirname(os.path.abspath(__file__))", f"HERE = {TRAIN!r}"))
    spec = importlib.util.spec_from_file_location("collect_pre_spec", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    shutil.rmtree(d, True)
    return module


class PublishedSpecTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.isdir(collect.TRACES_ROOT):
            raise unittest.SkipTest(f"no shared traces at {collect.TRACES_ROOT}")
        cls.old = pre_spec_collect()
        cls.spec = collect.load_spec(SPEC_V2)

    def test_spec_holds_the_old_constants(self):
        old, spec = self.old, self.spec
        self.assertEqual(spec["traces"]["train"], old.TRAIN_TRACES)
        self.assertEqual(spec["traces"]["heldout"], old.HELD_OUT_TRACES)
        self.assertEqual(spec["offsetFractions"]["default"], old.OFFSET_FRACTIONS)
        self.assertEqual((spec["sessionMediaSeconds"], spec["sessionWallLimitSeconds"]),
                         (old.SESSION_MEDIA_SECONDS, old.SESSION_WALL_LIMIT_SECONDS))
        self.assertEqual((spec["scaling"]["aboveMeanBps"], spec["scaling"]["toMeanBps"]),
                         (old.SCALE_ABOVE_MEAN_BPS, old.SCALED_MEAN_BPS))
        self.assertEqual(os.path.join(REPO, spec["ladder"]["source"]), old.LADDER_SOURCE)
        self.assertEqual(spec["ladder"]["loops"], old.LADDER_LOOPS)
        self.assertEqual(spec["ladder"]["lowRung"], old.LOW_RUNG)

    def test_spec_plans_the_sessions_the_constants_planned(self):
        for phase, model, tuned, old_offsets, offsets, skip, policy, tag in INVOCATIONS:
            with self.subTest(phase=phase, offsets=offsets, tuned=tuned, skip=skip, tag=tag), \
                    tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
                if offsets == "0.3,0.6":
                    old_offsets = [0.3, 0.6]
                before = self.old.plan(phase, model, a, tuned, old_offsets, skip, policy, tag)
                now = collect.plan(self.spec, phase, model, b, tuned, offsets, skip, policy, tag)
                self.assertGreater(len(before), 0)
                self.assertEqual([dict(j, traceFile=os.path.relpath(j["traceFile"], b)) for j in now],
                                 [dict(j, traceFile=os.path.relpath(j["traceFile"], a)) for j in before])
                # the derived traces (rotation, scaling, latency) are the same bytes
                self.assertEqual(sorted(os.listdir(os.path.join(b, "traces"))), sorted(os.listdir(os.path.join(a, "traces"))))
                for name in os.listdir(os.path.join(a, "traces")):
                    with open(os.path.join(a, "traces", name), "rb") as x, open(os.path.join(b, "traces", name), "rb") as y:
                        self.assertEqual(y.read(), x.read(), name)

    def test_the_published_split_crosses_only_the_known_group(self):
        self.assertEqual(recording_groups.crossing_groups(self.spec["traces"]["train"], self.spec["traces"]["heldout"]),
                         set(recording_groups.PUBLISHED_SPLIT_CROSSINGS))
        self.assertEqual(set(self.spec["allowedCrossingGroups"]), set(recording_groups.PUBLISHED_SPLIT_CROSSINGS))


class SpecCheckTests(unittest.TestCase):
    def write(self, spec):
        return write_spec(self, spec)

    def test_a_spec_that_cuts_another_group_is_refused(self):
        with open(SPEC_V2) as f:
            spec = json.load(f)
        spec["traces"]["heldout"].append("mahimahi/Verizon-EVDO-driving.down")  # also a training trace
        with self.assertRaisesRegex(SystemExit, "mahimahi/Verizon-EVDO"):
            collect.load_spec(self.write(spec))
        spec["traces"]["heldout"].pop()
        spec["allowedCrossingGroups"] = ["norway-hsdpa-3g", "mahimahi/Verizon-EVDO"]
        with self.assertRaisesRegex(SystemExit, "no published split"):
            collect.load_spec(self.write(spec))

    def test_a_spec_without_a_key_or_with_an_unknown_trace_list_is_refused(self):
        with open(SPEC_V2) as f:
            spec = json.load(f)
        broken = copy.deepcopy(spec)
        del broken["scaling"]
        with self.assertRaisesRegex(SystemExit, "'scaling'"):
            collect.load_spec(self.write(broken))
        broken = copy.deepcopy(spec)
        broken["phases"]["onoff"]["traces"] = "evaluation"
        with self.assertRaisesRegex(SystemExit, "evaluation"):
            collect.load_spec(self.write(broken))

    def test_offsets_name_a_batch_or_list_fractions(self):
        spec = collect.load_spec(SPEC_V2)
        self.assertEqual(collect.offset_fractions(spec, None), ([0.0, 0.5], True))
        self.assertEqual(collect.offset_fractions(spec, "extra"), ([0.25, 0.75], False))
        self.assertEqual(collect.offset_fractions(spec, "0.1,0.2"), ([0.1, 0.2], False))
        with self.assertRaisesRegex(SystemExit, "neither a batch"):
            collect.offset_fractions(spec, "halves")


class RunManifestTests(unittest.TestCase):
    """One held-out trace at one offset, both arms, 4 s of media from a 30 s ladder: two real sessions."""

    def test_a_phase_run_writes_its_manifest(self):
        try:
            bins = os.path.dirname(collect.tools.find_binary("hlsplay", BUILD))
            collect.tools.find_binary("hls-origin", BUILD)
        except collect.tools.ToolError as e:
            self.skipTest(str(e))
        if not os.path.isdir(collect.TRACES_ROOT):
            self.skipTest(f"no shared traces at {collect.TRACES_ROOT}")
        with open(SPEC_V2) as f:
            spec = json.load(f)
        spec.update(name="tiny", sessionMediaSeconds=4.0, sessionWallLimitSeconds=60.0,
                    traces={"train": spec["traces"]["train"][:1], "heldout": ["pensieve/fcc/trace_797466_http---www.amazon.com"]},
                    offsetFractions={"default": [0.5]})
        spec["ladder"]["loops"] = 1
        d = temp_dir(self, "collect-run-")
        spec_path = write_spec(self, spec, d, "tiny.json")
        data = os.path.join(d, "data")
        collect.main(["heldout", "--spec", spec_path, "--data", data, "--bin", bins, "--jobs", "2"])
        runs = os.listdir(os.path.join(data, "runs"))
        self.assertEqual(len(runs), 1, runs)
        self.assertRegex(runs[0], r"^heldout-\d{8}T\d{6}Z\.json$")
        with open(os.path.join(data, "runs", runs[0])) as f:
            m = json.load(f)
        self.assertEqual({k: v for k, v in m["spec"].items() if k != "specFile"}, spec)
        self.assertEqual(m["phase"], "heldout")
        self.assertEqual(len(m["commit"]), 40)
        self.assertIn(m["worktreeClean"], (True, False))
        for name in ("hlsplay", "hls-origin"):
            self.assertEqual(len(m["binaries"][os.path.abspath(bins)][name]["sha256"]), 64, name)
        self.assertTrue(m["binaries"][os.path.abspath(bins)]["hlsplay"]["version"])
        self.assertEqual(list(m["traceSha256"]), spec["traces"]["heldout"])
        self.assertEqual(len(m["ladder"]["masterSha256"]), 64)
        self.assertLessEqual(m["startedAt"], m["endedAt"])
        for key in ("machine", "loadAverageAtStart", "loadAverageAtEnd", "options"):
            self.assertIn(key, m)
        self.assertEqual(m["options"]["jobs"], 2)
        # per session: its commands, its log, its exit status, in queue order (on first at offset index 0)
        self.assertEqual([s["id"] for s in m["sessions"]], ["heldout-00-0-on-stall-logistic-v1", "heldout-00-0-off-stall-logistic-v1"])
        for s in m["sessions"]:
            self.assertEqual(s["exitStatus"], 0, s)
            self.assertEqual(s["command"][s["command"].index("--log") + 1], os.path.join(data, s["log"]))
            self.assertIn("--no-decode", s["command"])
            self.assertEqual(s["command"][s["command"].index("--duration") + 1], "4.0")
            self.assertIn("--trace", s["originCommand"])
            self.assertTrue(os.path.isfile(os.path.join(data, s["log"])))
        with open(os.path.join(data, "manifest.jsonl")) as f:
            rows = [json.loads(line) for line in f]
        self.assertEqual(sorted(r["id"] for r in rows), sorted(s["id"] for s in m["sessions"]))
        self.assertTrue(all(r["spec"] == "tiny" and r["command"] for r in rows))


if __name__ == "__main__":
    unittest.main()
