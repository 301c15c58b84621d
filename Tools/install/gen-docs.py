#!/usr/bin/env python3
"""Writes the man pages hlsplay.1 and hls-origin.1, and the bash and zsh completions of both
commands, from the binaries' own --help text, so they cannot drift from what the binaries accept.

    Tools/install/gen-docs.py --hlsplay BIN --hls-origin BIN --out DIR [--date YYYY-MM-DD]

DIR receives man1/hlsplay.1, man1/hls-origin.1, bash/hlsplay, bash/hls-origin, zsh/_hlsplay and
zsh/_hls-origin. `make install` runs it on the release binaries it installs (docs/install.md).

What the help text cannot say is kept here, beside the parser, and checked against the help where
it names options: the NAME lines, the FILES and ENVIRONMENT sections (the model and sample lookup
order of ModelLocator and SampleLocator). The value words of options whose help lists them in prose
are asked of the binary itself (VALUE_PROBES: a value it does not accept makes it name every one it
does), and generation fails if one of them is missing from that option's help.

The help grammar read here (every --help of the project follows it): the first block, up to a blank
line, is the synopsis; an option line is indented and starts with `--name` (or `--a / --b`, or a
short alias first: `-k, --insecure`), then
an optional argument (`FILE`, `AT:DUR`, `SECONDS|off`, `query|header`, `'NAME: VALUE'`), then its
description, which continues on the lines indented deeper; any other line is prose.
"""
import argparse
import os
import re
import subprocess
import sys

OPTION_LINE = re.compile(
    r"^(?P<indent> +)(?P<names>(?:-[a-zA-Z], )?--[a-z0-9][a-z0-9-]*(?: / --[a-z0-9][a-z0-9-]*)*)"
    r"(?:[ =](?P<arg>'[^']*'|[A-Z][A-Z0-9_:.]*(?:x[A-Z]+)?(?:\|[a-z0-9]+)*|[a-z0-9-]+(?:\|[a-z0-9-]+)+))?"
    r"(?: +(?P<desc>\S.*))?$")
# Any option a help text names, in an option line or in prose.
OPTION_WORD = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
# An option in a synopsis line, with its argument: `[--base URL]`, `--html OUT.html`, `[--json]`.
SYNOPSIS_OPTION = re.compile(r"(--[a-z0-9][a-z0-9-]*)(?:[ =]([A-Z][A-Za-z0-9_:]*(?:\.[a-z]+)?))?(?=[\s\]|]|$)")
# A list of options in prose: `player options (as for a real session): --duration, --log, --json`.
PROSE_OPTION_LIST = re.compile(r"options[^:.]*:((?:\s*--[a-z0-9-]+,?)+)")
# Placeholders the help texts use to explain the grammar, not options.
NOT_OPTIONS = {"--opt"}
# Arguments whose value is a file or a folder (completion offers paths).
FILE_ARGS = {"FILE", "OUT.html", "SESSION.jsonl", "TRACE"}
DIR_ARGS = {"ROOT", "LADDER"}

# Options whose help lists their values in prose. The binary is the authority on the values: given
# one it does not accept, it exits 64 with "--opt: 'x' is not one of a, b, c" (each list comes from the
# option's own enum where there is one), and that list is what completion offers. Each word must also
# appear in the option's description (checked), so a value the help forgets fails the generation.
# Key: (command, option) → the words before the option on the probing command line.
VALUE_PROBES = {
    ("hlsplay", "--predictor"): ["hlsplay", "URL"],
    ("hlsplay", "--startup-cap"): ["hlsplay", "URL"],
    ("hlsplay", "--abr"): ["hlsplay", "URL"],
    ("simulate", "--trace-format"): ["hlsplay", "simulate", "LADDER"],
    ("hls-origin", "--trace-format"): ["hls-origin", "ROOT"],
}
# A value no option accepts, so the binary answers with its list.
PROBE_VALUE = "not-a-value"
ACCEPTED_VALUES = re.compile(r"is not one of (.+)$")
# Filled by main() from VALUE_PROBES.
VALUE_WORDS = {}

SUBCOMMANDS = ["check", "report", "simulate"]

NAMES = {
    "hlsplay": "headless reference HLS player: startup, stalls and every request, in a session log",
    "hls-origin": "HTTP origin for HLS tests: link shaping, traces, faults, live and LL-HLS from VOD",
}

