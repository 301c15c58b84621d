"""Tests of the later held-out set as a declared experiment (Tools/train/heldout_round.py):

- the committed sample (Tools/train/sample-third-round: its collection and round specs, data/ with the
  collector's manifest.jsonl, run manifests and session logs of four real sessions, results.json) gives,
  through the report step, the same figures file and the same results file, byte for byte, from the
  committed logs alone;
- the report refuses a data folder whose sessions are not exactly the spec's (one missing, one extra);
- the published spec (specs/held-out-third-round.json) declares the real runs onoff-start-gate.sh made
  before the spec existed (read from git at support.PRE_SPEC_COMMIT): the same tags, offsets and ladders; 96
  sessions of which 64 start at the earlier held-out sessions' offsets, as docs/stall-prediction.md says;
- results-v2.json names the report step as heldOutThirdRound's writer, and the report writes every
  field the published key holds.

The report needs the trainer's dependencies (numpy, SciPy, scikit-learn). When hlsplay's decisions or
PolicyController's preloadEnterRisk change, re-run the sample (and say why in the commit):

    rm -rf /tmp/round && python3 Tools/train/heldout_round.py run Tools/train/sample-third-round/spec.json \
        --data /tmp/round --bin .build/release
    # copy /tmp/round/{manifest.jsonl,logs,runs} to Tools/train/sample-third-round/data/, then
    python3 Tools/train/heldout_round.py report Tools/train/sample-third-round/spec.json \
        --data Tools/train/sample-third-round/data --results Tools/train/sample-third-round/results.json

(remove results.json first). Run: python3 -B -m unittest Tools.tests.test_train_heldout_round
"""
import json, os, re, shutil, sys, unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from support import HAS_TRAINER_DEPS, REPO, RESULTS_V2, TRAIN, at_pre_spec_commit, read, sample, temp_dir  # noqa: E402
import heldout_round  # noqa: E402
import results_file  # noqa: E402

SAMPLE, SAMPLE_SPEC, SAMPLE_DATA, SAMPLE_RESULTS = sample("train", "sample-third-round", "data")
FIGURES = "heldout-round-held-out-round-sample.json"
PUBLISHED_SPEC = os.path.join(TRAIN, "specs", "held-out-third-round.json")


