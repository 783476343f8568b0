import LinkJSON
import WireProtocol

/// The watches a phone is paired with and the active one (`phone/watches.json`).
///
/// A watch is paired the first time it links with the pairing key; the first watch ever
/// paired becomes the active watch, and `device.switchWatch` makes another one active. Each
/// watch has a directory for its queues, relative to the phone's state directory: the first
/// watch keeps the phone's own `phone.db` (so a phone that linked with one watch before
/// keeps everything it had queued), the others get `watches/<name>`.
public struct PairedWatches: Hashable, Sendable {
    /// One paired watch.
    public struct Watch: Hashable, Sendable {
        public var deviceId: String
        /// `""` for the phone's state directory itself, else `watches/<name>`.
        public var directory: String
        /// How many times the watch app was uninstalled for this watch, or the watch unpaired:
        /// each time the app's directory for it (`watchDirectoryURL`) is a new one, and the
        /// old one is deleted at the app's next launch.
        public var appDirectoryGeneration: Int

        public init(deviceId: String, directory: String, appDirectoryGeneration: Int = 0) {
            self.deviceId = deviceId
            self.directory = directory
            self.appDirectoryGeneration = appDirectoryGeneration
        }

        /// The name of the app's directory for this watch (`watchDirectoryURL`, below
        /// `HOME/phone-app/Watches`): the watch's directory name, and `+<generation>` after
        /// the first (`+` is in no watch's name).
        public var appDirectoryName: String {
            let name = PairedWatches.directoryName(for: deviceId)
            return appDirectoryGeneration == 0 ? name : name + "+\(appDirectoryGeneration)"
        }
    }

    /// How many watches a phone keeps; a further watch is refused when it links.
    public static let maximumCount = 16
    /// The file in the phone's state directory.
    public static let fileName = "watches.json"

    public private(set) var watches: [Watch] = []
    /// The active watch: nil until a watch has linked.
    public private(set) var activeDeviceId: String?

    public init() {}

    public func watch(_ deviceId: String) -> Watch? {
        watches.first { $0.deviceId == deviceId }
    }

    // MARK: - Pairing

    /// What `admit` made of a watch that proved the pairing key.
    public enum Admission: Hashable, Sendable {
        /// Paired before.
        case known(Watch)
        /// Paired now; it is the active watch when it is the first one.
        case added(Watch)
        /// As many watches as a phone keeps are paired already.
        case full
    }

    /// Pairs a watch that linked, unless it is paired already or there is no room.
    public mutating func admit(_ deviceId: String) -> Admission {
        if let known = watch(deviceId) { return .known(known) }
        guard watches.count < Self.maximumCount else { return .full }
        let watch = Watch(deviceId: deviceId, directory: watches.isEmpty ? "" : newDirectory(for: deviceId))
        watches.append(watch)
        if activeDeviceId == nil { activeDeviceId = deviceId }
        return .added(watch)
    }

    // MARK: - Switching

    /// What `switchTo` did.
    public enum SwitchOutcome: Hashable, Sendable {
        case alreadyActive
        case switched(from: String?)
    }

    /// Makes a paired watch the active one; 7008 `invalidParameter` for a watch that never linked.
    public mutating func switchTo(_ deviceId: String) -> Result<SwitchOutcome, SessionError> {
        guard watch(deviceId) != nil else {
            let known =
                watches.isEmpty
                ? "no watch has linked with this phone yet"
                : "paired watches: " + watches.map { "'\($0.deviceId)'" }.joined(separator: ", ")
            return .failure(
                .wc(
                    .invalidParameter,
                    "device.switchWatch: no watch with device id '\(deviceId)' has linked with this phone (\(known))"))
        }
        guard deviceId != activeDeviceId else { return .success(.alreadyActive) }
        let previous = activeDeviceId
        activeDeviceId = deviceId
        return .success(.switched(from: previous))
    }

    // MARK: - The app's directories

    /// The watch app was uninstalled for `deviceId` (or the watch unpaired): the app's
    /// directory for it is a new one from now on. Nothing for a watch that is not paired.
    public mutating func renewAppDirectory(of deviceId: String) {
        guard let index = watches.firstIndex(where: { $0.deviceId == deviceId }) else { return }
        watches[index].appDirectoryGeneration += 1
    }

    // MARK: - Directories

    /// A directory for a newly paired watch: its device id when that is a plain file name,
    /// else a cleaned-up prefix and a hash of the id; never one that another watch has, even
    /// on a case-insensitive file system.
    func newDirectory(for deviceId: String) -> String {
        let base = "watches/" + Self.directoryName(for: deviceId)
        var candidate = base
        var suffix = 2
        while watches.contains(where: { $0.directory.lowercased() == candidate.lowercased() }) {
            candidate = base + "-\(suffix)"
            suffix += 1
        }
        return candidate
    }

