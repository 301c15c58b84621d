"""Tests of Tools/bench/fleet.py's split of a load into --sessions runs and of the merge of their results
(pure; the runs themselves are sessions-bench.py runs, measured in docs/scale.md).

Run: python3 -B -m unittest discover -s Tools/tests -p test_fleet.py
"""
import importlib.util, os, sys, unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("fleet", os.path.join(HERE, "..", "bench", "fleet.py"))
fleet = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fleet)


class FleetTests(unittest.TestCase):
    def test_split_is_even_and_complete(self):
        self.assertEqual(fleet.split_sessions(10, 3), [4, 3, 3])
        self.assertEqual(fleet.split_sessions(10000, 33), [304] * 1 + [303] * 32)
        for total, tasks in ((1, 1), (7, 7), (200, 2), (10001, 40)):
            parts = fleet.split_sessions(total, tasks)
            self.assertEqual((sum(parts), len(parts)), (total, tasks))
            self.assertLessEqual(max(parts) - min(parts), 1)

    def test_split_refuses_empty_runs(self):
        with self.assertRaises(ValueError):
            fleet.split_sessions(2, 3)
        with self.assertRaises(ValueError):
            fleet.split_sessions(5, 0)

    def test_merge_sums_and_weighs_cost_by_media_seconds(self):
        runs = [{"sessions": 100, "stalls": 2, "sessionsWithStalls": 1, "playedSeconds": 3000.0,
                 "clientCPUSeconds": 30.0, "peakRSSBytes": 700 << 20, "clientCores": 0.5, "originCPUSeconds": 4.0,
                 "exitReasons": {"durationReached": 100}, "host": "a"},
                {"sessions": 50, "stalls": 0, "sessionsWithStalls": 0, "playedSeconds": 1000.0,
                 "clientCPUSeconds": 5.0, "peakRSSBytes": 350 << 20, "clientCores": 0.25, "originCPUSeconds": 1.0,
                 "exitReasons": {"durationReached": 49, "error": 1}, "host": "b"}]
        t = fleet.merge_runs(runs)
        self.assertEqual((t["runs"], t["sessions"], t["stalls"], t["sessionsWithStalls"]), (2, 150, 2, 1))
        self.assertEqual(t["exitReasons"], {"durationReached": 149, "error": 1})
        self.assertAlmostEqual(t["cpuSecondsPerMediaSecondPerSession"], 35.0 / 4000.0)  # not the mean of 0.01 and 0.005
        self.assertEqual(t["rssPerSessionBytes"], (1050 << 20) // 150)
        self.assertEqual(t["hosts"], ["a", "b"])


if __name__ == "__main__":
    unittest.main()
