// As the SDK's module: its umbrella header imports WatchKit, its session manager
// WatchConnectivity; both bring Foundation.
@_exported import Foundation
@_exported import PowerAuthShared
@_exported import WatchConnectivity
@_exported import WatchKit
