// HTTPS with a private certificate authority, end to end: a certificate for 127.0.0.1 made with the
// openssl CLI at test time, a real HTTP/2 server over TLS (nghttpd, Debian's `nghttp2-server`, installed by
// Tools/install-deps.sh) serving the sample ladder, and the real binary playing and checking it with
// `--cacert` — and failing clearly, with a complete log, without it.

import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A self-signed certificate for IP 127.0.0.1 (subjectAltName, as clients match it) and its key, in a temp dir.
private struct LoopbackCertificate {
    let directory: URL
    var certificate: URL { directory.appendingPathComponent("cert.pem") }
    var key: URL { directory.appendingPathComponent("key.pem") }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let openssl = try requireTool("/usr/bin/openssl", package: "openssl")
        let made = try runProcess(
            openssl,
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                "-subj", "/CN=hlsplay test CA 127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                "-keyout", directory.appendingPathComponent("key.pem").path,
                "-out", directory.appendingPathComponent("cert.pem").path
            ], timeoutSeconds: 60)
        guard made.status == 0 else { throw TestSetupError("openssl req failed: \(made.stderr)") }
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}

private func requireTool(_ path: String, package: String) throws -> URL {
    guard FileManager.default.isExecutableFile(atPath: path) else {
        throw TestSetupError("\(path) is not installed: run Tools/install-deps.sh (apt-get install \(package))")
    }
    return URL(fileURLWithPath: path)
}

/// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, read back, closed).
private func unusedLoopbackPort() throws -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestSetupError("socket: \(errno)") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw TestSetupError("bind 127.0.0.1:0: \(errno)") }
    return UInt16(bigEndian: address.sin_port)
}

/// Whether something accepts TCP connections on 127.0.0.1:`port`.
private func acceptsConnections(port: UInt16) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = port.bigEndian
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
}

/// nghttpd serving `root` over TLS on 127.0.0.1 (HTTP/2 only: it offers `h2` by ALPN and nothing else).
private final class HTTP2Origin {
    let process: Process
    let port: UInt16
    var baseURL: URL { URL(string: "https://127.0.0.1:\(port)/")! }

    init(root: URL, certificate: LoopbackCertificate) throws {
        let nghttpd = try requireTool("/usr/sbin/nghttpd", package: "nghttp2-server")
        var lastError = ""
        // A port free when picked may be taken before nghttpd binds it: a few tries.
        for _ in 0..<5 {
            let port = try unusedLoopbackPort()
            let process = Process()
            process.executableURL = nghttpd
            process.arguments = [
                "--address=127.0.0.1", "--htdocs=\(root.path)", String(port), certificate.key.path, certificate.certificate.path
            ]
            process.standardOutput = FileHandle.nullDevice
            let errors = Pipe()
            process.standardError = errors
            try process.run()
            let deadline = Date().addingTimeInterval(20)
            while process.isRunning && Date() < deadline && !acceptsConnections(port: port) { Thread.sleep(forTimeInterval: 0.05) }
            if process.isRunning && acceptsConnections(port: port) {
                self.process = process
                self.port = port
                return
            }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            lastError = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        }
        throw TestSetupError("nghttpd did not start: \(lastError)")
    }

