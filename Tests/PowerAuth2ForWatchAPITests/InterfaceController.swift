// swift-format-ignore-file
// The "Configure PowerAuth for WatchKit" controller of the PowerAuth Mobile SDK for watchOS guide
// (PowerAuth-SDK-for-watchOS.md), as written with only `import PowerAuth2ForWatch`, and the
// guide's snippets that use its `self.powerAuthWatch`, each as written in a method of the
// controller (in this file, as they reach its private property).

import PowerAuth2ForWatch

class InterfaceController: WKInterfaceController {

    // Lazy initialized variable
    private var powerAuthWatch: PowerAuthWatchSDK = {
        return InterfaceController.setupPowerAuth()
    }()

    private static func setupPowerAuth() -> PowerAuthWatchSDK {
        let config = PowerAuthConfiguration(
            instanceId: Bundle.main.bundleIdentifier!,
            baseEndpointUrl: "https://localhost:8080/demo-server",
            configuration: "ARDDj6EB6iAUtNm...KKEcBxbnH9bMk8Ju3K1wmjbA==")

        return PowerAuthWatchSDK(configuration: config)!
    }

    // ... the rest of the controller's code ...
}

extension InterfaceController {
    // Getting Device Activation Status
    func hasValidActivationSnippet() {
        if self.powerAuthWatch.hasValidActivation() {
            // main application has a valid activation locally stored
        }
    }

    // Getting Device Activation Status
    func updateActivationStatusSnippet() {
        // Lazy version

        if !self.powerAuthWatch.updateActivationStatus() {
            // message has not been issued, WCSession is probably not available / active
        } else {
            // message has been issued and it's guaranteed that it will be delivered to iPhone
            // The iPhone has to issue responses in a similar lazy way.
        }

        // Or asynchronous version...

        self.powerAuthWatch.updateActivationStatus { (activationId, error) in
            let hasActivation = activationId != nil
            if error == nil {
                print("PowerAuth activation is: \(hasActivation ? "VALID" : "EMPTY") on iPhone")
            } else {
                // handle error...
            }
        }
    }

    // Getting Token
    func localTokenSnippet() {
        if let token = self.powerAuthWatch.tokenStore.localToken(withName: "MyToken") {
            // you have a token that can generate authorization headers
        }
    }

    // Getting Token From iPhone
    func tokenFromIPhoneSnippet() {
        self.powerAuthWatch.tokenStore.requestAccessToken(withName: "MyToken") { (token, error) in
            if let token = token {
                // the access token is valid
            } else {
                // an error occurred
            }
        }
    }

    // Removing Token Locally
    func removeTokenLocallySnippet() {
        let tokenStore = self.powerAuthWatch.tokenStore
        // Remove just one token
        tokenStore.removeLocalToken(withName: "MyToken")
        // Remove all local tokens
        tokenStore.removeAllLocalTokens()
    }

    // Debug Build Detection
    func debugBuildTrapSnippet() {
        #if YOUR_APPSTORE_BUILD_FLAG
            // Final vs Debug library trap
            if PowerAuthSystem.isInDebug() {
                fatalError("CRITICAL ERROR: You're using Debug PowerAuth library in production build.")
            }
        #endif
    }

    // Generating Authorization Header: the name it assumes (`token`) declared.
    func generateHeaderSnippet(token: PowerAuthToken) {
        if let header = token.generateHeader() {
            let httpHeader = [ header.key : header.value ]
            // now you can attach that httpHeader to your HTTP request
        } else {
            // in case of nil, the token is no longer valid
        }
    }
}
