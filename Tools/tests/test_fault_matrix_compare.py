"""Tools/characterize/fault-matrix-compare.py: two fault-matrix tables compared case by case (the
outcome and exit status; the kinds of log evidence, numbers left out), their cells read by the
tables' column headings."""
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




def reordered(table, order):
    """TABLE's rows (header, separator and cases) with their cells in ORDER (indexes of the old cells)."""
    out = []
    for line in table.splitlines(keepends=True):
        if not line.startswith("|"):
            out.append(line)
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | " if not line.startswith("|---") else "|")]
        out.append("| " + " | ".join(cells[i] for i in order) + " |\n")
    return "".join(out)


class CompareTests(unittest.TestCase):
    def compare(self, before, after, after_order=None):
        """The comparison of two tables holding the rows BEFORE and AFTER (AFTER's columns in
        AFTER_ORDER when given)."""
        d = support.temp_dir(self, "fault-matrix-compare-")
        paths = []
        for name, rows, order in (("before.md", before, None), ("after.md", after, after_order)):
            paths.append(os.path.join(d, name))
            table = HEAD + rows
            with open(paths[-1], "w") as f:
                f.write((reordered(table, order) if order else table) + "<!-- fault-matrix:end -->\n")
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

    def test_columns_are_read_by_their_headings_wherever_they_stand(self):
        # The after table's columns reversed, the outcome and the evidence among them: the same cases,
        # and a changed outcome still found as the outcome.
        order = list(range(7, -1, -1))
        same = ROW_404 + row_500("recovered (durationReached) (0)", 0.5)
        p = self.compare(same, same, after_order=order)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("2 cases in both tables (2 before, 2 after): same outcome and exit status in 2, same kinds "
                      "of log evidence in 2", p.stdout)
        p = self.compare(same, ROW_404 + row_500("fatal (network) (69)", 0.5), after_order=order)
        self.assertEqual(p.returncode, 1)
        self.assertIn("outcome: VOD | startup: multivariant playlist | 500: recovered (durationReached) (0) → "
                      "fatal (network) (69)", p.stdout)

    def test_an_escaped_pipe_stays_in_its_cell(self):
        row = ROW_404.replace("httpStatus 404 |", "httpStatus 404 a \\| b |")
        self.assertIn("a \\| b", row)
        p = self.compare(row, row)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("same kinds of log evidence in 1", p.stdout)

    def test_a_table_without_a_column_it_compares_is_refused(self):
        # No "log evidence" heading: exit 2 naming it, not a comparison of whatever stands there.
        d = support.temp_dir(self, "fault-matrix-compare-")
        good, bad = os.path.join(d, "good.md"), os.path.join(d, "bad.md")
        with open(good, "w") as f:
            f.write(HEAD + ROW_404 + "<!-- fault-matrix:end -->\n")
        with open(bad, "w") as f:
            f.write((HEAD + ROW_404).replace("| log evidence |", "| evidence |") + "<!-- fault-matrix:end -->\n")
        p = subprocess.run([sys.executable, "-B", SCRIPT, good, bad], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2, p.stdout)
        self.assertIn("has no column 'log evidence'", p.stderr)
        self.assertEqual(p.stdout, "")

    def test_a_row_with_more_cells_than_its_header_is_refused(self):
        p = self.compare(ROW_404, ROW_404.replace("| ✓ |", "| ✓ | extra |"))
        self.assertEqual(p.returncode, 2, p.stdout)
        self.assertIn("has 9 cells, its table's header 8", p.stderr)


if __name__ == "__main__":
    unittest.main()
