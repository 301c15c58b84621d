"""Tests of GStreamer as a peer player (Tools/lib/gstreamer_peer.py, Tools/lib/gst_play.py,
Tools/abr/peers.py; docs/abr.md). The real runs play Samples/build/ladder-2s with GStreamer's
playbin3 (Debian's gstreamer1.0 packages and python3-gi, which Tools/install-deps.sh installs)
against the debug hls-origin (built by `swift build --build-tests`, which Tools/test.sh runs first);
a missing package, binary or sample fails the test, naming what to run. About 80 s in all on an idle machine.
HLSPLAY_TOOLS_TEST_BUILD=release|debug|DIR picks other binaries.

Run: /usr/bin/python3 -B -m unittest discover -s Tools/tests -p test_gstreamer_peer.py
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import gstreamer_peer as peer  # noqa: E402
import hlsplay_tools as tools  # noqa: E402

BUILD = os.environ.get("HLSPLAY_TOOLS_TEST_BUILD", "debug")
LADDER = os.path.join(tools.REPO, "Samples", "build", "ladder-2s")
PEERS = os.path.join(tools.REPO, "Tools", "abr", "peers.py")


def read(path):
    with open(path) as f:
        return f.read()


def require_ladder(test):
    if not os.path.isfile(os.path.join(LADDER, "master.m3u8")):
        test.fail(f"{LADDER}/master.m3u8 is missing: run Samples/make-all.sh")


def independent_played_bitrate(root, origin_log, played_seconds):
    """The played bitrate read from the origin's log without gstreamer_peer or hlsplay_tools: the
    master playlist's BANDWIDTH per `vN/` folder, each `vN/seg_K.ts` served whole (200, every byte) is
    segment K's latest rung, and media second t of [0, played) belongs to the segment whose EXTINF
    interval holds it; a time-weighted mean over the played interval."""
    master = read(os.path.join(root, "master.m3u8"))
    bandwidth = {m.group(2): int(m.group(1))
                 for m in re.finditer(r"BANDWIDTH=(\d+),.*\n(v\d+)/prog\.m3u8", master)}
    extinf = [float(x) for x in re.findall(r"#EXTINF:([\d.]+)", read(os.path.join(root, "v0", "prog.m3u8")))]
    latest = {}
    for r in map(json.loads, read(origin_log).splitlines()):
        m = re.fullmatch(r"/(v\d+)/seg_(\d+)\.ts", r.get("path", ""))
        if m and r["status"] == 200 and r["bodyBytesSent"] == os.path.getsize(os.path.join(root, r["path"][1:])):
            latest[int(m.group(2))] = bandwidth[m.group(1)]
    total = weighted = start = 0.0
    for k, d in enumerate(extinf):
        overlap = max(0.0, min(start + d, played_seconds) - start)
        if overlap > 0 and k in latest:
            weighted += latest[k] * overlap
            total += overlap
        start += d
    return weighted / total


class DerivationTests(unittest.TestCase):
    """The record's figures from hand-made events and request logs."""

    def test_stalls_start_after_the_first_playing_and_an_open_one_lasts_to_the_end(self):
        ev = [{"type": "buffering", "t": 0.2, "percent": 0}, {"type": "buffering", "t": 1.0, "percent": 100},
              {"type": "state", "t": 1.1, "old": "PAUSED", "new": "PLAYING"},
              {"type": "buffering", "t": 3.0, "percent": 40}, {"type": "buffering", "t": 3.5, "percent": 10},
              {"type": "buffering", "t": 4.25, "percent": 100}, {"type": "buffering", "t": 6.0, "percent": 0}]
        self.assertEqual(peer.stalls_from_events(ev, 7.5), [
            {"startSeconds": 3.0, "endSeconds": 4.25, "durationSeconds": 1.25},
            {"startSeconds": 6.0, "endSeconds": 7.5, "durationSeconds": 1.5, "open": True}])
        # never PLAYING: the buffering is all start, no stall
        self.assertEqual(peer.stalls_from_events(ev[:2] + ev[3:], 7.5), [])

    def test_hlsplays_stalls_from_its_session_log(self):
        ev = [{"type": "header"}, {"type": "stall.start", "t": 5.1, "atSeconds": 5.0},
              {"type": "stall.end", "t": 6.6, "atSeconds": 6.5, "stallSeconds": 1.5},
              {"type": "stall.start", "t": 9.0, "atSeconds": 9.0},
              {"type": "stall.end", "t": 9.25, "atSeconds": 9.25, "stallSeconds": 0.25}, {"type": "summary"}]
        self.assertEqual(peer.hlsplay_stalls(ev), [
            {"startSeconds": 5.0, "endSeconds": 6.5, "durationSeconds": 1.5},
            {"startSeconds": 9.0, "endSeconds": 9.25, "durationSeconds": 0.25}])

    def test_ladder_fetched_and_played_rungs_from_a_request_log(self):
        with tempfile.TemporaryDirectory() as d:
            for v, n in (("lo", 3), ("hi", 3)):
                os.makedirs(os.path.join(d, v))
                with open(os.path.join(d, v, "p.m3u8"), "w") as f:
                    f.write("#EXTM3U\n#EXT-X-TARGETDURATION:4\n" +
                            "".join(f"#EXTINF:{4.0 if k < 2 else 1.5},\ns{k}.ts\n" for k in range(n)) + "#EXT-X-ENDLIST\n")
                for k in range(n):
                    with open(os.path.join(d, v, f"s{k}.ts"), "wb") as f:
                        f.write(b"x" * 100)
            with open(os.path.join(d, "m.m3u8"), "w") as f:
                f.write('#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1000,CODECS="a,b"\nlo/p.m3u8\n'
                        '#EXT-X-STREAM-INF:AVERAGE-BANDWIDTH=2500,BANDWIDTH=3000\nhi/p.m3u8\n')
            ladder = tools.Ladder(d, "m.m3u8")
            self.assertEqual([(r.path, r.bandwidth_bps, r.average_bandwidth_bps) for r in ladder.rungs],
                             [("/lo/p.m3u8", 1000, None), ("/hi/p.m3u8", 3000, 2500)])
            req = lambda path, sent=100, status=200, **kw: {"method": "GET", "path": path, "status": status,  # noqa
                                                             "bodyBytesSent": sent, "accepted": 0.0, **kw}
            log = [req("/m.m3u8", 50), req("/lo/p.m3u8", 60), req("/lo/s0.ts"), req("/hi/s1.ts", 40),
                   req("/lo/s1.ts"), req("/hi/s1.ts", 30, 206, range="bytes=0-29"),
                   req("/hi/s1.ts", 100, 206, range="bytes=0-99"),
                   {"type": "connection", "event": "refused"}, req("/hi/s2.ts", 0, 404)]
            fetched = ladder.fetched_segments(log)
            self.assertEqual([(f["rungIndex"], f["segmentIndex"], f["complete"]) for f in fetched],
                             [(0, 0, True), (1, 1, False), (0, 1, True), (1, 1, False), (1, 1, True), (1, 2, False)])
            # fetched whole: 4 s each at 1000, 1000, 3000 (the 206 of the whole file) → 20000 / 12
            self.assertAlmostEqual(tools.fetched_bitrate_bps(fetched), 20000 / 12)
            # played [0, 6): segment 0 at 1000 for 4 s, segment 1's later whole copy (hi, not lo) for 2 s
            bps, by_rung, missing = tools.played_rungs(fetched, 0, 6)
            self.assertAlmostEqual(bps, (4 * 1000 + 2 * 3000) / 6)
            self.assertEqual(by_rung, {0: 4.0, 1: 2.0})
            self.assertEqual(missing, 0.0)
            # past the fetched media (segment 2 was never served whole): the rest is counted as missing
            self.assertAlmostEqual(tools.played_rungs(fetched, 0, 9.0)[2], 1.0)
            rec = peer.bitrate_fields(ladder, log, 6.0)
            self.assertEqual((rec["playedSwitches"], rec["fetchedSegments"], rec["incompleteSegmentFetches"],
                              rec["firstRungIndex"], rec["originRequests"]), (1, 3, 3, 0, 8))


