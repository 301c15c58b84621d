#!/usr/bin/env python3
"""GStreamer as a peer player in real time, alone or beside hlsplay on the same ladder and link
(docs/abr.md, "GStreamer as a peer").

    Tools/abr/peers.py gstreamer ROOT --duration 60 --trace TRACE --out DIR
    Tools/abr/peers.py compare   ROOT --duration 60 --trace TRACE --out DIR [--hlsplay-arg=--abr --hlsplay-arg=bola-e]

`gstreamer` plays ROOT/master.m3u8 with playbin3 (hlsdemux2) for --duration seconds of wall time
against its own hls-origin; `compare` then plays it with hlsplay for as long against a second origin
with the same shaping, one after the other (each player meets the trace from its start). Each run's
folder (DIR/gstreamer, DIR/hlsplay) keeps the origin's request log, the player's raw events (session
log) and its record.json; `compare` also writes DIR/compare.json (both records) and prints one line:
hlsplay | GStreamer. The binaries are the release build's unless --build says otherwise.
"""
import argparse
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import gstreamer_peer as peer  # noqa: E402
import hlsplay_tools as tools  # noqa: E402


def origin_args(a):
    out = []
    if a.trace:
        out += ["--trace", os.path.abspath(a.trace)] + (["--trace-format", a.trace_format] if a.trace_format else [])
    if a.rate:
        out += ["--rate", a.rate]
    if a.rtt:
        out += ["--rtt", a.rtt]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=("gstreamer", "compare"))
    ap.add_argument("root", help="the folder hls-origin serves (a VOD ladder)")
    ap.add_argument("--master", default="master.m3u8", help="the multivariant playlist under ROOT")
    ap.add_argument("--duration", type=float, default=30.0, help="wall seconds each player plays (default 30)")
    ap.add_argument("--media-seconds", type=float, default=0,
                    help="stop each player once this much media has played (hlsplay's --duration); "
                         "--duration stays the bound in wall time")
    ap.add_argument("--trace", help="throughput trace hls-origin replays (--trace)")
    ap.add_argument("--trace-format", help="mahimahi | pensieve | sabre (hls-origin --trace-format)")
    ap.add_argument("--rate", help="constant link rate instead (hls-origin --rate, e.g. 2mbit)")
    ap.add_argument("--rtt", help="first-byte delay (hls-origin --rtt)")
    ap.add_argument("--out", required=True, help="folder for the raw files and records")
    ap.add_argument("--build", default="release", help="release | debug | a folder with hlsplay and hls-origin")
    ap.add_argument("--hlsplay-arg", action="append", default=[], help="an argument for hlsplay (repeatable)")
    a = ap.parse_args(argv)
    oargs = origin_args(a)
    try:
        g = peer.run_gstreamer(a.root, a.duration, os.path.join(a.out, "gstreamer"), master=a.master,
                               origin_args=oargs, build=a.build, media_seconds=a.media_seconds)
        if a.command == "gstreamer":
            print(json.dumps(g))
            return 0 if not g["errors"] else 1
        h = peer.run_hlsplay_peer(a.root, a.duration, os.path.join(a.out, "hlsplay"), master=a.master,
                                  origin_args=oargs, hlsplay_args=a.hlsplay_arg, build=a.build,
                                  media_seconds=a.media_seconds)
    except tools.ToolError as e:
        print(f"peers: {e}", file=sys.stderr)
        return 2
    peer.write_json(os.path.join(a.out, "compare.json"), {"hlsplay": h, "gstreamer": g})
    print("hlsplay | gstreamer: " + peer.comparison_line(h, g))
    return 0


if __name__ == "__main__":
    sys.exit(main())
