import Foundation
import Testing
import TestSupport

/// Tokens in URLs stay out of logs, HAR and output unless asked for.
@Suite(.serialized, .tags(.realTime)) struct RedactionTests {
    @Test func queryToken_redactedEverywhere_byDefault_keptWithNoRedact() throws {
        let samples = try Repo.requireSamples("short-2s")
        try withOrigin(samples) { base in
            let url = base.absoluteString + "master.m3u8?token=s3cr3t-value"
            let run = try runHlsplay([url, "--headless", "--json", "--duration", "2"])
            #expect(run.status == 0, "stderr: \(run.stderr)")
            let everything = run.rawLogLines.joined() + run.stdout + run.stderr
                + String(decoding: (try? JSONSerialization.data(withJSONObject: run.har ?? [:])) ?? Data(), as: UTF8.self)
            #expect(!everything.contains("s3cr3t-value"))
            #expect(run.rawLogLines.first?.contains("token=REDACTED") == true)

            let open = try runHlsplay([url, "--headless", "--json", "--duration", "2", "--no-redact"])
            #expect(open.rawLogLines.joined().contains("s3cr3t-value"))
        }
    }
}
