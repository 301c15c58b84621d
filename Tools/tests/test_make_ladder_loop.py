"""Tests of Samples/make-ladder.sh --loop (the ABR evaluation's ladder recipe, docs/abr.md): a ladder
whose video is encoded for SECONDS and repeated by stream copy must still be real, continuous media —
every segment starts on a keyframe, the video's timestamps run on across each loop without a gap or a
step back, and the whole duration is there. Builds a small ladder (the four default rungs, 8 s from a
4 s loop) with the ffmpeg CLI in a temporary folder (a few seconds of encoding).

Run: python3 -B -m unittest discover -s Tools/tests
"""
import os, shutil, subprocess, sys, tempfile, unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
RECIPE = os.path.join(REPO, "Samples", "make-ladder.sh")
FPS = 24


def probe_video_packets(path):
    """(pts seconds, is keyframe) of each video packet of a file, in file order."""
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                          "packet=pts_time,flags", "-of", "csv=p=0", path],
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    rows = [l.split(",") for l in out.splitlines() if l.strip()]
    return [(float(r[0]), "K" in r[1]) for r in rows]


class LoopLadderTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="ladder-loop-")
        cls.out = os.path.join(cls.dir, "ladder")
        cls.build = subprocess.run([RECIPE, cls.out, "--duration", "8", "--segment", "2", "--loop", "4"],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, True)

    def test_recipe_builds_and_stamps_the_loop(self):
        self.assertEqual(self.build.returncode, 0, self.build.stdout)
        with open(os.path.join(self.out, ".stamp")) as f:
            self.assertIn("loop=4", f.read())
        self.assertFalse(os.path.exists(os.path.join(self.out, "v0", "loop-source.ts")))

    def test_every_segment_starts_on_a_keyframe_and_timestamps_run_on_across_the_loop(self):
        self.assertEqual(self.build.returncode, 0, self.build.stdout)
        for rung in ("v0", "v3"):
            with open(os.path.join(self.out, rung, "prog.m3u8")) as f:
                playlist = f.read()
            self.assertEqual(playlist.count("#EXTINF:2.000000,"), 4, playlist)
            pts = []
            for n in range(4):
                packets = probe_video_packets(os.path.join(self.out, rung, f"seg_{n:05d}.ts"))
                self.assertTrue(packets[0][1], f"{rung} segment {n} does not start on a keyframe")
                pts += [p for p, _ in packets]
            pts.sort()
            self.assertEqual(len(pts), 8 * FPS, f"{rung}: {len(pts)} video frames, not 8 s of them")
            steps = [b - a for a, b in zip(pts, pts[1:])]
            # One frame apart everywhere, the loop's seam (4 s) included (90 kHz rounding aside).
            self.assertLess(max(abs(s - 1 / FPS) for s in steps), 0.001, f"{rung}: a gap or a step back")

    def test_loop_must_be_even_and_within_the_duration(self):
        for bad in ("3", "10", "0"):
            r = subprocess.run([RECIPE, os.path.join(self.dir, "bad"), "--duration", "8", "--loop", bad],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            self.assertEqual(r.returncode, 64, f"--loop {bad}: {r.stdout}")


if __name__ == "__main__":
    unittest.main()
