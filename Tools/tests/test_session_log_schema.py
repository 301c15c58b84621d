"""docs/schema/session-log.schema.json (one line of a session log) and docs/schema/summary.schema.json
(the summary) against real logs: `hlsplay simulate` on several ladders and traces (one with stalls),
and real sessions against hls-origin on loopback (a segment answering 404, one answering 503 until
the retries run out, a 200 whose body stalls until the wedge rule cancels it, an alternate audio
rendition, `--duration` runs, the resolution and byte limits,
a short live window). Every line of every log must
validate; with every object the schema lists closed, every key in the logs must be one the schema
(and so docs/session-log.md) names; a line that breaks the schema must fail it. The pandas one-liner
and the DuckDB one of docs/session-log.md are run too: under CI (CI=true) a missing pandas or duckdb
is a failure, elsewhere a skip (Tools/install-deps.sh installs both; Tools/test.sh runs this with
/opt/hlsplay/python/bin/python3, which has duckdb and sees Debian's modules).

Needs the `jsonschema` module (Debian python3-jsonschema, installed by Tools/install-deps.sh) and the
debug binaries (`swift build --build-tests`, which Tools/test.sh runs first);
HLSPLAY_TOOLS_TEST_BUILD=release|debug|DIR picks other binaries.

Run: /opt/hlsplay/python/bin/python3 -B -m unittest discover -s Tools/tests -p test_session_log_schema.py
"""
import copy, json, os, re, subprocess, sys, tempfile, unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import hlsplay_tools as tools  # noqa: E402

try:
    import jsonschema
except ImportError as e:  # a clear failure, not a silent skip: CI installs it (Tools/install-deps.sh)
    raise ImportError("the jsonschema module is missing: install the Debian package python3-jsonschema "
                      "(Tools/install-deps.sh does)") from e


def missing(module, source, test):
    """A module a one-liner of the docs needs is missing: a failure under CI (CI=true), which installs it
    (Tools/install-deps.sh; Tools/test.sh runs this with that environment's python3), a skip elsewhere."""
    message = (f"{module} is not importable by {sys.executable}: install {source}, or run this with "
               f"/opt/hlsplay/python/bin/python3 after Tools/install-deps.sh")
    if os.environ.get("CI") == "true":
        test.fail(message)
    test.skipTest(message)


BUILD = os.environ.get("HLSPLAY_TOOLS_TEST_BUILD", "debug")
SAMPLES = os.path.join(tools.REPO, "Samples", "build")
TRACES = os.path.join(tools.REPO, "..", "shared", "data", "traces")  # as Tests/TestSupport Repo.sharedData
SCHEMA_DIR = os.path.join(tools.REPO, "docs", "schema")
# A real session's time limit: the runs below take a few seconds each; generous for a loaded machine.
SESSION_TIMEOUT_SECONDS = 120


def load_schema(name):
    with open(os.path.join(SCHEMA_DIR, name), encoding="utf-8") as f:
        return json.load(f)


def validator(line_schema, summary_schema):
    """A draft 2020-12 validator of line_schema that resolves the summary schema's $id."""
    cls = jsonschema.Draft202012Validator
    try:  # jsonschema >= 4.18: the referencing library
        from referencing import Registry, Resource
        registry = Registry().with_resources(
            [(s["$id"], Resource.from_contents(s)) for s in (line_schema, summary_schema)])
        return cls(line_schema, registry=registry)
    except ImportError:  # older jsonschema (Debian bookworm's 4.10): RefResolver
        resolver = jsonschema.RefResolver.from_schema(
            line_schema, store={s["$id"]: s for s in (line_schema, summary_schema)})
        return cls(line_schema, resolver=resolver)


