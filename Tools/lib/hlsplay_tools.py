"""What every script under Tools/ does with the two binaries: find them, start hls-origin on
a free loopback port, run hlsplay with a session log, and read JSON Lines logs back.

    import sys, os
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
    from hlsplay_tools import Origin, run_hlsplay, read_log

    with Origin("Samples/build/ladder-2s", ["--rate", "6mbit"], log="/tmp/origin.jsonl") as origin:
        run = run_hlsplay(origin.url("master.m3u8"), ["--duration", "4"], log="/tmp/s.jsonl", timeout=60)
    run.summary["timeToFirstFrameSeconds"], origin.requests()   # the summary; the origin's requests

Nothing here decides anything about a stream: it starts processes, stops them, and parses what
they wrote. The scripts keep their own analysis.
"""
import contextlib
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

# The repository: Tools/lib/ is two levels below it.
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# hls-origin's first stdout line: `listening on http://127.0.0.1:PORT/`.
LISTENING = re.compile(r"^listening on (http://127\.0\.0\.1:(\d+)/)")
# How long hls-origin may take to print that line (a debug build on a loaded 2-core machine).
ORIGIN_START_TIMEOUT_SECONDS = 30
# How long a stopped process has, after its signal, to exit before SIGKILL.
STOP_GRACE_SECONDS = 10
# How long hlsplay has, after the SIGINT sent at its timeout, to write its summary and exit.
INTERRUPT_GRACE_SECONDS = 5


class ToolError(RuntimeError):
    """A binary is missing or did not start; the message says which and what to run."""


@contextlib.contextmanager
def refusing_tool_errors(prog):
    """A ToolError inside ends the program with one line on stderr, `prog: message`, and exit status 1,
    not a traceback: what is missing and the command that makes it are the user's next step. Every
    script's main uses it, so they all refuse alike."""
    try:
        yield
    except ToolError as e:
        raise SystemExit(f"{prog}: {e}") from None


# ---------------------------------------------------------------- binaries

def build_dir(build="release"):
    """The folder of the binaries of a build: "release", "debug", or a folder given as is."""
    if build in ("release", "debug"):
        return os.path.join(REPO, ".build", build)
    return os.path.abspath(build)


def find_binary(name, build="release"):
    """The path of `name` (hlsplay, hls-origin) in `build`; ToolError naming the build command
    when it is not there."""
    path = os.path.join(build_dir(build), name)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        release = os.path.basename(os.path.normpath(build_dir(build))) == "release"
        how = "swift build -c release" if release else "swift build"
        raise ToolError(f"{path} is missing: run `{how} --product {name}` in {REPO}")
    return path


def product_source_folders(repo=None):
    """product name -> the folders (relative to the repository) of every target it is built from, its
    dependencies' transitively, from `swift package dump-package`; {} when the manifest cannot be read
    (then every source counts for every binary)."""
    repo = repo or REPO
    try:
        out = subprocess.run(["swift", "package", "dump-package"], cwd=repo, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, timeout=120)
        manifest = json.loads(out.stdout) if out.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError):
        manifest = None
    if not manifest:
        return {}
    targets = {t["name"]: t for t in manifest.get("targets", [])}

    def folder(t):
        if t.get("path"):
            return os.path.normpath(t["path"])
        return os.path.join("Tests" if t.get("type") == "test" else "Sources", t["name"])

    def closure(names):
        seen, todo = set(), list(names)
        while todo:
            name = todo.pop()
            if name in seen or name not in targets:
                continue
            seen.add(name)
            for dep in targets[name].get("dependencies", []):
                # {"byName": [NAME, condition]} | {"target": [NAME, condition]} | {"product": [NAME, PACKAGE, …]}
                for kind, value in dep.items():
                    if kind in ("byName", "target") and value:
                        todo.append(value[0])
        return seen

    return {p["name"]: sorted(folder(targets[t]) for t in closure(p.get("targets", [])))
            for p in manifest.get("products", [])}


