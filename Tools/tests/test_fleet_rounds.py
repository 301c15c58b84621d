"""Tools/bench/fleet_rounds.py's report and docs steps over made-up fleet.json files (the runs themselves are
fleet.py runs, measured in docs/scale.md): every run in the table, the cost per session paired by round,
two workers minus one, and a docs block that `check` accepts until one figure changes.

Run: python3 -B -m unittest discover -s Tools/tests -p test_fleet_rounds.py
"""
import json, os, sys, tempfile, unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "bench"))
import fleet_rounds  # noqa: E402

# ms of client CPU per media second per session, by round and workers
COST_MS = {(1, 1): 4.0, (1, 2): 4.5, (2, 1): 4.2, (2, 2): 4.4, (3, 1): 4.1, (3, 2): 4.9}


def made_up_run(root):
    prov = {"commit": "0" * 40, "worktreeClean": True,
            "binaries": {"hlsplay": {"path": "/x/hlsplay", "sha256": "ab" * 32}}}
    with open(os.path.join(root, "manifest.json"), "w") as f:
        json.dump({"rounds": 3, "perWorker": 100, "mediaSeconds": 30, "ramp": 10, "variant": 3, "bin": "/x",
                   "startedAt": "2026-12-07T16:30:00Z", "endedAt": "2026-12-07T16:40:00Z",
                   "loadAverageAtStart": [0.1, 0.1, 0.1], "loadAverageAtEnd": [0.9, 0.5, 0.2],
                   "provenance": prov}, f)
    for (k, w), ms in COST_MS.items():
        d = fleet_rounds.run_dir(root, k, w)
        os.makedirs(d)
        with open(os.path.join(d, "fleet.json"), "w") as f:
            json.dump({"total": {"sessions": 100 * w, "stalls": 0, "cpuSecondsPerMediaSecondPerSession": ms / 1000,
                                 "rssPerSessionBytes": 7 << 20, "clientCores": 0.2 * w},
                       "loadAverageAtStart": [0.2 * k, 0, 0]}, f)


class FleetRoundsTests(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        made_up_run(self.tmp.name)

    def test_report_lists_every_run_and_pairs_the_rounds(self):
        text = fleet_rounds.report(self.tmp.name)
        rows = [line for line in text.splitlines() if line.startswith("| ") and line[2].isdigit()]
        self.assertEqual(len(rows), 6)
        self.assertIn("| 3 | 2 | 200 | 0 | 4.90 ms | 0.40 | 7.0 MB | 0.60 |", rows)
        # two − one: +0.5, +0.2, +0.8 ms; mean +0.50; higher in all 3 rounds (p = 0.25 is the least 3 pairs give)
        self.assertIn("4.10 ms with one worker, 4.60 ms with two; mean difference (two − one) 0.50 ms", text)
        self.assertIn("two higher in 3 rounds, lower in 0, equal in 0", text)
        self.assertIn("sign test p = 0.25", text)
        self.assertIn("commit 0000000, hlsplay sha256 abababababab", text)

    def test_docs_block_is_checked_against_the_runs(self):
        doc = os.path.join(self.tmp.name, "doc.md")
        begin, end = fleet_rounds.hlsplay_tools.block_markers(fleet_rounds.TOOL, fleet_rounds.BLOCK)
        with open(doc, "w") as f:
            f.write(f"# Scale\n\n{begin}\nold\n{end}\n\nafter\n")
        self.assertEqual(fleet_rounds.main(["docs", self.tmp.name, doc]), 0)
        self.assertEqual(fleet_rounds.main(["check", self.tmp.name, doc]), 0)
        with open(doc) as f:
            self.assertTrue(f.read().endswith(f"{end}\n\nafter\n"))
        path = os.path.join(fleet_rounds.run_dir(self.tmp.name, 2, 1), "fleet.json")
        with open(path) as f:
            fl = json.load(f)
        fl["total"]["cpuSecondsPerMediaSecondPerSession"] = 0.0043
        with open(path, "w") as f:
            json.dump(fl, f)
        self.assertEqual(fleet_rounds.main(["check", self.tmp.name, doc]), 1)


if __name__ == "__main__":
    unittest.main()
