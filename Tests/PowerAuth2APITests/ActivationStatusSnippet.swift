// swift-format-ignore-file
import PowerAuth2

// The code of the PowerAuth Mobile SDK guide's "Requesting Device Activation Status", as written
// inside a function that declares the name it assumes (`powerAuthSDK`).
enum ActivationStatusSnippet {
    static func requestStatus(powerAuthSDK: PowerAuthSDK) {
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
                    if status.isProtocolUpgradeAvailable {
                        // Upgrade to new protocol version is available
                    }
                    if let unblockTime = status.blockExpirationTime {
                        // Activation is temporarily blocked. Use synchronized time to compare
                        // the timestamp received from the server.
                        let currentTime = powerAuthSDK.timeSynchronizationService.currentTime()
                        let remainingBlockTime = unblockTime.timeIntervalSince1970 - currentTime
                        if remainingBlockTime > 0 {
                            print("Seconds to activation unblock \(remainingBlockTime)")
                        }
                    }
                } else {
                    // Network error occurred, report it to the user
                }
            }

        } else {
            // No activation present on the device
        }
    }
}
