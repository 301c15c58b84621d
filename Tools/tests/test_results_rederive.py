"""The published real runs' figures derived again from their raw logs (results/*.tar.xz, Tools/results/rederive.py):
the ABR blocks of docs/abr.md and the characterization report in docs/characterization.md come out byte for byte
from the archived logs, and a change to those logs is caught. The third on/off round's re-run: its held-out figures
(results-v2.json heldOutThirdRound) are derived again here; its comparison with hlsplay simulate simulates 192
sessions again (`rederive.py check held-out-third-round-rerun`), not run here.)

Run: python3 -B -m unittest Tools.tests.test_results_rederive
"""
import json, os, sys, tempfile, unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "results"))
import rederive  # noqa: E402


class RederiveTests(unittest.TestCase):
    def unpacked(self, name):
        tmp = tempfile.TemporaryDirectory(prefix=f"rederive-test-{name}.")
        self.addCleanup(tmp.cleanup)
        return rederive.unpack(name, tmp.name)

    def test_every_published_run_has_its_archive(self):
        for name in rederive.RUNS:
            self.assertTrue(os.path.exists(rederive.archive_path(name)), name)

    def test_abr_blocks_are_derived_again_from_the_archived_logs(self):
        runs = [name for name, run in rederive.RUNS.items() if run["kind"] == "abr"]
        self.assertIn("abr-real-predictor-mpc", runs)
        for name in runs:
            with self.subTest(run=name):
                self.assertIsNone(rederive.check_abr(name, self.unpacked(name), None))

    def test_abr_block_differs_when_the_logs_do(self):
        folder = self.unpacked("abr-real-predictor-mpc")
        path = os.path.join(folder, "manifest.json")
        with open(path) as fh:
            manifest = json.load(fh)
        manifest["sessions"][0]["loadAverageAtStart"][0] = 0.99  # the block's load-average range
        with open(path, "w") as fh:
            json.dump(manifest, fh)
        self.assertIsNotNone(rederive.check_abr("abr-real-predictor-mpc", folder, None))

    def test_fleet_block_is_derived_again_and_differs_when_a_run_does(self):
        self.assertIsNone(rederive.check_fleet("fleet-workers", self.unpacked("fleet-workers"), None))
        folder = self.unpacked("fleet-workers")
        path = os.path.join(folder, "round-3", "w2", "fleet.json")
        with open(path) as fh:
            fleet = json.load(fh)
        fleet["total"]["cpuSecondsPerMediaSecondPerSession"] += 0.001  # one run's cost, 1 ms more
        with open(path, "w") as fh:
            json.dump(fleet, fh)
        self.assertIsNotNone(rederive.check_fleet("fleet-workers", folder, None))

    def test_held_out_round_key_is_derived_again_and_differs_when_a_log_does(self):
        name = "held-out-third-round-rerun"
        self.assertIn("heldout", rederive.RUNS[name]["also"])
        self.assertIsNone(rederive.check_heldout(name, self.unpacked(name), None))
        folder = self.unpacked(name)
        with open(os.path.join(folder, "manifest.jsonl")) as fh:
            row = next(r for r in map(json.loads, fh) if r.get("controller") == "on")
        path = os.path.join(folder, row["log"])
        with open(path) as fh:
            lines = fh.readlines()
        # one sample's buffer a second lower: the scores, and so the figures, change
        at = next(i for i, line in enumerate(lines) if '"risk.sample"' in line and '"playing"' in line)
        rec = json.loads(lines[at])
        rec["features"]["bufferSeconds"] = max(0.0, rec["features"]["bufferSeconds"] - 1.0)
        lines[at] = json.dumps(rec) + "\n"
        with open(path, "w") as fh:
            fh.writelines(lines)
        self.assertIsNotNone(rederive.check_heldout(name, folder, None))

    def test_characterization_report_is_derived_again_from_the_archived_shards(self):
        self.assertIsNone(rederive.check_grid("characterization-grid", self.unpacked("characterization-grid"), None))

    def test_characterization_report_differs_when_a_session_is_missing(self):
        folder = self.unpacked("characterization-grid")
        path = os.path.join(folder, "s1", "sessions.jsonl")
        with open(path) as fh:
            lines = fh.readlines()
        with open(path, "w") as fh:
            fh.writelines(lines[1:])
        self.assertIsNotNone(rederive.check_grid("characterization-grid", folder, None))

    def test_an_archive_is_the_same_bytes_when_packed_again(self):
        folder = self.unpacked("characterization-grid")
        with tempfile.TemporaryDirectory() as out:
            saved = rederive.RESULTS
            rederive.RESULTS = out
            try:
                rederive.pack("characterization-grid", folder)
            finally:
                rederive.RESULTS = saved
            with open(os.path.join(out, "characterization-grid.tar.xz"), "rb") as a, \
                    open(rederive.archive_path("characterization-grid"), "rb") as b:
                self.assertEqual(a.read(), b.read())


if __name__ == "__main__":
    unittest.main()
