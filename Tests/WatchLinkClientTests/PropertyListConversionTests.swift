import Foundation
import LinkJSON
@testable import WatchConnectivity
import WatchLinkClient
import XCTest

final class PropertyListConversionTests: XCTestCase {
    private func json(_ dictionary: [String: Any]) throws -> JSONObject {
        try PropertyListConversion.json(from: dictionary)
    }

    private func unsupported(_ dictionary: [String: Any], file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            let converted = try json(dictionary)
            XCTFail("converted: \(converted)", file: file, line: line)
            return ""
        } catch let error as WCError {
            XCTAssertEqual(error.code, .payloadUnsupportedTypes, file: file, line: line)
            XCTAssertEqual(error.localizedDescription, "Payload contains unsupported type.", "the framework's text", file: file, line: line)
            return error.explanation ?? ""
        } catch {
            XCTFail("\(error)", file: file, line: line)
            return ""
        }
    }

    func testSwiftValues() throws {
        let date = Date(timeIntervalSince1970: 1_780_000_000.25)
        let converted = try json([
            "string": "héllo", "int": 42, "negative": Int8(-3), "byte": UInt8(200), "big": UInt64(1) << 40,
            "double": 2.5, "whole": 3.0, "float": Float(0.5), "true": true, "false": false,
            "data": Data([0, 1, 2, 255]), "date": date, "substring": "abc".dropFirst(),
            "array": [1, "two", [3.5]] as [Any], "nested": ["inner": ["deep": true]] as [String: Any], "empty": [String: Any](),
        ])
        XCTAssertEqual(
            converted,
            [
                "array": [1, "two", [3.5]], "big": .int(1 << 40), "byte": 200, "data": ["$data": "AAEC/w=="],
                "date": ["$date": "2026-05-28T20:26:40.250Z"], "double": 2.5, "empty": [:], "false": false, "float": 0.5,
                "int": 42, "negative": -3, "nested": ["inner": ["deep": true]], "string": "héllo", "substring": "bc",
                "true": true, "whole": 3.0,
            ])
        XCTAssertEqual(JSON.serialize(.object(try json(["whole": 3.0]))), #"{"whole":3.0}"#, "a Double stays a real number")
    }

    func testFoundationValues() throws {
        let dictionary = NSDictionary(dictionary: ["n": NSNumber(value: 7), "list": NSArray(array: [NSString(string: "x"), NSNumber(value: true)])])
        let converted = try json([
            "string": NSString(string: "s"), "true": NSNumber(value: true), "int": NSNumber(value: Int64(-9)),
            "unsigned": NSNumber(value: UInt32(4_000_000_000)), "double": NSNumber(value: 1.25),
            "data": NSData(data: Data([9])), "date": NSDate(timeIntervalSince1970: 0), "dictionary": dictionary,
        ])
        XCTAssertEqual(
            converted,
            [
                "data": ["$data": "CQ=="], "date": ["$date": "1970-01-01T00:00:00.000Z"], "dictionary": ["list": ["x", true], "n": 7],
                "double": 1.25, "int": -9, "string": "s", "true": true, "unsigned": 4_000_000_000,
            ])
    }

    func testValuesThatAreNotPropertyListsNameTheirKey() {
        XCTAssertTrue(unsupported(["when": Optional<Date>.none as Any]).contains("'when'"))
        XCTAssertTrue(unsupported(["object": NSObject()]).contains("'object' is a value of type NSObject"))
        XCTAssertTrue(unsupported(["a": ["b": [1, URL(fileURLWithPath: "/x")] as [Any]]]).contains("'a.b[1]' is a value of type URL"))
        XCTAssertTrue(unsupported(["huge": UInt64.max]).contains("outside the range"))
        XCTAssertTrue(unsupported(["nan": Double.nan]).contains("'nan' is the number nan"))
        XCTAssertTrue(unsupported(["x": ["$data": "AA=="]]).contains("only key is '$data'"))
        XCTAssertTrue(unsupported(["keys": NSDictionary(dictionary: [NSNumber(value: 1): "one"])]).contains("keys must be strings"))
        XCTAssertTrue(unsupported(["null": NSNull()]).contains("NSNull"))
    }

    func testJSONBecomesValuesThatCastAsOnADevice() throws {
        let dictionary = PropertyListConversion.dictionary(from: [
            "int": 5, "double": 2.5, "bool": true, "string": "s", "data": ["$data": "AQI="],
            "date": ["$date": "2026-11-30T07:00:00.000Z"], "array": [1, ["k": false]], "object": ["a": ["$data": "AA=="]],
        ])
        XCTAssertEqual(dictionary["int"] as? Int, 5)
        XCTAssertEqual(dictionary["int"] as? Double, 5.0)
        XCTAssertEqual(dictionary["int"] as? Int64, 5)
        XCTAssertEqual(dictionary["double"] as? Double, 2.5)
        XCTAssertEqual(dictionary["bool"] as? Bool, true)
        XCTAssertEqual(dictionary["string"] as? String, "s")
        XCTAssertEqual(dictionary["data"] as? Data, Data([1, 2]))
        XCTAssertEqual(dictionary["date"] as? Date, ISO8601DateFormatter().date(from: "2026-11-30T07:00:00Z"))
        let array = try XCTUnwrap(dictionary["array"] as? [Any])
        XCTAssertEqual(array.first as? Int, 1)
        XCTAssertEqual((array.last as? [String: Any])?["k"] as? Bool, false)
        XCTAssertEqual((dictionary["object"] as? [String: Any])?["a"] as? Data, Data([0]))
        let again = try json(dictionary)
        XCTAssertEqual(again["bool"], true, "a received boolean goes out again as a boolean")
        XCTAssertEqual(again["double"], 2.5)
    }
}

