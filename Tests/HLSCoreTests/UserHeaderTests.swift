// --header / --cookie / --referer: the forms a user writes, which requests get them, and that a
// value is never written out.

import Foundation
import Testing

@testable import HLSCore

@Suite struct UserHeaderTests {
    @Test func parse_nameValue_andAHostPrefix() throws {
        #expect(try UserHeader.parse("X-Api-Key: abc 123") == UserHeader(name: "X-Api-Key", value: "abc 123"))
        #expect(
            try UserHeader.parse("cdn.example.com/Authorization:Bearer t")
                == UserHeader(host: "cdn.example.com", name: "Authorization", value: "Bearer t"))
        // A value may hold colons and slashes (a URL).
        #expect(try UserHeader.parse("Referer: https://a.example/p?q=1").value == "https://a.example/p?q=1")
        #expect(try UserHeader.parse("X-Empty:") == UserHeader(name: "X-Empty", value: ""))
    }

    @Test func parse_refusesWhatIsNotOneHeader() {
        #expect(throws: UserHeader.ParseError.noColon("no colon here")) { try UserHeader.parse("no colon here") }
        #expect(throws: UserHeader.ParseError.badName("Bad Name")) { try UserHeader.parse("Bad Name: x") }
        #expect(throws: UserHeader.ParseError.badName("")) { try UserHeader.parse(": x") }
        #expect(throws: UserHeader.ParseError.controlCharacter("X-Injected")) { try UserHeader.parse("X-Injected: a\r\nHost: evil") }
    }

    @Test func appliesToItsHostOnly_caseInsensitive() throws {
        let scoped = try UserHeader.parse("CDN.example.com/X-Token: t")
        #expect(scoped.applies(toHost: "cdn.example.com"))
        #expect(!scoped.applies(toHost: "other.example.com"))
        #expect(!scoped.applies(toHost: nil))
        #expect(try UserHeader.parse("X-Token: t").applies(toHost: "anything"))
    }

    @Test func encoded_withoutItsValue() throws {
        let data = try JSONEncoder().encode(UserHeader(host: "h", name: "X-Api-Key", value: "SECRET-VALUE"))
        let text = String(decoding: data, as: UTF8.self)
        #expect(!text.contains("SECRET-VALUE"))
        #expect(text.contains("\"valueBytes\":12") && text.contains("\"name\":\"X-Api-Key\""), "\(text)")
    }

    @Test func outgoingText_redactsTheUsersHeaderNames_unlessNoRedact() {
        let outgoing = OutgoingText(redactsURLs: true, secretHeaderNames: ["X-Api-Key"])
        #expect(outgoing.headerValue(name: "x-api-key", value: "abc") == URLRedaction.placeholder)
        #expect(outgoing.headerValue(name: "Accept", value: "*/*") == "*/*")
        #expect(outgoing.headerValue(name: "Cookie", value: "a=1") == URLRedaction.placeholder)
        #expect(OutgoingText(redactsURLs: false, secretHeaderNames: ["X-Api-Key"]).headerValue(name: "X-Api-Key", value: "abc") == "abc")
    }

    @Test func shorthand_cookieRefererUserAgent() {
        #expect(UserHeader.shorthand(.cookie, "a=1; b=2") == UserHeader(name: "Cookie", value: "a=1; b=2"))
        // A host prefix is a '/' before the first '='; a '/' inside a cookie value is not one.
        #expect(UserHeader.shorthand(.cookie, "cdn.example.com/a=1") == UserHeader(host: "cdn.example.com", name: "Cookie", value: "a=1"))
        #expect(UserHeader.shorthand(.cookie, "path=/x/y") == UserHeader(name: "Cookie", value: "path=/x/y"))
        #expect(UserHeader.shorthand(.cookie, "no-equals-sign") == nil)
        #expect(UserHeader.shorthand(.cookie, "") == nil)
        #expect(UserHeader.shorthand(.referer, "https://a.example/p") == UserHeader(name: "Referer", value: "https://a.example/p"))
        #expect(UserHeader.shorthand(.referer, "a\r\nHost: evil") == nil)
        #expect(UserHeader.shorthand(.userAgent, "Probe/1.0 (QA)")?.value == "Probe/1.0 (QA)")
        #expect(UserHeader.shorthand(.userAgent, "  ") == nil)
    }
}
