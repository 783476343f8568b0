// Apple's HealthKit re-exports Foundation: code that imports only HealthKit uses Date and the rest.
@_exported import Foundation
