import Testing

extension Tag {
    /// Takes real wall time: plays, shapes or follows a live clock in real time (seconds per
    /// test). `Tools/test.sh --fast`, the developer's loop, skips what carries it; the full run
    /// (`Tools/test.sh`, CI) runs everything.
    @Tag static var realTime: Self
    /// Takes minutes of CPU, though in virtual time (e.g. a sweep over every trace and rule). The fast loop skips
    /// it as it skips `.realTime`; the full run (CI) runs it.
    @Tag static var long: Self
}