    func stop() {
        // nghttpd does not end on SIGTERM.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

@Suite(.serialized, .tags(.realTime)) struct TLSOriginTests {
    /// The certificate, the server on the ladder, and its multivariant URL; everything stopped afterwards.
    private func withHTTP2Origin<T>(_ body: (LoopbackCertificate, String) throws -> T) throws -> T {
        let root = try Repo.requireSamples("ladder-2s")
        let certificate = try LoopbackCertificate()
        defer { certificate.remove() }
        let origin = try HTTP2Origin(root: root, certificate: certificate)
        defer { origin.stop() }
        return try body(certificate, origin.baseURL.appendingPathComponent("master.m3u8").absoluteString)
    }

    @Test func privateCA_playsOverHTTP2_everyRequestRecordedAsHTTP2() throws {
        let (run, check) = try withHTTP2Origin { certificate, url in
            (
                try runHlsplay([url, "--headless", "--json", "--duration", "3", "--cacert", certificate.certificate.path]),
                try runProcess(Repo.hlsplay, ["check", "--json", "--cacert", certificate.certificate.path, url], timeoutSeconds: 120)
            )
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        #expect(run.summary?["exitReason"] as? String == "durationReached")
        #expect((run.summary?["decodedVideoFrames"] as? Int ?? 0) > 0)
        let ends = run.events("request.end")
        #expect(ends.count >= 3, "the multivariant playlist, a media playlist and segments")
        for end in ends {
            #expect(end["ok"] as? Bool == true && end["status"] as? Int == 200, "\(end)")
            #expect(end["httpVersion"] as? String == "HTTP/2", "\(end)")
        }
        // The first request opened the connection and did the TLS handshake.
        let firstTimings = ends.first?["timings"] as? [String: Any]
        #expect((firstTimings?["tlsSeconds"] as? Double ?? 0) > 0, "\(firstTimings ?? [:])")
        let entries = (run.har?["log"] as? [String: Any])?["entries"] as? [[String: Any]] ?? []
        #expect(entries.count == ends.count)
        for entry in entries {
            let request = entry["request"] as? [String: Any]
            let response = entry["response"] as? [String: Any]
            #expect(request?["httpVersion"] as? String == "HTTP/2" && response?["httpVersion"] as? String == "HTTP/2", "\(entry)")
            #expect(response?["status"] as? Int == 200)
            #expect(((entry["timings"] as? [String: Any])?["ssl"] as? Double).map { $0 >= 0 || $0 == -1 } == true)
        }
        let configuration = run.logLines.first?["configuration"] as? [String: Any]
        #expect(configuration?["caCertificateFile"] as? String != nil && configuration?["verifyTLS"] as? Bool == true)
        // `check` takes the same option and validates the stream over the same connection kind.
        #expect(check.status == 0, "check: \(check.status) \(check.stdout) \(check.stderr)")
    }

    @Test func withoutTheCA_failsWithTheCertificateProblem_exit69_logComplete() throws {
        let (run, check, insecure) = try withHTTP2Origin { _, url in
            (
                try runHlsplay([url, "--headless", "--json", "--duration", "2"], timeoutSeconds: 90),
                try runProcess(Repo.hlsplay, ["check", url], timeoutSeconds: 90),
                try runProcess(Repo.hlsplay, ["check", "-k", url], timeoutSeconds: 120)
            )
        }
        // A certificate nobody trusts is a network failure (exit 69), said once, naming the problem.
        #expect(run.status == 69, "stderr: \(run.stderr)")
        #expect(run.stderr.contains("certificate problem: self-signed certificate"), "\(run.stderr)")
        #expect(run.stderr.contains("--cacert"), "the message says how to trust a private CA: \(run.stderr)")
        expectValidLog(run)
        let ends = run.events("request.end")
        #expect(ends.count == 1, "a certificate failure is not retried: \(ends.count) requests")
        #expect(ends.first?["errorKind"] as? String == "tls" && ends.first?["ok"] as? Bool == false)
        let errorMessage = ends.first?["errorMessage"] as? String ?? ""
        #expect(errorMessage.contains("self-signed certificate"), "\(errorMessage)")
        #expect(run.summary?["error"] != nil, "\(run.summary ?? [:])")
        #expect(((run.har?["log"] as? [String: Any])?["entries"] as? [[String: Any]])?.count == 1)
        #expect(check.status == 69 && check.stdout.contains("self-signed certificate"), "check: \(check.stdout) \(check.stderr)")
        // -k (--insecure) skips the verification, with a warning.
        #expect(insecure.status == 0 && insecure.stderr.contains("warning: --insecure"), "check -k: \(insecure.stdout) \(insecure.stderr)")
    }
}
