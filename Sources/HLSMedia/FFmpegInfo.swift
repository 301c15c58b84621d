import CFFmpeg
import Foundation

/// Versions of the FFmpeg libraries this process is linked against.
public enum FFmpegVersion {
    public static var description: String {
        func dotted(_ v: UInt32) -> String { "\(v >> 16).\((v >> 8) & 0xff).\(v & 0xff)" }
        let release = String(cString: av_version_info())
        return "FFmpeg \(release) (libavformat \(dotted(avformat_version())), "
            + "libavcodec \(dotted(avcodec_version())), libavutil \(dotted(avutil_version())), "
            + "libswresample \(dotted(swresample_version())))"
    }
}

/// Routes FFmpeg's `av_log` output to a Swift sink.
///
/// `av_log_set_callback` is process-wide, so the sink is one global value behind a lock.
/// FFmpeg calls the callback from any thread (decoder worker threads included); the line
/// is formatted in the callback with `av_log_format_line2` and handed to the sink there.
public enum FFmpegLog {
    /// Installs `sink` for every message at `minimumLevel` or more severe
    /// (FFmpeg levels: `AV_LOG_ERROR` 16 < `AV_LOG_WARNING` 24 < `AV_LOG_INFO` 32 ...).
    /// Installing again replaces the previous sink.
    public static func install(minimumLevel: Int32, sink: @escaping @Sendable (Int32, String) -> Void) {
        logState.set(minimumLevel: minimumLevel, sink: sink)
        av_log_set_callback { context, level, format, arguments in
            let level = hls_log_level_mask(level)
            guard let sink = logState.sink(forLevel: level), let format, let arguments else { return }
            let collector = Thread.current.threadDictionary[collectorKey] as? MessageCollector
            var line = [CChar](repeating: 0, count: 1024)
            var printPrefix: Int32 = 1
            let written = line.withUnsafeMutableBufferPointer { buf in
                av_log_format_line2(context, level, format, arguments, buf.baseAddress, Int32(buf.count), &printPrefix)
            }
            guard written >= 0 else { return }
            var text = line.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            while text.last == "\n" || text.last == "\r" { text.removeLast() }
            guard !text.isEmpty else { return }
            if let collector { collector.add(text) } else { sink(level, text) }
        }
    }

    /// Runs `body` with the messages FFmpeg logs on this thread meanwhile collected instead of
    /// sent to the sink: deduplicated, in order of first appearance, with counts. Messages from
    /// other threads (decoder workers) still go to the sink. Without `install`, nothing is collected.
    public static func collecting<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> (value: T, messages: [FFmpegMessage]) {
        let collector = MessageCollector()
        let dictionary = Thread.current.threadDictionary
        let outer = dictionary[collectorKey]
        dictionary[collectorKey] = collector
        defer { dictionary[collectorKey] = outer }
        let value = try body()
        return (value, collector.messages)
    }
}

/// One distinct FFmpeg log line and how many times it came.
public struct FFmpegMessage: Sendable, Equatable, CustomStringConvertible {
    public var text: String
    public var count: Int
    public var description: String { count == 1 ? text : "\(text) (×\(count))" }
}

private let collectorKey = "hlsplay.ffmpegLogCollector"

/// Messages of one `FFmpegLog.collecting` scope (one thread).
private final class MessageCollector: @unchecked Sendable {
    private(set) var messages: [FFmpegMessage] = []
    /// Distinct messages kept; further distinct ones are counted together in one last entry.
    static let maximumDistinct = 16
    static let othersText = "(other messages)"

    func add(_ text: String) {
        // The context address in "[h264 @ 0x…]" differs per stream: compare without it. A codec
        // context without a codec, as a demuxer's parser has, FFmpeg names "NULL".
        let key = text.replacingOccurrences(of: #" @ 0x[0-9a-f]+\]"#, with: "]", options: .regularExpression)
            .replacingOccurrences(of: "[NULL]", with: "[parser]")
        if let i = messages.firstIndex(where: { $0.text == key }) {
            messages[i].count += 1
        } else if messages.count < Self.maximumDistinct {
            messages.append(FFmpegMessage(text: key, count: 1))
        } else if messages.last?.text == Self.othersText {
            messages[messages.count - 1].count += 1
        } else {
            messages.append(FFmpegMessage(text: Self.othersText, count: 1))
        }
    }
}

private final class LogState: @unchecked Sendable {
    private let lock = NSLock()
    private var minimumLevel: Int32 = -8
    private var sink: (@Sendable (Int32, String) -> Void)?

    func set(minimumLevel: Int32, sink: @escaping @Sendable (Int32, String) -> Void) {
        lock.lock(); defer { lock.unlock() }
        self.minimumLevel = minimumLevel
        self.sink = sink
    }

    func sink(forLevel level: Int32) -> (@Sendable (Int32, String) -> Void)? {
        lock.lock(); defer { lock.unlock() }
        return level <= minimumLevel ? sink : nil
    }
}

private let logState = LogState()
