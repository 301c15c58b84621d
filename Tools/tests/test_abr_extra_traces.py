"""Tests of the extra traces (Tools/abr/extra_traces.py; Tools/abr/extra-traces.json, the evaluation list,
and Tools/abr/extra-tuning-traces.json, the tuning list).

The source repository is not on a CI machine, so the rule itself is checked against a small git
repository made here with the same folder layout; the committed list is checked for what it must
be without the source (names, no overlap with the shared folder or the tuning side).

Run: python3 -B -m unittest Tools.tests.test_abr_extra_traces
"""
import hashlib, json, os, subprocess, sys, tempfile, unittest
from unittest import mock

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from support import ABR, REPO  # noqa: E402
import evaluate  # noqa: E402
import extra_traces  # noqa: E402
sys.path.insert(0, os.path.join(REPO, "Tools", "train"))
import recording_groups  # noqa: E402


def git(repo, *args):
    subprocess.run(["git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"] + list(args), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class CommittedList(unittest.TestCase):
    def setUp(self):
        self.listed = extra_traces.load()

    def test_names_are_extra_and_not_in_the_shared_folder(self):
        self.assertEqual(self.listed["commit"], extra_traces.COMMIT)
        names = [t["name"] for t in self.listed["traces"]]
        self.assertEqual(len(names), len(set(names)))
        for t in self.listed["traces"]:
            self.assertTrue(t["name"].startswith("extra/sabre/"), t["name"])
            shared = os.path.join(extra_traces.SHARED, t["name"][len("extra/"):])
            self.assertFalse(os.path.exists(shared), f"{t['name']} is in the shared folder")
            self.assertRegex(t["sha256"], "^[0-9a-f]{64}$")

    def test_none_is_on_the_tuning_side(self):
        with open(os.path.join(ABR, "trace-split.json")) as f:
            tuning = set(json.load(f)["tuning"])
        self.assertFalse({t["name"][len("extra/"):] for t in self.listed["traces"]} & tuning)

    def test_trace_path_resolves_extra_names_under_the_extra_root(self):
        name = self.listed["traces"][0]["name"]
        self.assertEqual(evaluate.trace_path(name), os.path.join(extra_traces.EXTRA_ROOT, name[len("extra/"):]))
        self.assertEqual(evaluate.trace_path("pensieve/fcc/x"), os.path.join(evaluate.TRACES_ROOT, "pensieve/fcc/x"))


class CommittedTuningList(unittest.TestCase):
    """The tuning list: recordings of the tuning side's groups only, none in the shared folder."""

    def setUp(self):
        self.listed = extra_traces.load(extra_traces.TUNING_LIST_FILE)
        with open(os.path.join(ABR, "trace-split.json")) as f:
            self.split = json.load(f)

    def test_every_trace_is_of_a_tuning_group_and_of_no_evaluation_group(self):
        self.assertEqual(self.listed["commit"], extra_traces.COMMIT)
        self.assertEqual(len(self.listed["traces"]), 80)
        tuning_groups = {recording_groups.group_of(t) for t in self.split["tuning"]}
        evaluation = self.split["evaluation"] + extra_traces.names(extra_traces.LIST_FILE)
        evaluation_groups = {recording_groups.group_of(t) for t in evaluation}
        for t in self.listed["traces"]:
            group = recording_groups.group_of(t["name"])
            self.assertEqual(group, "norway-hsdpa-3g", t["name"])
            self.assertIn(group, tuning_groups)
            self.assertNotIn(group, evaluation_groups)
            self.assertFalse(os.path.exists(os.path.join(extra_traces.SHARED, t["name"][len("extra/"):])))

    def test_each_list_knows_its_side(self):
        self.assertEqual(extra_traces.side_of("Tools/abr/extra-traces.json"), "evaluation")
        self.assertEqual(extra_traces.side_of("Tools/abr/extra-tuning-traces.json"), "tuning")
        self.assertIsNone(extra_traces.side_of("Tools/abr/trace-split.json"))


class SpecSides(unittest.TestCase):
    """A spec never takes an extra list of the other side than its split side."""

    def spec(self, traces):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        path = os.path.join(d.name, "s.json")
        with open(os.path.join(ABR, "specs", "abr-virtual-tuning.json")) as f:
            spec = json.load(f)
        spec["traces"] = traces
        with open(path, "w") as f:
            json.dump(spec, f)
        return path

    def test_mixed_sides_are_refused(self):
        for side, extra in (("tuning", "Tools/abr/extra-traces.json"),
                            ("evaluation", "Tools/abr/extra-tuning-traces.json")):
            path = self.spec({"split": "Tools/abr/trace-split.json", "side": side, "extra": extra})
            with self.assertRaisesRegex(SystemExit, "holds .* traces, the spec's split side is"):
                evaluate.load_spec(path)
        with self.assertRaisesRegex(SystemExit, "is not one of"):
            evaluate.load_spec(self.spec({"extra": "Tools/abr/trace-split.json"}))

    def test_an_extra_list_alone_is_the_spec_s_traces(self):
        spec = evaluate.load_spec(self.spec({"extra": "Tools/abr/extra-tuning-traces.json"}))
        self.assertEqual(evaluate.spec_traces(spec), extra_traces.names(extra_traces.TUNING_LIST_FILE))
        spec = evaluate.load_spec(os.path.join(ABR, "specs", "abr-virtual-tuning-norway.json"))
        traces = evaluate.spec_traces(spec)
        self.assertEqual(len(traces), 29 + 80)
        self.assertEqual(len(set(traces)), len(traces))


class RuleOnARepository(unittest.TestCase):
    """derive and get against a git repository with the source's layout, made here."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        root = self.dir.name
        self.src, self.shared, self.extra = (os.path.join(root, d) for d in ("src", "shared", "extra"))
        for folder, shared, _ in extra_traces.RULE + extra_traces.TUNING_RULE:
            os.makedirs(os.path.join(self.src, folder))
            os.makedirs(os.path.join(self.shared, shared))
            for i in range(12):
                with open(os.path.join(self.src, folder, f"t{i:02d}.json"), "w") as f:
                    f.write(f"[{i}]\n")
            # the shared folder holds t00 and t03 of every source folder
            for i in (0, 3):
                with open(os.path.join(self.shared, shared, f"t{i:02d}.json"), "w") as f:
                    f.write(f"[{i}]\n")
        git(self.src, "init", "-q")
        git(self.src, "add", ".")
        git(self.src, "commit", "-q", "-m", "traces")
        commit = subprocess.run(["git", "-C", self.src, "rev-parse", "HEAD"], check=True,
                                stdout=subprocess.PIPE, text=True).stdout.strip()
        self.list_file = os.path.join(root, "extra-traces.json")
        self.tuning_list_file = os.path.join(root, "extra-tuning-traces.json")
        for name, value in (("COMMIT", commit), ("SHARED", self.shared), ("EXTRA_ROOT", self.extra),
                            ("LIST_FILE", self.list_file), ("TUNING_LIST_FILE", self.tuning_list_file)):
            patcher = mock.patch.object(extra_traces, name, value)
            patcher.start()
            self.addCleanup(patcher.stop)

    def test_rule_takes_unshared_files_only(self):
        listed = extra_traces.derive(self.src)
        by_folder = {}
        for t in listed["traces"]:
            by_folder.setdefault(os.path.dirname(t["path"]), []).append(os.path.basename(t["path"]))
        unshared = [f"t{i:02d}.json" for i in range(12) if i not in (0, 3)]
        self.assertEqual(by_folder["example/mmsys18/4Glogs"], unshared[::5])
        self.assertEqual(by_folder["example/mmsys18/sd_fs"], unshared[:3])
        self.assertEqual(by_folder["example/mmsys18/hd_fs"], unshared[:3])
        t = listed["traces"][0]
        self.assertEqual(t["sha256"], hashlib.sha256(b"[1]\n").hexdigest())

    def test_tuning_rule_takes_every_unshared_3g_log(self):
        listed = extra_traces.derive(self.src, extra_traces.TUNING_RULE, extra_traces.TUNING_RULE_TEXT)
        self.assertEqual([os.path.basename(t["path"]) for t in listed["traces"]],
                         [f"t{i:02d}.json" for i in range(12) if i not in (0, 3)])
        self.assertTrue(all(t["name"].startswith("extra/sabre/3G_hsdpa_norway/") for t in listed["traces"]))
        self.assertEqual(listed["rule"], extra_traces.TUNING_RULE_TEXT)

    def test_main_writes_and_checks_both_lists(self):
        with mock.patch("sys.stderr"):
            self.assertEqual(extra_traces.main(["derive", "--source", self.src]), 1)  # neither list written
            self.assertEqual(extra_traces.main(["derive", "--source", self.src, "--write"]), 0)
            self.assertEqual(extra_traces.main(["derive", "--source", self.src]), 0)
            self.assertEqual(len(extra_traces.load(self.tuning_list_file)["traces"]), 10)
            with open(self.tuning_list_file, "a") as f:
                f.write(" ")
            self.assertEqual(extra_traces.main(["derive", "--source", self.src]), 1)
            self.assertEqual(extra_traces.main(["get", "--source", self.src]), 0)
        for list_file in (self.list_file, self.tuning_list_file):
            for t in extra_traces.load(list_file)["traces"]:
                self.assertTrue(os.path.isfile(extra_traces.path_of(t["name"])), t["name"])

    def test_get_writes_the_files_and_refuses_a_changed_one(self):
        listed = extra_traces.derive(self.src)
        with open(self.list_file, "w") as f:
            json.dump(listed, f)
        extra_traces.get(self.src)
        for t in listed["traces"]:
            with open(extra_traces.path_of(t["name"]), "rb") as f:
                self.assertEqual(hashlib.sha256(f.read()).hexdigest(), t["sha256"])
        listed["traces"][0]["sha256"] = "0" * 64
        with open(self.list_file, "w") as f:
            json.dump(listed, f)
        with self.assertRaisesRegex(SystemExit, "sha256 differs"):
            extra_traces.get(self.src)


if __name__ == "__main__":
    unittest.main()
