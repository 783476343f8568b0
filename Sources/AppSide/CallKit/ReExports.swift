// Apple's CallKit module re-exports Foundation: app code that imports only CallKit uses
// NSObject, UUID and DispatchQueue through it, and so does code written against this one.
@_exported import Foundation
