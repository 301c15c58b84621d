// libFuzzer target: the RFC 8216 §4.2 attribute-list grammar, AttributeList.parse(_:lineNumber:).
// Input is the text after `TAG:`. Invalid UTF-8 is repaired by String(decoding:) like a
// playlist line would never be (parse(data:) rejects it), so every input reaches the grammar.

import Foundation
import HLSCore

@_cdecl("LLVMFuzzerTestOneInput")
public func attributeListFuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    do {
        let list = try AttributeList.parse(text, lineNumber: 1)
        var total = 0
        for (name, value) in list {
            // Exercise every typed accessor.
            total &+= name.utf8.count &+ value.rawText.utf8.count
            total &+= value.integerValue ?? 0
            if let d = value.doubleValue, d.isFinite { total &+= 1 }
            total &+= value.quotedStringValue?.utf8.count ?? 0
            total &+= value.enumeratedValue?.utf8.count ?? 0
            total &+= value.hexBytes?.count ?? 0
            total &+= value.resolutionValue?.width ?? 0
        }
        if total == Int.min { print(total) }
    } catch {
        _ = error.message.utf8.count
    }
    return 0
}
