// swift-format-ignore-file
import PowerAuth2

// The code of the PowerAuth Mobile SDK for iOS guide (PowerAuth-SDK-for-iOS.md) on activation
// status, activation removal, tokens, synchronised time and errors, each snippet as written
// inside a function that declares the names it assumes. Its Apple Watch support is
// SessionManager.swift and WatchSupportSnippets.swift.
enum IOSGuideSnippets {
    // Persisting Activation Data
    static func persistActivation(powerAuthSDK: PowerAuthSDK) {
        do {
            try powerAuthSDK.persistActivation(withPassword: "1234")
        } catch _ {
            // happens only in case SDK was not configured or activation is not in a state to be persisted
        }
    }

    // Requesting Activation Status
    static func requestActivationStatus(powerAuthSDK: PowerAuthSDK) {
        // Check if there is some activation on the device
        if powerAuthSDK.hasValidActivation() {

            // If there is an activation on the device, check the status with the server
            powerAuthSDK.fetchActivationStatus() { (status, error) in

                // If no error occurred, process the status
                if let status = status {
                    // Activation states are explained in detail in "Activation states" chapter below
                    switch status.state {
                    case .pendingCommit:
                        print("Waiting for commit")
                    case .active:
                        print("Activation is active")
                    case .blocked:
                        print("Activation is blocked")
                    case .removed:
                        print("Activation is no longer valid")
                        powerAuthSDK.removeActivationLocal()
                    case .deadlock:
                        print("Activation is technically blocked")
                        powerAuthSDK.removeActivationLocal()
                    case .created:
                        // Activation is just created. This is the internal
                        // state on the server and therefore can be ignored
                        // on the mobile application.
                        fallthrough
                    default:
                        print("Unknown state")
                    }

                    // Failed login attempts, remaining = max - current
                    let currentFailCount = status.failCount
                    let maxAllowedFailCount = status.maxFailCount
                    let remainingFailCount = status.remainingAttempts

                    if let customObject = status.customObject {
                        // Custom object contains any proprietary server-specific data
                    }

                } else {
                    // Network error occurred, report it to the user
                }
            }

        } else {
            // No activation present on the device
        }
    }

    // Simple Device-Only Removal
    static func removeActivationLocal(powerAuthSDK: PowerAuthSDK) {
        powerAuthSDK.removeActivationLocal()
    }

    // Removal via Signed Request
    static func removeActivation(powerAuthSDK: PowerAuthSDK) {
        // 2FA signature - uses device-related key and user PIN code
        let auth = PowerAuthAuthentication.possessionWithPassword(password: "1234")

        // Remove activation using the provided authentication object
        powerAuthSDK.removeActivation(with: auth) { (error) in
            if error == nil {
                // OK, activation was removed
            } else {
                // Report error to user
            }
        }
    }

    // Getting Token
    static func getToken(powerAuthSDK: PowerAuthSDK) {
        // 1FA signature - uses device-related key
        let auth = PowerAuthAuthentication.possession()

        let tokenStore = powerAuthSDK.tokenStore

        let task = tokenStore.requestAccessToken(withName: "MyToken", authentication: auth) { (token, error) in
            if let token = token {
                // now you can generate a header
            } else {
                // handle error
            }
        }
    }

    // Generating Authorization Header
    static func generateHeaderWithTimeSynchronization(tokenStore: PowerAuthTokenStore) {
        let task = tokenStore.generateAuthorizationHeader(withName: "MyToken") { header, error in
            if let header = header {
                let httpHeader = [ header.key : header.value ]
                // now you can attach that httpHeader to your HTTP request
            } else {
                // failure, the token is no longer valid, or failed to synchronize time
                // with the server.
            }
        }
    }

    // Generating Authorization Header
    static func generateHeader(token: PowerAuthToken) {
        if let header = token.generateHeader() {
            let httpHeader = [ header.key : header.value ]
            // now you can attach that httpHeader to your HTTP request
        } else {
            // in case of nil, the token is no longer valid
        }
    }

    // Removing Token From the Server
    static func removeTokenFromServer(powerAuthSDK: PowerAuthSDK) {
        let tokenStore = powerAuthSDK.tokenStore
        tokenStore.removeAccessToken(withName: "MyToken") { (removed, error) in
            if removed {
                // token has been removed
            } else {
                // handle error
            }
        }
    }

