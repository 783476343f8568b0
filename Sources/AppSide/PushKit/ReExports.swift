// Apple's PushKit module re-exports Foundation: app code that imports only PushKit uses
// NSObject, Data, URL and DispatchQueue through it, and so does code written against this one.
@_exported import Foundation
