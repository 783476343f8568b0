import LinkCrypto

/// What a file transfer announces before its bytes: the payload of its ITEM on the file
/// channel (3). See docs/wire-protocol.md, "File transfers".
///
/// ```
/// totalBytes  u64        the file's length
/// sha256      32 bytes   SHA-256 of the whole file
/// transferId  u16 + ASCII, 1...64 bytes of letters, digits, '-', '_' and '.', not starting with '.'
/// name        u16 + UTF-8, 1...200 bytes: one path component, no "/", no NUL, not "." or ".."
/// metadata    the rest: a binary property list dictionary, or nothing
/// ```
public struct FileHeader: Hashable, Sendable {
    /// The largest file a transfer carries: what a signed 64-bit file offset holds.
    public static let maximumTotalBytes = UInt64(Int64.max)
    public static let maximumTransferIdLength = 64
    /// Leaves room for a transfer id and a separator within a 255-byte file name.
    public static let maximumNameLength = 200

    public var totalBytes: UInt64
    /// SHA-256 of the file, 32 bytes.
    public var sha256: [UInt8]
    public var transferId: String
    /// The file's name (its last path component) on the sending side.
    public var name: String
    /// The binary property list of the metadata dictionary; empty when there is none.
    public var metadata: [UInt8]

    public init(totalBytes: UInt64, sha256: [UInt8], transferId: String, name: String, metadata: [UInt8]) {
        self.totalBytes = totalBytes
        self.sha256 = sha256
        self.transferId = transferId
        self.name = name
        self.metadata = metadata
    }

    /// The bytes of the header.
    ///
    /// - Precondition: the fields are valid (see ``isValid(name:)``, the length limits, a
    ///   32-byte digest).
    public func encoded() -> [UInt8] {
        precondition(sha256.count == SHA256Digest.byteCount, "a file header's sha256 is 32 bytes, not \(sha256.count)")
        precondition(totalBytes <= Self.maximumTotalBytes, "file of \(totalBytes) bytes")
        precondition(
            Self.isValid(transferId: transferId), "transferId '\(transferId)' is not 1...\(Self.maximumTransferIdLength) letters, digits, '-', '_' or '.'")
        precondition(Self.isValid(name: name), "file name '\(name)' is not one path component of 1...\(Self.maximumNameLength) bytes")
        var bytes: [UInt8] = []
        bytes.reserveCapacity(8 + 32 + 4 + transferId.utf8.count + name.utf8.count + metadata.count)
        bytes.appendBigEndian(totalBytes)
        bytes.append(contentsOf: sha256)
        bytes.appendBigEndian(UInt16(transferId.utf8.count))
        bytes.append(contentsOf: transferId.utf8)
        bytes.appendBigEndian(UInt16(name.utf8.count))
        bytes.append(contentsOf: name.utf8)
        bytes.append(contentsOf: metadata)
        return bytes
    }

    /// Reads a header.
    ///
    /// - Throws: ``FrameDecodingError/malformed(type:reason:)`` (of the ITEM type) naming the
    ///   field. The metadata is not parsed.
    public init(decoding bytes: [UInt8]) throws(FrameDecodingError) {
        let result = bytes.withUnsafeBytes { raw -> Result<FileHeader, FrameDecodingError> in
            Result { () throws(FrameDecodingError) -> FileHeader in
                var reader = FrameBodyReader(type: FrameType.item.rawValue, body: raw)
                let total = try reader.readInteger(UInt64.self, field: "file header totalBytes")
                guard total <= Self.maximumTotalBytes else {
                    throw reader.malformed("file header totalBytes is \(total), above \(Self.maximumTotalBytes)")
                }
                let digest = try reader.readBytes(SHA256Digest.byteCount, field: "file header sha256")
                let transferId = try reader.readString(
                    field: "file header transferId",
                    allowedLengths: 1...Self.maximumTransferIdLength)
                guard Self.isValid(transferId: transferId) else {
                    throw reader.malformed(
                        "file header transferId '\(transferId)' has a character other than letters, digits, '-', '_' and '.', or starts with '.'")
                }
                let name = try reader.readString(field: "file header name", allowedLengths: 1...Self.maximumNameLength)
                guard Self.isValid(name: name) else {
                    throw reader.malformed("file header name '\(name)' is not a plain file name (no '/', no NUL, not '.' or '..')")
                }
                return FileHeader(
                    totalBytes: total, sha256: digest, transferId: transferId, name: name,
                    metadata: reader.readRest())
            }
        }
        self = try result.get()
    }

    /// Whether `transferId` can be part of a file name: 1...``maximumTransferIdLength`` ASCII
    /// letters, digits, `-`, `_` and `.`, not starting with `.` (a UUID is one).
    public static func isValid(transferId: String) -> Bool {
        let bytes = transferId.utf8
        guard (1...maximumTransferIdLength).contains(bytes.count), bytes.first != UInt8(ascii: ".") else { return false }
        return bytes.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
        }
    }

    /// Whether `name` can name a file in a directory: 1...``maximumNameLength`` bytes of
    /// UTF-8, no `/` and no NUL, and neither `.` nor `..`.
    public static func isValid(name: String) -> Bool {
        let count = name.utf8.count
        return count >= 1 && count <= maximumNameLength && name != "." && name != ".."
            && !name.utf8.contains(UInt8(ascii: "/")) && !name.utf8.contains(0)
    }
}