def stale_binaries(binaries):
    """name -> the project's source files (Sources/, Package.swift) modified after that binary was built,
    newest first, for each of `binaries` (name -> path, in that order) that is older than any: such a
    binary measures code that is no longer the tree's (sources: Sources/ and any target folder outside it,
    such as the top-level CFFmpeg shim). A binary counts only the sources of the targets its
    product is built from (product_source_folders: hls-origin is not stale for a change in hlsplay's own
    target); a file in no known target, and every file when the manifest cannot be read, counts for all.
    One walk of Sources/ serves them all. A binary outside this repository's .build is never stale (its
    sources are not these)."""
    ours = {name: path for name, path in binaries.items()
            if os.path.abspath(path).startswith(os.path.join(REPO, ".build") + os.sep)}
    if not ours:
        return {}
    folders = product_source_folders()
    known = {f for fs in folders.values() for f in fs}
    # Sources/, and any target kept outside it (the CFFmpeg shim's headers sit at the top level).
    roots = ["Sources"] + sorted(d for d in known if d.split(os.sep)[0] not in ("Sources", "Tests"))
    found = []
    for top in roots:
        for root, _, files in os.walk(os.path.join(REPO, top)):
            found += [os.path.join(root, f) for f in files if f.endswith((".swift", ".c", ".h", ".modulemap"))]
    found.append(os.path.join(REPO, "Package.swift"))
    modified = [(os.path.getmtime(f), os.path.relpath(f, REPO)) for f in found if os.path.isfile(f)]

    def under(rel, dirs):
        return any(rel == d or rel.startswith(d + os.sep) for d in dirs)

    def counts_for(product, rel):
        if product not in folders or rel == "Package.swift" or not under(rel, known):
            return True
        return under(rel, folders[product])

    stale = {}
    for name, path in ours.items():
        built = os.path.getmtime(path)
        product = os.path.basename(path)
        newer = sorted(((m, f) for m, f in modified if m > built and counts_for(product, f)), reverse=True)
        if newer:
            stale[name] = [f for _, f in newer]
    return stale


