import Foundation
import HLSOrigin
import Testing
import TestSupport

/// The HAR holds what went over the wire: the URL and headers really sent, the status line and
/// headers really received, and for a request cut short the time it really ran and what arrived.
@Suite(.serialized, .tags(.realTime)) struct HARTests {
    static func entries(_ run: Run) -> [[String: Any]] {
        ((run.har?["log"] as? [String: Any])?["entries"] as? [[String: Any]]) ?? []
    }

    static func header(_ entry: [String: Any], _ part: String, _ name: String) -> String? {
        let headers = ((entry[part] as? [String: Any])?["headers"] as? [[String: Any]]) ?? []
        return headers.first { ($0["name"] as? String)?.lowercased() == name.lowercased() }?["value"] as? String
    }

    @Test func wedgedSegment_writtenWithItsRealTimesStatusAndBytes_andTheCause() throws {
        let samples = try Repo.requireSamples("short-2s")
        // 20 KB of the second segment, then silence forever: the wedge rule cancels it after its window (3 s).
        let faults = [
            FaultRule(
                pathPattern: "*/seg_00001.ts", requestIndex: 0, afterSeconds: nil,
                action: .stallAfterBytes(bytes: 20_000, seconds: nil))
        ]
        let run = try withOrigin(samples, faults: faults) { base in
            try runHlsplay([base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json", "--cmcd", "query"])
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let entries = Self.entries(run)
        #expect(entries.count == run.events("request.end").count, "one entry per attempt, the wedged one too")
        let aborted = try #require(entries.first { ($0["response"] as? [String: Any])?["_aborted"] as? Bool == true })
        let response = try #require(aborted["response"] as? [String: Any])
        #expect(response["status"] as? Int == 200)
        #expect(response["statusText"] as? String == "OK")
        #expect(response["httpVersion"] as? String == "HTTP/1.1")
        #expect((response["bodySize"] as? Int ?? 0) >= 20_000)
        #expect((response["_error"] as? String ?? "").hasPrefix("cancelled: wedged"), "\(response)")
        #expect(response["_errorKind"] as? String == "cancelled")
        #expect(Self.header(aborted, "response", "Content-Length") != nil)
        // It ran for the wedge window at least (3 s), the time its bytes arrived and its silence.
        let time = try #require(aborted["time"] as? Double)
        #expect(time >= 3000, "time \(time) ms")
        let timings = try #require(aborted["timings"] as? [String: Any])
        #expect((timings["receive"] as? Double ?? 0) >= 2900, "\(timings)")

        for entry in entries {
            let request = try #require(entry["request"] as? [String: Any])
            // The URL really requested: with the CMCD query, its value redacted like every query value.
            let url = request["url"] as? String ?? ""
            #expect(url.contains("?CMCD=REDACTED"), "\(url)")
            let query = request["queryString"] as? [[String: Any]] ?? []
            #expect(query.count == 1 && query.first?["name"] as? String == "CMCD" && query.first?["value"] as? String == "REDACTED", "\(query)")
            // The headers libcurl sent, Host and User-Agent included.
            #expect(Self.header(entry, "request", "Host")?.hasPrefix("127.0.0.1:") == true, "\(request)")
            #expect(Self.header(entry, "request", "User-Agent")?.hasPrefix("hlsplay/") == true)
            #expect(request["httpVersion"] as? String == "HTTP/1.1")
            #expect((request["headersSize"] as? Int ?? 0) > 0)
            let response = try #require(entry["response"] as? [String: Any])
            if response["_aborted"] as? Bool == false {
                #expect(response["status"] as? Int == 200)
                #expect(response["statusText"] as? String == "OK")
                #expect(response["_error"] == nil)
                #expect(Self.header(entry, "response", "Content-Type") != nil, "\(response)")
                #expect((response["headersSize"] as? Int ?? 0) > 0)
            }
        }
    }

    @Test func cmcdHeaders_andTheErrorStatus_asSent() throws {
        let samples = try Repo.requireSamples("short-2s")
        let faults = [
            FaultRule(pathPattern: "*/seg_00001.ts", requestIndex: 0, afterSeconds: nil, action: .status(code: 503, retryAfterSeconds: nil))
        ]
        let run = try withOrigin(samples, faults: faults) { base in
            try runHlsplay([base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json", "--cmcd", "header", "--no-redact"])
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let entries = Self.entries(run)
        for entry in entries {
            #expect(Self.header(entry, "request", "CMCD-Session")?.contains("sid=") == true, "\(entry["request"] ?? "")")
            let url = (entry["request"] as? [String: Any])?["url"] as? String ?? ""
            #expect(!url.contains("CMCD"))
        }
        // An error status is a whole response, not an aborted one: its status line and the error.
        let failed = try #require(entries.first { ($0["response"] as? [String: Any])?["status"] as? Int == 503 })
        let response = try #require(failed["response"] as? [String: Any])
        #expect(response["_aborted"] as? Bool == false)
        #expect(response["_errorKind"] as? String == "httpStatus")
        #expect(response["statusText"] as? String == "Service Unavailable", "\(response)")
        #expect((failed["time"] as? Double ?? 0) > 0)
    }

    /// The validator itself: it must catch what it is there to catch.
    @Test func validator_catchesMissingFieldsWrongTypesAndATimeThatIsNotTheSum() {
        func document(_ entry: [String: Any]) -> [String: Any] {
            ["log": ["version": "1.2", "creator": ["name": "x", "version": "1"], "entries": [entry]]]
        }
        let good: [String: Any] = [
            "startedDateTime": "2026-01-01T00:00:00.000Z", "time": 10.5, "cache": [String: Any](),
            "request": [
                "method": "GET", "url": "http://h/x", "httpVersion": "HTTP/1.1", "cookies": [Any](), "headers": [["name": "Host", "value": "h"]],
                "queryString": [Any](), "headersSize": 40, "bodySize": 0
            ],
            "response": [
                "status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "cookies": [Any](), "headers": [Any](),
                "content": ["size": 5, "mimeType": "video/mp2t"], "redirectURL": "", "headersSize": 50, "bodySize": 5, "_aborted": false
            ],
            "timings": ["blocked": -1, "dns": 0.5, "connect": 1, "ssl": -1, "send": 0, "wait": 4, "receive": 5]
        ]
        #expect(harProblems(document(good)).isEmpty, "\(harProblems(document(good)))")
        var wrongTime = good
        wrongTime["time"] = 0.0
        #expect(harProblems(document(wrongTime)).contains { $0.contains("not the sum") })
        var noHeaders = good
        var request = good["request"] as! [String: Any]
        request["headers"] = nil
        noHeaders["request"] = request
        #expect(harProblems(document(noHeaders)).contains { $0.contains("request.headers") })
        var negativeWait = good
        negativeWait["timings"] = ["dns": 0.5, "connect": 1, "send": 0, "wait": -1, "receive": 5]
        #expect(harProblems(document(negativeWait)).contains { $0.contains("timings.wait") })
        var abortedAtZero = good
        var response = good["response"] as! [String: Any]
        response["_aborted"] = true
        response["_error"] = "cancelled"
        response["_errorKind"] = "cancelled"
        abortedAtZero["response"] = response
        abortedAtZero["time"] = 0.0
        abortedAtZero["timings"] = ["dns": -1, "connect": -1, "send": 0, "wait": 0, "receive": 0]
        #expect(harProblems(document(abortedAtZero)).contains { $0.contains("aborted") })
    }
}
