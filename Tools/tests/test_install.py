"""`make install DESTDIR=tmp PREFIX=/usr` (docs/install.md): the installed tree; the installed
binaries run with a scrubbed environment (env -i PATH=/usr/bin:/bin: no Swift toolchain on PATH or
LD_LIBRARY_PATH) and, as root, with the toolchain's runtime folder hidden under an empty tmpfs in a
mount namespace of their own (a dynamic build fails there: libswiftCore.so not found), and find their model and sample ladder under PREFIX/share/hlsplay, not in this
checkout; the man pages name every option of every --help and render without a groff warning; the
bash completion completes options, subcommands and option values; `make uninstall` removes it all.
The zsh completion, generated from the debug binaries (so not slow, and never skipped by the above),
is loaded in a real interactive zsh on a pseudo-terminal and asked for options and their values.

Slow: it needs the release binaries with the Swift standard library linked in, which `make` and
Tools/test.sh build (`swift build -c release --static-swift-stdlib`); `make install` then only
checks that they are current. Skipped under Tools/test.sh --fast (HLSPLAY_SKIP_SLOW=1) and when
.build/release has no such binaries, unless HLSPLAY_INSTALL_TEST=1 (then make builds them).

Run: python3 -B -m unittest Tools/tests/test_install.py   (from the repository)
"""
import json, os, re, shutil, signal, subprocess, sys, tempfile, unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import hlsplay_tools as tools  # noqa: E402

REPO = tools.REPO
RELEASE = os.path.join(REPO, ".build", "release")
LADDER = os.path.join(REPO, "Samples", "build", "ladder-2s")
# The environment the installed binaries run in: what a machine without Swift has.
SCRUBBED = {"PATH": "/usr/bin:/bin"}
# Any option word in a help text ('--opt' is the help's placeholder for the grammar).
OPTION_WORD = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
HELP_PLACEHOLDERS = {"--opt"}
# A make run: the release build is current (Tools/test.sh built it), so this is the docs and copies.
MAKE_TIMEOUT_SECONDS = 1800
# The plays below: a few seconds of media, generous for a loaded 2-core machine.
PLAY_TIMEOUT_SECONDS = 120


def toolchain_runtime_dir():
    """The folder of the toolchain's Swift runtime libraries (`<toolchain>/usr/lib/swift`), or None."""
    swift = shutil.which("swift")
    if swift is None:
        return None
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(swift))), "lib", "swift")
    return path if os.path.isdir(path) else None


# The binaries below run in a mount namespace of their own with an empty tmpfs over the
# toolchain's runtime folder: as on a machine without Swift, whatever RUNPATH a binary carries
# (a dynamic build's points into the toolchain, and runs from this machine's PATH-less
# environment as well). Needs root and unshare; without them the runs are only scrubbed.
HIDE_SCRIPT = 'mount -t tmpfs hlsplay-no-swift "$0" && exec "$@"'


