// AES-128 segment decryption (RFC 8216 §5.2: AES-128-CBC over the whole
// segment, PKCS7 padding), on libavutil's AES so no other crypto library is
// needed. Key bytes are only ever held here and in the player's key cache;
// they are never logged.

import CFFmpeg
import Foundation

public enum DecryptionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The key is not 16 bytes.
    case badKeyLength(Int)
    /// The IV is not 16 bytes.
    case badIVLength(Int)
    /// The ciphertext is empty or not a whole number of 16-byte blocks.
    case badCiphertextLength(Int)
    /// The last block's PKCS7 padding is invalid (wrong key or IV, or a corrupt segment).
    case badPadding
    /// av_aes_alloc or av_aes_init failed.
    case cipherSetup(Int32)

    public var description: String {
        switch self {
        case .badKeyLength(let n): "AES-128 key is \(n) bytes, not 16"
        case .badIVLength(let n): "AES-128 IV is \(n) bytes, not 16"
        case .badCiphertextLength(let n): "encrypted segment is \(n) bytes, not a whole number of 16-byte blocks"
        case .badPadding: "invalid PKCS7 padding after decryption (wrong key or IV, or a corrupt segment)"
        case .cipherSetup(let code): "AES setup failed (\(code))"
        }
    }
}

/// One AES context; the owner frees it.
final class AESContext {
    let pointer: OpaquePointer

    init(decryptingWith key: [UInt8]) throws(DecryptionError) {
        guard let p = av_aes_alloc() else { throw .cipherSetup(-1) }
        pointer = p
        let code = key.withUnsafeBufferPointer { av_aes_init(p, $0.baseAddress, 128, 1) }
        guard code == 0 else {
            av_free(UnsafeMutableRawPointer(p))
            throw .cipherSetup(code)
        }
    }

    deinit { av_free(UnsafeMutableRawPointer(pointer)) }
}

public enum SegmentDecryptor {
    /// The IV for a segment without an explicit one: its Media Sequence Number
    /// as a 128-bit big-endian integer (RFC 8216 §5.2).
    public static func iv(forMediaSequence msn: Int) -> [UInt8] {
        var iv = [UInt8](repeating: 0, count: 16)
        var value = UInt64(truncatingIfNeeded: msn)
        for i in (8..<16).reversed() {
            iv[i] = UInt8(value & 0xFF)
            value >>= 8
        }
        return iv
    }

    /// Decrypts AES-128-CBC and removes the PKCS7 padding.
    public static func decryptAES128(_ data: Data, key: [UInt8], iv: [UInt8]) throws(DecryptionError) -> Data {
        guard key.count == 16 else { throw .badKeyLength(key.count) }
        guard iv.count == 16 else { throw .badIVLength(iv.count) }
        guard !data.isEmpty, data.count % 16 == 0 else { throw .badCiphertextLength(data.count) }
        let aes = try AESContext(decryptingWith: key)
        var ivCopy = iv
        var out = Data(count: data.count)
        out.withUnsafeMutableBytes { dst in
            data.withUnsafeBytes { src in
                ivCopy.withUnsafeMutableBufferPointer { ivp in
                    av_aes_crypt(
                        aes.pointer, dst.bindMemory(to: UInt8.self).baseAddress, src.bindMemory(to: UInt8.self).baseAddress,
                        Int32(data.count / 16), ivp.baseAddress, 1)
                }
            }
        }
        guard let pad = out.last, pad >= 1, pad <= 16, out.suffix(Int(pad)).allSatisfy({ $0 == pad }) else { throw .badPadding }
        out.removeLast(Int(pad))
        return out
    }
}
