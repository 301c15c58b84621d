"""Tests of the stall-model pipeline's bookkeeping (Tools/train): the shared results file
keeps every key its writer does not compute (results_file.py), every published key names
its writer or says it was merged by hand, and the recording-source groups a split must
respect (recording_groups.py). No session runs; the test that re-runs train_real.py's
writer needs the trainer's dependencies (numpy, SciPy, scikit-learn: Tools/install-deps.sh) and
says so when one is missing.

Run: python3 -B -m unittest discover -s Tools/tests
"""
import copy, glob, json, os, re, shutil, sys, tempfile, unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from support import HAS_TRAINER_DEPS, REPO, RESULTS_V2, TRAIN  # noqa: E402
import recording_groups  # noqa: E402
import results_file  # noqa: E402
import operating_point  # noqa: E402

RESULTS_V1 = os.path.join(TRAIN, "results-v1.json")
HAND_MERGED_V2 = []


class ResultsFileTests(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        self.path = os.path.join(self.dir.name, "results.json")

    def test_update_replaces_its_keys_and_keeps_the_others(self):
        results_file.update(self.path, {"a": 1, "b": [1, 2]}, "writer-a.py")
        results_file.update(self.path, {"c": {"x": 1}}, "writer-c.py")
        res = results_file.update(self.path, {"a": 2}, "writer-a.py")
        self.assertEqual(res, results_file.load(self.path))
        self.assertEqual((res["a"], res["b"], res["c"]), (2, [1, 2], {"x": 1}))
        self.assertEqual({k: p["writer"] for k, p in res["provenance"].items()},
                         {"a": "writer-a.py", "b": "writer-a.py", "c": "writer-c.py"})
        self.assertEqual(list(res)[-1], "provenance")
        self.assertEqual(os.listdir(self.dir.name), ["results.json"])  # no temporary file left

    def test_hand_merged_keys_and_their_provenance_survive_an_update(self):
        with open(self.path, "w") as fh:
            json.dump({"own": 0, "manual": {"figure": 3.6},
                       "provenance": {"manual": {"writer": None, "handMerged": True, "note": "by hand"}}}, fh)
        res = results_file.update(self.path, {"own": 1}, "w.py")
        self.assertEqual(res["manual"], {"figure": 3.6})
        self.assertEqual(res["provenance"]["manual"], {"writer": None, "handMerged": True, "note": "by hand"})
        self.assertEqual(results_file.hand_merged(res), ["manual"])
        self.assertEqual(results_file.keys_without_provenance(res), [])

    def test_a_writer_may_say_which_run_the_figures_came_from(self):
        res = results_file.update(self.path, {"a": 1}, "w.py", note="from run R")
        self.assertEqual(res["provenance"]["a"], {"writer": "w.py", "handMerged": False, "note": "from run R"})
        res = results_file.update(self.path, {"a": 2}, "w.py")  # a later write without a note drops the old one
        self.assertEqual(res["provenance"]["a"], {"writer": "w.py", "handMerged": False})

    def test_provenance_is_not_a_result_key(self):
        with self.assertRaisesRegex(ValueError, "provenance"):
            results_file.update(self.path, {"provenance": {}}, "w.py")
        self.assertFalse(os.path.exists(self.path))


class CommittedResultsTests(unittest.TestCase):
    def test_every_published_key_names_its_writer_or_is_marked_hand_merged(self):
        for path in (RESULTS_V1, RESULTS_V2):
            res = results_file.load(path)
            self.assertEqual(results_file.keys_without_provenance(res), [], path)
            self.assertEqual(set(res["provenance"]), set(res) - {"provenance"}, path)
            for key, p in res["provenance"].items():
                if p["handMerged"]:
                    self.assertIsNone(p["writer"], key)
                    self.assertTrue(p.get("note"), f"{key}: a hand-merged key says where its figures came from")
                else:
                    script = p["writer"].split()[0]
                    self.assertTrue(os.path.isfile(os.path.join(REPO, script)), f"{key}: {script}")
        self.assertEqual(results_file.hand_merged(results_file.load(RESULTS_V2)), HAND_MERGED_V2)

    def test_operating_point_is_the_curve_row_at_the_controllers_preload_risk(self):
        res = results_file.load(RESULTS_V2)
        self.assertEqual(operating_point.preload_enter_risk(), 0.30)
        self.assertEqual(res["operatingPoint"], operating_point.derive(res, 0.30))
        self.assertEqual(operating_point.main(["--results", RESULTS_V2, "--check"]), 0)
        self.assertEqual(res["provenance"]["operatingPoint"]["writer"], operating_point.WRITER)

    def test_operating_point_follows_the_shipped_constant_and_is_rewritten_with_the_curve(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d, True)
        swift = os.path.join(d, "PolicyController.swift")
        with open(swift, "w") as fh:
            fh.write("struct C {\n    public var preloadEnterRisk: Double = 0.40\n}\n")
        res = results_file.load(RESULTS_V2)
        self.assertEqual(operating_point.preload_enter_risk(swift), 0.40)
        row = next(r for r in res["heldOutThresholdCurve"] if r["threshold"] == 0.4)
        self.assertEqual(operating_point.derive(res, 0.40)["precision"], row["precision"])
        with self.assertRaises(SystemExit):
            operating_point.derive(res, 0.33)  # no such row: refused, not interpolated
        # a stale operating point fails --check; writing it puts the curve's row back
        path = os.path.join(d, "results.json")
        stale = copy.deepcopy(res)
        stale["operatingPoint"]["precision"] = 0.5
        with open(path, "w") as fh:
            json.dump(stale, fh)
        self.assertEqual(operating_point.main(["--results", path, "--check"]), 1)
        self.assertEqual(operating_point.main(["--results", path]), 0)
        self.assertEqual(results_file.load(path)["operatingPoint"], res["operatingPoint"])

    def test_no_training_script_writes_a_results_file_whole(self):
        # Each writer goes through results_file.update, which keeps the keys it does not write.
        whole = re.compile(r"open\(\s*args\.results\s*,\s*[\"']w")
        for script in sorted(glob.glob(os.path.join(TRAIN, "*.py"))):
            with open(script) as fh:
                self.assertIsNone(whole.search(fh.read()), os.path.basename(script))

    @unittest.skipUnless(HAS_TRAINER_DEPS, "train_real.py needs numpy, SciPy and scikit-learn (Tools/install-deps.sh)")
    def test_rerunning_train_real_keeps_the_keys_it_does_not_write(self):
        import train_real
        committed = results_file.load(RESULTS_V2)
        own = [k for k, p in committed["provenance"].items() if p["writer"] == train_real.RESULTS_WRITER]
        self.assertIn("heldOut", own)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "results-v2.json")
            shutil.copy(RESULTS_V2, path)
            fresh = {k: copy.deepcopy(committed[k]) for k in own}
            fresh["heldOut"] = [dict(r, auc=0.5) for r in fresh["heldOut"]]
            train_real.write_results(path, fresh)
            train_real.write_results(path, fresh)  # twice: a re-run changes nothing more
            after = results_file.load(path)
        self.assertEqual(after["heldOut"][0]["auc"], 0.5)
        for key in set(committed) - set(own) - {"provenance"}:
            self.assertEqual(after.get(key), committed[key], f"{key} changed or was deleted")
        self.assertEqual(after["provenance"], committed["provenance"])