FILES = {
    "hlsplay": [
        ("PREFIX/share/hlsplay/models/stall-logistic-v2.json",
         "The stall-risk model of --predictor model (or --model FILE; the controller is off by default). The first of these is used: "
         "--model FILE; $HLSPLAY_MODEL; ../share/hlsplay/models/stall-logistic-v2.json from the folder of "
         "the executable, symbolic links resolved (an installed binary); models/stall-logistic-v2.json under "
         "the current directory, then under the executable's folder and each of its six parents (a source "
         "checkout); /usr/local/share/hlsplay/models/, then /usr/share/hlsplay/models/. When none exists the "
         "session logs an error record (category predictor) and uses the heuristic predictor."),
        ("PREFIX/share/hlsplay/samples/ladder-2s/",
         "The embedded default, played when no URL is given: $HLSPLAY_SAMPLES; "
         "../share/hlsplay/samples/ladder-2s from the executable's folder; Samples/build/ladder-2s under "
         "the current directory, the executable's folder or its five parents. Installed by make install "
         "when the checkout has built it (Samples/make-all.sh)."),
        ("~/.cache/hlsplay/estimates.json",
         "The estimate store: the last measured bandwidth per origin host and local network "
         "($XDG_CACHE_HOME/hlsplay/estimates.json when XDG_CACHE_HOME is set; --estimate-store, --cold)."),
    ],
    "hls-origin": [],
}

ENVIRONMENT = {
    "hlsplay": [
        ("HLSPLAY_MODEL", "The stall model file, when --model is not given (see FILES). A missing file is "
                          "reported in the session log, not skipped."),
        ("HLSPLAY_SAMPLES", "A folder with master.m3u8 to play when no URL is given (see FILES)."),
        ("XDG_CACHE_HOME, HOME", "Where the estimate store lives (see FILES)."),
        ("http_proxy, https_proxy, no_proxy, ALL_PROXY",
         "Read by libcurl when --proxy is not given."),
        ("TERM", "With TERM=dumb (or unset) the status line uses no escape codes."),
    ],
    "hls-origin": [],
}

SEE_ALSO = {
    "hlsplay": "hls\\-origin(1), ffprobe(1), curl(1)",
    "hls-origin": "hlsplay(1)",
}


# ---------------------------------------------------------------- reading the help

