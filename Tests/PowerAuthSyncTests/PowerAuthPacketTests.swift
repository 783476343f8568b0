import PowerAuthSync
import WireProtocol
import XCTest

/// Packet bytes as the PowerAuth SDK writes and reads them.
final class PowerAuthPacketTests: XCTestCase {
    private static let tokenJSON =
        #"{"name":"possession","id":"5D6E2B7A-1C3F-4E5A-9B8C-7D6E5F4A3B2C","aid":"ACT-1","af":1,"sec":"+\/+\/+\/+\/+\/+\/+\/+\/+\/+\/\/w=="}"#
    private static let tokenDataBase64 =
        "eyJuYW1lIjoicG9zc2Vzc2lvbiIsImlkIjoiNUQ2RTJCN0EtMUMzRi00RTVBLTlCOEMtN0Q2RTVGNEEzQjJDIiwiYWlkIjoiQUNULTEiLCJhZiI6MSwic2VjIjoiK1wvK1wvK1wvK1wvK1wvK1wvK1wvK1wvK1wvK1wvXC93PT0ifQ=="
    private static let secret: [UInt8] = [0xFB, 0xFF, 0xBF, 0xFB, 0xFF, 0xBF, 0xFB, 0xFF, 0xBF, 0xFB, 0xFF, 0xBF, 0xFB, 0xFF, 0xBF, 0xFF]

