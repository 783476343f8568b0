import LinkSession
import WireProtocol
import XCTest

/// Helpers the session tests share.
extension XCTestCase {
    /// `dictionary` as the binary property list a payload carries.
    func payload(_ dictionary: [String: PropertyListValue]) -> [UInt8] {
        try! PropertyListCodec.encode(dictionary)
    }

    /// A phone and a watch session, both activated, linked, with nothing pending.
    func activatedPair() -> DurablePair {
        let pair = DurablePair()
        pair.command(.phone, .activate)
        pair.command(.watch, .activate)
        pair.setLink(up: true)
        pair.pump()
        return pair
    }

    /// Asserts that `result` is WCError `code` with a message.
    func assertError(
        _ result: Result<CommandResult, SessionError>?, _ code: WCErrorCode,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        guard case .failure(.wc(let actual, let message))? = result else {
            return XCTFail("expected WCError \(code.rawValue), got \(String(describing: result))", file: file, line: line)
        }
        XCTAssertEqual(actual, code, message, file: file, line: line)
        XCTAssertFalse(message.isEmpty, file: file, line: line)
    }
}
