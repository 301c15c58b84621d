import Foundation
import HLSCore

/// What a session fetches through: libcurl's `HTTPClient` in a real session; in a test, a scripted loader that
/// answers from files on a scripted schedule, so the real session (its threads, demux and decode) plays without
/// sockets (docs/architecture.md, "Seams").
///
/// `fetch` blocks the calling thread until the response is whole, has failed, or `cancellation` fired; it calls
/// `onProgress` on that thread for each body chunk (arrival time, size, running total), and answers a cancel as
/// `LoadError` kind `cancelled` with the body bytes that had arrived.
public protocol RequestLoading: AnyObject, Sendable {
    func fetch(
        _ request: HTTPRequest, cancellation: CancellationToken?, onProgress: ((ByteProgress) -> Void)?
    ) -> Result<HTTPResponse, LoadError>
}

extension HTTPClient: RequestLoading {}
