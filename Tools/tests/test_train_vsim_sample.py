"""Tests of the virtual on/off runs as a declared experiment (Tools/train/vsim.py run/report):

- the committed sample (Tools/train/sample-vsim-onoff: spec, run/ with its manifest and raw session
  logs, results.json) gives, through the report step, the same run files, report.json and results
  file, byte for byte, from the committed raw logs alone;
- the runner re-runs the sample spec from scratch (virtual time is deterministic) and gets the same
  figures (the report's "run", the run's commit, times and binary, is the new run's);
- the published spec (specs/vsim-onoff-start-gate.json) declares what onoff-start-gate.sh ran before
  the spec existed (its loops read from git at support.PRE_SPEC_COMMIT): the same tags, traces, ladders,
  preload thresholds and offsets;
- results-v2.json names the report step as the writer of virtualOnOffTuning and virtualOnOffHeldOut
  (no longer merged by hand), and the report writes every field the published keys hold.

The re-run needs the hlsplay binary (HLSPLAY_TOOLS_TEST_BUILD=release|debug|DIR, default debug) and
builds the v2 ladder once into the ladder cache (Tools/abr/evaluate.py's LADDER_CACHE, stall-v2/).
When a change of hlsplay's decisions changes the sample, re-run it (and say why in the commit):

    python3 Tools/train/vsim.py run Tools/train/sample-vsim-onoff/spec.json --out Tools/train/sample-vsim-onoff/run \
        --work /tmp/vsim-work --bin .build/debug --jobs 2 --results Tools/train/sample-vsim-onoff/results.json

(remove run/ and results.json first). Run: python3 -B -m unittest Tools.tests.test_train_vsim_sample
"""
import json, os, re, shutil, sys, unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from support import BUILD, REPO, RESULTS_V2, TRAIN, at_pre_spec_commit, read, sample, temp_dir  # noqa: E402
import vsim  # noqa: E402
import results_file  # noqa: E402

SAMPLE, SAMPLE_SPEC, SAMPLE_RUN, SAMPLE_RESULTS = sample("train", "sample-vsim-onoff")
PUBLISHED_SPEC = os.path.join(TRAIN, "specs", "vsim-onoff-start-gate.json")
KEYS = ("virtualOnOffTuning", "virtualOnOffHeldOut")


def files(folder):
    return sorted(os.path.relpath(os.path.join(d, f), folder) for d, _, fs in os.walk(folder) for f in fs)


