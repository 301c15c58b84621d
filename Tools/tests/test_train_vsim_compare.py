"""Tests of the real-against-virtual comparison's table (Tools/train/vsim.py compare_table, ending):
a session that a network error stopped is compared like one that played to its end, and a
simulated session that ends in an error where the real one played on (or the reverse) counts as a
different ending even when the stall counts agree.

Run: python3 -B -m unittest Tools.tests.test_train_vsim_compare
"""
import os, sys, unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import support  # noqa: E402,F401  (puts Tools/train on the path)
import vsim  # noqa: E402


def real(controller, stalls, seconds, exit_reason="durationReached"):
    return dict(id=f"{controller}-{stalls}-{seconds}", controller=controller, stallCount=stalls, stallSeconds=seconds,
                averageBitrateBps=1_000_000, timeToFirstFrameSeconds=0.5, exitReason=exit_reason, loadAverage1mStart=0.2)


def simulated(stalls, seconds, exit_reason="durationReached"):
    return dict(stallCount=stalls, stallSeconds=seconds, averageBitrateBps=1_000_000, timeToFirstFrameSeconds=0.5,
                exitReason=exit_reason)


class CompareTableTests(unittest.TestCase):
    def test_an_error_on_one_side_only_is_a_different_ending_even_with_the_same_stall_count(self):
        pairs = [(real("off", 1, 50.6), simulated(1, 8.2, "error")),      # the simulator gave up, the real one played on
                 (real("off", 0, 0.0), simulated(0, 0.0)),
                 (real("on", 1, 8.5, "error"), simulated(1, 8.5, "error")),  # both stopped by the trickle rule
                 (real("on", 2, 3.0), simulated(1, 2.0))]
        table = vsim.compare_table(pairs)
        self.assertEqual(list(table), ["off", "on", "all"])
        self.assertEqual((table["off"]["sameStallCount"], table["off"]["sameEnding"]), (2, 1))
        self.assertEqual((table["on"]["sameStallCount"], table["on"]["sameEnding"]), (1, 2))
        self.assertEqual((table["all"]["sameStallCount"], table["all"]["sameEnding"]), (3, 3))
        self.assertEqual(table["all"]["endedInError"], dict(real=1, simulated=2))
        self.assertEqual(table["all"]["real"]["stallSeconds"], 62.1)
        self.assertEqual(table["all"]["simulated"]["stallSeconds"], 18.7)
        self.assertEqual(table["off"]["meanAbsStallSecondsDifference"], 21.2)

    def test_ending_reads_the_exit_reason(self):
        self.assertEqual(vsim.ending(dict(exitReason="error")), "error")
        for reason in ("completed", "durationReached", None):
            self.assertEqual(vsim.ending(dict(exitReason=reason)), "played")


if __name__ == "__main__":
    unittest.main()
