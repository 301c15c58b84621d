"""Tools/train/doc_figures.py: the paired figures docs/stall-prediction.md computes from the stored pairs
and sessions of results-v2.json. Each comparison's 95 % interval, as the script prints it, is quoted in the
doc (an interval of a difference the doc states as "sooner" or "fewer" may be quoted with both ends'
signs turned), so a changed results file or a changed statistic shows here.

Run: python3 -B -m unittest discover -s Tools/tests
"""
import json, os, sys, unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import support  # noqa: E402, F401
sys.path.insert(0, os.path.join(support.REPO, "Tools", "train"))
import doc_figures  # noqa: E402

DOC = os.path.join(support.REPO, "docs", "stall-prediction.md")


def shown(x: float, digits: int) -> str:
    s = f"{x:.{digits}f}"
    return "0." + "0" * digits if s.strip("-0.") == "" else s.replace("-", "\u2212")


class DocFiguresTests(unittest.TestCase):
    def test_every_interval_the_script_derives_is_the_one_the_doc_quotes(self):
        with open(doc_figures.RESULTS) as f:
            results = json.load(f)
        with open(DOC, encoding="utf-8") as f:
            doc = f.read()
        quoted = 0
        for label, c, unit, digits in doc_figures.figures(results):
            if "averageBitrateBps" in label:
                continue  # bit/s figures are quoted as counts and p values, not as an interval
            lo, hi = c["meanDifferenceCI"]["low"], c["meanDifferenceCI"]["high"]
            forms = {f"{shown(lo, digits)} … {shown(hi, digits)}", f"{shown(-hi, digits)} … {shown(-lo, digits)}"}
            self.assertTrue(any(form in doc for form in forms), f"{label}: none of {sorted(forms)} in the doc")
            quoted += 1
        self.assertEqual(quoted, 10)
        self.assertIn(f"{doc_figures.largest_auc_gap(results):.3f}", doc)


if __name__ == "__main__":
    unittest.main()
