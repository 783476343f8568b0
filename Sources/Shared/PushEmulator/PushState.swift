#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkSystem

/// What phoned keeps of the push emulator across restarts (`push/state.json` in its state
/// directory): the device token and PushKit types, tokens given up, the app's ids and the
/// providers' public keys.
struct PushState: Codable, Equatable {
    var token: String?
    var types: [String] = []
    /// Token → when it was invalidated, in ms since 1970.
    var invalidated: [String: Int64] = [:]
    var bundleId = ""
    var teamId = ""
    var tokenUpdateIntervalSeconds = ProviderAuthenticator.defaultUpdateIntervalSeconds
    /// Key id → public key PEM.
    var keys: [String: String] = [:]

    static func load(_ path: String) throws -> PushState {
        guard FileSystem.fileExists(path) else { return PushState() }
        let bytes = try FileSystem.readFile(path)
        do {
            return try JSONDecoder().decode(PushState.self, from: Data(bytes))
        } catch {
            throw PushStateError("\(path) is not a push state file (\(error)); remove it to start afresh")
        }
    }

    func save(_ path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        try FileSystem.writeFileAtomically(path, Array(try encoder.encode(self)), mode: 0o600)
    }
}

struct PushStateError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