class GStreamerRunTests(unittest.TestCase):
    """Real GStreamer runs on loopback."""

    def setUp(self):
        require_ladder(self)
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def test_unshaped_run_plays_through_hlsdemux2_and_its_bitrate_is_the_origin_logs(self):
        # Until 4 s of media have played (about 6 s on an idle machine); 120 s of wall time at most: on a
        # 2-core machine at load 25, 1080p decoding at nice 19 has taken 38 s to start and 50 s for 4 s.
        out = os.path.join(self.dir.name, "g")
        rec = peer.run_gstreamer(LADDER, 120, out, build=BUILD, media_seconds=4)
        self.assertEqual(rec["errors"], [], rec)
        self.assertEqual(rec["demuxer"], "hlsdemux2", rec)
        self.assertEqual(rec["endReason"], "media", rec)
        self.assertIsNotNone(rec["timeToPlayingSeconds"], rec)
        self.assertLessEqual(rec["timeToFirstFrameSeconds"], rec["timeToPlayingSeconds"] + 1.0, rec)
        self.assertGreater(rec["renderedVideoFrames"], 24, rec)  # more than a second of 24 fps video
        self.assertGreaterEqual(rec["playedSeconds"], 4.0, rec)
        self.assertGreater(rec["fetchedSegments"], 2, rec)
        # The played media was all fetched, and the bitrate is the one read from the raw log by other code.
        self.assertEqual(rec["playedSecondsNotFetched"], 0.0, rec)
        self.assertAlmostEqual(sum(rec["playedSecondsByRung"].values()), rec["playedSeconds"], places=4)
        want = independent_played_bitrate(LADDER, os.path.join(out, "origin.jsonl"), rec["playedSeconds"])
        self.assertEqual(rec["playedBitrateBps"], round(want), rec)
        # The record is re-derived from the raw files kept beside it.
        events = tools.read_jsonl(os.path.join(out, "events.jsonl"), strict=True)
        again = peer.gstreamer_record(events, tools.read_jsonl(os.path.join(out, "origin.jsonl")),
                                      tools.Ladder(LADDER), 120, (), rec["playerStartAfterOriginSeconds"],
                                      rec["playerLoadSeconds"])
        self.assertEqual(again, json.loads(read(os.path.join(out, "record.json"))))

    def test_a_missing_playlist_ends_the_run_at_once_with_gstreamers_error(self):
        out = os.path.join(self.dir.name, "g")
        rec = peer.run_gstreamer(LADDER, 120, out, build=BUILD, origin_args=["--fault-404", "master.m3u8"])
        self.assertEqual(rec["endReason"], "error", rec)
        self.assertTrue(rec["errors"] and rec["errors"][0]["message"], rec)
        self.assertLess(rec["wallSeconds"], 60, rec)  # not the whole 120 s
        self.assertIsNone(rec["timeToPlayingSeconds"], rec)
        self.assertEqual((rec["fetchedSegments"], rec["playedBitrateBps"]), (0, None), rec)

    def test_a_link_below_the_bottom_rung_plays_the_bottom_rung_and_stalls_as_the_link_demands(self):
        # 0.25 Mbit/s, well below the bottom rung's 0.58 Mbit/s average, until 12 s of media have played.
        rate_bps = 250_000
        trace = os.path.join(self.dir.name, "low.trace")
        with open(trace, "w") as f:
            f.write("".join(f"{t}\t{rate_bps / 1e6}\n" for t in range(10)))
        out = os.path.join(self.dir.name, "g")
        rec = peer.run_gstreamer(LADDER, 150, out, build=BUILD, media_seconds=12,
                                 origin_args=["--trace", trace, "--trace-format", "pensieve"])
        self.assertEqual(rec["errors"], [], rec)
        self.assertEqual(rec["demuxer"], "hlsdemux2", rec)
        self.assertEqual(rec["endReason"], "media", rec)
        bottom = tools.Ladder(LADDER).rungs[0]
        self.assertEqual(list(rec["playedSecondsByRung"]), ["0"], rec)
        self.assertEqual((rec["playedBitrateBps"], rec["fetchedBitrateBps"]), (bottom.bandwidth_bps,) * 2, rec)
        self.assertEqual(rec["playedSwitches"], 0, rec)
        # What the link allows: the media past 10 s cannot play before segments 0–4 (10 s) have crossed
        # it, so the start plus 10 s plus the stalls cannot be shorter than their transfer time.
        link_seconds = sum(os.path.getsize(os.path.join(LADDER, p.lstrip("/"))) * 8
                           for p, _, _ in bottom.segments[:5]) / rate_bps
        needed_stall = link_seconds - rec["timeToPlayingSeconds"] - 10
        self.assertGreater(link_seconds, 20, "the test's premise: the link is slow")
        self.assertGreaterEqual(rec["stallSeconds"], needed_stall - 1.0, rec)
        if needed_stall > 1.0:
            self.assertGreaterEqual(rec["stallCount"], 1, rec)
        # The pipeline is paused while it buffers, so the start, the media played and the stalls cannot
        # add up to more than the wall time (a stall counted twice would).
        self.assertLessEqual(rec["timeToPlayingSeconds"] + rec["playedSeconds"] + rec["stallSeconds"],
                             rec["wallSeconds"] + 0.5, rec)


