"""Unit tests of Tools/characterize/grid.py: the shard partition, the merge of shard outputs,
and the session-log readings the fault report rests on. No network, no
binaries, no samples: units run through a fake executor.

Run: python3 -B -m unittest discover -s Tools/tests   (-B: no __pycache__ in the tree)
"""
import contextlib, hashlib, importlib.util, io, json, os, shutil, sys, tempfile, unittest

sys.dont_write_bytecode = True

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("grid", os.path.join(HERE, "..", "characterize", "grid.py"))
grid = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(grid)


def fake_ladder(name, seg):
    return {"name": name, "stamp": f"recipe=2 duration=30 segment={seg} rung4k=1", "masterBytes": 700,
            "bandwidths": [620000, 1300000, 3700000, 7200000, 30000000],
            "playlistBytes": [900, 900, 900, 900, 900],
            "firstSegmentBytes": [150000 * seg // 2, 330000 * seg // 2, 930000 * seg // 2,
                                  1800000 * seg // 2, 7500000 * seg // 2],
            "segDuration": float(seg)}


def make_spec(**over):
    opts = {"only": list(grid.SECTIONS), "rates": ["2mbit", "20mbit"], "segments": [2, 6],
            "policies": ["auto", "off"], "kinds": ["cold", "warm", "channel-change"], "reps": 2,
            "duration": 5.0, "scenario_duration": 24.0, "scenario_reps": 1, "rtt": "40ms",
            "timeout": 60.0, "ladder": "ladder4k"}
    opts.update(over)
    return grid.make_spec(opts, LADDERS, "hlsplay 0.0-test")


LADDERS = {"ladder4k-2s": fake_ladder("ladder4k-2s", 2), "ladder4k-6s": fake_ladder("ladder4k-6s", 6)}


def num(key, salt, lo, hi):
    """A deterministic pseudo-random number in [lo, hi) from a unit key."""
    h = int(hashlib.sha256(f"{key}/{salt}".encode()).hexdigest()[:8], 16)
    return lo + (hi - lo) * h / 0xFFFFFFFF


class FakeExecutor:
    """Stands in for Runner.run: records that depend on the unit alone."""

    def __init__(self, fail_at=None):
        self.calls, self.fail_at = [], fail_at

    def __call__(self, u):
        self.calls.append(u["key"])
        if self.fail_at is not None and len(self.calls) > self.fail_at:
            raise KeyboardInterrupt("simulated interruption")
        k = u["key"]
        if u["section"] == "grid":
            out = []
            for kind in ("cold", "warm", "channel-change"):
                ttff = num(k, kind, 0.2, 4.0)
                out.append({"kind": kind, "rate": u["rate"], "seg": u["seg"], "policy": u["policy"], "rep": u["rep"],
                            "ttff": ttff, "stalls": 0, "stallSeconds": 0, "avgBitrate": 620000.0,
                            "gate": "cold(no-estimate)" if kind == "cold" else "warm",
                            "firstRequestVariant": 0, "firstFrameVariant": 0,
                            "firstFetchOverSelection": num(k, kind + "o", 0.1, 0.5),
                            "decodeSeconds": 0.02, "ratioChosen": num(k, kind + "r", 0.95, 1.2),
                            "ratioLowest": num(k, kind + "l", 0.95, 4), "wall": 6.0, "load1": 1.0,
                            "log": f"/nowhere/logs/{kind}-{k.replace('/', '-')}.jsonl"})
            return out
        if u["section"] == "overselect":
            return [{"policy": u["policy"], "rep": u["rep"], "gate": "warm", "firstRequestVariant": 4,
                     "firstFrameVariant": 1, "overSelectAt": 3.26, "overSelections": 1,
                     "ttff": num(k, "t", 5, 8), "floorLowest": 1.95, "stalls": 0, "stallSeconds": 0,
                     "avgBitrate": 1.27e6, "exit": "durationReached", "wall": 30.0}]
        sc = u["scenario"]
        r = {"scenario": sc["fault"], "name": grid.scenario_name(sc), "seg": sc["seg"], "rate": sc["rate"],
             "rep": u["rep"], "stalls": 1, "stallSeconds": num(k, "s", 1, 4), "wedges": 2, "reRequests": 2,
             "http404": 0, "resyncs": 0, "escalations": 0, "resume": num(k, "r", 0, 5),
             "exit": "durationReached", "ttff": 1.0, "avgBitrate": 1e6, "wall": 30.0,
             "faultStartPlayer": 7.5, "linkBackPlayer": 15.5, "faultAt": 0.2, "detectedAfter": 3.2,
             "reRequestedAfter": 3.3, "bufferedAfter": 4.0}
        r.update({key: sc[key] for key in ("at", "dur", "window", "segment") if key in sc})
        return [r]


def quiet(fn, *a, **kw):
    with contextlib.redirect_stderr(io.StringIO()):
        return fn(*a, **kw)


class PartitionTests(unittest.TestCase):
    def test_every_unit_in_exactly_one_shard_for_any_count(self):
        units = grid.plan(make_spec())
        keys = [u["key"] for u in units]
        self.assertEqual(len(keys), len(set(keys)), "plan keys must be unique")
        for n in range(1, len(units) + 3):
            parts = grid.partition(units, n)
            self.assertEqual(len(parts), n)
            flat = [k for p in parts for k in p]
            self.assertEqual(sorted(flat), sorted(keys), f"N={n}")
            if n <= len(units):
                self.assertTrue(all(parts), f"N={n}: an empty shard while units are left")

    def test_each_shard_keeps_plan_order(self):
        units = grid.plan(make_spec())
        pos = {u["key"]: i for i, u in enumerate(units)}
        for p in grid.partition(units, 4):
            self.assertEqual([pos[k] for k in p], sorted(pos[k] for k in p))

    def test_partition_depends_on_the_spec_alone(self):
        a = grid.partition(grid.plan(make_spec()), 5)
        b = grid.partition(grid.plan(json.loads(json.dumps(make_spec()))), 5)
        self.assertEqual(a, b)

    def test_partition_is_pinned_for_equal_costs(self):
        # four equal grid units, two shards: longest-first with ties by plan order
        spec = make_spec(only=["grid"], rates=["2mbit"], segments=[2], policies=["auto", "off"], reps=2)
        units = grid.plan(spec)
        self.assertEqual([u["key"] for u in units],
                         ["grid/2mbit/2s/auto/r0", "grid/2mbit/2s/off/r0", "grid/2mbit/2s/auto/r1", "grid/2mbit/2s/off/r1"])
        self.assertEqual(grid.partition(units, 2),
                         [["grid/2mbit/2s/auto/r0", "grid/2mbit/2s/auto/r1"],
                          ["grid/2mbit/2s/off/r0", "grid/2mbit/2s/off/r1"]])

    def test_shards_are_balanced_within_one_unit(self):
        units = grid.plan(make_spec())
        est = {u["key"]: u["est"] for u in units}
        for n in (2, 3, 7):
            loads = [sum(est[k] for k in p) for p in grid.partition(units, n)]
            self.assertLessEqual(max(loads) - min(loads), max(est.values()) + 1e-9, f"N={n}")

    def test_warm_stays_with_its_cold_session(self):
        # a grid unit carries all kinds of one repetition: the warm start reads the cold start's store
        spec = make_spec()
        for u in grid.plan(spec):
            if u["section"] == "grid":
                self.assertNotIn("kind", u)
        self.assertEqual(sum(1 for u in grid.plan(spec) if u["section"] == "grid"), 2 * 2 * 2 * 2)

    def test_parse_shard(self):
        self.assertEqual(grid.parse_shard("1/1"), (1, 1))
        self.assertEqual(grid.parse_shard("3/4"), (3, 4))
        for bad in ("0/4", "5/4", "1/0", "x", "1/2/3", "-1/2"):
            with self.assertRaises(grid.GridError, msg=bad):
                grid.parse_shard(bad)

    def test_spec_hash_changes_with_any_key(self):
        base = grid.spec_hash(make_spec())
        self.assertEqual(base, grid.spec_hash(make_spec()))
        self.assertNotEqual(base, grid.spec_hash(make_spec(reps=3)))
        other = dict(LADDERS)
        other["ladder4k-2s"] = dict(other["ladder4k-2s"], stamp="recipe=3")
        opts = {"only": list(grid.SECTIONS), "rates": ["2mbit", "20mbit"], "segments": [2, 6],
                "policies": ["auto", "off"], "kinds": ["cold", "warm", "channel-change"], "reps": 2,
                "duration": 5.0, "scenario_duration": 24.0, "scenario_reps": 1, "rtt": "40ms",
                "timeout": 60.0, "ladder": "ladder4k"}
        self.assertNotEqual(base, grid.spec_hash(grid.make_spec(opts, other, "hlsplay 0.0-test")))


class MergeTests(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="grid-test-")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def d(self, name):
        return os.path.join(self.tmp, name)

    def run_shards(self, spec, n, prefix="s"):
        dirs = []
        for i in range(1, n + 1):
            out = self.d(f"{prefix}{i}of{n}")
            quiet(grid.run_shard, spec, i, n, out, LADDERS, FakeExecutor())
            dirs.append(out)
        return dirs

    def test_merged_shards_give_the_unsharded_report(self):
        spec = make_spec()
        whole = quiet(grid.run_shard, spec, 1, 1, self.d("whole"), LADDERS, FakeExecutor())
        expected = grid.report(spec, whole, LADDERS)
        for n in (2, 3, 5):
            dirs = self.run_shards(spec, n)
            m_spec, recs, ladders = grid.merge_shards(list(reversed(dirs)), self.d(f"merged{n}"))
            self.assertEqual(m_spec, spec)
            self.assertEqual(grid.report(m_spec, recs, ladders), expected, f"N={n}")
            strip = lambda rs: [{k: v for k, v in r.items() if k != "log"} for r in rs]
            self.assertEqual(strip(recs), strip(whole))
            on_disk = grid.read_jsonl(os.path.join(self.d(f"merged{n}"), "sessions.jsonl"))
            self.assertEqual(strip(on_disk), strip(whole))
            meta = grid.load_shard(self.d(f"merged{n}"))
            self.assertEqual(meta["completedUnits"], [u["key"] for u in grid.plan(spec)])
        # the report has every section and the new grid and fault columns
        for needle in ("### Grid", "| CV |", "first fetch over-selection", "### Over-select", "### Recovery",
                       "### Faults", "black-holed first segment", "live segment roll-off", "link collapse mid-play",
                       "### Hard wedges", "| fault | sessions | ≤ target |"):
            self.assertIn(needle, expected)

    def test_a_shard_records_its_run_and_the_merge_keeps_each_shards(self):
        spec = make_spec(only=["grid"], rates=["2mbit"], segments=[2], reps=1)
        binary = os.path.join(self.tmp, "player")
        with open(binary, "wb") as f:
            f.write(b"not a real player")
        dirs = []
        for i in (1, 2):
            dirs.append(self.d(f"p{i}"))
            quiet(grid.run_shard, spec, i, 2, dirs[-1], LADDERS, FakeExecutor(), bins={"player": binary})
        meta = grid.load_shard(dirs[0])
        prov = meta["provenance"]
        self.assertRegex(prov["commit"], r"^[0-9a-f]{40}$")  # this checkout's HEAD
        self.assertIn(prov["worktreeClean"], (True, False))
        self.assertEqual(prov["binaries"]["player"]["sha256"], hashlib.sha256(b"not a real player").hexdigest())
        for key in ("loadAverageAtStart", "loadAverageAtEnd"):
            self.assertEqual(len(meta[key]), 3, key)
        self.assertLessEqual(meta["startedAt"], meta["finishedAt"])
        grid.merge_shards(dirs, self.d("pm"))
        merged = grid.load_shard(self.d("pm"))
        self.assertEqual([m["provenance"] for m in merged["mergedFrom"]],
                         [grid.load_shard(d)["provenance"] for d in dirs])
        self.assertTrue(all(m["loadAverageAtEnd"] for m in merged["mergedFrom"]))

    def test_each_unit_runs_once_across_shards(self):
        spec = make_spec()
        calls = []
        for i in range(1, 4):
            ex = FakeExecutor()
            quiet(grid.run_shard, spec, i, 3, self.d(f"c{i}"), LADDERS, ex)
            calls += ex.calls
        self.assertEqual(sorted(calls), sorted(u["key"] for u in grid.plan(spec)))

    def test_logs_are_copied_and_paths_rewritten(self):
        spec = make_spec(only=["grid"], rates=["2mbit"], segments=[2], reps=1)
        dirs = self.run_shards(spec, 2)
        with open(os.path.join(dirs[1], "logs", "cold-x.jsonl"), "w") as f:
            f.write("{}\n")
        _, recs, _ = grid.merge_shards(dirs, self.d("m"))
        self.assertTrue(os.path.exists(os.path.join(self.d("m"), "logs", "cold-x.jsonl")))
        self.assertTrue(all(r["log"].startswith(os.path.join(self.d("m"), "logs")) for r in recs))

    def test_refuses_shards_of_different_specs(self):
        a = self.run_shards(make_spec(), 2, "a")
        b = self.run_shards(make_spec(reps=3), 2, "b")
        with self.assertRaises(grid.GridError) as cm:
            grid.merge_shards([a[0], b[1]], self.d("m"))
        self.assertIn("different spec", str(cm.exception))
        self.assertIn("reps", str(cm.exception))

    def test_refuses_a_missing_shard(self):
        dirs = self.run_shards(make_spec(), 3)
        with self.assertRaises(grid.GridError) as cm:
            grid.merge_shards(dirs[:2], self.d("m"))
        self.assertIn("missing shard(s) 3/3", str(cm.exception))

    def test_refuses_a_shard_given_twice(self):
        dirs = self.run_shards(make_spec(), 2)
        copy = self.d("copy")
        shutil.copytree(dirs[0], copy)
        with self.assertRaises(grid.GridError) as cm:
            grid.merge_shards([dirs[0], copy, dirs[1]], self.d("m"))
        self.assertIn("shard 1/2 given twice", str(cm.exception))

    def test_refuses_shards_of_different_splits(self):
        a = self.run_shards(make_spec(), 2, "a")
        b = self.run_shards(make_spec(), 3, "b")
        with self.assertRaises(grid.GridError) as cm:
            grid.merge_shards([a[0], b[1], b[2]], self.d("m"))
        self.assertIn("different splits", str(cm.exception))

    def test_refuses_an_incomplete_shard(self):
        spec = make_spec()
        ok = self.d("ok")
        quiet(grid.run_shard, spec, 1, 2, ok, LADDERS, FakeExecutor())
        cut = self.d("cut")
        with self.assertRaises(KeyboardInterrupt):
            quiet(grid.run_shard, spec, 2, 2, cut, LADDERS, FakeExecutor(fail_at=3))
        with self.assertRaises(grid.GridError) as cm:
            grid.merge_shards([ok, cut], self.d("m"))
        self.assertIn("shard 2/2", str(cm.exception))
        self.assertIn("incomplete: 3 of", str(cm.exception))

    def test_refuses_a_directory_that_is_not_a_shard(self):
        os.makedirs(self.d("empty"))
        with self.assertRaises(grid.GridError) as cm:
            grid.merge_shards([self.d("empty")], self.d("m"))
        self.assertIn("no shard.json", str(cm.exception))

    def test_run_refuses_an_output_of_another_run(self):
        out = self.d("o")
        quiet(grid.run_shard, make_spec(), 1, 2, out, LADDERS, FakeExecutor())
        with self.assertRaises(grid.GridError):
            quiet(grid.run_shard, make_spec(), 2, 2, out, LADDERS, FakeExecutor())
        with self.assertRaises(grid.GridError):
            quiet(grid.run_shard, make_spec(reps=1), 1, 2, out, LADDERS, FakeExecutor())
        quiet(grid.run_shard, make_spec(), 1, 2, out, LADDERS, FakeExecutor())  # the same run again: fine


def ev(t, type_, **kw):
    d = {"t": t, "type": type_}
    d.update(kw)
    return d


class LogReadingTests(unittest.TestCase):
    def test_stall_intervals_open_when_the_session_ended_in_the_stall(self):
        log = [ev(1, "stall.start", atSeconds=0.9), ev(3, "stall.end", atSeconds=3.0, stallSeconds=2.1),
               ev(3.25, "buffer.sample", phase="playing"),
               ev(8, "stall.start", atSeconds=8.0), ev(20, "error", fatal=True, category="network", message="x"),
               ev(20, "stall.end", atSeconds=20.0, stallSeconds=12), ev(20, "summary", exitReason="error")]
        self.assertEqual(grid.stall_intervals(log), [[0.9, 3.0], [8.0, None]])

    def test_stall_ending_with_the_duration_counts_as_ended(self):
        log = [ev(8, "stall.start", atSeconds=8.0), ev(12, "stall.end", atSeconds=12.0, stallSeconds=4),
               ev(12, "summary", exitReason="durationReached")]
        self.assertEqual(grid.stall_intervals(log), [[8.0, 12.0]])

    def test_collapse_resume(self):
        # link back at 20 s, 6 s segments: a stall 19.9-23.5 s resumes 3.5 s after
        self.assertEqual(grid.collapse_resume([[19.9, 23.5]], 8, 20, 6), (3.5, True))
        self.assertEqual(grid.collapse_resume([], 8, 20, 6), (0.0, False))
        self.assertEqual(grid.collapse_resume([[2, 3]], 8, 20, 6), (0.0, False))       # before the collapse
        self.assertEqual(grid.collapse_resume([[19.9, None]], 8, 20, 6), (None, True))  # never resumed
        # a stall starting 1.9 segments after the link came back is the collapse's; at 2.1 it is not
        self.assertEqual(grid.collapse_resume([[20 + 11.4, 33.0]], 8, 20, 6), (13.0, True))
        self.assertEqual(grid.collapse_resume([[20 + 12.6, 34.0]], 8, 20, 6), (0.0, False))

    def test_live_episode_and_the_stall_a_late_seek_causes(self):
        # collapse 8-18 s (player clock); resync decided during it, seek after the link is back,
        # a restart later still, resolved at 31 s
        log = [ev(14, "live.resync", action="resync"), ev(19, "live.resync", action="seeked"),
               ev(27, "live.resync", action="restart"), ev(28, "live.resync", action="seeked"),
               ev(31, "live.resync", action="resolved"), ev(60, "live.resync", action="resync")]
        ep = grid.live_episode(log, 8, 18)
        self.assertEqual((ep["firstResyncAfterLinkBack"], ep["resolvedAfterLinkBack"], ep["lastResyncStepPlayer"]),
                         (-4, 13, 28))
        # the stall 10-19 s ended, then the restart's seek dropped the buffer: a stall 28-31.5 s, 10 s after
        # the link came back (beyond 2 segments of 2 s), still the fault's
        stalls = [[10, 19], [28, 31.5]]
        self.assertEqual(grid.collapse_resume(stalls, 8, 18, 2), (1.0, True))
        self.assertEqual(grid.collapse_resume(stalls, 8, 18, 2, until=28.5), (13.5, True))

    def test_live_counts_one_resync_logged_two_ways_counts_once(self):
        log = [ev(0, "request.start", purpose="multivariant-playlist", attempt=1),
               ev(21, "error", fatal=False, category="live",
                  message="fell behind the live window (next 9, window starts at 11); resyncing"),
               ev(21, "cap.change", reason="live-resync", capBps=620000)]
        c = grid.live_counts(log)
        self.assertEqual((c["resyncs"], c["escalations"], c["giveUps"]), (1, 0, 0))

    def test_live_counts_reads_live_resync_actions(self):
        # LiveResyncLog: decided (resync, restart), performed (seeked), over (resolved), give-up
        log = [ev(0, "request.start", purpose="multivariant-playlist", attempt=1),
               ev(21, "live.resync", action="resync", phase="resyncing", trigger="expired-segment", attempt=0),
               ev(21.1, "live.resync", action="seeked", phase="resyncing", fromMediaSequence=5, toMediaSequence=9),
               ev(33, "live.resync", action="restart", phase="restarting", trigger="expired-segment", attempt=1),
               ev(33, "request.start", purpose="multivariant-playlist", attempt=1),
               ev(33.2, "live.resync", action="seeked", phase="restarting"),
               ev(36, "live.resync", action="resolved", phase="monitoring"),
               ev(50, "live.resync", action="resync", phase="resyncing", trigger="long-stall"),
               ev(70, "live.resync", action="give-up", phase="failed", attempt=3)]
        c = grid.live_counts(log)
        self.assertEqual((c["resyncs"], c["escalations"], c["giveUps"], c["seeks"], c["resolved"]), (2, 1, 1, 2, 1))

    def test_live_counts_reads_phases_without_actions_and_the_summary(self):
        log = [ev(21, "live.resync", phase="resyncing", attempt=0),
               ev(33, "live.resync", phase="restarting", attempt=1),
               ev(45, "live.resync", phase="failed", attempt=3)]
        c = grid.live_counts(log)
        self.assertEqual((c["resyncs"], c["escalations"], c["giveUps"]), (1, 1, 1))
        c = grid.live_counts([], {"liveResyncs": 2, "liveRestarts": 1})
        self.assertEqual((c["resyncs"], c["escalations"]), (2, 1))

    def test_live_counts_restart_seen_only_as_a_multivariant_reload(self):
        log = [ev(0, "request.start", purpose="multivariant-playlist", attempt=1),
               ev(0.5, "request.start", purpose="multivariant-playlist", attempt=2),  # a retry, not a restart
               ev(30, "request.start", purpose="multivariant-playlist", attempt=1)]
        self.assertEqual(grid.live_counts(log)["escalations"], 1)

    def test_black_hole_first(self):
        log = [ev(0.12, "request.start", purpose="segment", requestID=3, mediaSequence=0, variantIndex=0),
               ev(3.37, "request.byteProgress", requestID=3, assessment={"verdict": "wedged"}),
               ev(3.38, "request.start", purpose="segment", requestID=4, mediaSequence=0, variantIndex=0),
               ev(4.20, "frame.first", timeToFirstFrameSeconds=4.2),
               ev(4.21, "playback.started", atSeconds=4.205)]
        r = grid.black_hole_first(log)
        self.assertAlmostEqual(r["detectedAfter"], 3.25)
        self.assertAlmostEqual(r["reRequestedAfter"], 3.26)
        self.assertAlmostEqual(r["resume"], 4.085)
        self.assertIsNone(grid.black_hole_first(log[:3])["resume"])  # never started

    def test_fault_table_marks_never_and_missed_targets(self):
        base = {"rate": "2mbit", "rep": 0, "stalls": 1, "stallSeconds": 3.0, "wedges": 1, "reRequests": 1,
                "http404": 0, "resyncs": 0, "escalations": 0, "exit": "durationReached", "ttff": 1.0}
        recs = [dict(base, scenario="collapse", seg=2, at=6, dur=8, resume=3.0, playbackInterrupted=True),    # 1.5 seg
                dict(base, scenario="collapse", seg=2, at=6, dur=8, resume=5.0, playbackInterrupted=True),    # 2.5 seg
                dict(base, scenario="live-rolloff", seg=2, window=3, at=8, dur=10, resume=None,
                     playbackInterrupted=True, http404=1, resyncs=1, exit="error", error="HTTP 404")]
        text = grid.faults_table(make_spec(), recs)
        rows = [l for l in text.splitlines() if l.startswith("| link collapse") or l.startswith("| live segment")]
        self.assertIn("| 1.50 | yes |", rows[0])
        self.assertIn("| 2.50 | **no** |", rows[1])
        self.assertIn("**never**", rows[2])
        self.assertIn("error: HTTP 404", rows[2])
        self.assertIn("| link collapse mid-play | 2 | 1/2 | 2.00 | 2.50 | 0 | 0 | 0 | 0 |", text)
        self.assertIn("| live segment roll-off | 1 | — | — | — | 1 | 1 | 1 | 0 |", text)

    def test_fault_counts(self):
        log = [ev(0, "request.start", purpose="segment", mediaSequence=5, url="a/seg5.ts"),
               ev(3, "request.byteProgress", assessment={"verdict": "wedged"}),
               ev(3, "request.start", purpose="segment", mediaSequence=5, url="a/seg5.ts"),
               ev(6, "request.byteProgress", assessment={"verdict": "over-selected"}),
               ev(7, "request.start", purpose="segment", mediaSequence=6, url="a/seg6.ts"),
               ev(7.5, "request.start", purpose="segment", mediaSequence=6, url="b/seg6.ts"),  # re-decided rung
               ev(8, "request.end", status=404), ev(8, "stall.start", atSeconds=8),
               ev(9, "stall.end", atSeconds=9, stallSeconds=1.0)]
        c = grid.fault_counts(log, {"exitReason": "durationReached", "wedgesDetected": 1})
        self.assertEqual((c["stalls"], c["wedges"], c["reRequests"], c["http404"]), (1, 1, 2, 1))
        self.assertEqual(c["stallSeconds"], 1.0)


if __name__ == "__main__":
    unittest.main()
