"""Tools/characterize/fault-matrix-compare.py: two fault-matrix tables compared case by case (the
outcome and exit status; the kinds of log evidence, numbers left out)."""
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import support  # noqa: E402

SCRIPT = os.path.join(support.TOOLS, "characterize", "fault-matrix-compare.py")
HEAD = ("<!-- fault-matrix:begin -->\n2 cases\n\n### VOD\n\n"
        "| when | fault | outcome (exit) | fault at | time to recovery / error | wall | log evidence | test |\n"
        "|---|---|---|---|---|---|---|---|\n")
ROW_404 = ("| startup: multivariant playlist | 404 | fatal (network) (69) | 0.1 s | error after 0.0 s | 0.7 s | "
           "failed: multivariant-playlist httpStatus 404 | ✓ |\n")


def row_500(outcome, delay):
    return (f"| startup: multivariant playlist | 500 | {outcome} | 0.0 s | recovered after 0.7 s | 9.3 s | "
            f"failed: multivariant-playlist httpStatus 500<br>request.retry: httpStatus after {delay} s | ✓ |\n")


class CompareTests(unittest.TestCase):
    def compare(self, before, after):
        d = support.temp_dir(self, "fault-matrix-compare-")
        paths = []
        for name, rows in (("before.md", before), ("after.md", after)):
            paths.append(os.path.join(d, name))
            with open(paths[-1], "w") as f:
                f.write(HEAD + rows + "<!-- fault-matrix:end -->\n")
        return subprocess.run([sys.executable, "-B", SCRIPT, *paths], capture_output=True, text=True)

    def test_new_timings_are_the_same_case(self):
        p = self.compare(ROW_404 + row_500("recovered (durationReached) (0)", 0.5),
                         ROW_404 + row_500("recovered (durationReached) (0)", 1.5))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("same outcome and exit status in 2, same kinds of log evidence in 2", p.stdout)

    def test_another_outcome_fails_and_is_named(self):
        p = self.compare(ROW_404 + row_500("recovered (durationReached) (0)", 0.5),
                         ROW_404 + row_500("fatal (network) (69)", 0.5))
        self.assertEqual(p.returncode, 1)
        self.assertIn("outcome: VOD | startup: multivariant playlist | 500: recovered (durationReached) (0) → "
                      "fatal (network) (69)", p.stdout)

    def test_a_case_in_one_table_only_fails(self):
        p = self.compare(ROW_404 + row_500("recovered (durationReached) (0)", 0.5), ROW_404)
        self.assertEqual(p.returncode, 1)
        self.assertIn("only before: VOD | startup: multivariant playlist | 500", p.stdout)


if __name__ == "__main__":
    unittest.main()
