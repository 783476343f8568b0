/// The bytes a hex string spells (whitespace and other non-hex characters between the digit
/// pairs are ignored), for expected values copied from vectors, RFCs and other tools.
public func bytes(fromHex text: String) -> [UInt8] {
    let digits = text.filter(\.isHexDigit)
    precondition(digits.count % 2 == 0, "odd number of hex digits in \(text)")
    var result: [UInt8] = []
    result.reserveCapacity(digits.count / 2)
    var index = digits.startIndex
    while index < digits.endIndex {
        let next = digits.index(index, offsetBy: 2)
        result.append(UInt8(digits[index..<next], radix: 16)!)
        index = next
    }
    return result
}
