import LinkCrypto
import LinkRuntime
import LinkSystem
import WireProtocol

/// The daemon's files in its home: the private directories, the device id and the pairing
/// key (phoned creates it; watchd waits for it).
final class DaemonHome {
    private let options: DaemonOptions
    private let logger: Logger
    private(set) var deviceId = ""
    /// Empty on watchd until the key file appears.
    private(set) var pairingKey: [UInt8] = []
    private var waitingForKeyLogged = false

    static let pairingKeyByteCount = LinkProtocol.pairingKeyLength

    init(options: DaemonOptions, logger: Logger) {
        self.options = options
        self.logger = logger
    }

    /// Makes the directories private, checks the socket paths, loads (or makes) the device id
    /// and, on phoned, the pairing key. Throws a `StartupError` naming what was wrong.
    func prepare() throws {
        do {
            for directory in [options.home, options.stateDirectory] {
                if try FileSystem.ensurePrivateDirectory(directory) { logger.warning("tightened \(directory) to mode 0700") }
            }
        } catch {
            throw StartupError("cannot use the WatchLink home: \(error)")
        }
        for (what, path) in [("link socket", options.linkPath), ("control socket", options.controlPath)]
        where path.utf8.count > UnixSocket.maximumPathLength {
            throw StartupError(
                "the \(what) path \(path) is \(path.utf8.count) bytes; Unix socket paths are limited to \(UnixSocket.maximumPathLength) bytes here (use a shorter --home)"
            )
        }
        deviceId = try options.deviceId ?? loadDeviceId()
        if options.role == .phone {
            pairingKey = try loadOrCreatePairingKey()
        }
    }

    /// Whether watchd can link: the key file may appear after watchd started.
    enum PairingKeyState {
        case ready
        case waiting
        case unreadable(StartupError)
    }

    /// watchd: whether the pairing key is there to link with, reading it the first time it
    /// appears. Logs once while it waits.
    func pairingKeyState() -> PairingKeyState {
        guard pairingKey.isEmpty else { return .ready }
        guard FileSystem.fileExists(options.pairingKeyPath) else {
            if !waitingForKeyLogged {
                logger.info("waiting for \(options.pairingKeyPath) (start phoned with the same --home)")
                waitingForKeyLogged = true
            }
            return .waiting
        }
        do {
            pairingKey = try readPairingKey(options.pairingKeyPath)
            return .ready
        } catch {
            return .unreadable(error as? StartupError ?? StartupError("\(error)"))
        }
    }

    private func loadDeviceId() throws -> String {
        let path = options.stateDirectory + "/device-id"
        if FileSystem.fileExists(path) {
            let bytes = try FileSystem.readFile(path)
            let text = String(decoding: bytes, as: UTF8.self).filter { !$0.isWhitespace }
            if !text.isEmpty, text.utf8.count <= 255, Hello.isValid(deviceId: text) {
                return text
            }
            throw StartupError("\(path) does not hold a device id (1 to 255 bytes of text); remove it to generate a new one")
        }
        let id = "\(options.role.name)-" + SecureRandom.bytes(4).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        try FileSystem.writeFileAtomically(path, Array((id + "\n").utf8), mode: 0o600)
        return id
    }

    private func loadOrCreatePairingKey() throws -> [UInt8] {
        let path = options.pairingKeyPath
        if FileSystem.fileExists(path) {
            return try readPairingKey(path)
        }
        let key = SecureRandom.bytes(Self.pairingKeyByteCount)
        do {
            try FileSystem.writeFileAtomically(path, key, mode: 0o600)
        } catch {
            throw StartupError("cannot create the pairing key: \(error)")
        }
        logger.info("created a new pairing key at \(path)")
        return key
    }

    private func readPairingKey(_ path: String) throws -> [UInt8] {
        let key: [UInt8]
        do { key = try FileSystem.readFile(path) } catch {
            throw StartupError("cannot read the pairing key: \(error)")
        }
        guard key.count == Self.pairingKeyByteCount else {
            throw StartupError("\(path) is \(key.count) bytes; a pairing key is \(Self.pairingKeyByteCount) bytes (remove it to let phoned create a new one)")
        }
        return key
    }
}

/// A startup failure, printed as one line naming what was wrong.
public struct StartupError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
