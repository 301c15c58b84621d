"""The ABR evaluation's trace split (Tools/abr/split.py, Tools/abr/trace-split.json): the
committed split is the one its rule derives from the shared traces, no recording group is on
both sides, and no trace the shipped stall model was fitted on (nor one of its group) evaluates.

Run: python3 -B -m unittest discover -s Tools/tests
"""
import json, os, sys, tempfile, unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import support  # noqa: E402, F401  (puts Tools/abr on the path)
import split  # noqa: E402
import recording_groups  # noqa: E402  (split.py put Tools/train on the path)


@unittest.skipUnless(os.path.isdir(split.TRACES), f"the shared traces are not at {split.TRACES}")
class TraceSplitTests(unittest.TestCase):
    def setUp(self):
        with open(split.SPLIT_FILE) as f:
            self.committed = json.load(f)

    def test_committed_split_is_the_rules(self):
        self.assertEqual(self.committed, split.derive())

    def test_no_group_on_both_sides_and_every_trace_once(self):
        tuning, evaluation = self.committed["tuning"], self.committed["evaluation"]
        self.assertEqual(recording_groups.crossing_groups(tuning, evaluation), set())
        self.assertEqual(sorted(tuning + evaluation), split.all_traces())
        for t in tuning + evaluation:
            self.assertTrue(os.path.isfile(os.path.join(split.TRACES, t)), t)

    def test_the_models_training_traces_never_evaluate(self):
        seen = {recording_groups.group_of(t) for t in split.model_training_traces()}
        self.assertGreater(len(split.model_training_traces()), 10)  # the collection spec's training list
        for t in self.committed["evaluation"]:
            self.assertNotIn(recording_groups.group_of(t), seen, t)
        self.assertNotIn("sabre/example/network.json", self.committed["evaluation"])

    def test_a_new_trace_in_a_tuning_group_tunes(self):
        # The rule, not a list: a Norway recording added later lands on the tuning side.
        with tempfile.TemporaryDirectory() as root:
            for rel in ("pensieve/hsdpa_norway/norway_new_1", "pensieve/fcc/trace_1_new", "sabre/example/bbb.json"):
                os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
                open(os.path.join(root, rel), "w").close()
            derived = split.derive(root)
        self.assertEqual(derived["tuning"], ["pensieve/hsdpa_norway/norway_new_1"])
        self.assertEqual(derived["evaluation"], ["pensieve/fcc/trace_1_new"])


if __name__ == "__main__":
    unittest.main()
