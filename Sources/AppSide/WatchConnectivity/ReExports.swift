// Apple's WatchConnectivity module re-exports Foundation: app code that imports only WatchConnectivity uses
// NSObject, Data, URL and DispatchQueue through it, and so does code written against this one.
@_exported import Foundation
