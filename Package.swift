// swift-tools-version:6.0
import PackageDescription

/// Release builds leave out the run-time exclusivity checks: on the link's hot path they were
/// a third of the instructions a message costs (docs/performance.md). Debug builds, which run
/// the tests and the sanitizers, keep them.
let speed: [SwiftSetting] = [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

let package = Package(
    name: "WatchLink",
    products: [
        .executable(name: "phoned", targets: ["phoned"]),
        .executable(name: "watchd", targets: ["watchd"]),
        .executable(name: "linkctl", targets: ["linkctl"]),
    ],
    targets: [
        // C libraries of the system, found by pkg-config.
        .systemLibrary(name: "CCrypto", path: "Sources/Shared/CCrypto", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]),
        .systemLibrary(name: "CSQLite", path: "Sources/Shared/CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        .systemLibrary(name: "CSystem", path: "Sources/Shared/CSystem"),

        // Frames, codec, handshake messages, payload encoding: pure values.
        .target(name: "WireProtocol", dependencies: ["CCrypto"], path: "Sources/WireProtocol", swiftSettings: speed),
        // The WCSession rules as a state machine: no sockets, no clock.
        .target(name: "LinkSession", dependencies: ["WireProtocol", "LinkStore"], path: "Sources/Shared/LinkSession", swiftSettings: speed),
        // Durable queues and state in SQLite.
        .target(name: "LinkStore", dependencies: ["CSQLite"], path: "Sources/Shared/LinkStore", swiftSettings: speed),
        // Event loop, sockets, timers, signals, logging.
        .target(name: "LinkRuntime", dependencies: ["CSystem", "WireProtocol"], path: "Sources/Shared/LinkRuntime", swiftSettings: speed),
        // The control protocol: JSON lines, values, client.
        .target(name: "LinkControl", dependencies: ["WireProtocol"], path: "Sources/Shared/LinkControl", swiftSettings: speed),
        // The control client (a reader thread, Foundation): linkctl and tests, never the daemons.
        .target(name: "LinkClient", dependencies: ["LinkControl"], path: "Sources/Shared/LinkClient"),
        // One daemon: runtime + session + control wired together.
        .target(name: "LinkDaemon", dependencies: ["WireProtocol", "LinkStore", "LinkSession", "LinkRuntime", "LinkControl"],
                path: "Sources/Shared/LinkDaemon", swiftSettings: speed),

        .executableTarget(name: "phoned", dependencies: ["LinkDaemon", "PushEmulator", "PowerAuthSync"], path: "Sources/phoned", swiftSettings: speed),
        .executableTarget(name: "watchd", dependencies: ["LinkDaemon", "PowerAuthSync"], path: "Sources/watchd", swiftSettings: speed),
        .executableTarget(name: "linkctl", dependencies: ["LinkControl", "LinkClient"], path: "Sources/linkctl"),

        // What several test targets share (a seeded random generator).
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "WireProtocolTests", dependencies: ["WireProtocol", "TestSupport"], path: "Tests/WireProtocolTests"),
        .testTarget(name: "LinkSessionTests", dependencies: ["LinkSession", "LinkStore", "WireProtocol", "TestSupport"], path: "Tests/LinkSessionTests"),
        .testTarget(name: "LinkStoreTests", dependencies: ["LinkStore"], path: "Tests/LinkStoreTests"),
        // The process LinkStoreTests' crash test kills: writes through DeliveryStore.
        .executableTarget(name: "CrashWriter", dependencies: ["LinkStore"], path: "Tests/CrashWriter"),
        .testTarget(name: "LinkRuntimeTests", dependencies: ["LinkRuntime", "TestSupport"], path: "Tests/LinkRuntimeTests"),
        .testTarget(name: "LinkControlTests", dependencies: ["LinkControl", "LinkClient", "WireProtocol", "TestSupport"], path: "Tests/LinkControlTests"),
        .testTarget(name: "IntegrationTests", dependencies: ["LinkControl", "LinkClient", "WireProtocol", "TestSupport"], path: "Tests/IntegrationTests"),
        // HTTP/2 (nghttp2) and TLS (OpenSSL libssl) for the APNs provider endpoint.
        .systemLibrary(name: "CNGHTTP2", path: "Sources/Shared/CNGHTTP2", pkgConfig: "libnghttp2",
                       providers: [.apt(["libnghttp2-dev"]), .brew(["libnghttp2"])]),
        .systemLibrary(name: "CSSL", path: "Sources/Shared/CSSL", pkgConfig: "libssl",
                       providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]),
        // PushKit and an APNs provider endpoint, run by phoned.
        .target(name: "PushEmulator", dependencies: ["LinkDaemon", "LinkRuntime", "LinkControl", "WireProtocol", "CNGHTTP2", "CSSL"],
                path: "Sources/Shared/PushEmulator", swiftSettings: speed),
        .testTarget(name: "PushEmulatorTests", dependencies: ["PushEmulator", "LinkControl", "CSSL", "TestSupport"], path: "Tests/PushEmulatorTests"),
        // PowerAuth SDK watch synchronisation, run by phoned and watchd.
        .target(name: "PowerAuthSync", dependencies: ["LinkDaemon", "LinkSession", "LinkStore", "LinkControl", "WireProtocol", "PowerAuthServer"],
                path: "Sources/Shared/PowerAuthSync", swiftSettings: speed),
        .testTarget(name: "PowerAuthSyncTests", dependencies: ["PowerAuthSync", "LinkControl", "WireProtocol"],
                    path: "Tests/PowerAuthSyncTests"),
        // libFuzzer targets, built by scripts/fuzz.sh with --sanitize=fuzzer.
        .target(name: "FuzzSupport", path: "Sources/Fuzz/FuzzSupport"),
        .executableTarget(name: "FuzzFrameDecoder", dependencies: ["FuzzSupport", "WireProtocol", "LinkSession"],
                          path: "Sources/Fuzz/FuzzFrameDecoder", swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(name: "FuzzPropertyList", dependencies: ["FuzzSupport", "WireProtocol"],
                          path: "Sources/Fuzz/FuzzPropertyList", swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(name: "FuzzControlLine", dependencies: ["FuzzSupport", "LinkControl", "WireProtocol"],
                          path: "Sources/Fuzz/FuzzControlLine", swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(name: "FuzzPowerAuthPacket", dependencies: ["FuzzSupport", "PowerAuthSync", "PowerAuthServer", "WireProtocol"],
                          path: "Sources/Fuzz/FuzzPowerAuthPacket", swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(name: "FuzzAPNsRequest", dependencies: ["FuzzSupport", "PushEmulator"],
                          path: "Sources/Fuzz/FuzzAPNsRequest", swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        // The emulated PowerAuth server: activation records, status blob, counter, time.
        .target(name: "PowerAuthServer", dependencies: ["CCrypto", "WireProtocol", "LinkStore", "LinkControl"],
                path: "Sources/Shared/PowerAuthServer", swiftSettings: speed),
        .testTarget(name: "PowerAuthServerTests", dependencies: ["PowerAuthServer", "LinkControl"],
                    path: "Tests/PowerAuthServerTests"),
    ],
    swiftLanguageModes: [.v6]
)