class RecordingGroupTests(unittest.TestCase):
    def test_both_norway_collections_are_one_group(self):
        root = os.path.join(REPO, "..", "shared", "data", "traces")
        pensieve = sorted(glob.glob(os.path.join(root, "pensieve", "hsdpa_norway", "*")))
        sabre = sorted(glob.glob(os.path.join(root, "sabre", "3G_hsdpa_norway", "*")))
        names = ["pensieve/hsdpa_norway/norway_bus_11", "sabre/3G_hsdpa_norway/report.2010-09-28_1407CEST.json"]
        names += [os.path.relpath(p, root) for p in pensieve + sabre]
        self.assertEqual({recording_groups.group_of(n) for n in names}, {"norway-hsdpa-3g"})
        # Other collections stay apart from it and from one another.
        others = ["pensieve/fcc/trace_7540_http---www.yahoo.com", "sabre/4G_lte_belgium/report_tram_0002.json",
                  "sabre/fcc_stepup_sd/trace0000.json", "mahimahi/ATT-LTE-driving.down"]
        self.assertEqual(len({recording_groups.group_of(n) for n in others + names[:1]}), 5)
        self.assertEqual(recording_groups.group_of("mahimahi/TMobile-LTE-short.down"),
                         recording_groups.group_of("mahimahi/TMobile-LTE-driving.down"))

    def test_a_split_that_cuts_a_group_is_named(self):
        train = ["pensieve/hsdpa_norway/norway_bus_11", "mahimahi/TMobile-LTE-short.down"]
        held = ["sabre/3G_hsdpa_norway/report.2011-02-14_2032CET.json", "mahimahi/Verizon-EVDO-driving.down"]
        self.assertEqual(recording_groups.crossing_groups(train, held), {"norway-hsdpa-3g"})
        self.assertEqual(recording_groups.crossing_groups(train[1:], held[1:]), set())

    def test_the_published_split_crosses_only_the_known_group(self):
        import collect  # load_spec refuses a spec whose split cuts any other group
        spec = collect.load_spec()
        self.assertEqual(recording_groups.crossing_groups(spec["traces"]["train"], spec["traces"]["heldout"]),
                         set(recording_groups.PUBLISHED_SPLIT_CROSSINGS))


if __name__ == "__main__":
    unittest.main()