def closed(schema):
    """A copy of schema in which every object that lists its properties and says nothing of
    others allows no others (`additionalProperties: false`). The `if` branches are left alone
    (closing them would make them never match); objects marked `additionalProperties: true`
    (configuration, host: they may grow) stay open."""
    schema = copy.deepcopy(schema)

    def walk(s):
        if not isinstance(s, dict):
            return
        if "properties" in s and "additionalProperties" not in s:
            s["additionalProperties"] = False
        for p in s.get("properties", {}).values():
            walk(p)
        walk(s.get("items"))
        for d in s.get("$defs", {}).values():
            walk(d)
        for branch in s.get("allOf", []):
            walk(branch.get("then"))

    for d in schema.get("$defs", {}).values():
        walk(d)
    if schema.get("type") == "object" and "allOf" not in schema:  # the summary schema's own object
        walk(schema)
    return schema


def problems(v, obj):
    """Each validation error of obj, as `path: message`."""
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(line)'}: {e.message[:300]}"
            for e in sorted(v.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path)))]


class Logs:
    """The logs the tests validate, made once (about 30 s)."""
    made = None

    @classmethod
    def make(cls):
        if cls.made is None:
            cls.made = cls()
        return cls.made

    def __init__(self):
        self.dir = tempfile.TemporaryDirectory(prefix="schema-logs-")
        self.hlsplay = tools.find_binary("hlsplay", BUILD)
        self.paths = {}      # name -> log path
        self.stdout = {}     # name -> stdout summaries (--json)
        self.status = {}     # name -> exit status
        for name, ladder, trace, args in [
            # The stall model and its controller (off by default) on, for their risk.sample and policy.change lines.
            ("simulate-ladder-2s-evdo", "ladder-2s", "mahimahi/Verizon-EVDO-driving.down", ["--predictor", "model"]),
            ("simulate-ladder-6s-umts", "ladder-6s", "mahimahi/TMobile-UMTS-driving.down", ["--predictor", "model"]),
            ("simulate-ladder-2s-norway-heuristic", "ladder-2s", "pensieve/hsdpa_norway/norway_bus_1",
             ["--predictor", "heuristic", "--duration", "20"]),
            ("simulate-ladder-6s-belgium-peak", "ladder-6s", "sabre/4G_lte_belgium/report_bus_0001.json",
             ["--peak-bitrate", "3m", "--startup-cap", "first-variant"]),
        ]:
            log = self.path(name)
            p = subprocess.run([self.hlsplay, "simulate", os.path.join(SAMPLES, ladder), "--trace",
                                os.path.join(TRACES, trace), "--log", log, "--json"] + args,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               timeout=SESSION_TIMEOUT_SECONDS)
            self.add(name, log, p.returncode, tools.json_lines(p.stdout))
        store = ["--estimate-store", os.path.join(self.dir.name, "estimates.json")]
        # 20 KB of a 200's body, then silence: the wedge rule cancels it (request.end aborted, cancelReason)
        # and re-requests it at once (request.retry with no attempt of the retry policy counted).
        wedge = os.path.join(self.dir.name, "wedge.json")
        with open(wedge, "w", encoding="utf-8") as f:
            json.dump([{"pathPattern": "*/seg_00001.ts", "requestIndex": 0,
                        "action": {"type": "stallAfterBytes", "bytes": 20000}}], f)
        for name, root, origin_args, player_args in [
            ("real-404", "short-2s", ["--fault-404", "seg_00002.ts"], ["--cold"]),
            ("real-503", "short-2s", ["--fault-503", "seg_00001.ts"], ["--cold"]),
            ("real-wedge", "short-2s", ["--faults", wedge], ["--cold"]),
            ("real-alt-audio", "variants/alt-audio", ["--rate", "8mbit"], []),
            ("real-duration", "ladder-2s", ["--rate", "3mbit"], ["--duration", "4"]),
            # Rungs above the resolution limit left out, and a byte bound below a few segments.
            ("real-limits", "ladder-2s", ["--rate", "8mbit"],
             ["--max-resolution", "640x360", "--max-buffer-bytes", "400k", "--duration", "6"]),
            # A live window of two 2 s segments: shorter than three target durations.
            ("real-live", "short-2s", ["--live", "--window", "2"], ["--duration", "4"]),
        ]:
            log = self.path(name)
            with tools.Origin(os.path.join(SAMPLES, root), origin_args, build=BUILD) as origin:
                run = tools.run_hlsplay(origin.url("master.m3u8"), player_args + store, log=log,
                                        timeout=SESSION_TIMEOUT_SECONDS, build=BUILD)
            self.add(name, log, run.status, run.summaries)

    def path(self, name):
        return os.path.join(self.dir.name, name + ".jsonl")

    def add(self, name, log, status, summaries):
        self.paths[name], self.status[name], self.stdout[name] = log, status, summaries

    def lines(self, name):
        """(line number, object) of each line of a log."""
        with open(self.paths[name], encoding="utf-8") as f:
            return [(n, json.loads(l)) for n, l in enumerate(f, 1) if l.strip()]