class SampleTests(unittest.TestCase):
    def derived_copy(self):
        d = temp_dir(self, "vsim-sample-")
        run = os.path.join(d, "run")
        shutil.copytree(SAMPLE_RUN, run)
        for f in files(run):  # only the manifest, the policies and the raw logs stay: the rest is derived
            if not (f == "manifest.json" or f.startswith("vsim-logs/") or f.startswith("policies/")):
                os.remove(os.path.join(run, f))
        return d, run

    def test_report_re_derives_the_committed_figures_byte_for_byte(self):
        d, run = self.derived_copy()
        values = vsim.report_spec(run)
        self.assertEqual(files(run), files(SAMPLE_RUN))
        for f in files(SAMPLE_RUN):
            self.assertEqual(read(os.path.join(run, f)), read(os.path.join(SAMPLE_RUN, f)), f)
        results = os.path.join(d, "results.json")
        vsim.write_results(results, run, values)
        self.assertEqual(read(results), read(SAMPLE_RESULTS),
                         "the sample's results.json is not what the report writes from its raw logs")

    def test_the_figures_are_the_logs(self):
        # a raw log that says something else gives other figures (the report reads the logs, not a cache)
        d, run = self.derived_copy()
        log = os.path.join(run, "vsim-logs", "onoff-heldout-ladder", "00-00-on.jsonl")
        with open(log) as f:
            lines = f.read().splitlines()
        summary = json.loads(lines[-1])
        summary["stallCount"] += 5
        lines[-1] = json.dumps(summary)
        with open(log, "w") as f:
            f.write("\n".join(lines) + "\n")
        values = vsim.report_spec(run)
        committed = json.loads(read(os.path.join(SAMPLE_RUN, "report.json")))
        self.assertEqual(values["virtualOnOffHeldOut"]["ladder"]["on"]["stalls"],
                         committed["virtualOnOffHeldOut"]["ladder"]["on"]["stalls"] + 5)

    def test_held_out_figures_without_the_groups_the_split_crosses(self):
        # The sample trains on one Norway cut and holds out another: the group crosses, nothing is left.
        committed = json.loads(read(os.path.join(SAMPLE_RUN, "report.json")))
        self.assertIsNone(committed["virtualOnOffHeldOut"]["ladder"]["withoutCrossingGroups"])
        # Trained on a file of another group, nothing crosses: the figures without are the pooled ones.
        _, run = self.derived_copy()
        path = os.path.join(run, "manifest.json")
        with open(path) as f:
            m = json.load(f)
        m["collection"]["traces"]["train"] = ["pensieve/fcc/trace_7540_http---www.yahoo.com"]
        with open(path, "w") as f:
            json.dump(m, f)
        held = vsim.report_spec(run)["virtualOnOffHeldOut"]["ladder"]
        without = held["withoutCrossingGroups"]
        self.assertEqual(without["groups"], [])
        self.assertEqual((without["on"], without["off"], without["comparison"]),
                         (held["on"], held["off"], held["comparison"]))

    def test_sample_is_small_and_its_manifest_says_what_ran(self):
        self.assertLess(sum(os.path.getsize(os.path.join(SAMPLE, f)) for f in files(SAMPLE)), 450_000)
        with open(os.path.join(SAMPLE_RUN, "manifest.json")) as f:
            m = json.load(f)
        self.assertEqual(m["specFile"], "Tools/train/sample-vsim-onoff/spec.json")
        for key in ("commit", "worktreeClean", "hlsplay", "machine", "startedAt", "endedAt", "loadAverageAtStart",
                    "loadAverageAtEnd", "traceSha256", "ladders", "collection"):
            self.assertIn(key, m)
        self.assertEqual(len(m["hlsplay"]["sha256"]), 64)
        self.assertEqual(len(m["sessions"]), 3 * 2 * 2)  # 3 runs × 1 trace × 2 offsets × on/off
        for s in m["sessions"]:
            self.assertEqual(s["exitStatus"], 0, s)
            self.assertEqual(s["command"][1], "simulate")
            self.assertTrue(s["command"][s["command"].index("--log") + 1].endswith(s["log"]))

    def test_runner_reproduces_the_sample_from_scratch(self):
        try:
            binary = vsim.evaluate.tools.find_binary("hlsplay", BUILD)
        except vsim.evaluate.tools.ToolError as e:
            self.skipTest(f"{e} (Tools/test.sh builds it first)")
        out = temp_dir(self, "vsim-rerun-")
        work = os.path.join(vsim.evaluate.LADDER_CACHE, "stall-v2")  # the 248 s ladder, built once
        m = vsim.run_spec(SAMPLE_SPEC, out, os.path.dirname(binary), 2, work)
        with open(os.path.join(SAMPLE_RUN, "manifest.json")) as f:
            committed = json.load(f)
        self.assertEqual(m["traceSha256"], committed["traceSha256"], "the sample's traces changed")
        self.assertEqual(m["ladders"]["ladder"]["masterSha256"], committed["ladders"]["ladder"]["masterSha256"])
        vsim.report_spec(out)

        def figures(path):
            # every figure; the run's own commit, times and binary (the keys' "run") are this run's
            report = json.loads(read(path))
            runs = [report["virtualOnOffTuning"].pop("run")]
            runs += [v.pop("run") for v in report["virtualOnOffHeldOut"].values()]
            return report, runs
        derived, runs = figures(os.path.join(out, "report.json"))
        self.assertEqual(derived, figures(os.path.join(SAMPLE_RUN, "report.json"))[0])
        self.assertEqual({(r["commit"], r["startedAt"], r["hlsplaySha256"]) for r in runs},
                         {(m["commit"], m["startedAt"], m["hlsplay"]["sha256"])})