final class WCErrorTests: XCTestCase {
    func testBridgesToNSErrorOfWCErrorDomain() {
        let error: any Error = WCError(.notReachable)
        let bridged = error as NSError
        XCTAssertEqual(bridged.domain, WCErrorDomain)
        XCTAssertEqual(bridged.domain, "WCErrorDomain")
        XCTAssertEqual(bridged.code, 7007)
        XCTAssertEqual(bridged.localizedDescription, "WatchConnectivity session on paired device is not reachable.", "the framework's own text")
        let described = WCError(.payloadTooLarge, userInfo: [NSLocalizedDescriptionKey: "the message is 70,000 bytes"])
        XCTAssertEqual((described as NSError).localizedDescription, "the message is 70,000 bytes")
        XCTAssertEqual(described.errorCode, 7009)
        XCTAssertEqual(WCError.errorDomain, WCErrorDomain)
    }

    func testCatchPatternsWorkAsWithApplesFramework() {
        func kind(of error: any Error) -> String {
            do {
                throw error
            } catch WCError.sessionNotActivated {
                return "not activated"
            } catch let error as WCError where error.code == .notReachable {
                return "not reachable"
            } catch let error as WCError {
                return "wc \(error.code.rawValue)"
            } catch {
                return "other"
            }
        }
        XCTAssertEqual(kind(of: WCError(.sessionNotActivated)), "not activated")
        XCTAssertEqual(kind(of: WCError(.notReachable)), "not reachable")
        XCTAssertEqual(kind(of: WCError(.watchOnlyApp)), "wc 7019")
        XCTAssertEqual(kind(of: CocoaError(.fileNoSuchFile)), "other")
        XCTAssertTrue(WCError.Code.notReachable ~= NSError(domain: WCErrorDomain, code: 7007), "an NSError of the domain matches too")
        XCTAssertFalse(WCError.Code.notReachable ~= NSError(domain: "other", code: 7007))
    }

    func testCodesAreApplesNumbers() {
        XCTAssertEqual(WCError.Code.allCases.map(\.rawValue), Array(7001...7019))
        XCTAssertEqual(WCError.genericError, .genericError)
        XCTAssertEqual(WCError.watchOnlyApp.rawValue, 7019)
        XCTAssertEqual(WCError.Code(rawValue: 7014), .deliveryFailed)
    }

    func testDaemonErrorsBecomeWCErrors() {
        let notReachable = WCError(WatchLinkError.watchConnectivity(code: 7007, name: "notReachable", message: "the link is down"))
        XCTAssertEqual(notReachable.code, .notReachable)
        XCTAssertEqual(notReachable.localizedDescription, "WatchConnectivity session on paired device is not reachable.")
        XCTAssertEqual(notReachable.explanation, "the link is down", "the daemon's words are kept beside the device's text")
        XCTAssertEqual((notReachable as NSError).userInfo[WCError.watchLinkExplanationKey] as? String, "the link is down")
        let unknown = WCError(WatchLinkError.watchConnectivity(code: 7999, name: "future", message: "new"))
        XCTAssertEqual(unknown.code, .genericError)
        let argument = WCError(WatchLinkError.control(code: 3, name: "invalidArgument", message: "'path' must be absolute"), doing: "transfer the file")
        XCTAssertEqual(argument.code, .invalidParameter)
        XCTAssertEqual(argument.localizedDescription, "Invalid parameter passed to WatchConnectivity API.")
        XCTAssertEqual(argument.explanation, "cannot transfer the file: 'path' must be absolute")
        let closed = WCError(WatchLinkError.connection("the daemon closed the connection (/tmp/h/phone.ctl)"))
        XCTAssertEqual(closed.code, .genericError)
        XCTAssertEqual(closed.localizedDescription, "Unknown WatchConnectivity error.")
        XCTAssertTrue(closed.explanation?.contains("/tmp/h/phone.ctl") == true)
    }
}