    static func directoryName(for deviceId: String) -> String {
        if deviceId.utf8.count <= 64, !deviceId.hasPrefix("."), deviceId.unicodeScalars.allSatisfy(isPlain) {
            return deviceId
        }
        var name = String(String.UnicodeScalarView(deviceId.unicodeScalars.prefix(32).map { isPlain($0) ? $0 : "_" }))
        if name.hasPrefix(".") { name = "_" + name.dropFirst() }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in deviceId.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return name + "-" + String(repeating: "0", count: 16 - hex.count) + hex
    }

    private static func isPlain(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", ".", "_", "-": return true
        default: return false
        }
    }

    // MARK: - The file

    /// The JSON of `watches.json`: `version`, `activeWatch` (absent until a watch has linked)
    /// and `watches`, each with its `deviceId` and `directory`; keys sorted, indented.
    public func encoded() -> [UInt8] {
        var file: JSONObject = [:]
        if let activeDeviceId { file["activeWatch"] = .string(activeDeviceId) }
        file["version"] = 1
        file["watches"] = .array(
            watches.map { watch in
                var entry: JSONObject = ["deviceId": .string(watch.deviceId), "directory": .string(watch.directory)]
                if watch.appDirectoryGeneration > 0 { entry["appDirectoryGeneration"] = .int(Int64(watch.appDirectoryGeneration)) }
                return .object(entry)
            })
        return Array(JSON.prettyPrinted(.object(file)).utf8) + [UInt8(ascii: "\n")]
    }

    /// Reads `watches.json`, checking every field; `path` names the file in errors.
    public static func decode(_ bytes: [UInt8], path: String) throws -> PairedWatches {
        func bad(_ reason: String) -> PairedWatchesError {
            PairedWatchesError(description: "\(path) is not a list of paired watches: \(reason); restore it, or remove it to pair afresh")
        }
        let root: JSONValue
        do { root = try JSON.parse(bytes) } catch {
            throw bad("\(error)")
        }
        guard let object = root.objectValue else { throw bad("its top level is \(root.typeName), not an object") }
        guard let version = object["version"]?.intValue else { throw bad("\"version\" is missing or not an integer") }
        let activeWatch: String?
        switch object["activeWatch"] {
        case nil, .null?: activeWatch = nil
        case .string(let name)?: activeWatch = name
        case let other?: throw bad("\"activeWatch\" is \(other.typeName), not a string")
        }
        guard let list = object["watches"]?.arrayValue else { throw bad("\"watches\" is missing or not an array") }
        var listed: [Watch] = []
        for (index, entry) in list.enumerated() {
            guard let deviceId = entry["deviceId"]?.stringValue, let directory = entry["directory"]?.stringValue else {
                throw bad("watch \(index) needs the strings \"deviceId\" and \"directory\"")
            }
            var generation = 0
            if let value = entry["appDirectoryGeneration"] {
                guard let number = value.intValue, number >= 0, number <= Int64(Int32.max) else {
                    throw bad("the \"appDirectoryGeneration\" of watch \(index) is not a count")
                }
                generation = Int(number)
            }
            listed.append(Watch(deviceId: deviceId, directory: directory, appDirectoryGeneration: generation))
        }
        guard version == 1 else { throw bad("version \(version) is not 1") }
        var paired = PairedWatches()
        for watch in listed {
            guard Hello.isValid(deviceId: watch.deviceId) else {
                throw bad("a device id must be 1 to \(Hello.maximumDeviceIdLength) bytes")
            }
            guard paired.watch(watch.deviceId) == nil else { throw bad("watch '\(watch.deviceId)' is listed twice") }
            guard isValidDirectory(watch.directory) else {
                throw bad("the directory '\(watch.directory)' of watch '\(watch.deviceId)' is neither \"\" nor watches/<name>")
            }
            guard !paired.watches.contains(where: { $0.directory.lowercased() == watch.directory.lowercased() }) else {
                throw bad("the directory '\(watch.directory)' belongs to two watches")
            }
            paired.watches.append(watch)
        }
        switch activeWatch {
        case nil where !paired.watches.isEmpty:
            throw bad("no active watch is named")
        case let active? where paired.watch(active) == nil:
            throw bad("the active watch '\(active)' is not in the list")
        default:
            paired.activeDeviceId = activeWatch
        }
        return paired
    }

    private static func isValidDirectory(_ directory: String) -> Bool {
        if directory.isEmpty { return true }
        guard directory.hasPrefix("watches/") else { return false }
        let name = directory.dropFirst("watches/".count)
        return !name.isEmpty && name.utf8.count <= 255 && !name.hasPrefix(".") && name.unicodeScalars.allSatisfy(isPlain)
    }
}

/// `watches.json` cannot be used; the message names the file and what was wrong.
public struct PairedWatchesError: Error, CustomStringConvertible, Sendable {
    public let description: String
}