class PublishedTests(unittest.TestCase):
    def test_published_spec_declares_what_onoff_start_gate_ran(self):
        old = at_pre_spec_commit("Tools/train/onoff-start-gate.sh")
        spec, coll = vsim.load_onoff_spec(PUBLISHED_SPEC)
        pairs = re.search(r"for pair in ([0-9.: ]+); do", old).group(1).split()
        policies = {f"p{e}": {"preloadEnterRisk": float(e), "preloadExitRisk": float(x)}
                    for e, x in (p.split(":") for p in pairs)}
        self.assertEqual(spec["policies"], policies)
        enters = re.search(r"for enter in ([0-9. ]+); do", old).group(1).split()
        ladders = re.search(r"for ladder in ([a-z -]+); do", old).group(1).split()
        tuning = {(f"train-{lad}-p{e}", "train", lad, f"p{e}") for lad in ladders for e in enters}
        held = {(f"heldout-{lad}", "heldout", lad, None) for lad in ladders}
        self.assertEqual({(r["tag"], r["traces"], r["ladder"], r.get("policy")) for r in spec["runs"]}, tuning | held)
        self.assertEqual(set(spec["ladders"]), set(ladders))
        self.assertEqual(len(re.findall(r"vsim.py\" onoff .*--offsets 16", old)), 2)
        self.assertEqual(spec["offsetsPerTrace"], 16)
        self.assertNotIn("traces", spec)  # the collection's split, not a list of its own
        self.assertNotIn("sessionMediaSeconds", spec)
        self.assertEqual(spec["collection"], "Tools/train/specs/stall-v2.json")
        self.assertEqual(spec["model"], "models/stall-logistic-v2.json")

    def test_the_report_writes_every_field_the_published_keys_hold(self):
        published = results_file.load(RESULTS_V2)
        derived = json.loads(read(os.path.join(SAMPLE_RUN, "report.json")))
        self.assertEqual(set(derived["virtualOnOffTuning"]), set(published["virtualOnOffTuning"]))
        for row in published["virtualOnOffTuning"]["rows"]:
            self.assertLessEqual(set(row), set(derived["virtualOnOffTuning"]["rows"][0]))
            self.assertEqual(set(row["on"]), set(derived["virtualOnOffTuning"]["rows"][0]["on"]))
        for ladder, value in published["virtualOnOffHeldOut"].items():
            self.assertLessEqual(set(value), set(derived["virtualOnOffHeldOut"]["ladder"]), ladder)
            self.assertEqual(set(value["verdict"]), set(derived["virtualOnOffHeldOut"]["ladder"]["verdict"]))
        # the published spec's result keys are these two, with the published kinds
        spec, _ = vsim.load_onoff_spec(PUBLISHED_SPEC)
        self.assertEqual(sorted(spec["results"]), sorted(KEYS))
        self.assertEqual(spec["results"]["virtualOnOffTuning"]["note"], published["virtualOnOffTuning"]["note"])

    def test_results_v2_names_the_report_step_as_their_writer(self):
        prov = results_file.load(RESULTS_V2)["provenance"]
        for key in KEYS:
            self.assertFalse(prov[key]["handMerged"], key)
            self.assertTrue(prov[key]["writer"].startswith(vsim.REPORT_WRITER), key)
            self.assertIn("Tools/train/specs/vsim-onoff-start-gate.json", prov[key]["writer"])
            self.assertNotIn("predate", prov[key]["note"])
        # a run of the whole spec, from a clean tree, at the commit the keys name
        spec, coll = vsim.load_onoff_spec(PUBLISHED_SPEC)
        expected = sum(len(coll["traces"][r["traces"]]) * spec["offsetsPerTrace"] * 2 for r in spec["runs"])
        published = results_file.load(RESULTS_V2)
        run = published["virtualOnOffTuning"]["run"]
        self.assertEqual((run["sessions"], run["worktreeClean"]), (expected, True))
        for ladder, value in published["virtualOnOffHeldOut"].items():
            self.assertEqual(value["run"]["commit"], run["commit"], ladder)
            self.assertIn(run["commit"], prov["virtualOnOffHeldOut"]["note"])

    def test_the_docs_block_is_the_published_keys(self):
        doc = os.path.join(REPO, "docs", "stall-prediction.md")
        self.assertEqual(vsim.docs(RESULTS_V2, doc, write=False), 0,
                         "docs/stall-prediction.md's vsim block is not what results-v2.json gives")
        with open(RESULTS_V2) as f:
            results = json.load(f)
        results["virtualOnOffHeldOut"]["ladder"]["on"]["stalls"] += 1
        other = os.path.join(temp_dir(self, "vsim-docs-"), "results.json")
        with open(other, "w") as f:
            json.dump(results, f)
        self.assertEqual(vsim.docs(other, doc, write=False), 1)


if __name__ == "__main__":
    unittest.main()
