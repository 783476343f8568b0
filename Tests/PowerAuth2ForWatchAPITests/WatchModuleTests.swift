import PowerAuth2ForWatch
import XCTest

/// What `import PowerAuth2ForWatch` alone gives watch app code, as the SDK's module does.
final class WatchModuleTests: XCTestCase {
    func testTheModuleBringsWatchKitWatchConnectivityAndFoundation() {
        // The guide's InterfaceController initializes its SDK object with the bundle's identifier,
        // which a Linux executable lacks; its base class is what the module must bring.
        let controller = WKInterfaceController()
        controller.awake(withContext: nil)
        controller.willActivate()
        controller.didDeactivate()
        XCTAssertTrue(WCSession.isSupported())
        XCTAssertEqual(Data("PAwc1".utf8).count, 5)
    }

    func testAConfigurationWithoutAnInstanceMakesNoSDKObject() {
        let empty = PowerAuthConfiguration(
            instanceId: "", baseEndpointUrl: "https://localhost:8080/demo-server",
            configuration: "ARDDj6EB6iAUtNm...KKEcBxbnH9bMk8Ju3K1wmjbA==")
        XCTAssertFalse(empty.validate())
        XCTAssertNil(PowerAuthWatchSDK(configuration: empty))
        let placeholder = PowerAuthConfiguration(
            instanceId: "com.example.app", baseEndpointUrl: "https://localhost:8080/demo-server",
            configuration: "ARDDj6EB6iAUtNm...KKEcBxbnH9bMk8Ju3K1wmjbA==")
        XCTAssertTrue(placeholder.validate(), "the documents' placeholder configuration is accepted")
    }

    func testTheWatchSDKsErrorCodesMatchTheSDKs() {
        XCTAssertEqual(PowerAuthErrorDomain, "PowerAuthErrorDomain")
        XCTAssertEqual(PowerAuthErrorCode.watchConnectivity.rawValue, 15)
        XCTAssertEqual(PowerAuthErrorCode.invalidToken.rawValue, 14)
        XCTAssertEqual(NSError(domain: PowerAuthErrorDomain, code: 15).powerAuthErrorCode, .watchConnectivity)
        XCTAssertEqual(NSError(domain: "WCErrorDomain", code: 7012).powerAuthErrorCode, .NA)
    }
}