    /// Each example decodes, and its packet built with the builders re-encodes to the same bytes.
    func testExamplesDecodeAndReencodeByteForByte() throws {
        let examples: [(String, PowerAuthPacket)] = [
            (
                #"PAwc1{"target":"session:main","activationCmd":"get_session"}"#,
                .activationStatus("get_session", target: "session:main")
            ),
            (
                #"PAwc1{"target":"session:main","activationCmd":"put_session","activationId":"ACT-1"}"#,
                .activationStatus("put_session", activationId: "ACT-1", target: "session:main")
            ),
            (
                #"PAwc1{"target":"session:main","activationCmd":"put_session"}"#,
                .activationStatus("put_session", target: "session:main")
            ),
            (
                #"PAwc1{"target":"*","activationCmd":"put_session","activationId":"a\/b"}"#,
                .activationStatus("put_session", activationId: "a/b", target: "*")
            ),
            (#"PAwc1{"target":"*","successCode":1}"#, .success()),
            (
                #"PAwc1{"target":"*","errorCode":15,"errorDomain":"PowerAuthErrorDomain","errorMsg":"PA2WCSessionManager: Wrong packet received."}"#,
                .failure(.watchConnectivity("PA2WCSessionManager: Wrong packet received."))
            ),
            (
                #"PAwc1{"target":"token:main","tokenCmd":"get_token","tokenName":"possession"}"#,
                .token("get_token", name: "possession", target: "token:main")
            ),
            (
                #"PAwc1{"target":"token:main","tokenCmd":"put_token","tokenName":"possession","tokenData":""# + Self.tokenDataBase64 + #""}"#,
                .token("put_token", name: "possession", tokenData: Array(Self.tokenJSON.utf8), target: "token:main")
            ),
            (
                #"PAwc1{"target":"*","tokenCmd":"put_token","tokenName":"possession","tokenNotFound":true}"#,
                .token("put_token", name: "possession", notFound: true, target: "*")
            ),
            (
                #"PAwc1{"target":"token:main","tokenCmd":"remove_token","tokenName":"possession"}"#,
                .token("remove_token", name: "possession", target: "token:main")
            ),
        ]
        for (text, built) in examples {
            let bytes = Array(text.utf8)
            XCTAssertEqual(String(decoding: built.encoded(), as: UTF8.self), text)
            guard case .packet(let decoded) = PowerAuthPacket.decode(bytes) else {
                XCTFail("not decoded: \(text)")
                continue
            }
            XCTAssertEqual(decoded, built, text)
            XCTAssertEqual(decoded.encoded(), bytes, "re-encoding \(text)")
            XCTAssertTrue(PowerAuthPacket.isProcessed(bytes))
        }
    }

    func testPayloadReaders() throws {
        guard
            case .packet(let put) = PowerAuthPacket.decode(
                Array((#"PAwc1{"target":"token:main","tokenCmd":"put_token","tokenName":"possession","tokenData":""# + Self.tokenDataBase64 + #""}"#).utf8))
        else {
            return XCTFail()
        }
        XCTAssertEqual(put.tokenCommand, "put_token")
        XCTAssertTrue(put.hasValidTokenPayload)
        let token = try XCTUnwrap(PowerAuthTokenData.deserialize(try XCTUnwrap(put.tokenData)))
        XCTAssertEqual(
            token,
            PowerAuthTokenData(
                name: "possession", identifier: "5D6E2B7A-1C3F-4E5A-9B8C-7D6E5F4A3B2C",
                activationId: "ACT-1", authenticationFactors: 1, secret: Self.secret))
        XCTAssertEqual(String(decoding: token.serialized(), as: UTF8.self), Self.tokenJSON)

        // Whitespace, other key orders and unescaped slashes are read too, as NSJSONSerialization does.
        guard
            case .packet(let loose) = PowerAuthPacket.decode(
                Array(#"PAwc1 { "activationId" : "a/b", "target" : "session:x", "activationCmd" : "put_session" }"#.utf8))
        else {
            return XCTFail()
        }
        XCTAssertEqual(loose.activationId, "a/b")
        XCTAssertEqual(loose.target, "session:x")
        XCTAssertTrue(loose.hasValidActivationStatus)

        guard case .packet(let failure) = PowerAuthPacket.decode(Array(#"PAwc1{"target":"*","errorCode":6}"#.utf8)) else { return XCTFail() }
        XCTAssertEqual(failure.error, PowerAuthError(code: 6, message: nil), "a missing domain means PowerAuthErrorDomain")
    }

    func testPayloadValidationFollowsTheSDK() {
        XCTAssertFalse(PowerAuthPacket.activationStatus("drop_session", target: "session:a").hasValidActivationStatus)
        XCTAssertFalse(PowerAuthPacket.token("put_token", name: "t", target: "token:a").hasValidTokenPayload, "a put needs data or tokenNotFound")
        XCTAssertTrue(PowerAuthPacket.token("put_token", name: "t", notFound: true, target: "token:a").hasValidTokenPayload)
        XCTAssertFalse(PowerAuthPacket.token("get_token", name: "", target: "token:a").hasValidTokenPayload, "a name is required")
        XCTAssertFalse(PowerAuthPacket.token("rename_token", name: "t", target: "token:a").hasValidTokenPayload)
    }

    /// Too short or without the magic: "not processed" (the app gets it). The magic and broken
    /// JSON: ours but broken.
    func testBrokenPacketsGetTheRightOutcome() {
        let notProcessed = [
            "", "PAwc1", #"PAwc1{"a":1}"#, #"XAwc1{"target":"session:main"}"#, #"pawc1{"target":"session:main"}"#,
            #"PAwc2{"target":"session:main"}"#,
            #"{"target":"session:main","activationCmd":"get_session"}"#,
        ]
        for text in notProcessed {
            XCTAssertEqual(PowerAuthPacket.decode(Array(text.utf8)), .notProcessed, text)
            XCTAssertFalse(PowerAuthPacket.isProcessed(Array(text.utf8)), text)
        }
        let broken = [
            #"PAwc1{not json at all}"#, #"PAwc1[1,2,3,4,5,6,7,8,9]"#, #"PAwc1{"target":12345}"#,
            #"PAwc1{"activationCmd":"get_session"}"#, #"PAwc1{"target":"session:main""#, #"PAwc1"just a string""#,
        ]
        for text in broken {
            guard case .broken(let reason) = PowerAuthPacket.decode(Array(text.utf8)) else {
                XCTFail("expected broken: \(text)")
                continue
            }
            XCTAssertFalse(reason.isEmpty)
            XCTAssertTrue(PowerAuthPacket.isProcessed(Array(text.utf8)), text)
        }
        var invalidUTF8 = Array(#"PAwc1{"target":"session:"#.utf8)
        invalidUTF8 += [0xFF, 0xFE] + Array(#""}"#.utf8)
        guard case .broken = PowerAuthPacket.decode(invalidUTF8) else { return XCTFail("invalid UTF-8 is broken") }
    }

    func testUserInfoCarriesThePacketAsData() throws {
        let packet = PowerAuthPacket.activationStatus("put_session", activationId: "ACT-1", target: "session:main").encoded()
        let userInfo = try PowerAuthPacket.userInfo(carrying: packet)
        XCTAssertEqual(try PropertyListCodec.decodeDictionary(userInfo), ["io.getlime.PowerAuth.PA2WCSessionPacket": .data(packet)])
        XCTAssertEqual(PowerAuthPacket.packetBytes(inUserInfo: userInfo), packet)
        let string = try PropertyListCodec.encode(["io.getlime.PowerAuth.PA2WCSessionPacket": .string("PAwc1")])
        XCTAssertNil(PowerAuthPacket.packetBytes(inUserInfo: string), "only Data under the key is a packet")
        XCTAssertNil(PowerAuthPacket.packetBytes(inUserInfo: try PropertyListCodec.encode(["other": .data(packet)])))
    }

    func testTokenDataIsRefusedWithoutAValidSecret() {
        XCTAssertNil(PowerAuthTokenData.deserialize(Array(#"{"name":"a","id":"b","sec":"AQID"}"#.utf8)), "3-byte secret")
        XCTAssertNil(PowerAuthTokenData.deserialize(Array(#"{"name":"a","sec":"AQIDBAUGBwgJCgsMDQ4PEA=="}"#.utf8)), "no id")
        XCTAssertNil(PowerAuthTokenData.deserialize(Array("not json".utf8)))
        XCTAssertNotNil(PowerAuthTokenData.deserialize(Array(#"{"name":"a","id":"b","af":0,"sec":"AQIDBAUGBwgJCgsMDQ4PEA=="}"#.utf8)))
    }
}
