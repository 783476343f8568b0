import PowerAuth2
import XCTest

/// The SDK's own vectors for its parts that compute in the app: activation codes
/// (`pa2OtpUtilTests.cpp`, `PowerAuthActivationTests.m`) and error codes.
final class PowerAuth2ModuleTests: XCTestCase {
    func testActivationCodesOfTheSDKsTests() {
        for valid in [
            "AAAAA-AAAAA-AAAAA-AAAAA", "MMMMM-MMMMM-MMMMM-MUTOA", "VVVVV-VVVVV-VVVVV-VTFVA", "55555-55555-55555-55YMA",
            "W65WE-3T7VI-7FBS2-A4OYA", "DD7P5-SY4RW-XHSNB-GO52A", "X3TS3-TI35Z-JZDNT-TRPFA", "HCPJX-U4QC4-7UISL-NJYMA",
            "XHGSM-KYQDT-URE34-UZGWQ", "45AWJ-BVACS-SBWHS-ABANA", "BUSES-ETYN2-5HTFE-NOV2Q", "ATQAZ-WJ7ZG-FWA7J-QFAJQ",
            "MXSYF-LLQJ7-PS6LF-E2FMQ", "ZKMVN-4IMFK-FLSYX-ARRGA", "NQHGX-LNM2S-EQ4NT-G3NAA",
        ] {
            XCTAssertTrue(PowerAuthActivationCodeUtil.validateActivationCode(valid), valid)
        }
        for invalid in [
            "", " ", "KLMNO-PQRST", "KLMNO-PQRST-UVWXY-Z234", "KLMNO-PQRST-UVWXY-Z2345 ", "KLMNO-PQRST-UVWXY-Z2345#",
            "67AAA-B0BCC-DDEEF-GGHHI", "67AAA-BB1CC-DDEEF-GGHHI", "67AAA-BBBC8-DDEEF-GGHHI", "67AAA-BBBCC-DDEEF-GGHH9",
            "67aAA-BBBCC-DDEEF-GGHHI", "6-AAA-BB1CC-DDEEF-GGHHI", "67AA#-BB1CC-DDEEF-GGHHI", "67AABCBB1CC-DDEEF-GGHHI",
            "67AAB-BB1CCEDDEEF-GGHHI", "67AAA-BBBCC-DDEEFZGGHHI", "VVVVV-VVVVV-VVVVV-VTFVB",
        ] {
            XCTAssertFalse(PowerAuthActivationCodeUtil.validateActivationCode(invalid), invalid)
        }
        let parsed = PowerAuthActivationCodeUtil.parse(fromActivationCode: "CCCCC-CCCCC-CCCCC-CNUUQ#ABCD")
        XCTAssertEqual(parsed?.activationCode, "CCCCC-CCCCC-CCCCC-CNUUQ")
        XCTAssertEqual(parsed?.activationSignature, "ABCD")
        XCTAssertEqual(PowerAuthActivationCodeUtil.parse(fromActivationCode: "BBBBB-BBBBB-BBBBB-BTA6Q")?.activationSignature, "")
        XCTAssertNotNil(PowerAuthActivationCodeUtil.parse(fromActivationCode: "DDDDD-DDDDD-DDDDD-D6UKA#ABC="))
        XCTAssertNotNil(
            PowerAuthActivationCodeUtil.parse(
                fromActivationCode: "3PZ2Z-DOXSL-PSSQI-I5VBA#MEQCIHP3LQ7WLDEPe8WCgdQ8CSwyxbErroYlGO+K6pIX1JyhAiAn6wEnaNp1mDdKlWb16Ma8eTKycRcZ+75TYV/zn0yvFw=="))
        for invalid in [
            "", "#", "#AB==", "EEEEE-EEEEE-EEEEE-E2OXA#", "SSSSS-SSSSS-SSSSS-SX7IA#AB", "UUUUU-UUUUU-UUUUU-UAFLQ#AB#",
            "XXXXX-XXXXX-XXXXX-X6RBQ#ABA-=",
        ] {
            XCTAssertNil(PowerAuthActivationCodeUtil.parse(fromActivationCode: invalid), invalid)
        }
        XCTAssertThrowsError(try PowerAuthActivation(activationCode: "1234", name: "Petr's iPhone 7")) {
            XCTAssertEqual(($0 as NSError).powerAuthErrorCode, .invalidActivationCode)
        }
        XCTAssertEqual(try PowerAuthActivation(activationCode: "VVVVV-VVVVV-VVVVV-VTFVA").identityAttributes, ["code": "VVVVV-VVVVV-VVVVV-VTFVA"])
    }

