#!/usr/bin/env python3
"""hlsplay benchmark: decode cost and memory, side by side in one run.

Prints, for the 1080p rung of the sample ladder:
  * CPU seconds per media second of hlsplay (loopback origin, full decode,
    real-time pacing) vs `ffmpeg -re -i <the same segments> -f null -` (paced
    the same way), and their ratio (target <= 1.1); ffmpeg as a burst and with
    its default threads for scale;
  * hlsplay's peak RSS and peak anonymous memory (heap, stacks, FFmpeg frame
    pools: the process's own memory, sampled from /proc/PID/smaps_rollup every
    0.1 s; RSS also counts the code pages of the ~100 shared libraries FFmpeg
    and Foundation pull in), and the most media bytes it held in its forward
    buffer (target: own memory <= 50 MB + those bytes). ffmpeg's figures are
    shown beside them for scale.

CPU is user+sys from getrusage of each child process (hls-origin runs in its
own process and is not counted). Each side runs REPEAT times; medians are
reported. Usage: Tools/bench/bench.sh [--ladder DIR] [--repeat N]
"""
import argparse, os, resource, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from hlsplay_tools import REPO as ROOT, Origin, find_binary, json_lines, read_log  # noqa: E402


def run_sampled(cmd):
    """Runs cmd; returns (completed process, cpu seconds, peak RSS MB, peak anonymous MB)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak_rss = peak_anon = 0
    import threading
    out = {}
    reader = threading.Thread(target=lambda: out.update(zip(("stdout", "stderr"), p.communicate())))
    reader.start()
    while p.poll() is None:
        try:
            with open(f"/proc/{p.pid}/smaps_rollup") as f:
                fields = {l.split(":")[0]: int(l.split()[1]) for l in f if l.split()[-1] == "kB"}
            peak_rss = max(peak_rss, fields.get("Rss", 0))
            peak_anon = max(peak_anon, fields.get("Anonymous", 0))
        except (FileNotFoundError, ProcessLookupError, ValueError):
            pass
        time.sleep(0.1)
    reader.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    p.stdout_text, p.stderr_text = out.get("stdout", ""), out.get("stderr", "")
    return p, cpu, peak_rss / 1024, peak_anon / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ladder", default=os.path.join(ROOT, "Samples/build/ladder-2s"))
    ap.add_argument("--variant", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    hlsplay = find_binary("hlsplay")
    variant_dir = os.path.join(args.ladder, f"v{args.variant}")
    segments = sorted(f for f in os.listdir(variant_dir) if f.endswith(".ts"))
    media_seconds = 0.0
    with open(os.path.join(variant_dir, "prog.m3u8")) as f:
        for line in f:
            if line.startswith("#EXTINF:"):
                media_seconds += float(line[8:].split(",")[0])

    origin = Origin(args.ladder)
    url = origin.url("master.m3u8")

    hls = {"cpu": [], "rss": [], "anon": [], "buffered": []}
    ff = {"cpu": [], "rss": [], "anon": []}
    ff_auto = {"cpu": [], "rss": [], "anon": []}
    ff_burst = {"cpu": [], "rss": [], "anon": []}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(args.repeat):
                log = os.path.join(tmp, f"s{i}.jsonl")
                p, cpu, rss, anon = run_sampled([hlsplay, url, "--headless", "--variant", str(args.variant),
                                                 "--json", "--log", log, "--no-status"])
                if p.returncode != 0:
                    sys.exit(f"hlsplay failed: {p.stderr_text}")
                summary = json_lines(p.stdout_text)[-1]
                if summary["decodedVideoFrames"] <= 0 or summary["stallCount"] != 0:
                    print(f"warning: run {i}: {summary['decodedVideoFrames']} frames, {summary['stallCount']} stalls", file=sys.stderr)
                hls["cpu"].append(cpu); hls["rss"].append(rss); hls["anon"].append(anon)
                hls["buffered"].append(max_buffered_bytes(log) / 1e6)

                concat = "concat:" + "|".join(os.path.join(variant_dir, s) for s in segments)
                # The comparison: the same decoder threads as hlsplay's default (1), paced in real time
                # with -re as hlsplay is (a burst run at 5x real time gets higher CPU clocks and warmer
                # caches, so its CPU seconds are not comparable); then, for scale, the same as a burst,
                # and FFmpeg's default threads.
                for extra, into in ((["-re", "-threads", "1"], ff), (["-threads", "1"], ff_burst), (["-threads", "0"], ff_auto)):
                    p, cpu, rss, anon = run_sampled(["ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin"]
                                                    + extra + ["-i", concat, "-f", "null", "-"])
                    if p.returncode != 0:
                        sys.exit(f"ffmpeg failed: {p.stderr_text}")
                    into["cpu"].append(cpu); into["rss"].append(rss); into["anon"].append(anon)
    finally:
        origin.stop()

    m = statistics.median
    h = m(hls["cpu"]) / media_seconds
    f = m(ff["cpu"]) / media_seconds
    buffered = m(hls["buffered"])
    print(f"sample: {args.ladder} variant {args.variant}, {len(segments)} segments, {media_seconds:.1f} s of media, {args.repeat} runs each (medians)")
    fa = m(ff_auto["cpu"]) / media_seconds
    fb = m(ff_burst["cpu"]) / media_seconds
    print("hlsplay: loopback origin, 1 decoder thread per track (its default), real-time pacing")
    print("ffmpeg:  -re -threads 1 -i concat:<the same segments> -f null -  (paced like hlsplay); then, for scale,")
    print("         the same without -re (a burst at ~5x real time), and with FFmpeg's default threads")
    print(f"{'':36}{'hlsplay':>10}{'ffmpeg -re':>12}{'ratio':>8}{'burst':>10}{'threads 0':>11}")
    print(f"{'CPU seconds per media second':36}{h:10.4f}{f:12.4f}{h / f:8.2f}{fb:10.4f}{fa:11.4f}   (target ratio <= 1.10)")
    hmin, fmin = min(hls["cpu"]) / media_seconds, min(ff["cpu"]) / media_seconds
    print(f"{'  least disturbed run (min)':36}{hmin:10.4f}{fmin:12.4f}{hmin / fmin:8.2f}{min(ff_burst['cpu']) / media_seconds:10.4f}{min(ff_auto['cpu']) / media_seconds:11.4f}")
    print(f"{'  spread over runs (max/min)':36}{max(hls['cpu']) / min(hls['cpu']):10.2f}{max(ff['cpu']) / min(ff['cpu']):12.2f}{'':8}{max(ff_burst['cpu']) / min(ff_burst['cpu']):10.2f}")
    print(f"{'peak RSS, MB':36}{m(hls['rss']):10.1f}{m(ff['rss']):12.1f}{'':8}{m(ff_burst['rss']):10.1f}{m(ff_auto['rss']):11.1f}")
    print(f"{'peak anonymous (own) memory, MB':36}{m(hls['anon']):10.1f}{m(ff['anon']):12.1f}{'':8}{m(ff_burst['anon']):10.1f}{m(ff_auto['anon']):11.1f}")
    print(f"{'most media buffered ahead, MB':36}{buffered:10.1f}")
    print(f"{'own memory - buffered, MB':36}{m(hls['anon']) - buffered:10.1f}{'':16}{'':8}   (target <= 50)")


def max_buffered_bytes(log_path):
    """The most segment bytes ahead of the playhead at any segment append."""
    segments, position, best = [], 0.0, 0
    for e in read_log(log_path, strict=True).of_type("buffer.sample", "segment.buffered"):
        if e["type"] == "buffer.sample":
            position = e["positionSeconds"]
        else:
            segments.append((e["startSeconds"] + e["durationSeconds"], e["bytes"]))
            best = max(best, sum(b for end, b in segments if end > position))
    return best


if __name__ == "__main__":
    main()