@unittest.skipUnless(HAS_TRAINER_DEPS, "the report needs numpy, SciPy and scikit-learn (Tools/install-deps.sh)")
class SampleTests(unittest.TestCase):
    def data_copy(self):
        d = temp_dir(self, "heldout-round-")
        data = os.path.join(d, "data")
        shutil.copytree(SAMPLE_DATA, data)
        os.remove(os.path.join(data, FIGURES))  # derived: the report writes it again
        return d, data

    def test_report_re_derives_the_committed_figures_byte_for_byte(self):
        d, data = self.data_copy()
        value = heldout_round.report(SAMPLE_SPEC, data)
        self.assertEqual(read(os.path.join(data, FIGURES)), read(os.path.join(SAMPLE_DATA, FIGURES)),
                         "the sample's figures are not what the report derives from its logs (a change of "
                         "PolicyController's preloadEnterRisk or of train.evaluate changes them: re-derive)")
        results = os.path.join(d, "results.json")
        heldout_round.write_results(results, SAMPLE_SPEC, data, value)
        self.assertEqual(read(results), read(SAMPLE_RESULTS))
        # the controller-on sessions only, one per batch, one of them at the earlier held-out offsets
        self.assertEqual((value["sessions"], value["sessionsAtEarlierHeldOutOffsets"]), (2, 1))
        self.assertEqual([r["predictor"] for r in value["results"]],
                         [p["name"] for p in heldout_round.load_spec(SAMPLE_SPEC)[0]["predictors"]])

    def test_figures_without_the_groups_the_split_crosses(self):
        d, data = self.data_copy()
        # The sample's split trains on one Norway cut and holds out another: that group crosses, nothing is left.
        value = heldout_round.report(SAMPLE_SPEC, data)
        without = value["withoutCrossingGroups"]
        self.assertEqual((without["groups"], without["sessions"], without["results"]), (["norway-hsdpa-3g"], 0, []))
        self.assertEqual([(c["a"], c["b"]) for c in value["comparisons"]],
                         [tuple(c) for c in heldout_round.load_spec(SAMPLE_SPEC)[0]["comparisons"]])
        # Train on a file of another group: nothing crosses, and the figures without are the pooled ones.
        with open(os.path.join(SAMPLE, "collection.json")) as f:
            coll = json.load(f)
        coll["traces"]["train"] = ["pensieve/fcc/trace_7540_http---www.yahoo.com"]
        coll_path = os.path.join(d, "collection.json")
        with open(coll_path, "w") as f:
            json.dump(coll, f)
        with open(SAMPLE_SPEC) as f:
            spec = json.load(f)
        spec["collection"] = coll_path
        spec_path = os.path.join(d, "spec.json")
        with open(spec_path, "w") as f:
            json.dump(spec, f)
        if not os.path.exists(os.path.join(heldout_round.collect.TRACES_ROOT, coll["traces"]["train"][0])):
            self.skipTest("no shared traces")
        value = heldout_round.report(spec_path, data)
        without = value["withoutCrossingGroups"]
        self.assertEqual((without["groups"], without["sessions"]), ([], 2))
        self.assertEqual(without["results"], value["results"])

    def test_a_comparison_must_name_two_of_the_specs_predictors(self):
        d, _ = self.data_copy()
        with open(SAMPLE_SPEC) as f:
            spec = json.load(f)
        spec["collection"] = os.path.join(SAMPLE, "collection.json")
        spec["comparisons"] = [[spec["predictors"][0]["name"], "no such predictor"]]
        path = os.path.join(d, "spec.json")
        with open(path, "w") as f:
            json.dump(spec, f)
        with self.assertRaisesRegex(SystemExit, "a comparison is two different predictors"):
            heldout_round.load_spec(path)

    def test_a_data_folder_without_exactly_the_specs_sessions_is_refused(self):
        _, data = self.data_copy()
        manifest = os.path.join(data, "manifest.jsonl")
        with open(manifest) as f:
            rows = [json.loads(line) for line in f]
        keep = [r for r in rows if r["id"] != "onoff-00-o25-on-sample-a"]
        self.assertEqual(len(keep), len(rows) - 1)
        with open(manifest, "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in keep)
        with self.assertRaisesRegex(SystemExit, "sample-a: no session of pensieve/hsdpa_norway/norway_tram_48"):
            heldout_round.report(SAMPLE_SPEC, data)
        stray = dict(next(r for r in rows if r["id"] == "onoff-00-o75-on-sample-b"), id="onoff-00-o10-on-sample-b",
                     offsetSeconds=1.0)
        with open(manifest, "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in rows + [stray])
        with self.assertRaisesRegex(SystemExit, "sample-b: a session the spec does not name"):
            heldout_round.report(SAMPLE_SPEC, data)

    def test_the_report_writes_every_field_the_published_key_holds(self):
        published = results_file.load(RESULTS_V2)["heldOutThirdRound"]
        derived = json.loads(read(os.path.join(SAMPLE_DATA, FIGURES)))
        self.assertLessEqual(set(published), set(derived))
        for row in published["results"]:
            self.assertLessEqual(set(row), set(derived["results"][0]))


class PublishedTests(unittest.TestCase):
    def test_sample_is_small(self):
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(SAMPLE) for f in fs)
        self.assertLess(size, 350_000)

    def test_published_spec_declares_what_onoff_start_gate_ran(self):
        old = at_pre_spec_commit("Tools/train/onoff-start-gate.sh")
        spec, coll = heldout_round.load_spec(PUBLISHED_SPEC)
        calls = re.findall(r'collect\.py" onoff (.*?--jobs 6)', old.replace("\\\n", " "))
        ran = []
        for c in calls:
            self.assertIn('--model "$model"', c)  # models/stall-logistic-v2.json
            ran.append((re.search(r"--tag (\S+)", c).group(1), [float(x) for x in re.search(r"--offsets (\S+)", c).group(1).split(",")],
                        "--low-rung" in c))
        self.assertEqual(len(ran), 3)
        self.assertEqual([(b["tag"], coll["offsetFractions"][b["offsets"]], b["lowRung"]) for b in spec["batches"]], ran)
        self.assertEqual(spec["model"], "models/stall-logistic-v2.json")
        self.assertEqual((spec["phase"], spec["arm"]), ("onoff", "on"))

    def test_how_many_published_sessions_start_where_the_earlier_held_out_ones_did(self):
        # docs/stall-prediction.md: "Only 32 of them are at other offsets: 64 … start at 0, ¼, ½ and ¾"
        spec, coll = heldout_round.load_spec(PUBLISHED_SPEC)
        if not os.path.isdir(heldout_round.collect.TRACES_ROOT):
            self.skipTest("no shared traces")
        expected = heldout_round.expected_sessions(spec, coll)
        earlier = {f for o in spec["earlierHeldOutOffsets"] for f in coll["offsetFractions"][o]}
        self.assertEqual(sum(len(b) for b in expected.values()), 96)
        self.assertEqual(sum(1 for b in expected.values() for f in b.values() if f in earlier), 64)
        # the earlier held-out sessions: collect.sh's heldout/onoff phases at default and extra
        self.assertEqual(sorted(earlier), [0.0, 0.25, 0.5, 0.75])

    def test_the_docs_block_is_the_published_key(self):
        doc = os.path.join(REPO, "docs", "stall-prediction.md")
        self.assertEqual(heldout_round.docs(PUBLISHED_SPEC, RESULTS_V2, doc, write=False), 0,
                         "docs/stall-prediction.md's heldout-round block is not what results-v2.json gives")
        # a key that differs in one figure gives another block
        with open(RESULTS_V2) as f:
            results = json.load(f)
        results["heldOutThirdRound"]["results"][0]["falseAlarmsPerHour"] += 0.1
        d = temp_dir(self, "heldout-docs-")
        other = os.path.join(d, "results.json")
        with open(other, "w") as f:
            json.dump(results, f)
        self.assertEqual(heldout_round.docs(PUBLISHED_SPEC, other, doc, write=False), 1)

    def test_results_v2_names_the_report_step_as_its_writer(self):
        p = results_file.load(RESULTS_V2)["provenance"]["heldOutThirdRound"]
        self.assertFalse(p["handMerged"])
        self.assertTrue(p["writer"].startswith(heldout_round.WRITER))
        self.assertIn("Tools/train/specs/held-out-third-round.json", p["writer"])
        self.assertNotIn("predate", p["note"])
        # derived from the archived re-run of the third round (results/held-out-third-round-rerun.tar.xz;
        # rederive.py check_heldout derives it again from those logs)
        runs = results_file.load(RESULTS_V2)["heldOutThirdRound"]["runs"]
        self.assertEqual(sorted(r["batch"] for r in runs), sorted(b["tag"] for b in heldout_round.load_spec(PUBLISHED_SPEC)[0]["batches"]))
        self.assertEqual({r["commit"] for r in runs}, {"508b02e4f794e7e570b02fc75a46ee2d9775d1eb"})


if __name__ == "__main__":
    unittest.main()