def run_help(binary, *words):
    out = subprocess.run([binary, *words, "--help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, timeout=60)
    if out.returncode != 0 or not out.stdout.strip():
        sys.exit(f"gen-docs: `{binary} {' '.join(words)} --help` failed ({out.returncode}): {out.stderr.strip()}")
    return out.stdout.rstrip("\n")


def ask_values(binaries, key, option):
    """The values `option` accepts, as the binary states them when given one it does not accept."""
    command, *words = VALUE_PROBES[(key, option)]
    argv = [binaries[command], *words, option, PROBE_VALUE]
    out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    first = out.stderr.splitlines()[0] if out.stderr else ""
    found = ACCEPTED_VALUES.search(first)
    if out.returncode != 64 or found is None:
        sys.exit(f"gen-docs: `{' '.join(argv)}` did not list {option}'s values "
                 f"(exit {out.returncode}): {out.stderr.strip()}")
    return [w.strip() for w in found.group(1).split(",")]


class Option:
    def __init__(self, names, arg, desc, indent):
        self.names, self.arg, self.desc_lines, self.indent = names, arg, ([desc] if desc else []), indent

    @property
    def desc(self):
        return " ".join(self.desc_lines)


def parse_help(text):
    """(synopsis lines, body items): an item is ("para", [lines]) or ("option", Option)."""
    lines = text.split("\n")
    end = lines.index("") if "" in lines else len(lines)
    synopsis, body = lines[:end], lines[end + 1:]
    items, para, option = [], None, None
    for line in body:
        if not line.strip():
            para = option = None
            continue
        m = OPTION_LINE.match(line)
        indent = len(line) - len(line.lstrip(" "))
        if m and (option is None or indent <= option.indent):
            option = Option(re.split(r", | / ", m.group("names")), m.group("arg"), m.group("desc"), indent)
            items.append(("option", option))
            para = None
        elif option is not None and indent > option.indent:
            option.desc_lines.append(line.strip())
        else:
            option = None
            if para is None:
                para = []
                items.append(("para", para))
            para.append(line.strip())
    return synopsis, items


def option_items(items):
    return [o for kind, o in items if kind == "option"]


# ---------------------------------------------------------------- man pages

def roff(text):
    """Plain help text as roff running text."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join(("\\&" + l if l.startswith((".", "'")) else l) for l in text.split("\n"))


def roff_items(items):
    out = []
    for kind, item in items:
        if kind == "para":
            out += [".PP", roff("\n".join(item))]
        else:
            names = ", ".join(f"\\fB{roff(n)}\\fR" for n in item.names)
            arg = f" \\fI{roff(item.arg)}\\fR" if item.arg else ""
            out += [".TP", names + arg, roff(item.desc) if item.desc else "\\&"]
    return out


def man_page(command, version, date, helps):
    """helps: [(subcommand or None, help text)]; the first is the command's own."""
    own_synopsis, own_items = parse_help(helps[0][1])
    out = [
        f'.\\" {command}(1): generated by Tools/install/gen-docs.py from `{command} --help`; do not edit.',
        f'.TH {roff(command.upper())} 1 "{date}" "{roff(command)} {version}" "User Commands"',
        ".nh", ".ad l",
        ".SH NAME", f"{roff(command)} \\- {roff(NAMES[command])}",
        ".SH SYNOPSIS", ".nf", roff("\n".join(strip_usage(own_synopsis))), ".fi",
        ".SH DESCRIPTION",
    ]
    out += roff_items(own_items)
    for sub, text in helps[1:]:
        synopsis, items = parse_help(text)
        out += [f'.SH "{command.upper()} {sub.upper()}"', ".nf", roff("\n".join(strip_usage(synopsis))), ".fi"]
        out += roff_items(items)
    if ENVIRONMENT[command]:
        out.append(".SH ENVIRONMENT")
        for name, text in ENVIRONMENT[command]:
            out += [".TP", f"\\fB{roff(name)}\\fR", roff(text)]
    if FILES[command]:
        out.append(".SH FILES")
        for name, text in FILES[command]:
            out += [".TP", f"\\fI{roff(name)}\\fR", roff(text)]
    out += [".SH SEE ALSO", SEE_ALSO[command]]
    return "\n".join(out) + "\n"


def strip_usage(synopsis):
    """The synopsis lines without the leading `usage: ` and its indentation."""
    lines = [l for l in synopsis]
    if lines and lines[0].startswith("usage: "):
        pad = len("usage: ")
        lines = [lines[0][pad:]] + [l[pad:] if l[:pad].strip() == "" else l.strip() for l in lines[1:]]
    return lines


# ---------------------------------------------------------------- completions

class Spec:
    """What completion knows of one command: its options, which take a value and of what kind.

    Its options: those of its own synopsis lines (`[--base URL]`: one taking a URL), its option
    lines, and a prose list of options (`player options (as for a real session): --duration, ...`,
    whose values are then those of `main`'s same options); an option only mentioned in prose
    (`written by --log`) is not one of its own."""

    def __init__(self, key, text, subcommands=(), main=None):
        self.key = key
        synopsis, items = parse_help(text)
        self.options, self.descs, self.values = [], {}, {}  # values: option -> ("file"|"dir"|"words"|"any", words)

        def add(name, arg=None, desc=None):
            if name in NOT_OPTIONS:
                return
            if name not in self.options:
                self.options.append(name)
            if desc and name not in self.descs:
                self.descs[name] = desc
            if arg and name not in self.values:
                self.values[name] = value_kind(key, name, arg, self.descs.get(name, ""))

        for o in option_items(items):
            for name in o.names:
                add(name, o.arg, o.desc)
        for line in strip_usage(synopsis):
            words = line.split()
            if len(words) > 1 and words[1] in subcommands:
                continue  # another command's synopsis
            for name, arg in SYNOPSIS_OPTION.findall(line):
                add(name, arg or None)
        for kind, item in items:
            if kind == "para":
                for listed in PROSE_OPTION_LIST.findall(" ".join(item)):
                    for name in OPTION_WORD.findall(listed):
                        # Listed as the real session's options: their values are the main command's.
                        if main is not None and name in main.values:
                            self.descs.setdefault(name, main.descs.get(name))
                            self.values.setdefault(name, main.values[name])
                        add(name)
        add("--help", None, "print the help and exit")
        for (k, name), words in VALUE_WORDS.items():
            if k == key and name not in self.values:
                sys.exit(f"gen-docs: VALUE_PROBES names {name} of {key}, which its help has no option line for")

    def takes_value(self, name):
        return name in self.values


def value_kind(key, name, arg, desc):
    if (key, name) in VALUE_WORDS:
        words = VALUE_WORDS[(key, name)]
        missing = [w for w in words if not re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", desc)]
        if missing:
            sys.exit(f"gen-docs: {key} {name}: the binary accepts {missing}, which its help does not name")
        return ("words", words)
    if arg in FILE_ARGS:
        return ("file", [])
    if arg in DIR_ARGS:
        return ("dir", [])
    literal = [w for w in arg.split("|") if re.fullmatch(r"[a-z0-9-]+", w)]
    if literal:
        return ("words", literal)
    return ("any", [])


def bash_case_values(spec):
    """The `case "$opt" in` arms completing an option's value."""
    arms = []
    for kind in ("file", "dir", "words", "any"):
        names = [n for n, (k, _) in spec.values.items() if k == kind]
        if kind == "words":
            for n in names:
                arms.append(f'        {n}) COMPREPLY=($(compgen -W "{" ".join(spec.values[n][1])}" -- "$cur")); return ;;')
            continue
        if not names:
            continue
        action = {"file": 'COMPREPLY=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null',
                  "dir": 'COMPREPLY=($(compgen -d -- "$cur")); compopt -o filenames 2>/dev/null',
                  "any": "COMPREPLY=()"}[kind]
        arms.append(f"        {'|'.join(names)}) {action}; return ;;")
    return "\n".join(arms)


def bash_completion(command, specs, positional):
    """specs: {subcommand or "": Spec}; positional: {subcommand or "": "file"|"dir"}."""
    fn = "_" + command.replace("-", "_")
    out = [f"# bash completion for {command}: generated by Tools/install/gen-docs.py from `{command} --help`; do not edit."]
    for sub, spec in specs.items():
        name = f"{fn}_{sub}" if sub else fn + "_main"
        pos = positional[sub]
        pos_action = ('COMPREPLY=($(compgen -d -- "$cur")); compopt -o filenames 2>/dev/null' if pos == "dir"
                      else 'COMPREPLY=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null')
        out += [
            f"# {command}{' ' + sub if sub else ''}: cur, the option before it (or the option of --opt=cur) -> COMPREPLY",
            f"{name}() {{",
            '    local cur=$1 prev=$2',
            '    case "$prev" in',
            *([bash_case_values(spec)] if spec.values else []),
            '    esac',
            '    if [[ $cur == -* ]]; then',
            f'        COMPREPLY=($(compgen -W "{" ".join(spec.options)}" -- "$cur"))',
            '    else',
            f'        {pos_action}',
            '    fi',
            "}",
        ]
    subs = [s for s in specs if s]
    out += [
        f"{fn}() {{",
        '    local cur=${COMP_WORDS[COMP_CWORD]} prev=""',
        '    (( COMP_CWORD > 0 )) && prev=${COMP_WORDS[COMP_CWORD-1]}',
        "    COMPREPLY=()",
        "    # --opt=value: bash splits it at '=' (COMP_WORDBREAKS) into --opt, = and value.",
        '    if [[ $cur == "=" ]]; then prev=${COMP_WORDS[COMP_CWORD-1]}; cur=""',
        '    elif [[ $prev == "=" ]] && (( COMP_CWORD > 1 )); then prev=${COMP_WORDS[COMP_CWORD-2]}',
        '    elif [[ $cur == --*=* ]]; then prev=${cur%%=*}; cur=${cur#*=}',
        "    fi",
    ]
    if subs:
        out += [
            f'    case "${{COMP_WORDS[1]:-}}" in',
            *[f"        {s}) if (( COMP_CWORD > 1 )); then {fn}_{s} \"$cur\" \"$prev\"; return; fi ;;" for s in subs],
            "    esac",
            "    if (( COMP_CWORD == 1 )) && [[ $cur != -* ]]; then",
            f'        COMPREPLY=($(compgen -W "{" ".join(subs)}" -- "$cur"))',
            f'        local more=($(compgen -f -- "$cur"))',
            '        COMPREPLY+=("${more[@]}")',
            "        return",
            "    fi",
        ]
    out += [f'    {fn}_main "$cur" "$prev"', "}", f"complete -F {fn} {command}"]
    return "\n".join(out) + "\n"


def zsh_quote(text):
    return text.replace("\\", "\\\\").replace("'", "'\\''").replace("[", "\\[").replace("]", "\\]").replace(":", "\\:")


# The longest option description zsh shows beside a candidate (cut at a word, with an ellipsis).
ZSH_DESCRIPTION_CHARS = 100


def short_description(text):
    if len(text) <= ZSH_DESCRIPTION_CHARS:
        return text
    return text[:ZSH_DESCRIPTION_CHARS].rsplit(" ", 1)[0].rstrip(",;:(") + "…"


def zsh_specs(spec):
    """_arguments specs: `--opt=[description]:value name:action` (value in the next word or after
    `=`); `*` before an option whose help says it is repeatable."""
    out = []
    for name in spec.options:
        full = spec.descs.get(name) or name.lstrip("-").replace("-", " ")
        desc = zsh_quote(short_description(full))
        repeat = "*" if re.search(r"\brepeatable\b", full) else ""
        if spec.takes_value(name):
            kind, words = spec.values[name]
            action = {"file": "_files", "dir": "_files -/", "words": f"({' '.join(words)})", "any": " "}[kind]
            out.append(f"'{repeat}{name}=[{desc}]:{zsh_quote(name.lstrip('-'))}:{action}'")
        else:
            out.append(f"'{repeat}{name}[{desc}]'")
    return out


def zsh_completion(command, specs, positional):
    fn = "_" + command
    subs = [s for s in specs if s]
    out = [f"#compdef {command}",
           f"# zsh completion for {command}: generated by Tools/install/gen-docs.py from `{command} --help`; do not edit.",
           f"{fn}() {{"]
    main = specs[""]
    main_pos = "_files -/" if positional[""] == "dir" else "_files"
    if subs:
        out += ["  if (( CURRENT > 2 )); then", "    case $words[2] in"]
        for s in subs:
            pos = "_files -/" if positional[s] == "dir" else "_files"
            out += [f"      {s})", "        shift words; (( CURRENT-- ))",
                    "        _arguments -S \\", *[f"          {x} \\" for x in zsh_specs(specs[s])],
                    f"          '*:{s} argument:{pos}'", "        return ;;"]
        out += ["    esac", "  fi"]
        first = f"'1:URL or subcommand:{{_alternative \"subcommands:subcommand:({' '.join(subs)})\" \"files:file:_files\"}}'"
        out += ["  _arguments -S \\", *[f"    {x} \\" for x in zsh_specs(main)], f"    {first}"]
    else:
        out += ["  _arguments -S \\", *[f"    {x} \\" for x in zsh_specs(main)], f"    '1:root folder:{main_pos}'"]
    out += ["}", f'{fn} "$@"']
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hlsplay", required=True)
    ap.add_argument("--hls-origin", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--date", default=None, help="the man pages' date (default: $SOURCE_DATE_EPOCH, else today)")
    args = ap.parse_args()
    if args.date is None:
        import datetime
        epoch = os.environ.get("SOURCE_DATE_EPOCH")
        stamp = datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc) if epoch else datetime.datetime.now()
        args.date = stamp.strftime("%Y-%m-%d")
    version = subprocess.run([args.hlsplay, "--version"], stdout=subprocess.PIPE, text=True,
                             timeout=60).stdout.split()[-1]
    binaries = {"hlsplay": args.hlsplay, "hls-origin": args.hls_origin}
    for (key, option) in VALUE_PROBES:
        VALUE_WORDS[(key, option)] = ask_values(binaries, key, option)
    hlsplay_helps = [(None, run_help(args.hlsplay))] + [(s, run_help(args.hlsplay, s)) for s in SUBCOMMANDS]
    origin_helps = [(None, run_help(args.hls_origin))]

    files = {}
    files["man1/hlsplay.1"] = man_page("hlsplay", version, args.date, hlsplay_helps)
    files["man1/hls-origin.1"] = man_page("hls-origin", version, args.date, origin_helps)
    hl_specs = {"": Spec("hlsplay", hlsplay_helps[0][1], SUBCOMMANDS)}
    for s, text in hlsplay_helps[1:]:
        hl_specs[s] = Spec(s, text, main=hl_specs[""])
    hl_pos = {"": "file", "check": "file", "report": "file", "simulate": "file"}  # LADDER: a folder or a playlist
    origin_specs = {"": Spec("hls-origin", origin_helps[0][1])}
    files["bash/hlsplay"] = bash_completion("hlsplay", hl_specs, hl_pos)
    files["bash/hls-origin"] = bash_completion("hls-origin", origin_specs, {"": "dir"})
    files["zsh/_hlsplay"] = zsh_completion("hlsplay", hl_specs, hl_pos)
    files["zsh/_hls-origin"] = zsh_completion("hls-origin", origin_specs, {"": "dir"})
    for rel, text in files.items():
        path = os.path.join(args.out, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
