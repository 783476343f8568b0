// The PowerAuth SDK's modules re-export Foundation (their umbrella headers import it).
@_exported import Foundation
