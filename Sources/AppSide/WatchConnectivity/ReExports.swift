// Apple's WatchConnectivity module re-exports Foundation: app code that imports only WatchConnectivity uses
// NSObject, Data, URL and DispatchQueue through it, and so does code written against this one.
@_exported import Foundation
// Key-value observing of the session (`observe(\.hasContentPending)`) names Foundation's KVO
// types; where Foundation lacks them they come with this module.
@_exported import WatchLinkObservation