    /// The iOS guide's examples ("Validating Recovery Code and PUK") and the rules of
    /// `OtpUtil::validateRecoveryCode` and `validateRecoveryPuk`.
    func testRecoveryCodesAndPUKs() {
        XCTAssertTrue(PowerAuthActivationCodeUtil.validateRecoveryCode("VVVVV-VVVVV-VVVVV-VTFVA"))
        XCTAssertTrue(PowerAuthActivationCodeUtil.validateRecoveryCode("R:VVVVV-VVVVV-VVVVV-VTFVA"))
        XCTAssertFalse(PowerAuthActivationCodeUtil.validateRecoveryCode("R:VVVVV-VVVVV-VVVVV-VTFVB"))
        XCTAssertFalse(PowerAuthActivationCodeUtil.validateRecoveryCode("VVVVV-VVVVV-VVVVV-VTFVA#aGVsbG8="))
        XCTAssertFalse(PowerAuthActivationCodeUtil.validateRecoveryCode("VVVVV-VVVVV-VVVVV-VTFVAR:"), "R: elsewhere: the first two characters go")
        XCTAssertTrue(PowerAuthActivationCodeUtil.validateRecoveryPuk("0123456789"))
        XCTAssertFalse(PowerAuthActivationCodeUtil.validateRecoveryPuk("012345678"))
        XCTAssertFalse(PowerAuthActivationCodeUtil.validateRecoveryPuk("01234567890"))
        XCTAssertFalse(PowerAuthActivationCodeUtil.validateRecoveryPuk("012345678a"))
    }

    func testTypedCharactersAreCorrectedAsTheSDKDoes() {
        XCTAssertTrue(PowerAuthActivationCodeUtil.validateTypedCharacter(UInt32(UInt8(ascii: "Q"))))
        XCTAssertFalse(PowerAuthActivationCodeUtil.validateTypedCharacter(UInt32(UInt8(ascii: "8"))))
        XCTAssertEqual(PowerAuthActivationCodeUtil.validateAndCorrectTypedCharacter(UInt32(UInt8(ascii: "q"))), UInt32(UInt8(ascii: "Q")))
        XCTAssertEqual(PowerAuthActivationCodeUtil.validateAndCorrectTypedCharacter(UInt32(UInt8(ascii: "0"))), UInt32(UInt8(ascii: "O")))
        XCTAssertEqual(PowerAuthActivationCodeUtil.validateAndCorrectTypedCharacter(UInt32(UInt8(ascii: "1"))), UInt32(UInt8(ascii: "I")))
        XCTAssertEqual(PowerAuthActivationCodeUtil.validateAndCorrectTypedCharacter(UInt32(UInt8(ascii: "9"))), 0)
    }

    func testErrorCodesAndStatesAreTheSDKs() {
        XCTAssertEqual(
            [
                PowerAuthErrorCode.NA, .networkError, .invalidActivationState, .missingActivation, .activationPending,
                .wrongParameter, .invalidToken, .watchConnectivity, .timeSynchronization,
            ].map(\.rawValue),
            [0, 1, 3, 6, 7, 13, 14, 15, 20])
        XCTAssertEqual(
            [PowerAuthActivationState.created, .pendingCommit, .active, .blocked, .removed, .deadlock].map(\.rawValue),
            [1, 2, 3, 4, 5, 128])
        XCTAssertEqual(NSError(domain: PowerAuthErrorDomain, code: 6).powerAuthErrorCode, .missingActivation)
        XCTAssertEqual(NSError(domain: NSCocoaErrorDomain, code: 6).powerAuthErrorCode, .NA)
    }
}
