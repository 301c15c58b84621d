"""Tests of the extra evaluation traces (Tools/abr/extra_traces.py, Tools/abr/extra-traces.json).

The source repository is not on a CI machine, so the rule itself is checked against a small git
repository made here with the same folder layout; the committed list is checked for what it must
be without the source (names, no overlap with the shared folder or the tuning side).

Run: python3 -B -m unittest Tools.tests.test_abr_extra_traces
"""
import hashlib, json, os, subprocess, sys, tempfile, unittest
from unittest import mock

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from support import ABR  # noqa: E402
import evaluate  # noqa: E402
import extra_traces  # noqa: E402


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


class RuleOnARepository(unittest.TestCase):
    """derive and get against a git repository with the source's layout, made here."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        root = self.dir.name
        self.src, self.shared, self.extra = (os.path.join(root, d) for d in ("src", "shared", "extra"))
        for folder, shared, _ in extra_traces.RULE:
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
        for name, value in (("COMMIT", commit), ("SHARED", self.shared), ("EXTRA_ROOT", self.extra),
                            ("LIST_FILE", self.list_file)):
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
