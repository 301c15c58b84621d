// RFC 8216 §4.2 attribute lists, edge cases one test each.

import Foundation
import Testing
@testable import HLSCore

struct AttributeListTests {
    func parse(_ s: String) throws -> [String: AttributeValue] {
        var d: [String: AttributeValue] = [:]
        for (n, v) in try AttributeList.parse(s, lineNumber: 7) { d[n] = v }
        return d
    }

    @Test func quotedStringMayContainComma() throws {
        let a = try parse(#"CODECS="avc1.4d401e,mp4a.40.2",BANDWIDTH=1"#)
        #expect(a["CODECS"] == .quotedString("avc1.4d401e,mp4a.40.2"))
        #expect(a["BANDWIDTH"]?.integerValue == 1)
    }

    @Test func hexadecimalSequence_bytesAndPrefixCase() throws {
        let a = try parse("IV=0x0102030405060708090A0B0C0D0E0F10,X=0Xabc")
        #expect(a["IV"]?.hexBytes == Array(1...16).map(UInt8.init))
        #expect(a["X"]?.hexBytes == [0x0A, 0xBC]) // odd digit count: leading zero nibble
        #expect(a["X"]?.rawText == "0Xabc")
    }

    @Test func negativeFloatIsSignedDecimalFloatingPoint() throws {
        let a = try parse("TIME-OFFSET=-12.5,F=3.0,I=10")
        #expect(a["TIME-OFFSET"]?.doubleValue == -12.5)
        #expect(a["F"]?.doubleValue == 3.0)
        #expect(a["I"]?.doubleValue == 10) // a decimal-integer is a valid float too
        #expect(a["F"]?.integerValue == nil)
    }

    @Test func resolution() throws {
        let a = try parse("RESOLUTION=1920x1080")
        #expect(a["RESOLUTION"]?.resolutionValue == Resolution(width: 1920, height: 1080))
    }

    @Test func enumeratedString() throws {
        let a = try parse("METHOD=AES-128,DEFAULT=YES")
        #expect(a["METHOD"] == .enumeratedString("AES-128"))
        #expect(a["DEFAULT"]?.enumeratedValue == "YES")
    }

    @Test func spaceAfterCommaTolerated() throws {
        let a = try parse("AUTOSELECT=YES, DEFAULT=YES")
        #expect(a["DEFAULT"]?.enumeratedValue == "YES")
    }

    @Test func emptyListIsEmpty() throws {
        #expect(try AttributeList.parse("", lineNumber: 1).isEmpty)
    }

    @Test func orderIsKept() throws {
        let l = try AttributeList.parse("B=1,A=2", lineNumber: 1)
        #expect(l.map(\.name) == ["B", "A"])
    }

    @Test func unterminatedQuote_isSyntaxErrorWithLine() {
        let e = playlistError { () throws(PlaylistError) in try AttributeList.parse(#"URI="abc,BANDWIDTH=1"#, lineNumber: 7) }
        #expect(e?.kind == .syntax)
        #expect(e?.lineNumber == 7)
        #expect(e?.rule.contains("§4.2") == true)
    }

    @Test func duplicateName_isFatal() {
        let e = playlistError { () throws(PlaylistError) in try AttributeList.parse("A=1,A=2", lineNumber: 3) }
        #expect(e?.kind == .syntax)
        #expect(e?.rule.contains("MUST NOT appear more than once") == true)
    }

    @Test func missingEquals_isFatal() {
        #expect(playlistError { () throws(PlaylistError) in try AttributeList.parse("A=1,B", lineNumber: 1) }?.kind == .syntax)
    }

    @Test func trailingComma_isFatal() {
        #expect(playlistError { () throws(PlaylistError) in try AttributeList.parse("A=1,", lineNumber: 1) }?.kind == .syntax)
    }

    @Test func lowercaseName_isFatal() {
        #expect(playlistError { () throws(PlaylistError) in try AttributeList.parse("bandwidth=1", lineNumber: 1) }?.kind == .syntax)
    }

    @Test func badHex_isFatal() {
        #expect(playlistError { () throws(PlaylistError) in try AttributeList.parse("IV=0xZZ", lineNumber: 1) }?.kind == .invalidAttributeValue)
    }

    @Test func nanAndExponentAreNotNumbers() throws {
        let a = try parse("A=NaN,B=1e3")
        #expect(a["A"]?.doubleValue == nil)
        #expect(a["B"]?.doubleValue == nil)
    }
}