class SchemaTests(unittest.TestCase):
    """The schemas themselves (no logs needed)."""

    @classmethod
    def setUpClass(cls):
        cls.line_schema = load_schema("session-log.schema.json")
        cls.summary_schema = load_schema("summary.schema.json")

    def test_schemas_are_draft_2020_12_schemas(self):
        for s in (self.line_schema, self.summary_schema):
            self.assertEqual(s["$schema"], "https://json-schema.org/draft/2020-12/schema")
            jsonschema.Draft202012Validator.check_schema(s)

    def test_docs_name_every_key_and_value_of_the_schema(self):
        # With the test above: a key in a log is in the schema, and the schema's keys and values are
        # in docs/session-log.md (in backticks), so a key in a log is documented.
        with open(os.path.join(tools.REPO, "docs", "session-log.md"), encoding="utf-8") as f:
            named = set()
            prose = re.sub(r"^```.*?^```", "", f.read(), flags=re.S | re.M)  # the code examples aside
            for quoted in re.findall(r"`([^`]+)`", prose):
                for word in re.findall(r"[A-Za-z][A-Za-z0-9_.-]*", quoted):  # `stall.start`, `host.os`
                    named.add(word.rstrip(".-"))
                    named.update(word.split("."))
        missing = set()

        def walk(s, where):
            if not isinstance(s, dict):
                return
            for k, v in s.get("properties", {}).items():
                if k not in named:
                    missing.add(f"{where}: key {k}")
                walk(v, f"{where}.{k}")
            walk(s.get("items"), where + "[]")
            for e in s.get("enum", []):
                if isinstance(e, str) and e not in named:
                    missing.add(f"{where}: value {e}")
            for k, d in s.get("$defs", {}).items():
                walk(d, k)

        walk(self.line_schema, "line")
        walk(self.summary_schema, "summary")
        self.assertEqual(sorted(missing), [], "named in docs/schema but not in docs/session-log.md")


