import Foundation
import HLSCore
import Testing

struct HTTPExchangeTests {
    @Test func statusLine_versionCodeAndReasonPhrase() {
        #expect(HTTPExchange.parseStatusLine("HTTP/1.1 206 Partial Content\r\n")! == ("HTTP/1.1", 206, "Partial Content"))
        #expect(HTTPExchange.parseStatusLine("HTTP/2 200 \r\n")! == ("HTTP/2", 200, ""))
        #expect(HTTPExchange.parseStatusLine("HTTP/1.0 404")! == ("HTTP/1.0", 404, ""))
        #expect(HTTPExchange.parseStatusLine("Content-Type: text/plain") == nil)
        #expect(HTTPExchange.parseStatusLine("HTTP/1.1 abc OK") == nil)
    }

    @Test func requestHeaderBlock_methodAndFieldsInOrder() {
        let block = "GET /v0/seg.ts?token=x HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: hlsplay/0.1.0\r\nRange: bytes=0-99\r\nX-Empty:\r\n\r\n"
        let parsed = HTTPExchange.parseRequestHeaderBlock(block)
        #expect(parsed.method == "GET")
        #expect(
            parsed.fields == [
                .init(name: "Host", value: "127.0.0.1:8080"), .init(name: "User-Agent", value: "hlsplay/0.1.0"),
                .init(name: "Range", value: "bytes=0-99"), .init(name: "X-Empty", value: "")
            ])
        #expect(HTTPExchange.parseRequestHeaderBlock("").fields.isEmpty)
    }

    @Test func credentialHeaders_redacted_otherHeadersKept_unlessNoRedact() {
        let out = OutgoingText()
        #expect(out.headerValue(name: "Authorization", value: "Basic dXNlcjpwdw==") == "REDACTED")
        #expect(out.headerValue(name: "cookie", value: "s=1") == "REDACTED")
        #expect(out.headerValue(name: "Set-Cookie", value: "s=1; Path=/") == "REDACTED")
        #expect(out.headerValue(name: "Range", value: "bytes=0-99") == "bytes=0-99")
        #expect(out.queryValue("SECRET") == "REDACTED")
        #expect(out.queryValue("") == "")
        let open = OutgoingText(redactsURLs: false)
        #expect(open.headerValue(name: "Authorization", value: "Basic dXNlcjpwdw==") == "Basic dXNlcjpwdw==")
        #expect(open.queryValue("SECRET") == "SECRET")
    }
}
