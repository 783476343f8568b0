// Apple's WatchKit re-exports Foundation: code that imports only WatchKit uses NSObject, Data and
// the rest.
@_exported import Foundation