class SessionLogSchemaTests(unittest.TestCase):
    """Real and simulated logs against the schemas."""

    @classmethod
    def setUpClass(cls):
        cls.line_schema = load_schema("session-log.schema.json")
        cls.summary_schema = load_schema("summary.schema.json")
        cls.v = validator(cls.line_schema, cls.summary_schema)
        cls.strict = validator(closed(cls.line_schema), closed(cls.summary_schema))
        cls.summary_v = validator(cls.summary_schema, cls.summary_schema)
        cls.logs = Logs.make()

    def test_the_sessions_ran_as_meant(self):
        # What each log is there for: without these, "every line validates" would prove less.
        logs = self.logs
        self.assertEqual(logs.status["real-404"], 69, "a segment answering 404 ends the session (network failure)")
        self.assertEqual(logs.status["real-503"], 69, "a segment answering 503 until the retries run out")
        self.assertEqual(logs.status["real-duration"], 0)
        self.assertEqual(logs.status["real-alt-audio"], 0)
        self.assertEqual(logs.status["real-wedge"], 0)
        cut = [o for _, o in logs.lines("real-wedge") if o.get("type") == "request.end" and o.get("cancelReason")]
        self.assertTrue(any(o["cancelReason"] == "wedged" and o.get("status") == 200 and o.get("aborted")
                            and o["bytes"] >= 20000 and "firstByteSeconds" in o.get("timings", {}) for o in cut),
                        f"the wedged 200's request.end: {cut}")
        self.assertEqual(logs.status["real-limits"], 0)
        self.assertEqual(logs.status["real-live"], 0)
        seen = {}
        for name in logs.paths:
            for _, o in logs.lines(name):
                seen.setdefault(o["type"], set()).add(name)
        self.assertIn("simulate-ladder-2s-evdo", seen.get("stall.start", ()), "the EVDO trace stalls")
        self.assertIn("real-404", seen.get("error", ()))
        self.assertIn("real-503", seen.get("request.retry", ()))
        self.assertIn("real-alt-audio", seen.get("audio.rendition", ()))
        self.assertIn("real-limits", seen.get("resolution.limit", ()))
        self.assertIn("real-limits", seen.get("buffer.byteBound", ()))
        self.assertIn("real-live", seen.get("live.window", ()))
        for name in logs.paths:
            self.assertEqual(logs.lines(name)[-1][1].get("exitReason"),
                             {"real-404": "error", "real-503": "error", "real-duration": "durationReached",
                              "real-limits": "durationReached", "real-live": "durationReached",
                              "simulate-ladder-2s-norway-heuristic": "durationReached"}.get(name, "completed"), name)
        for t in ("header", "summary", "request.start", "request.progress", "request.end", "playlist.loaded",
                  "abr.decision", "abr.switch", "segment.buffered", "buffer.sample", "frame.first",
                  "track.firstFrame", "playback.started", "stall.end", "playback.ended", "decoder.open",
                  "decode.stats", "cap.gate", "cap.change", "cap.note", "sample.verdict", "risk.sample",
                  "policy.change", "failover"):
            self.assertIn(t, seen, f"no log has a {t} event")

    def test_every_line_of_every_log_validates(self):
        for name in self.logs.paths:
            with self.subTest(log=name):
                bad = [f"line {n} ({o.get('type')}): {p}" for n, o in self.logs.lines(name) for p in problems(self.v, o)]
                self.assertEqual(bad[:20], [], f"{len(bad)} problems in {name}")

    def test_every_key_in_the_logs_is_one_the_schema_names(self):
        # The published schema lets objects grow (a new key is a compatible change); the logs of this
        # binary must use only keys the schema, and docs/session-log.md with it, name.
        for name in self.logs.paths:
            with self.subTest(log=name):
                bad = sorted({f"{o.get('type')}: {p}" for _, o in self.logs.lines(name) for p in problems(self.strict, o)})
                self.assertEqual(bad[:20], [], f"{len(bad)} problems with every listed object closed in {name}")

    def test_the_summary_on_stdout_is_the_last_line_and_validates(self):
        for name, summaries in self.logs.stdout.items():
            with self.subTest(log=name):
                self.assertEqual(len(summaries), 1)
                self.assertEqual(problems(self.summary_v, summaries[0]), [])
                self.assertEqual(summaries[0], self.logs.lines(name)[-1][1])

    def test_a_line_that_breaks_the_schema_fails(self):
        lines = {}  # the first line of each type in the logs
        for name in self.logs.paths:
            for _, o in self.logs.lines(name):
                lines.setdefault(o["type"], o)
        cases = [  # (type of the line taken from a real log, change, the error expected somewhere in the messages)
            ("request.start", lambda o: o.update(purpose="video"), "'video' is not one of"),
            ("request.start", lambda o: o.pop("requestID"), "'requestID' is a required property"),
            ("request.end", lambda o: o.update(bytes="306781"), "'306781' is not of type 'integer'"),
            ("request.end", lambda o: o.update(errorKind="timeout"), "'timeout' is not one of"),
            ("cap.change", lambda o: o.update(phase="warming"), "'warming' is not one of"),
            ("buffer.sample", lambda o: o.update(bufferSeconds=-0.5), "-0.5 is less than the minimum of 0"),
            ("segment.buffered", lambda o: o.pop("t"), "'t' is a required property"),
            ("error", lambda o: o.update(category="oops"), "'oops' is not one of"),
            ("header", lambda o: o.update(schemaVersion=2), "1 was expected"),
            ("header", lambda o: o.update(startedAt="yesterday"), "does not match"),
            ("summary", lambda o: o.pop("exitReason"), "'exitReason' is a required property"),
            ("summary", lambda o: o.update(exitReason="crashed"), "'crashed' is not one of"),
            ("summary", lambda o: o["qoe"].update(rebufferRatio=1.5), "1.5 is greater than the maximum of 1"),
            ("summary", lambda o: o.update(policySeconds={"turbo": 1}), "'turbo' is not one of"),
            ("playback.started", lambda o: o.update(type="playback.paused"), "'playback.paused' is not one of"),
        ]
        for type_, change, expected in cases:
            with self.subTest(type=type_, expected=expected):
                o = copy.deepcopy(lines[type_])
                self.assertEqual(problems(self.v, o), [], "the unchanged line is valid")
                change(o)
                got = problems(self.v, o)
                self.assertTrue(any(expected in p for p in got), got)
        # A key the schema does not name passes the published schema and fails the closed one.
        o = dict(lines["request.end"], retransmitted=True)
        self.assertEqual(problems(self.v, o), [])
        self.assertTrue(any("'retransmitted' was unexpected" in p for p in problems(self.strict, o)))
        o = copy.deepcopy(lines["summary"])
        o["qoe"]["vmaf"] = 93
        self.assertTrue(any("'vmaf' was unexpected" in p for p in problems(self.strict, o)))

    def test_pandas_one_liner_of_the_docs(self):
        try:
            import pandas as pd
        except ImportError:
            missing("pandas", "the Debian package python3-pandas", self)
        path = self.logs.paths["simulate-ladder-2s-evdo"]
        df = pd.read_json(path, lines=True)  # as docs/session-log.md writes it
        lines = self.logs.lines("simulate-ladder-2s-evdo")
        self.assertEqual(len(df), len(lines))
        self.assertEqual(df["type"].iloc[0], "header")
        self.assertEqual(df["type"].iloc[-1], "summary")
        stalls = df[df["type"] == "stall.end"]
        self.assertEqual(len(stalls), lines[-1][1]["stallCount"])
        self.assertAlmostEqual(stalls["stallSeconds"].sum(), lines[-1][1]["stallSeconds"], places=3)

    def test_duckdb_one_liner_of_the_docs(self):
        try:
            import duckdb
        except ImportError:
            missing("duckdb", "PyPI's duckdb, in the environment Tools/install-deps.sh makes (/opt/hlsplay/python)", self)
        path = self.logs.paths["simulate-ladder-2s-evdo"]
        source = f"read_json_auto('{path}', field_appearance_threshold = 0, sample_size = -1)"  # as the docs write it
        lines = self.logs.lines("simulate-ladder-2s-evdo")
        summary = lines[-1][1]
        self.assertEqual(duckdb.sql(f"SELECT count(*) FROM {source}").fetchall()[0][0], len(lines))
        stalls = duckdb.sql(f"SELECT t, stallSeconds FROM {source} WHERE type = 'stall.end'").fetchall()
        self.assertEqual(len(stalls), summary["stallCount"])
        self.assertAlmostEqual(sum(s for _, s in stalls), summary["stallSeconds"], places=3)
        self.assertEqual(duckdb.sql(f"SELECT exitReason FROM {source} WHERE type = 'summary'").fetchall()[0][0],
                         summary["exitReason"])


if __name__ == "__main__":
    unittest.main()
