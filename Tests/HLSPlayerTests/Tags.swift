import Testing

extension Tag {
    /// Takes real wall time: plays, shapes or follows a live clock in real time (seconds per
    /// test). `Tools/test.sh --fast`, the developer's loop, skips what carries it; the full run
    /// (`Tools/test.sh`, CI) runs everything.
    @Tag static var realTime: Self
}
