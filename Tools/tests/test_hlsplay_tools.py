"""Unit tests of Tools/lib/hlsplay_tools.py, the module every Tools script starts hls-origin and
hlsplay with and reads logs through. The process tests run the real debug binaries (built by
`swift build --build-tests`, which Tools/test.sh runs before these tests) against a real origin
on loopback serving Samples/build/short-2s; a missing binary or sample fails the test, naming
what to build. HLSPLAY_TOOLS_TEST_BUILD=release|debug|DIR picks other binaries.

Run: python3 -B -m unittest discover -s Tools/tests
"""
import json, os, signal, subprocess, sys, tempfile, unittest, urllib.request

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import hlsplay_tools as tools  # noqa: E402

BUILD = os.environ.get("HLSPLAY_TOOLS_TEST_BUILD", "debug")
SHORT = os.path.join(tools.REPO, "Samples", "build", "short-2s")


def write(path, lines, end="\n"):
    with open(path, "w") as f:
        f.write("\n".join(lines) + end)


class LogReadingTests(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def test_read_jsonl_skips_blank_and_cut_lines_unless_strict(self):
        p = self.path("a.jsonl")
        write(p, ['{"type":"header","t":0}', "", '{"type":"x","t":1}', '{"type":"cut', '{"type":"summary"}'])
        self.assertEqual([e["type"] for e in tools.read_jsonl(p)], ["header", "x", "summary"])
        with self.assertRaisesRegex(ValueError, r"a\.jsonl:4 is not JSON"):
            tools.read_jsonl(p, strict=True)

    def test_missing_file_is_empty_unless_strict(self):
        self.assertEqual(tools.read_jsonl(self.path("none.jsonl")), [])
        self.assertIsNone(tools.read_log(self.path("none.jsonl")).summary)
        with self.assertRaises(FileNotFoundError):
            tools.read_jsonl(self.path("none.jsonl"), strict=True)

    def test_session_log_header_summary_and_types(self):
        p = self.path("s.jsonl")
        write(p, ['{"type":"header","startedAt":"2024-01-01T00:00:00Z"}', '{"type":"stall.start","t":1.5}',
                  '{"type":"stall.end","t":2}', '{"type":"stall.start","t":3}', '{"type":"summary","stallCount":2}'])
        log = tools.read_log(p)
        self.assertEqual(log.header["startedAt"], "2024-01-01T00:00:00Z")
        self.assertEqual(log.summary["stallCount"], 2)
        self.assertEqual([e["t"] for e in log.of_type("stall.start")], [1.5, 3])
        self.assertEqual(len(log.of_type("stall.start", "stall.end")), 3)
        self.assertEqual(log.first("stall.end")["t"], 2)
        self.assertIsNone(log.first("frame.first"))
        # a log cut before its summary has no summary, and no header when its first line is another event
        write(p, ['{"type":"stall.start","t":1}'])
        self.assertIsNone(tools.read_log(p).summary)
        self.assertIsNone(tools.read_log(p).header)

    def test_validate_log_names_each_problem(self):
        good = ['{"type":"header"}', '{"type":"a","t":0.5}', '{"type":"b","t":0.5}', '{"type":"summary"}']
        cases = [
            (good, "\n", None),
            (good, "", "the log does not end with a newline"),
            (good[1:], "\n", "the first line is not the header"),
            (good[:-1], "\n", "the last line is not the summary (it is 'b')"),
            ([good[0], '{"type":"a","t":2}', '{"type":"b","t":1}', good[-1]], "\n", "t decreases at a b event"),
            ([good[0], '{"type":"a"}', good[-1]], "\n", "event without t: a"),
            ([good[0], "nope", good[-1]], "\n", "line 2 is not JSON: 'nope'"),
        ]
        for lines, end, problem in cases:
            p = self.path("v.jsonl")
            write(p, lines, end)
            events, got = tools.validate_log(p)
            self.assertEqual(got, problem, lines)
        self.assertEqual(tools.validate_log(self.path("none"))[1], "no session log (No such file or directory)")

    def test_json_lines_of_stdout(self):
        out = 'hlsplay: note\n{"type":"summary","a":1}\n  {"type":"summary","a":2}  \n{broken\n'
        self.assertEqual([s["a"] for s in tools.json_lines(out)], [1, 2])


class BinaryTests(unittest.TestCase):
    def test_missing_binary_names_the_build_command(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaisesRegex(tools.ToolError, r"hlsplay is missing: run `swift build --product hlsplay`"):
                tools.find_binary("hlsplay", d)
        with self.assertRaisesRegex(tools.ToolError, r"swift build -c release --product hls-origin"):
            tools.find_binary("hls-origin", os.path.join(tools.REPO, "no-such", "release"))
        self.assertEqual(tools.build_dir("release"), os.path.join(tools.REPO, ".build", "release"))
        self.assertEqual(tools.build_dir("debug"), os.path.join(tools.REPO, ".build", "debug"))

    def test_a_tool_error_is_one_line_naming_the_program_other_errors_pass(self):
        with self.assertRaises(SystemExit) as refused:
            with tools.refusing_tool_errors("grid.py"):
                tools.find_binary("hlsplay", os.path.join(tools.REPO, "no-such", "debug"))
        self.assertRegex(str(refused.exception.code), r"^grid\.py: .*hlsplay is missing: run `swift build --product hlsplay`")
        self.assertNotIn("\n", str(refused.exception.code))
        with self.assertRaises(KeyError):  # not the user's next step: a bug keeps its traceback
            with tools.refusing_tool_errors("grid.py"):
                raise KeyError("x")

    def test_soak_without_its_binaries_refuses_in_one_line(self):
        with tempfile.TemporaryDirectory() as empty:
            run = subprocess.run([sys.executable, os.path.join(tools.REPO, "Tools", "characterize", "soak.py"),
                                  "--build", empty, "--minutes", "0.01"],
                                 capture_output=True, text=True, timeout=60)
        self.assertEqual(run.returncode, 1, run.stderr)
        self.assertRegex(run.stderr, r"^soak: .* is missing: run `swift build --product hls-origin`")
        self.assertNotIn("Traceback", run.stderr)


def require_binaries(case):
    """The binaries and the sample the process tests need; a clear failure when one is missing."""
    try:
        case.hlsplay = tools.find_binary("hlsplay", BUILD)
        case.origin = tools.find_binary("hls-origin", BUILD)
    except tools.ToolError as e:
        raise AssertionError(f"{e} (these tests run the real binaries)")
    if not os.path.exists(os.path.join(SHORT, "master.m3u8")):
        raise AssertionError(f"{SHORT}/master.m3u8 is missing: run Samples/make-all.sh")


class ProcessTests(unittest.TestCase):
    """The real hls-origin and hlsplay on loopback."""

    def setUp(self):
        require_binaries(self)
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def test_origin_serves_on_a_free_port_and_collects_its_request_log(self):
        with tools.Origin(SHORT, log=self.path("origin.jsonl"), build=BUILD) as origin:
            self.assertRegex(origin.base, r"^http://127\.0\.0\.1:\d+/$")
            self.assertEqual(origin.base, f"http://127.0.0.1:{origin.port}/")
            self.assertNotEqual(origin.port, 0)
            body = urllib.request.urlopen(origin.url("/master.m3u8"), timeout=10).read()
            self.assertTrue(body.startswith(b"#EXTM3U"))
            pid = origin.pid
        self.assertFalse(origin.running())
        with self.assertRaises(ProcessLookupError):
            os.kill(pid, 0)
        requests = origin.requests()
        self.assertEqual([(r["method"], r["path"], r["status"]) for r in requests], [("GET", "/master.m3u8", 200)])

    def test_origin_that_does_not_start_says_why(self):
        with self.assertRaisesRegex(tools.ToolError, r"hls-origin did not start: first line ''.*stderr"):
            tools.Origin(self.path("no-such-folder"), build=BUILD)
        with self.assertRaisesRegex(tools.ToolError, r"did not start.*--no-such-option"):
            tools.Origin(SHORT, ["--no-such-option"], build=BUILD)

    def test_run_hlsplay_plays_to_its_duration_with_a_valid_log(self):
        log = self.path("s.jsonl")
        with tools.Origin(SHORT, log=self.path("origin.jsonl"), build=BUILD) as origin:
            run = tools.run_hlsplay(origin.url("master.m3u8"), ["--duration", "2"], log=log, timeout=120, build=BUILD)
        self.assertEqual(run.status, 0, run.stderr)
        self.assertFalse(run.timed_out)
        self.assertEqual(run.command[:6], [self.hlsplay, origin.url("master.m3u8"), "--headless", "--json",
                                           "--no-status", "--log"])
        self.assertEqual(len(run.summaries), 1)
        self.assertEqual(run.summary["exitReason"], "durationReached")
        self.assertGreaterEqual(run.summary["playedSeconds"], 1.9)
        events, problem = tools.validate_log(log)
        self.assertIsNone(problem)
        self.assertEqual(run.events, events)
        session = tools.read_log(log)
        self.assertEqual(session.summary, run.summary)
        self.assertIsNotNone(session.first("frame.first"))
        # every segment the session buffered was served by this origin
        served = {r["path"] for r in origin.requests() if r["status"] == 200}
        self.assertTrue(any(p.endswith(".ts") for p in served), served)
        self.assertGreater(run.wall_seconds, 1.5)

    def test_run_hlsplay_interrupted_at_its_timeout_still_writes_its_summary(self):
        # a live stream never ends by itself: the timeout's SIGINT ends the session cleanly
        log = self.path("live.jsonl")
        with tools.Origin(SHORT, ["--live", "--window", "4"], build=BUILD, stop_signal=signal.SIGINT) as origin:
            run = tools.run_hlsplay(origin.url("master.m3u8"), ["--duration", "600"], log=log, timeout=4,
                                    build=BUILD)
        self.assertTrue(run.timed_out)
        self.assertFalse(run.killed, run.stderr)
        self.assertIsNotNone(run.summary, run.stdout + run.stderr)
        self.assertNotEqual(run.summary["exitReason"], "durationReached")
        self.assertIsNone(tools.validate_log(log)[1])
        self.assertLess(run.wall_seconds, 4 + tools.INTERRUPT_GRACE_SECONDS + 5)

    def test_run_hlsplay_killed_at_its_timeout(self):
        with tools.Origin(SHORT, ["--live"], build=BUILD) as origin:
            run = tools.run_hlsplay(origin.url("master.m3u8"), ["--duration", "600"], log=self.path("k.jsonl"),
                                    timeout=3, on_timeout="kill", build=BUILD)
        self.assertTrue(run.timed_out and run.killed)
        self.assertEqual(run.status, -signal.SIGKILL)
        self.assertIsNone(run.summary)
        self.assertEqual(tools.validate_log(self.path("k.jsonl"))[1].split(" (")[0],
                         "the last line is not the summary")

    def test_version(self):
        self.assertRegex(tools.hlsplay_version(self.hlsplay) or "", r"\d")
        self.assertIsNone(tools.hlsplay_version(self.path("nothing")))


if __name__ == "__main__":
    unittest.main()
