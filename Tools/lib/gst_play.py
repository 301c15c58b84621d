"""GStreamer's playbin3 playing one URL to fake sinks, as a peer player: the raw events of one run.

Run by gstreamer_peer.py (one process per run, so that a crash or a hang of GStreamer ends only this
process), with Debian's interpreter and python3-gi:

    /usr/bin/python3 Tools/lib/gst_play.py --duration 10 [--media-seconds N] [--max-bitrate BPS] < url

It loads GStreamer and builds the pipeline first, prints `{"type": "ready"}`, and only then reads the
URL from stdin, so that the caller can start its origin (and the trace the origin replays) just before
the player asks for the first byte. Then it plays for --duration seconds of wall time (or until
--media-seconds of media have played, as hlsplay's --duration; or to the end of the stream, or an
error) and prints one JSON object per line on stdout: the events, then `{"type": "end", ...}`. Every event's `t` is seconds since the URL was handed to playbin3 (the pipeline set to
PLAYING), on GStreamer's monotonic clock (`gst_util_get_timestamp`, the clock bus messages carry).

What it does as a player, as gst-play-1.0 does: the pipeline is set to PLAYING; on a buffering message
below 100 % it is paused, and set to PLAYING again at 100 %. Video and audio go to fakesink with
sync=true, so buffers are consumed at the pace of the pipeline clock, as a real sink would.

Events (`type`): `element` (an element playbin3 created, first of each factory: `factory`, `name`),
`state` (the pipeline's state changes: `old`, `new`), `buffering` (`percent`: each move into another tenth of 0–100 %), `frame.preroll` (the
first video buffer at the sink, prerolled), `frame.first` (the first video buffer rendered, after the
clock wait), `frame.gap` (two rendered video buffers more than FRAME_GAP_SECONDS of wall time apart:
`gapSeconds`, `positionSeconds`), `stats` (adaptivedemux2's `adaptive-streaming-statistics` message:
`structure`, as GStreamer prints it), `warning`, `error` (`source`, `message`, `debug`), `eos`,
`position` (once a second: `positionSeconds`, the pipeline's position in media time).
The `end` line: `reason` (`duration`, `media`, `eos`, `error`), `positionSeconds`, `renderedVideoFrames`,
`renderedAudioBuffers`, `gstreamerVersion`.
"""
import argparse
import json
import sys
import threading

import gi

gi.require_version("Gst", "1.0")
from gi.repository import GLib, Gst  # noqa: E402

# Two rendered video frames further apart than this (wall time) are a visible freeze: a stall the
# buffering messages may not show (a sink starved while the pipeline stayed in PLAYING). 24–60 fps
# media renders a frame every 17–42 ms.
FRAME_GAP_SECONDS = 0.5
# How often the pipeline's position is sampled into the event list.
POSITION_INTERVAL_SECONDS = 1.0
# How often the position is compared with --media-seconds (not logged).
MEDIA_CHECK_INTERVAL_SECONDS = 0.1
# How long the pipeline has to reach NULL at the end before the process leaves anyway.
TEARDOWN_TIMEOUT_SECONDS = 10


