import LinkCrypto
import WireProtocol

/// Makes `transferId`s: random (version 4) UUIDs in Apple's upper-case form, drawn from a
/// pool of secure random bytes that is refilled 4 KiB at a time rather than per id.
struct TransferIdGenerator {
    private var pool: [UInt8] = []
    private var index = 0
    private static let hex: [UInt8] = Array("0123456789ABCDEF".utf8)

    mutating func next() -> String {
        if index + 16 > pool.count {
            pool = SecureRandom.bytes(4_096)
            index = 0
        }
        var bytes = pool[index..<index + 16]
        index += 16
        bytes[bytes.startIndex + 6] = (bytes[bytes.startIndex + 6] & 0x0F) | 0x40
        bytes[bytes.startIndex + 8] = (bytes[bytes.startIndex + 8] & 0x3F) | 0x80
        var text = [UInt8]()
        text.reserveCapacity(36)
        for (offset, byte) in bytes.enumerated() {
            if offset == 4 || offset == 6 || offset == 8 || offset == 10 { text.append(UInt8(ascii: "-")) }
            text.append(Self.hex[Int(byte >> 4)])
            text.append(Self.hex[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
