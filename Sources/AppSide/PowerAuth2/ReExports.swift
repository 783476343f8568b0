// As the SDK's module: Foundation, WatchConnectivity (its PowerAuthWCSessionManager.h imports
// it), and the SDK's types shared with the watch SDK.
@_exported import Foundation
@_exported import PowerAuthShared
@_exported import WatchConnectivity
