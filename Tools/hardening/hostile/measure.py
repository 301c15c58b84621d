#!/usr/bin/env python3
"""Runs one command and reports how it ended and its peak resident memory, as JSON on stdout.

    measure.py [--timeout SECONDS] [--stdout FILE] [--stderr FILE] -- COMMAND [ARG...]

{"exit": 65, "signal": null, "maxRSSKiB": 47212, "seconds": 0.21, "timedOut": false}

The command is started with a real fork() and exec, and reaped with wait4(), whose rusage
ru_maxrss is the command's own high-water mark (KiB): nothing between two polls is missed.
Why not posix_spawn from the test process (or Foundation's Process, which uses it): glibc's
posix_spawn shares the parent's memory until exec (CLONE_VM), and Linux carries that memory's
high-water mark into the child's ru_maxrss at exec, so a 500 MB test process would make every
child look 500 MB large. Forked from this small interpreter, the carried mark is this
interpreter's (about 10 MB), far below any bound the corpus states. On a timeout the command is
killed with SIGKILL and "timedOut" is true.
"""
import json, os, signal, sys, time

def main(argv):
    timeout, out, err = None, os.devnull, os.devnull
    i = 0
    while i < len(argv) and argv[i] != "--":
        if argv[i] == "--timeout": timeout = float(argv[i + 1]); i += 2
        elif argv[i] == "--stdout": out = argv[i + 1]; i += 2
        elif argv[i] == "--stderr": err = argv[i + 1]; i += 2
        else: sys.exit(f"measure.py: unknown option {argv[i]}")
    command = argv[i + 1:]
    if not command: sys.exit("measure.py: no command after --")
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            fd = os.open(os.devnull, os.O_RDONLY); os.dup2(fd, 0)
            fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644); os.dup2(fd, 1)
            fd = os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644); os.dup2(fd, 2)
            os.execv(command[0], command)
        finally:
            os._exit(127)
    timed_out = False
    while True:
        waited, status, usage = os.wait4(pid, os.WNOHANG)
        if waited == pid: break
        if not timed_out and timeout is not None and time.monotonic() - started > timeout:
            timed_out = True
            os.kill(pid, signal.SIGKILL)
        time.sleep(0.02)
    print(json.dumps({
        "exit": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "maxRSSKiB": usage.ru_maxrss,
        "seconds": round(time.monotonic() - started, 3),
        "timedOut": timed_out,
    }))

if __name__ == "__main__":
    main(sys.argv[1:])
