import Foundation
@testable import HLSCore
import Testing

/// URLs inside free text are redacted as `URLRedaction.redacted(_:)` redacts a URL.
@Suite struct URLRedactionInTextTests {
    func r(_ text: String) -> String { URLRedaction.redactingURLs(in: text) }

    /// The byte test before any search: it must say yes whenever Foundation's search would find "?" or "://", or a
    /// URL would go out unredacted.
    @Test func urlMarkerByteTest_agreesWithTheSearch() {
        let cases = [
            "", "plain", "a?b", "?", "http://h/p", "://", ":/", ":/x/", "::/", "::/x", ":://", "a:/:/b", ":/:/", "x:", "é://ü",
            "日本?語", "\u{301}://", "c:\\dir", "/a/b:c", "a:b/c", "scheme:/path", "ftp://h/?a=1"
        ]
        for text in cases {
            #expect(URLRedaction.mayHoldURLMarker(text) == (text.contains("?") || text.contains("://")), "\(text)")
        }
    }

    @Test func urlString_sameAsURLRedaction() {
        for s in [
            "https://alice:secret@cdn.example/live/seg_1.ts?token=abc123&exp=99&flag#frag",
            "http://127.0.0.1:8080/v1/prog.m3u8", "http://h/p?", "http://h/p?a=&b=1", "http://u@h:1/p?a=b=c&&x",
            "file:///tmp/a.m3u8?x=1", "https://[::1]:443/p?q=1"
        ] {
            #expect(URLRedaction.redacted(urlString: s) == URLRedaction.redacted(URL(string: s)!), "\(s)")
        }
    }

    @Test func refusedRedirectMessage_locationRedacted_namesKept() {
        let message = "redirect to a scheme other than http/https refused (Location: ftp://bob:pw@h/x?sig=S1&user=u#F): curl error 1"
        #expect(
            r(message) == "redirect to a scheme other than http/https refused (Location: ftp://REDACTED@h/x?sig=REDACTED&user=REDACTED): curl error 1"
        )
    }

    @Test func severalURLs_eachRedacted_textAroundKept() {
        #expect(r("a http://h/a?t=1, then https://u:p@g/b. End") == "a http://h/a?t=REDACTED, then https://REDACTED@g/b. End")
        #expect(r("url=http://h/?k=v x") == "url=http://h/?k=REDACTED x")
        #expect(r("[http://h/?k=v]") == "[http://h/?k=REDACTED]")
    }

    @Test func relativeReferenceWithQuery_valuesRedacted() {
        #expect(
            r(#"URI line "seg_1.ts?token=abc&n=2" without a preceding EXTINF"#)
                == #"URI line "seg_1.ts?token=REDACTED&n=REDACTED" without a preceding EXTINF"#)
        #expect(r("mailto:a@b.example?subject=hi") == "mailto:a@b.example?subject=REDACTED")
    }

    @Test func nestedURLInQueryValue_isOneValue() {
        #expect(r("http://a/?next=http://b/?t=1&x=2") == "http://a/?next=REDACTED&x=REDACTED")
        #expect(r("x?a=1&u=http://b/c") == "x?a=REDACTED&u=REDACTED")
    }

    @Test func prose_unchanged() {
        for text in [
            "what? no.", "expected #EXTM3U, found \"x\"", "t=1.5 s: ok", "HTTP 404: Not Found — 4 of 4 attempts failed",
            "a ?b", "segment /v2/seg_00007.ts failed", "ratio 0.7 (cap 3000000)"
        ] {
            #expect(r(text) == text, "\(text)")
        }
    }

    @Test func endsAtNonURLCharacters() {
        // JSON text: a quote or a backslash ends a URL, so redacting an encoded line keeps it valid JSON.
        #expect(r(#"{"url":"http://h/?a=1","m":"x?b=2\u001bq"}"#) == #"{"url":"http://h/?a=REDACTED","m":"x?b=REDACTED\u001bq"}"#)
        #expect(r("http://h/?a=1\u{1B}[31m") == "http://h/?a=REDACTED\u{1B}[31m")
        #expect(r("<http://h/?a=1>") == "<http://h/?a=REDACTED>")
    }

    @Test func idempotent() {
        let once = r("x https://alice:secret@cdn.example/live/seg_1.ts?token=abc&flag#frag y seg.ts?k=v")
        #expect(r(once) == once)
    }
}

@Suite struct TerminalTextTests {
    @Test func controls_madeVisible() {
        #expect(TerminalText.escaped("a\u{1B}[31mb\u{07}c\rd\ne\tf\u{0}g\u{7F}h\u{9B}2Ji") == #"a\e[31mb\ac\rd\ne\tf\x00g\x7fh\u{009b}2Ji"#)
        #expect(TerminalText.escaped("\u{1B}]0;title\u{07}") == #"\e]0;title\a"#)
        #expect(TerminalText.escaped("abc\u{202E}txt.exe") == #"abc\u{202e}txt.exe"#)
    }

    @Test func printable_unchanged() {
        let text = #"plain — ünïcode → ok \ backslash 日本"#
        #expect(TerminalText.escaped(text) == text)
    }

    @Test func jsonEncoder_escapesC0_weEscapeDELandC1() throws {
        let line = SessionLogEncoder().line(["m": "a\u{1B}b\u{07}c\rd\u{7F}e\u{9B}f"])
        #expect(!line.unicodeScalars.contains { $0.value < 0x20 }, "JSONEncoder escapes C0: \(line)")
        let safe = OutgoingText().json(line)
        #expect(!safe.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }, "\(safe)")
        let decoded = try JSONSerialization.jsonObject(with: Data(safe.utf8)) as? [String: String]
        #expect(decoded?["m"] == "a\u{1B}b\u{07}c\rd\u{7F}e\u{9B}f", "same string for a JSON reader")
    }

    @Test func outgoing_redactsThenEscapes_noRedactOnlyEscapes() {
        let text = "HTTP 403: \u{1B}[2J see http://h/k?key=S"
        #expect(OutgoingText().terminalLine(text) == #"HTTP 403: \e[2J see http://h/k?key=REDACTED"#)
        #expect(OutgoingText(redactsURLs: false).terminalLine(text) == #"HTTP 403: \e[2J see http://h/k?key=S"#)
        #expect(OutgoingText().terminalLines("a\u{1B}\nb") == "a\\e\nb")
    }
}
