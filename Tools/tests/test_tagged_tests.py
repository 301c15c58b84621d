"""Tools/tagged-tests.py: the `--skip` lines for every test declaring any of the tags given, from one
listing of the test binary. The binary here is a stand-in that writes a fixed ABI v0 `--list-tests`
event stream (the records Swift Testing writes: `kind` "test", `payload.id`, `payload._tags`) and counts
its runs, so the script's reading of tags, its order, escaping and errors are checked without a Swift
build; `Tools/test.sh --fast` runs it on the real binary."""
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import support  # noqa: E402

SCRIPT = os.path.join(support.TOOLS, "tagged-tests.py")
# (id, tags) of the stand-in's tests: a suite, a parameterized test with regex characters in its ID,
# one test with both tags, and one with none.
TESTS = (
    ("HLSPlayerTests.FaultMatrixTests", [".realTime"]),
    ("HLSPlayerTests.ShapingTests/rate(_:)", [".realTime"]),
    ("HLSPlayerTests.ShellParitySweepTests", [".long"]),
    ("HLSPlayerTests.LiveClockTests", [".realTime", ".long"]),
    ("HLSCoreTests.PlaylistParserTests", []),
)
# The stand-in test binary: writes TESTS (and a non-test record) to --event-stream-output-path and
# appends a line to the file named by $TAGGED_TESTS_RUNS for each run.
STAND_IN = """#!{python}
import json, os, sys
args = sys.argv[1:]
assert args[:3] == ["--testing-library", "swift-testing", "--list-tests"], args
with open(os.environ["TAGGED_TESTS_RUNS"], "a") as f:
    f.write("run\\n")
with open(args[args.index("--event-stream-output-path") + 1], "w") as f:
    f.write(json.dumps({{"kind": "event", "payload": {{"kind": "runStarted"}}, "version": 0}}) + "\\n")
    for test_id, tags in {tests!r}:
        f.write(json.dumps({{"kind": "test", "payload": {{"id": test_id, "_tags": tags}}, "version": 0}}) + "\\n")
"""


class TaggedTestsTests(unittest.TestCase):
    def setUp(self):
        d = support.temp_dir(self, "tagged-tests-")
        self.binary = os.path.join(d, "hlsplayPackageTests.xctest")
        with open(self.binary, "w") as f:
            f.write(STAND_IN.format(python=sys.executable, tests=TESTS))
        os.chmod(self.binary, 0o755)
        self.runs = os.path.join(d, "runs")

    def run_script(self, *args):
        env = dict(os.environ, TAGGED_TESTS_RUNS=self.runs)
        return subprocess.run([sys.executable, "-B", SCRIPT, *args], capture_output=True, text=True, env=env,
                              timeout=60)

    def listings(self):
        if not os.path.exists(self.runs):
            return 0
        with open(self.runs) as f:
            return len(f.read().splitlines())

    def test_one_tag_skips_its_tests_sorted_and_escaped(self):
        p = self.run_script("realTime", "--binary", self.binary)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.splitlines(), [
            "--skip", "^HLSPlayerTests\\.FaultMatrixTests$",
            "--skip", "^HLSPlayerTests\\.LiveClockTests$",
            "--skip", "^HLSPlayerTests\\.ShapingTests/rate\\(_:\\)$",
        ])

    def test_several_tags_list_the_binary_once_and_name_each_test_once(self):
        p = self.run_script("realTime", "long", "--binary", self.binary)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.listings(), 1)
        # realTime's tests, then long's not already named: LiveClockTests (both tags) once.
        self.assertEqual(p.stdout.splitlines()[1::2], [
            "^HLSPlayerTests\\.FaultMatrixTests$", "^HLSPlayerTests\\.LiveClockTests$",
            "^HLSPlayerTests\\.ShapingTests/rate\\(_:\\)$", "^HLSPlayerTests\\.ShellParitySweepTests$",
        ])
        self.assertEqual(set(p.stdout.splitlines()[0::2]), {"--skip"})

    def test_the_old_positional_binary_still_works(self):
        p = self.run_script("long", self.binary)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.splitlines(), [
            "--skip", "^HLSPlayerTests\\.LiveClockTests$",
            "--skip", "^HLSPlayerTests\\.ShellParitySweepTests$",
        ])

    def test_a_tag_no_test_declares_fails_and_is_named(self):
        p = self.run_script("realTime", "gone", "--binary", self.binary)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stdout, "")  # nothing half-listed for swift test to run on
        self.assertIn("declares the tag .gone ", p.stderr)
        self.assertNotIn(".realTime", p.stderr)

    def test_a_missing_binary_fails_with_a_message(self):
        p = self.run_script("realTime", "--binary", self.binary + ".missing")
        self.assertEqual(p.returncode, 1)
        self.assertIn("no test binary at", p.stderr)
        self.assertEqual(self.listings(), 0)

    def test_no_tag_or_a_bad_tag_name_is_a_usage_error(self):
        for args in ((), ("--binary", self.binary), ("real-time", "--binary", self.binary)):
            p = self.run_script(*args)
            self.assertEqual(p.returncode, 2, args)
            self.assertIn("usage: tagged-tests.py TAG [TAG ...]", p.stderr)


if __name__ == "__main__":
    unittest.main()