class CompareTests(unittest.TestCase):
    def test_compare_writes_both_records_and_reads_hlsplays_bitrate_as_its_summary_does(self):
        require_ladder(self)
        with tempfile.TemporaryDirectory() as d:
            p = subprocess.run([sys.executable, "-B", PEERS, "compare", LADDER, "--media-seconds", "4",
                                "--duration", "90", "--rate", "4mbit", "--out", d, "--build", BUILD],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=400)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertRegex(p.stdout, r"^hlsplay \| gstreamer: first frame [\d.]+s \| [\d.]+s; playing ")
            both = json.loads(read(os.path.join(d, "compare.json")))
            h, g = both["hlsplay"], both["gstreamer"]
            self.assertEqual((h["player"], g["player"]), ("hlsplay", "gstreamer"))
            for rec in (h, g):
                self.assertEqual(rec["originArgs"], ["--rate", "4mbit"])
                self.assertIsNotNone(rec["timeToPlayingSeconds"], rec)
                self.assertGreater(rec["fetchedSegments"], 0, rec)
                self.assertTrue(os.path.isfile(os.path.join(d, rec["player"], "origin.jsonl")))
            # hlsplay's own averageBitrateBps (its buffered chunks) and the origin's log agree.
            self.assertAlmostEqual(h["playedBitrateBps"], h["summaryAverageBitrateBps"],
                                   delta=0.01 * h["summaryAverageBitrateBps"], msg=h)
            self.assertTrue(os.path.isfile(os.path.join(d, "hlsplay", "session.jsonl")))
            self.assertEqual(len(h["stalls"]), h["stallCount"], h)
            # hlsplay's record holds its summary's linear QoE as built (record.json and compare.json alike).
            summary = tools.read_jsonl(os.path.join(d, "hlsplay", "session.jsonl"))[-1]
            self.assertIsNotNone(h["linearQoE"], h)
            self.assertEqual(h["linearQoE"], summary["qoe"]["linearQoE"], h)
            self.assertEqual(json.loads(read(os.path.join(d, "hlsplay", "record.json")))["linearQoE"], h["linearQoE"])
            self.assertTrue(os.path.isfile(os.path.join(d, "gstreamer", "events.jsonl")))


if __name__ == "__main__":
    unittest.main()