def hlsplay_version(binary):
    """`hlsplay --version`, or None if it cannot be run."""
    try:
        return subprocess.run([binary, "--version"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None


def repo_state():
    """{"commit", "worktreeClean"}: the repository's commit and whether its tracked files were clean (None
    where this is not a git checkout, a cluster worker say), as every run's manifest records them."""
    def git(*args):
        try:
            out = subprocess.run(["git", "-C", REPO, *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 text=True, timeout=30)
            return out.stdout.strip() if out.returncode == 0 else None
        except (OSError, subprocess.TimeoutExpired):
            return None

    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": git("rev-parse", "HEAD"), "worktreeClean": None if status is None else status == ""}


def run_provenance(binaries):
    """What a results folder records of the run that wrote it: repo_state() and each binary's path and
    sha256 ({name: path} in, None for a file that is not there)."""
    def sha256(path):
        try:
            with open(path, "rb") as f:
                return hashlib.file_digest(f, "sha256").hexdigest()
        except OSError:
            return None

    return {**repo_state(), "binaries": {name: {"path": os.path.abspath(path), "sha256": sha256(path)}
                                         for name, path in sorted(binaries.items())}}


# ---------------------------------------------------------------- generated blocks in the docs
# A doc's table that a committed tool derives from a run's files sits between two markers naming the tool
# and the block; the tool's `docs` step replaces what is between them and its `check` step compares.

def block_markers(tool, name):
    """(begin, end) markers of the block `name` that `tool` (its path in the repository) writes."""
    return (f"<!-- BEGIN generated by {tool}: {name} (do not edit; re-derive: see above) -->",
            f"<!-- END generated: {name} -->")


def splice_block(doc_text, tool, name, block):
    """doc_text with the block between the markers of `name` replaced by `block`."""
    begin, end = block_markers(tool, name)
    if doc_text.count(begin) != 1 or doc_text.count(end) != 1:
        raise SystemExit(f"the doc needs exactly one pair of markers:\n{begin}\n{end}")
    head, rest = doc_text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return head + begin + "\n" + block + end + tail


def generated_block(doc_text, tool, name):
    """The text between the markers of `name`, or None when the doc has no such block."""
    begin, end = block_markers(tool, name)
    if begin not in doc_text or end not in doc_text:
        return None
    return doc_text.split(begin, 1)[1].split(end, 1)[0].lstrip("\n")


def write_or_check_block(doc_path, tool, name, text, write, source, redo):
    """A tool's `docs` step (write: the block `name` of the doc replaced by `text`) or its `check` step
    (the block compared with `text`; when it differs, a line naming `source`, what the text comes from, and
    `redo`, the command that writes it, on stderr). Returns the exit status: 0, or 1 when the check fails."""
    with open(doc_path, encoding="utf-8") as f:
        doc = f.read()
    if write:
        with open(doc_path, "w", encoding="utf-8") as f:
            f.write(splice_block(doc, tool, name, text))
        return 0
    if generated_block(doc, tool, name) != text:
        print(f"{doc_path}: the block '{name}' is not what {source} gives; re-derive: {redo}", file=sys.stderr)
        return 1
    return 0


def p_text(p):
    """A p-value as the docs print it: two significant digits, scientific below 0.001, "—" for none."""
    return "—" if p is None else (f"{p:.2g}" if p >= 0.001 else f"{p:.1e}")


# ---------------------------------------------------------------- processes

def stop_process(p, sig=signal.SIGTERM, grace_seconds=STOP_GRACE_SECONDS):
    """Sends sig to a running process, waits up to grace_seconds, then kills it. Returns its status."""
    if p.poll() is None:
        p.send_signal(sig)
        try:
            p.wait(grace_seconds)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    return p.returncode


class Origin:
    """hls-origin serving `root` on a free loopback port (--port 0), with `args` after it.

    Started on construction (or `with Origin(...) as origin:`), stopped by stop() or at the
    end of the with block. `base` is `http://127.0.0.1:PORT/`, `port` the port, `url(path)`
    a URL under it. With `log=PATH` the origin writes its request log there (`--log`) and
    requests() reads it (complete once stopped)."""

    def __init__(self, root, args=(), *, log=None, binary=None, build="release", stop_signal=signal.SIGTERM,
                 start_new_session=False, start_timeout_seconds=ORIGIN_START_TIMEOUT_SECONDS):
        self.binary = binary or find_binary("hls-origin", build)
        self.log = log
        self.stop_signal = stop_signal
        self.command = [str(self.binary), str(root), "--port", "0"] + (["--log", str(log)] if log else []) + \
            [str(a) for a in args]
        # stderr to a file, never a pipe nobody reads (a full pipe would block the origin).
        self._stderr = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(self.command, stdout=subprocess.PIPE, stderr=self._stderr, text=True,
                                     start_new_session=start_new_session)
        self.started_wall = time.time()
        line = self._first_line(start_timeout_seconds)
        m = LISTENING.match(line)
        if not m:
            stop_process(self.proc, self.stop_signal)
            self._stderr.seek(0)
            err = self._stderr.read()
            self._stderr.close()
            self.proc.stdout.close()
            raise ToolError(f"hls-origin did not start: first line {line!r}; exit {self.proc.returncode}; "
                            f"stderr {err.strip()[:400]!r}; command {' '.join(self.command)}")
        self.base, self.port = m.group(1), int(m.group(2))
        # Whatever else it prints on stdout is read and dropped, so that it never blocks on a full pipe.
        self._drain = threading.Thread(target=self.proc.stdout.read, daemon=True)
        self._drain.start()

    def _first_line(self, timeout):
        # readline() blocks; a timer kills an origin that never prints (the line is then "").
        timer = threading.Timer(timeout, lambda: self.proc.poll() is None and self.proc.kill())
        timer.start()
        try:
            return self.proc.stdout.readline().strip()
        finally:
            timer.cancel()

    @property
    def pid(self):
        return self.proc.pid

    def url(self, path=""):
        return self.base + path.lstrip("/")

    def running(self):
        return self.proc.poll() is None

    def stop(self):
        """Stops the origin (its stop signal, then SIGKILL after STOP_GRACE_SECONDS); its exit status."""
        status = stop_process(self.proc, self.stop_signal)
        self._stderr.close()
        # The drain ends at the pipe's end of file (the origin exited); then the pipe is closed.
        self._drain.join(timeout=5)
        if not self._drain.is_alive():
            self.proc.stdout.close()
        return status

    def requests(self):
        """The origin's request log (one dict per request), [] without a log."""
        return read_jsonl(self.log) if self.log else []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False


class PlayerRun:
    """One finished hlsplay run: its command, exit status (None when killed at the timeout
    and not reaped with a status), stdout, stderr, the summaries it printed (--json), its log."""

    def __init__(self, command, status, stdout, stderr, log, timed_out, killed, wall_seconds, started_load1):
        self.command, self.status, self.stdout, self.stderr = command, status, stdout, stderr
        self.log, self.timed_out, self.killed = log, timed_out, killed
        self.wall_seconds, self.started_load1 = wall_seconds, started_load1
        self.summaries = json_lines(stdout)
        self._events = None

    @property
    def summary(self):
        """The last summary printed on stdout (one session prints one), else None."""
        return self.summaries[-1] if self.summaries else None

    @property
    def events(self):
        """The session log's events ([] without a log, or when it was not written)."""
        if self._events is None:
            self._events = read_jsonl(self.log) if self.log else []
        return self._events


def run_hlsplay(url, args=(), *, log=None, timeout=None, on_timeout="interrupt", binary=None, build="release",
                json_output=True, no_status=True, headless=True, env=None, cwd=None):
    """Runs `hlsplay URL --headless --json --no-status [--log LOG] ARGS...` to its end.

    At `timeout` seconds: on_timeout "interrupt" sends SIGINT (hlsplay then writes its summary)
    and SIGKILL INTERRUPT_GRACE_SECONDS later; "terminate" sends SIGTERM, then the same;
    "kill" sends SIGKILL at once. Returns a PlayerRun."""
    binary = binary or find_binary("hlsplay", build)
    cmd = [str(binary), url] + (["--headless"] if headless else []) + (["--json"] if json_output else []) + \
        (["--no-status"] if no_status else []) + (["--log", str(log)] if log else []) + [str(a) for a in args]
    load1 = os.getloadavg()[0]
    started = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)
    timed_out = killed = False
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        if on_timeout == "kill":
            killed = True
            p.kill()
            out, err = p.communicate()
        else:
            p.send_signal(signal.SIGINT if on_timeout == "interrupt" else signal.SIGTERM)
            try:
                out, err = p.communicate(timeout=INTERRUPT_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                killed = True
                p.kill()
                out, err = p.communicate()
    return PlayerRun(cmd, p.returncode, out or "", err or "", log, timed_out, killed,
                     time.monotonic() - started, load1)


# ---------------------------------------------------------------- logs

def json_lines(text):
    """The JSON objects of the lines of text that hold one (other lines are skipped)."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return out


def read_jsonl(path, strict=False):
    """The records of a JSON Lines file. A missing file is []; a line that is not JSON is
    skipped (a log cut off by a kill), or raises ValueError naming the line with strict=True."""
    out = []
    try:
        f = open(path, encoding="utf-8")
    except FileNotFoundError:
        if strict:
            raise
        return out
    with f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                if strict:
                    raise ValueError(f"{path}:{n} is not JSON: {line[:80]!r}")
    return out


class SessionLog:
    """A session log's events, with its header (first line), summary (last line) and the
    events of one type."""

    def __init__(self, events):
        self.events = events

    @property
    def header(self):
        return self.events[0] if self.events and self.events[0].get("type") == "header" else None

    @property
    def summary(self):
        return self.events[-1] if self.events and self.events[-1].get("type") == "summary" else None

    def of_type(self, *types):
        return [e for e in self.events if e.get("type") in types]

    def first(self, type_):
        return next((e for e in self.events if e.get("type") == type_), None)


def read_log(path, strict=False):
    """A session log (see read_jsonl for strict)."""
    return SessionLog(read_jsonl(path, strict))


def read_logs(paths, strict=False):
    """Several session logs (one hlsplay --sessions N run writes s-1.jsonl ... s-N.jsonl)."""
    return [read_log(p, strict) for p in paths]


def validate_log(path):
    """(events, problem): the session log parsed, and why it is not a valid log, None if it
    is: every line JSON, header first, summary last, t never decreasing, ends with a newline."""
    try:
        with open(path, encoding="utf-8") as f:
            raw = f.read()
    except OSError as e:
        return [], f"no session log ({e.strerror})"
    lines = [l for l in raw.split("\n") if l.strip()]
    events = []
    for n, l in enumerate(lines, 1):
        try:
            events.append(json.loads(l))
        except ValueError:
            return events, f"line {n} is not JSON: {l[:80]!r}"
    if not events:
        return events, "empty session log"
    if events[0].get("type") != "header":
        return events, "the first line is not the header"
    if events[-1].get("type") != "summary":
        return events, f"the last line is not the summary (it is {events[-1].get('type')!r})"
    last = -1.0
    for e in events[1:-1]:
        t = e.get("t")
        if not isinstance(t, (int, float)):
            return events, f"event without t: {e.get('type')}"
        if t < last:
            return events, f"t decreases at a {e.get('type')} event"
        last = t
    if not raw.endswith("\n"):
        return events, "the log does not end with a newline"
    return events, None


# ---------------------------------------------------------------- a ladder and the origin's log of it

class Rung:
    """One variant of a multivariant playlist on disk: `index` (its place in the playlist, from 0),
    `uri` (as written), `path` (the URL path the origin serves it at, with a leading /),
    `bandwidth_bps` (BANDWIDTH), `average_bandwidth_bps` (AVERAGE-BANDWIDTH, None without it),
    `segments`: one (path, start_seconds, duration_seconds) per media segment, media time from 0."""

    def __init__(self, index, uri, path, bandwidth_bps, average_bandwidth_bps, segments):
        self.index, self.uri, self.path = index, uri, path
        self.bandwidth_bps, self.average_bandwidth_bps = bandwidth_bps, average_bandwidth_bps
        self.segments = segments


class Ladder:
    """The rungs of `root`/`master` (a VOD multivariant playlist of media playlists on disk), and
    where each segment the origin serves sits in it: `segment_at[path]` = (rung, segment index)."""

    def __init__(self, root, master="master.m3u8", sizes=None):
        # sizes: {URL path: bytes} of the segment files, for a copy of the playlists without the media
        # (a results folder keeps only those); None reads each file's size under root.
        self.root, self.master, self.sizes = root, master, sizes
        self.rungs = []
        base = posixpath_dir("/" + master.lstrip("/"))
        attrs = None
        with open(os.path.join(root, master), encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if line.startswith("#EXT-X-STREAM-INF:"):
                    attrs = attribute_list(line.split(":", 1)[1])
                elif line and not line.startswith("#") and attrs is not None:
                    path = normalize_path(base + line)
                    segments = media_segments(root, path)
                    avg = attrs.get("AVERAGE-BANDWIDTH")
                    self.rungs.append(Rung(len(self.rungs), line, path, int(attrs["BANDWIDTH"]),
                                           int(avg) if avg else None, segments))
                    attrs = None
        if not self.rungs:
            raise ToolError(f"{os.path.join(root, master)} has no variant (#EXT-X-STREAM-INF)")
        self.segment_at = {}
        for rung in self.rungs:
            for n, (path, _, _) in enumerate(rung.segments):
                self.segment_at[path] = (rung, n)

    def fetched_segments(self, requests):
        """The media segments the origin's request log shows fetched, in the order the requests
        were accepted: one dict per request for a segment of the ladder with `rungIndex`,
        `bandwidthBps`, `segmentIndex`, `startSeconds`, `durationSeconds` (media time), `acceptedSeconds`,
        `lastByteSeconds` (origin time), `bodyBytes`, and `complete`: the whole file was sent
        (body_complete)."""
        out = []
        for r in requests:
            if r.get("type") == "connection" or r.get("method") != "GET":
                continue
            hit = self.segment_at.get(r.get("path"))
            if hit is None:
                continue
            rung, n = hit
            path, start, duration = rung.segments[n]
            out.append({"rungIndex": rung.index, "bandwidthBps": rung.bandwidth_bps, "segmentIndex": n,
                        "startSeconds": start, "durationSeconds": duration, "acceptedSeconds": r.get("accepted"),
                        "lastByteSeconds": r.get("lastByteSent"), "bodyBytes": r.get("bodyBytesSent"),
                        "complete": body_complete(r, os.path.join(self.root, path.lstrip("/")),
                                                  None if self.sizes is None else self.sizes.get(path))})
        return out


def posixpath_dir(path):
    return path[:path.rfind("/") + 1]


def normalize_path(path):
    parts = []
    for p in path.split("/"):
        if p == "..":
            if parts:
                parts.pop()
        elif p not in ("", "."):
            parts.append(p)
    return "/" + "/".join(parts)


def attribute_list(text):
    """An HLS attribute list (`A=1,B="x,y"`) as a dict of strings, quotes removed."""
    return {k: v.strip('"') for k, v in re.findall(r'([A-Z0-9-]+)=("[^"]*"|[^,]*)', text)}


def media_segments(root, path):
    """(path, start_seconds, duration_seconds) of each segment of the media playlist at URL path `path`."""
    out, start, duration = [], 0.0, None
    base = posixpath_dir(path)
    with open(os.path.join(root, path.lstrip("/")), encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line.startswith("#EXTINF:"):
                duration = float(line[len("#EXTINF:"):].split(",")[0])
            elif line and not line.startswith("#") and duration is not None:
                out.append((normalize_path(base + line), start, duration))
                start += duration
                duration = None
    return out


def body_complete(request, file_path, size=None):
    """Whether the origin sent the whole file: a 200 with every byte, or a 206 whose range was all
    of it (`bytes=0-` or `bytes=0-LAST`) with every byte. (A ladder of EXT-X-BYTERANGE segments,
    several to a file, is not read by Ladder.) `size`, when given, is the file's size in bytes."""
    status, sent = request.get("status"), request.get("bodyBytesSent")
    if size is None:
        try:
            size = os.path.getsize(file_path)
        except OSError:
            return False
    if status == 200:
        return sent == size
    if status == 206:
        m = re.match(r"bytes=0-(\d*)$", request.get("range") or "")
        return bool(m) and (m.group(1) == "" or int(m.group(1)) >= size - 1) and sent == size
    return False


def fetched_bitrate_bps(fetched):
    """The ladder BANDWIDTH of every completely fetched segment, weighted by its media duration
    (Σ BANDWIDTH × duration ÷ Σ duration); None when none was."""
    done = [f for f in fetched if f["complete"]]
    total = sum(f["durationSeconds"] for f in done)
    return sum(f["bandwidthBps"] * f["durationSeconds"] for f in done) / total if total > 0 else None


def played_rungs(fetched, played_from_seconds, played_to_seconds):
    """The media played in [played_from, played_to) by the rung it was fetched at: for each media
    segment overlapping it, the last complete fetch of that segment (a player that fetched one twice
    plays the later copy), weighted by the overlap. Returns (bitrate_bps or None, seconds by rung index,
    seconds of the interval no complete fetch covers)."""
    last = {}
    for f in fetched:
        if f["complete"]:
            last[f["segmentIndex"]] = f
    by_rung, weighted, covered = {}, 0.0, 0.0
    for f in last.values():
        lo = max(f["startSeconds"], played_from_seconds)
        hi = min(f["startSeconds"] + f["durationSeconds"], played_to_seconds)
        if hi > lo:
            by_rung[f["rungIndex"]] = by_rung.get(f["rungIndex"], 0.0) + (hi - lo)
            weighted += f["bandwidthBps"] * (hi - lo)
            covered += hi - lo
    missing = max(0.0, played_to_seconds - played_from_seconds - covered)
    return (weighted / covered if covered > 0 else None), by_rung, missing