def hiding_wrapper():
    runtime = toolchain_runtime_dir()
    if runtime is None or os.geteuid() != 0 or shutil.which("unshare") is None:
        return []
    wrapper = ["unshare", "--mount", "sh", "-c", HIDE_SCRIPT, runtime]
    probe = subprocess.run([*wrapper, "sh", "-c", f'test -z "$(ls -A {runtime})"'], env=SCRUBBED,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return wrapper if probe.returncode == 0 else []


def project_version():
    with open(os.path.join(REPO, "Sources", "HLSCore", "Options", "ProjectVersion.swift")) as f:
        return re.search(r'static let string = "([^"]+)"', f.read()).group(1)


def release_is_static():
    for name in ("hlsplay", "hls-origin"):
        path = os.path.join(RELEASE, name)
        if not os.access(path, os.X_OK):
            return False
        if "libswiftCore" in subprocess.run(["ldd", path], stdout=subprocess.PIPE, text=True).stdout:
            return False
    return True


def skip_reason():
    if os.environ.get("HLSPLAY_INSTALL_TEST") == "1":
        return None
    if os.environ.get("HLSPLAY_SKIP_SLOW"):
        return "slow (make install): skipped by HLSPLAY_SKIP_SLOW (Tools/test.sh --fast)"
    if not release_is_static():
        return ".build/release has no --static-swift-stdlib binaries: run make (or HLSPLAY_INSTALL_TEST=1)"
    for tool in ("make", "groff"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Tools/install-deps.sh)"
    return None


def make(*args):
    run = subprocess.run(["make", "--no-print-directory", *args], cwd=REPO, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=MAKE_TIMEOUT_SECONDS)
    if run.returncode != 0:
        raise AssertionError(f"make {' '.join(args)} failed ({run.returncode}):\n{run.stdout[-4000:]}")
    return run.stdout


class InstallTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        reason = skip_reason()
        if reason:
            raise unittest.SkipTest(reason)
        cls.tmp = tempfile.TemporaryDirectory(prefix="hlsplay-install-")
        cls.dest = os.path.join(cls.tmp.name, "dest")
        make("install", f"DESTDIR={cls.dest}", "PREFIX=/usr")
        cls.usr = os.path.join(cls.dest, "usr")
        cls.hlsplay = os.path.join(cls.usr, "bin", "hlsplay")
        cls.origin = os.path.join(cls.usr, "bin", "hls-origin")
        cls.hide = hiding_wrapper()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def scrubbed(self, argv, **kw):
        """Runs an installed binary with nothing of the toolchain in its environment (and, where
        it can be hidden, none on the file system), from a folder outside the checkout (so the
        checkout's models/ and Samples/ are not found)."""
        return subprocess.run([*self.hide, *argv], env=SCRUBBED, cwd=self.tmp.name, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=PLAY_TIMEOUT_SECONDS, **kw)

    def help_text(self, binary, *words):
        run = self.scrubbed([binary, *words, "--help"])
        self.assertEqual(run.returncode, 0, run.stderr)
        return run.stdout

    def test_tree(self):
        for rel, mode in [("bin/hlsplay", 0o755), ("bin/hls-origin", 0o755),
                          ("share/hlsplay/models/stall-logistic-v2.json", 0o644),
                          ("share/man/man1/hlsplay.1", 0o644), ("share/man/man1/hls-origin.1", 0o644),
                          ("share/bash-completion/completions/hlsplay", 0o644),
                          ("share/bash-completion/completions/hls-origin", 0o644),
                          ("share/zsh/site-functions/_hlsplay", 0o644), ("share/zsh/site-functions/_hls-origin", 0o644),
                          ("share/doc/hlsplay/README.md", 0o644), ("share/doc/hlsplay/install.md", 0o644)]:
            path = os.path.join(self.usr, rel)
            self.assertTrue(os.path.isfile(path), rel)
            self.assertEqual(os.stat(path).st_mode & 0o777, mode, rel)
        with open(os.path.join(self.usr, "share/hlsplay/models/stall-logistic-v2.json"), "rb") as a, \
                open(os.path.join(REPO, "models/stall-logistic-v2.json"), "rb") as b:
            self.assertEqual(a.read(), b.read())
        # Nothing outside PREFIX: DESTDIR holds usr/ only.
        self.assertEqual(os.listdir(self.dest), ["usr"])

    def test_binaries_need_no_swift_toolchain(self):
        for binary in (self.hlsplay, self.origin):
            libs = subprocess.run(["ldd", binary], stdout=subprocess.PIPE, text=True).stdout
            self.assertNotIn("not found", libs)
            self.assertNotRegex(libs, r"libswift|libFoundation|libdispatch|libBlocksRuntime|/opt/swift")
            if binary == self.hlsplay:
                self.assertRegex(libs, r"libavformat\.so")
        if not self.hide:
            print(f"\n  (the toolchain stays visible: {toolchain_runtime_dir()} cannot be hidden without root "
                  "and unshare; only the environment is scrubbed)", file=sys.stderr)
        version = project_version()
        run = self.scrubbed([self.hlsplay, "--version"])
        self.assertEqual((run.returncode, run.stdout.strip()), (0, f"hlsplay {version}"), run.stderr)
        run = self.scrubbed([self.origin, "--version"])
        self.assertEqual((run.returncode, run.stdout.strip()), (0, f"hls-origin {version}"), run.stderr)

    def test_installed_origin_and_player_play_the_installed_ladder_with_the_installed_model(self):
        ladder = os.path.join(self.usr, "share/hlsplay/samples/ladder-2s")
        if not os.path.isfile(os.path.join(ladder, "master.m3u8")):
            self.skipTest(f"{LADDER} is not built (Samples/make-all.sh), so make install had no ladder to copy")
        origin = subprocess.Popen([*self.hide, self.origin, ladder, "--port", "0"], env=SCRUBBED, cwd=self.tmp.name,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            line = origin.stdout.readline()
            m = re.match(r"listening on (http://127\.0\.0\.1:\d+/)", line)
            self.assertIsNotNone(m, f"hls-origin printed {line!r}")
            log = os.path.join(self.tmp.name, "played.jsonl")
            # The controller is off by default: --predictor model, so the installed model must be found.
            run = self.scrubbed([self.hlsplay, m.group(1) + "master.m3u8", "--headless", "--duration", "4", "--json",
                                 "--cold", "--predictor", "model", "--log", log])
        finally:
            tools.stop_process(origin)
            origin.stdout.close()
            origin.stderr.close()
        self.assertEqual(run.returncode, 0, run.stderr)
        summary = json.loads(run.stdout)
        self.assertGreaterEqual(summary["playedSeconds"], 3.9)
        self.assert_used_the_installed_model(log)

    def test_no_url_plays_the_installed_sample_ladder(self):
        if not os.path.isfile(os.path.join(self.usr, "share/hlsplay/samples/ladder-2s/master.m3u8")):
            self.skipTest(f"{LADDER} is not built (Samples/make-all.sh)")
        log = os.path.join(self.tmp.name, "default.jsonl")
        run = self.scrubbed([self.hlsplay, "--headless", "--duration", "2", "--json", "--cold", "--predictor", "model",
                             "--log", log])
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertGreaterEqual(json.loads(run.stdout)["playedSeconds"], 1.9)
        self.assert_used_the_installed_model(log)

    def assert_used_the_installed_model(self, log):
        records = tools.read_jsonl(log, strict=True)
        problems = [r for r in records if r.get("type") == "error" and r.get("category") == "predictor"]
        self.assertEqual(problems, [], "the installed binary did not find its model")
        predictors = {r["predictor"] for r in records if r.get("type") == "risk.sample" and "predictor" in r}
        self.assertTrue(predictors and all(p.startswith("model:") for p in predictors), predictors)

    def man_text(self, page):
        path = os.path.join(self.usr, "share/man/man1", page)
        # -ww: every warning; -P-cbou: plain text, no overstrike or escape codes.
        run = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-P-cbou", path], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        self.assertEqual((run.returncode, run.stderr), (0, ""), f"groff warned on {page}")
        return run.stdout

    def test_man_pages_name_every_option_of_every_help(self):
        for page, helps in [("hlsplay.1", [(self.hlsplay,), (self.hlsplay, "check"), (self.hlsplay, "report"),
                                           (self.hlsplay, "simulate")]),
                            ("hls-origin.1", [(self.origin,)])]:
            text = self.man_text(page)
            words = set(re.findall(r"--[a-z][a-z0-9-]*", text))
            for argv in helps:
                options = set(OPTION_WORD.findall(self.help_text(*argv))) - HELP_PLACEHOLDERS
                self.assertTrue(options, argv)
                self.assertEqual(options - words, set(), f"{page} lacks options of {' '.join(argv[1:]) or 'the'} --help")
            self.assertIn("NAME", text)
            self.assertIn(f"{project_version()}", text)
        hlsplay = self.man_text("hlsplay.1")
        for needle in ("share/hlsplay/models/stall-logistic-v2.json", "HLSPLAY_MODEL", "HLSPLAY_SAMPLES"):
            self.assertIn(needle, hlsplay)

    def test_man_page_opens_with_man(self):
        if shutil.which("man") is None:
            self.skipTest("man-db is not installed")
        run = subprocess.run(["man", "-l", os.path.join(self.usr, "share/man/man1/hls-origin.1")],
                             env={**os.environ, "MANPAGER": "cat", "PAGER": "cat", "MANWIDTH": "100"},
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("--max-connections-per-address", run.stdout)

    def complete(self, completion, words, current=None):
        """COMPREPLY after sourcing `completion` for the command line `words` (the last one is being typed)."""
        current = len(words) - 1 if current is None else current
        script = (f"source {completion}\n"
                  f"COMP_WORDS=({' '.join(shquote(w) for w in words)}); COMP_CWORD={current}\n"
                  f"COMP_LINE={shquote(' '.join(words))}; COMP_POINT=${{#COMP_LINE}}\n"
                  f"$(complete -p {words[0]} | sed -E 's/.*-F ([^ ]+).*/\\1/')\n"
                  "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
        run = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], cwd=self.tmp.name,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(run.stderr, "")
        return [l for l in run.stdout.split("\n") if l]

    def test_bash_completion(self):
        comp = os.path.join(self.usr, "share/bash-completion/completions")
        hl, ho = os.path.join(comp, "hlsplay"), os.path.join(comp, "hls-origin")
        for path in (hl, ho):
            self.assertEqual(subprocess.run(["bash", "-n", path]).returncode, 0, path)
        self.assertEqual(self.complete(hl, ["hlsplay", "--pred"]), ["--predictor"])
        self.assertEqual(self.complete(hl, ["hlsplay", "--predictor", "h"]), ["heuristic"])
        self.assertEqual(self.complete(hl, ["hlsplay", "--cmcd", "=", ""]), ["query", "header"])
        self.assertEqual(self.complete(hl, ["hlsplay", "--startup-cap", "="]), ["auto", "off", "first-variant"])
        self.assertEqual(sorted(self.complete(hl, ["hlsplay", "--max-b"])), ["--max-buffer-bytes"])
        self.assertIn("simulate", self.complete(hl, ["hlsplay", "si"]))
        self.assertEqual(self.complete(hl, ["hlsplay", "simulate", "x", "--trace-f"]), ["--trace-format"])
        self.assertEqual(self.complete(hl, ["hlsplay", "simulate", "x", "--trace-format", "s"]), ["sabre"])
        # simulate takes the real session's player options, with their values.
        self.assertEqual(self.complete(hl, ["hlsplay", "simulate", "x", "--predictor", "th"]), ["threshold"])
        self.assertEqual(self.complete(hl, ["hlsplay", "check", "--j"]), ["--json"])
        self.assertEqual(self.complete(hl, ["hlsplay", "report", "--ht"]), ["--html"])
        # A free value (a duration) is not completed with options or files.
        self.assertEqual(self.complete(hl, ["hlsplay", "--duration", ""]), [])
        # A file value completes paths.
        open(os.path.join(self.tmp.name, "session-a.jsonl"), "w").close()
        self.assertEqual(self.complete(hl, ["hlsplay", "--log", "session-"]), ["session-a.jsonl"])
        self.assertEqual(self.complete(ho, ["hls-origin", "--ll"]), ["--ll-hls"])
        self.assertEqual(self.complete(ho, ["hls-origin", "d", "--trace-format", "m"]), ["mahimahi"])
        self.assertEqual(self.complete(ho, ["hls-origin", "d", "--max-connections-p"]), ["--max-connections-per-address"])

    def test_zsh_completion_parses(self):
        if shutil.which("zsh") is None:
            self.skipTest("zsh is not installed")
        for name in ("_hlsplay", "_hls-origin"):
            path = os.path.join(self.usr, "share/zsh/site-functions", name)
            run = subprocess.run(["zsh", "-n", path], stderr=subprocess.PIPE, text=True)
            self.assertEqual((run.returncode, run.stderr), (0, ""), name)


# How long zsh may take to start (compinit) or to answer one TAB, seconds: generous for a loaded machine.
ZSH_ANSWER_SECONDS = 60


def zsh_completions(completion_dir, lines, cwd):
    """What zsh's completion system offers for each command line of `lines` (TAB typed at its end),
    with the completion functions of `completion_dir` first on fpath: a real interactive zsh (-f: no
    user files) on a pseudo-terminal, its line editor driven as a person types. Every match a
    completion function adds is also written to a file: a `compadd` function in front of the builtin
    asks it (`-O`) which of the words match what is typed, as the real add does. TAB is bound to a
    widget that completes, marks the end of that answer in the file and clears the line, so each
    line's matches are known without waiting on a clock. Returns one sorted list per line."""
    import pty
    import select
    import time
    handle, out = tempfile.mkstemp(prefix="hlsplay-zsh-matches-")  # outside cwd: not a file to complete
    os.close(handle)
    setup = "\n".join([
        "bindkey -e; unsetopt beep; LISTMAX=100000",
        f"fpath=({shquote(completion_dir)} $fpath); autoload -Uz compinit; compinit -u -D",
        "compadd() {",
        "  if (( ${@[(I)-[ODA]]} )); then builtin compadd \"$@\"; return; fi",
        f"  local -a matched; builtin compadd -O matched \"$@\"; (( $#matched )) && print -rl -- $matched >>| {shquote(out)}",
        "  builtin compadd \"$@\"",
        "}",
        f"_hlsplay_test_tab() {{ zle complete-word; print -r -- '<answered>' >>| {shquote(out)}; BUFFER=; CURSOR=0 }}",
        "zle -N _hlsplay_test_tab; bindkey '^I' _hlsplay_test_tab",
        f"print -r -- '<ready>' >>| {shquote(out)}", ""])
    pid, fd = pty.fork()
    if pid == 0:  # the child: zsh on the terminal
        try:
            os.chdir(cwd)
            os.execve(shutil.which("zsh"), ["zsh", "-f", "-i"], {"PATH": "/usr/bin:/bin", "TERM": "dumb", "HOME": cwd})
        finally:
            os._exit(127)
    screen = b""

    def written():
        with open(out) as f:
            return f.read()

    def wait_for(done, what):
        nonlocal screen
        deadline = time.monotonic() + ZSH_ANSWER_SECONDS
        while not done(written()):
            if time.monotonic() > deadline:
                raise AssertionError(f"zsh: no {what} within {ZSH_ANSWER_SECONDS} s; its terminal: {screen[-2000:]!r}")
            if select.select([fd], [], [], 0.1)[0]:
                try:
                    screen += os.read(fd, 65536)  # drained, so zsh never blocks on a full terminal
                except OSError:
                    pass
    try:
        os.write(fd, setup.encode())
        wait_for(lambda text: "<ready>\n" in text, "start")
        for n, line in enumerate(lines, 1):
            os.write(fd, (line + "\t").encode())
            wait_for(lambda text: text.count("<answered>\n") >= n, f"answer to {line!r}")
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
        os.close(fd)
    text = written().split("\n")
    os.unlink(out)
    answers, current = [], []
    for word in text[text.index("<ready>") + 1:]:
        if word == "<answered>":
            answers.append(sorted(set(current)))
            current = []
        elif word:
            current.append(word)
    return answers


class ZshCompletionTests(unittest.TestCase):
    """The zsh completion as zsh runs it: generated by gen-docs.py from the debug binaries' --help (as
    `make install` does from the release ones), loaded by compinit in a real zsh, and asked."""

    @classmethod
    def setUpClass(cls):
        if shutil.which("zsh") is None:
            if os.environ.get("CI") == "true":
                raise AssertionError("zsh is not installed: Tools/install-deps.sh installs it")
            raise unittest.SkipTest("zsh is not installed (Tools/install-deps.sh)")
        cls.tmp = tempfile.TemporaryDirectory(prefix="hlsplay-zsh-")
        gen = os.path.join(cls.tmp.name, "gen")
        run = subprocess.run(
            [sys.executable, os.path.join(REPO, "Tools", "install", "gen-docs.py"),
             "--hlsplay", tools.find_binary("hlsplay", "debug"), "--hls-origin", tools.find_binary("hls-origin", "debug"),
             "--out", gen, "--date", "2000-01-01"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            timeout=MAKE_TIMEOUT_SECONDS)
        if run.returncode != 0:
            raise AssertionError(f"gen-docs.py failed: {run.stdout}")
        cls.completions = os.path.join(gen, "zsh")
        cls.cwd = os.path.join(cls.tmp.name, "cwd")
        os.makedirs(cls.cwd)
        for name in ("ca.pem", "session-a.jsonl"):
            open(os.path.join(cls.cwd, name), "w").close()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def accepted_values(self, *argv):
        """What the binary says it accepts, given a value it does not: the list completion must offer."""
        out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(out.returncode, 64, out.stderr)
        listed = out.stderr.splitlines()[0].split("is not one of ", 1)[1]
        return sorted(w.strip() for w in listed.split(","))

    def test_zsh_completes_options_and_their_values(self):
        abr_rules = self.accepted_values(tools.find_binary("hlsplay", "debug"), "URL", "--abr", "?")
        self.assertIn("bola-e", abr_rules)
        cases = [
            ("hlsplay --ab", ["--abr"]),
            ("hlsplay --abr ", abr_rules),
            ("hlsplay --abr=b", ["bola", "bola-e"]),
            ("hlsplay --pred", ["--predictor"]),
            ("hlsplay --startup-cap ", ["auto", "first-variant", "off"]),
            ("hlsplay --cac", ["--cacert"]),
            ("hlsplay --cacert ", ["ca.pem", "session-a.jsonl"]),
            ("hlsplay --insec", ["--insecure"]),
            ("hlsplay --duration ", []),  # a free value: neither options nor files
            ("hlsplay check --j", ["--json"]),
            ("hlsplay report --ht", ["--html"]),
            ("hlsplay simulate x --trace-format s", ["sabre"]),
            ("hlsplay simulate x --predictor th", ["threshold"]),
            ("hls-origin d --trace-format m", ["mahimahi"]),
            ("hls-origin --ll", ["--ll-hls"]),
        ]
        answers = zsh_completions(self.completions, [line for line, _ in cases], self.cwd)
        self.assertEqual(len(answers), len(cases))
        for (line, expected), got in zip(cases, answers):
            self.assertEqual(got, expected, f"zsh completing {line!r}")
        # A subcommand is offered at the first word, beside files.
        first = zsh_completions(self.completions, ["hlsplay si"], self.cwd)[0]
        self.assertIn("simulate", first)


class UninstallTests(unittest.TestCase):
    def test_uninstall_removes_every_installed_file(self):
        reason = skip_reason()
        if reason:
            self.skipTest(reason)
        with tempfile.TemporaryDirectory(prefix="hlsplay-uninstall-") as tmp:
            dest = os.path.join(tmp, "d")
            make("install", f"DESTDIR={dest}", "PREFIX=/opt/hls", "SAMPLES=no")
            self.assertTrue(os.path.isfile(os.path.join(dest, "opt/hls/bin/hlsplay")))
            self.assertFalse(os.path.exists(os.path.join(dest, "opt/hls/share/hlsplay/samples")))
            make("uninstall", f"DESTDIR={dest}", "PREFIX=/opt/hls")
            left = [os.path.join(root, f) for root, _, files in os.walk(dest) for f in files]
            self.assertEqual(left, [])


def shquote(word):
    return "'" + word.replace("'", "'\\''") + "'"


if __name__ == "__main__":
    unittest.main()
