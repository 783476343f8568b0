// swift-format-ignore-file
import PowerAuth2

// The code of the PowerAuth Mobile SDK guide's "Apple Watch Support" (PowerAuth-SDK-for-iOS.md)
// after the SessionManager, each snippet as written inside a function that declares the names
// it assumes (`powerAuthSDK`, `tokenStore`).
enum WatchSupportSnippets {
    static func sendActivationStatusToWatchLazily(powerAuthSDK: PowerAuthSDK, tokenStore: PowerAuthTokenStore) {
        if !powerAuthSDK.sendActivationStatusToWatch() {
            // send message has not been issued, WCSession is probably not available / active
        } else {
            // message has been issued and it's guaranteed that it will be delivered to the watch
        }
    }

    static func sendActivationStatusToWatchWithCompletion(powerAuthSDK: PowerAuthSDK, tokenStore: PowerAuthTokenStore) {
        powerAuthSDK.sendActivationStatusToWatch { (error) in
            if let error = error {
                // handle error, otherwise the transfer was OK
            }
        }
    }

    static func sendTokenToWatchLazily(powerAuthSDK: PowerAuthSDK, tokenStore: PowerAuthTokenStore) {
        if let token = tokenStore.localToken(withName: "MyToken") {
            if !token.sendToWatch() {
                // send message has not been issued, WCSession is probably not available / active
            } else {
                // message has been issued and it's guaranteed that it will be delivered to the watch
            }
        }
    }

    static func sendTokenToWatchWithCompletion(powerAuthSDK: PowerAuthSDK, tokenStore: PowerAuthTokenStore) {
        if let token = tokenStore.localToken(withName: "MyToken") {
            token.sendToWatch { (error) in
                if let error = error {
                    // handle error, otherwise the transfer was OK
                }
            }
        }
    }

    static func removeTokenFromWatchLazily(powerAuthSDK: PowerAuthSDK, tokenStore: PowerAuthTokenStore) {
        if let token = tokenStore.localToken(withName: "MyToken") {
            if !token.removeFromWatch() {
                // send message has not been issued, WCSession is probably not available / active
            } else {
                // message has been issued and it's guaranteed that it will be delivered to the watch
            }
        }
    }

    static func removeTokenFromWatchWithCompletion(powerAuthSDK: PowerAuthSDK, tokenStore: PowerAuthTokenStore) {
        if let token = tokenStore.localToken(withName: "MyToken") {
            token.removeFromWatch { (error) in
                if let error = error {
                    // handle error, otherwise the transfer was OK
                }
            }
        }
    }
}