    // Removing Token Locally
    static func removeTokenLocally(powerAuthSDK: PowerAuthSDK) {
        let tokenStore = powerAuthSDK.tokenStore
        // Remove just one token
        tokenStore.removeLocalToken(withName: "MyToken")
        // Remove all local tokens
        tokenStore.removeAllLocalTokens()
    }

    // Synchronized Time
    static func timeService(powerAuthSDK: PowerAuthSDK) {
        let timeService = powerAuthSDK.timeSynchronizationService
    }

    // Manually Synchronize Time
    static func synchronizeTime(timeService: PowerAuthTimeSynchronizationService) {
        let task = timeService.synchronizeTime(callback: { error in
            if error == nil {
                // Success, time has been properly synchronized
            } else {
                // Failed to synchronize the time
            }
        }, callbackQueue: .main)
    }

    // Get Synchronized Time
    static func synchronizedTime(timeService: PowerAuthTimeSynchronizationService) {
        if timeService.isTimeSynchronized {
            // Get synchronized timestamp
            let timestamp = timeService.currentTime()
            // If a date object is required, then use the following snippet
            let date = Date(timeIntervalSince1970: timestamp)
        } else {
            // Time is not synchronized yet. If you call currentTime() then 
            // the returned timestamp is similar to Date().timeIntervalSince1970
            let timestamp = timeService.currentTime()
        }
    }

    // Get Synchronized Time
    static func timePrecision(timeService: PowerAuthTimeSynchronizationService) {
        if timeService.isTimeSynchronized {
            let precision = timeService.localTimeAdjustmentPrecision
            print("Time is synchronized with precision \(precision)")
        }
    }

    // Error Handling
    static func errorFromCallback(powerAuthSDK: PowerAuthSDK) {
        powerAuthSDK.fetchActivationStatus { (status, error) in
            // Handle 'error' here
        }
    }

    // Error Handling
    static func errorFromThrow(powerAuthSDK: PowerAuthSDK) {
        do {
            try powerAuthSDK.persistActivation(withPassword: "1234")
        } catch let error as NSError {
            // Handle 'error' here
        }
    }

    // Error Handling
    static func errorCodes(error: Error?) {
        if error == nil {
            // No error happened
        } else {
            // Handle the error
            if let error = error as NSError? {

                // If yes, handle the error based on the error code
                switch error.powerAuthErrorCode {

                case .NA:
                    print("Error has different domain than PowerAuthErrorDomain")

                case .networkError:
                    print("Error code for error with network connectivity or download")

                case .signatureError:
                    print("Error code for error in signature calculation")

                case .invalidActivationState:
                    print("Error code for error that occurs when activation state is invalid")

                case .invalidActivationCode:
                    print("Error code for error that occurs when activation or recovery code is invalid")

                case .invalidActivationData:
                    print("Error code for error that occurs when activation data is invalid")

                case .missingActivation:
                    print("Error code for error that occurs when activation is required but missing")

                case .activationPending:
                    print("Error code for error that occurs when pending activation is present and work with completed activation is required")

                case .biometryNotAvailable:
                    print("Error code for TouchID/FaceID not available error")

                case .biometryCancel:
                    print("Error code for TouchID/FaceID action cancel error")

                case .biometryFallback:
                    print("Error code for TouchID/FaceID fallback action")

                case .biometryFailed:
                    print("Error code for TouchID/FaceID action failure")

                case .operationCancelled:
                    print("Error code for cancelled operations")

                case .encryption:
                    print("Error code for errors related to end-to-end encryption")

                case .wrongParameter:
                    print("Error code for general API misuse")

                case .invalidToken:
                    print("Error code for errors related to token based auth.")

                case .watchConnectivity:
                    print("Error code for errors related to synchronization between iOS and watchOS.")

                case .protocolUpgrade:
                    print("Error code for error that occurs when protocol upgrade fails at unrecoverable error.")

                case .pendingProtocolUpgrade:
                    print("The operation is temporarily unavailable, due to pending protocol upgrade.")

                case .externalPendingOperation:
                    print("Other application is doing activation or protocol upgrade.")

                case .timeSynchronization:
                    print("Failed to synchronize time with the server.")

                default:
                    print("Unknown error")
                }
            }
        }
    }
}