class Player:
    def __init__(self, duration_seconds, media_seconds, max_bitrate_bps):
        self.duration_seconds = duration_seconds
        self.media_seconds = media_seconds
        self.max_bitrate_bps = max_bitrate_bps
        self.lock = threading.Lock()
        self.t0_ns = None
        self.factories = set()
        self.video_frames = 0
        self.last_video_ns = None
        self.prerolled = False
        self.buffering = False
        self.last_buffering_bucket = None
        self.target_playing = True
        self.end_reason = None
        self.loop = GLib.MainLoop()

        self.pipeline = Gst.ElementFactory.make("playbin3", "peer")
        if self.pipeline is None:
            fail("no playbin3 element: install gstreamer1.0-plugins-base")
        vsink = self._sink("vsink", self._on_video, self._on_video_preroll)
        # The audio sink calls nothing per buffer: its count is read from its statistics at the end.
        asink = self._sink("asink", None, None)
        self.asink = asink
        self.pipeline.set_property("video-sink", vsink)
        self.pipeline.set_property("audio-sink", asink)
        # Subtitles are not part of the comparison: no text stream is selected or rendered.
        flags = self.pipeline.get_property("flags")
        self.pipeline.set_property("flags", flags & ~(1 << 2))  # GST_PLAY_FLAG_TEXT
        self.pipeline.connect("deep-element-added", self._on_element)
        bus = self.pipeline.get_bus()
        # The sync handler runs in the thread that posts, when the message is made: it only records
        # (the message's own timestamp); the main loop's watch acts on it.
        bus.set_sync_handler(self._on_message_sync)
        bus.add_signal_watch()
        bus.connect("message", self._on_message)

    def _sink(self, name, handoff, preroll):
        sink = Gst.ElementFactory.make("fakesink", name)
        sink.set_property("sync", True)
        if handoff:
            sink.set_property("signal-handoffs", True)
            sink.connect("handoff", handoff)
        if preroll:
            sink.connect("preroll-handoff", preroll)
        return sink

    # ------------------------------------------------------------ time and events

    def t(self, ns=None):
        ns = Gst.util_get_timestamp() if ns is None else ns
        return round((ns - self.t0_ns) / 1e9, 6)

    def emit(self, event, ns=None):
        event = {"type": event.pop("type"), "t": self.t(ns), **event}
        with self.lock:
            sys.stdout.write(json.dumps(event) + "\n")
            sys.stdout.flush()

    # ------------------------------------------------------------ sinks (streaming threads)

    def _on_video_preroll(self, sink, buf, pad):
        if not self.prerolled:
            self.prerolled = True
            self.emit({"type": "frame.preroll", "ptsSeconds": pts_seconds(buf)})

    def _on_video(self, sink, buf, pad):
        now = Gst.util_get_timestamp()
        self.video_frames += 1
        if self.video_frames == 1:
            self.emit({"type": "frame.first", "ptsSeconds": pts_seconds(buf)}, now)
        elif (now - self.last_video_ns) / 1e9 > FRAME_GAP_SECONDS:
            self.emit({"type": "frame.gap", "gapSeconds": round((now - self.last_video_ns) / 1e9, 6),
                       "fromSeconds": self.t(self.last_video_ns), "ptsSeconds": pts_seconds(buf)}, now)
        self.last_video_ns = now

    def _on_element(self, bin_, sub_bin, element):
        factory = element.get_factory()
        name = factory.get_name() if factory else type(element).__name__
        if name not in self.factories:
            self.factories.add(name)
            self.emit({"type": "element", "factory": name, "name": element.get_name()})
            if name == "hlsdemux2" and self.max_bitrate_bps:
                element.set_property("max-bitrate", self.max_bitrate_bps)

    # ------------------------------------------------------------ bus

    def _on_message_sync(self, bus, msg):
        ns = msg.timestamp if msg.timestamp != Gst.CLOCK_TIME_NONE else None
        mt = msg.type
        if mt == Gst.MessageType.STATE_CHANGED and msg.src == self.pipeline:
            old, new, _ = msg.parse_state_changed()
            self.emit({"type": "state", "old": state_name(old), "new": state_name(new)}, ns)
        elif mt == Gst.MessageType.BUFFERING:
            # adaptivedemux2 posts one per percent point, hundreds a second: the event list keeps each
            # move into another tenth (0–9 %, 10–19 %, …, 90–99 %, 100 %), so every crossing of 100 %
            # (what makes a stall) is kept with its exact time.
            percent = msg.parse_buffering()
            bucket = percent // 10
            if bucket != self.last_buffering_bucket:
                self.last_buffering_bucket = bucket
                self.emit({"type": "buffering", "percent": percent, "source": msg.src.get_name()}, ns)
        elif mt == Gst.MessageType.ELEMENT:
            s = msg.get_structure()
            if s is not None and s.get_name() == "adaptive-streaming-statistics":
                self.emit({"type": "stats", "source": msg.src.get_name(), "structure": s.to_string()}, ns)
        elif mt in (Gst.MessageType.ERROR, Gst.MessageType.WARNING):
            err, debug = msg.parse_error() if mt == Gst.MessageType.ERROR else msg.parse_warning()
            self.emit({"type": "error" if mt == Gst.MessageType.ERROR else "warning",
                       "source": msg.src.get_name() if msg.src else None, "message": err.message,
                       "debug": debug}, ns)
        elif mt == Gst.MessageType.EOS:
            self.emit({"type": "eos"}, ns)
        return Gst.BusSyncReply.PASS

    def _on_message(self, bus, msg):
        mt = msg.type
        if mt == Gst.MessageType.BUFFERING:
            percent = msg.parse_buffering()
            if percent < 100 and not self.buffering:
                self.buffering = True
                self.pipeline.set_state(Gst.State.PAUSED)
            elif percent >= 100 and self.buffering:
                self.buffering = False
                if self.target_playing:
                    self.pipeline.set_state(Gst.State.PLAYING)
        elif mt == Gst.MessageType.ERROR:
            self.finish("error")
        elif mt == Gst.MessageType.EOS:
            self.finish("eos")

    # ------------------------------------------------------------ run

    def sample_position(self):
        ok, pos = self.pipeline.query_position(Gst.Format.TIME)
        if ok and pos >= 0:
            self.emit({"type": "position", "positionSeconds": round(pos / 1e9, 6)})
        return True

    def check_media(self):
        ok, pos = self.pipeline.query_position(Gst.Format.TIME)
        if ok and pos >= 0 and pos / 1e9 >= self.media_seconds:
            return self.finish("media")
        return True

    def finish(self, reason):
        if self.end_reason is None:
            self.end_reason = reason
            self.loop.quit()
        return False

    def run(self, url):
        self.pipeline.set_property("uri", url)
        self.t0_ns = Gst.util_get_timestamp()
        if self.pipeline.set_state(Gst.State.PLAYING) == Gst.StateChangeReturn.FAILURE:
            self.emit({"type": "error", "source": "peer", "message": "set_state(PLAYING) failed", "debug": None})
            self.end_reason = "error"
        else:
            GLib.timeout_add(int(POSITION_INTERVAL_SECONDS * 1000), self.sample_position)
            GLib.timeout_add(int(self.duration_seconds * 1000), self.finish, "duration")
            if self.media_seconds:
                GLib.timeout_add(int(MEDIA_CHECK_INTERVAL_SECONDS * 1000), self.check_media)
            self.loop.run()
        ok, pos = self.pipeline.query_position(Gst.Format.TIME)
        end = {"type": "end", "reason": self.end_reason,
               "positionSeconds": round(pos / 1e9, 6) if ok and pos >= 0 else None,
               "renderedVideoFrames": self.video_frames, "renderedAudioBuffers": rendered(self.asink),
               "gstreamerVersion": Gst.version_string()}
        self.emit(end)
        self.target_playing = False
        self.pipeline.set_state(Gst.State.NULL)
        self.pipeline.get_state(TEARDOWN_TIMEOUT_SECONDS * Gst.SECOND)


def rendered(sink):
    """The buffers a sink rendered (GstBaseSink's `stats`), None if it does not say."""
    ok, n = sink.get_property("stats").get_uint64("rendered")
    return n if ok else None


def pts_seconds(buf):
    return round(buf.pts / 1e9, 6) if buf.pts != Gst.CLOCK_TIME_NONE else None


def state_name(s):
    return Gst.Element.state_get_name(s)


def fail(message):
    sys.stdout.write(json.dumps({"type": "fatal", "message": message}) + "\n")
    sys.stdout.flush()
    sys.exit(2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, required=True, help="wall seconds to play")
    ap.add_argument("--media-seconds", type=float, default=0, help="stop once this much media has played (0: no)")
    ap.add_argument("--max-bitrate", type=int, default=0, help="hlsdemux2 max-bitrate, bit/s (0: none)")
    args = ap.parse_args()
    Gst.init(None)
    player = Player(args.duration, args.media_seconds, args.max_bitrate)
    sys.stdout.write(json.dumps({"type": "ready", "gstreamerVersion": Gst.version_string()}) + "\n")
    sys.stdout.flush()
    url = sys.stdin.readline().strip()
    if not url:
        fail("no URL on stdin")
    player.run(url)


if __name__ == "__main__":
    main()
