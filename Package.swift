// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "WatchLink",
    products: [
        .executable(name: "phoned", targets: ["phoned"]),
        .executable(name: "watchd", targets: ["watchd"]),
        .executable(name: "linkctl", targets: ["linkctl"]),
        .library(name: "WatchLinkClient", targets: ["WatchLinkClient"]),
        .library(name: "WatchConnectivity", targets: ["WatchConnectivity"]),
        .library(name: "PushKit", targets: ["PushKit"]),
        .library(name: "FileProvider", targets: ["FileProvider"]),
        .library(name: "CallKit", targets: ["CallKit"]),
        .library(name: "WatchKit", targets: ["WatchKit"]),
        .library(name: "HealthKit", targets: ["HealthKit"]),
        .library(name: "PowerAuth2", targets: ["PowerAuth2"]),
        .library(name: "PowerAuth2ForWatch", targets: ["PowerAuth2ForWatch"]),
        // The app side: a test fixture that starts the daemons.
        .library(name: "WatchLinkTesting", targets: ["WatchLinkTesting"]),
    ],
    targets: [
        // C libraries of the system, found by pkg-config.
        .systemLibrary(name: "CCrypto", path: "Sources/Shared/CCrypto", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]),
        .systemLibrary(name: "CSQLite", path: "Sources/Shared/CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        // What Swift's Glibc module leaves out (epoll, eventfd, signalfd, timerfd, accept4,
        // struct ucred) and C macros as functions; imported by LinkSystem only.
        .systemLibrary(name: "CSystem", path: "Sources/Shared/CSystem"),

        // The small crypto helpers over OpenSSL's libcrypto: HMAC-SHA256, SHA-256, AES-128,
        // secure random bytes, constant-time comparison, P-256 keys and ECDSA signatures,
        // base64url, the OpenSSL error queue.
        .target(name: "LinkCrypto", dependencies: ["CCrypto"], path: "Sources/Shared/LinkCrypto"),
        // Scans of long byte runs (ASCII, a JSON string's plain bytes) in the widest vectors the
        // CPU has, AVX2 chosen at run time: C, where a function can be compiled for a CPU feature.
        .target(name: "CByteScan", path: "Sources/Shared/CByteScan"),
        // JSON (RFC 8259): values, a strict parser, a serializer. The one JSON stack of the
        // daemons: control lines, PowerAuth and push state files.
        .target(name: "LinkJSON", dependencies: ["CByteScan"], path: "Sources/Shared/LinkJSON"),
        // Containers the hot paths share: a map keyed by the sequence numbers the program
        // hands out itself.
        .target(name: "LinkCollections", path: "Sources/Shared/LinkCollections"),
        // Frames, codec, handshake messages, payload encoding: pure values.
        .target(name: "WireProtocol", dependencies: ["LinkCrypto", "LinkCollections", "CByteScan"], path: "Sources/WireProtocol"),
        // The WCSession rules as a state machine: no sockets, no clock.
        .target(name: "LinkSession", dependencies: ["WireProtocol", "LinkStore", "LinkCrypto", "LinkJSON", "LinkCollections"], path: "Sources/Shared/LinkSession"),
        // Durable queues and state in SQLite.
        .target(name: "LinkStore", dependencies: ["CSQLite", "LinkSystem"], path: "Sources/Shared/LinkStore"),
        // Every system call, wrapped once: the platform chosen in one file, EINTR retried in one
        // place, failures as a typed Errno. Sockets (Unix and TCP), files, pollers (epoll,
        // poll(2)), signals, wake-ups, peer credentials.
        .target(name: "LinkSystem", dependencies: ["CSystem"], path: "Sources/Shared/LinkSystem"),
        // The event loop, timers, connections and logging, over LinkSystem.
        .target(name: "LinkRuntime", dependencies: ["LinkSystem", "WireProtocol", "LinkCollections"], path: "Sources/Shared/LinkRuntime"),
        // The control protocol: requests, responses, events and errors as JSON lines; the
        // property-list mapping to JSON; the WatchLink home's file names.
        .target(name: "LinkControl", dependencies: ["WireProtocol", "LinkJSON", "LinkSystem", "LinkCollections"], path: "Sources/Shared/LinkControl"),
        // The control client (a reader thread, Foundation): linkctl and tests, never the daemons.
        .target(name: "LinkClient", dependencies: ["LinkControl", "LinkJSON", "LinkSystem"], path: "Sources/Shared/LinkClient"),
        // Trace entries of the daemons as JSON values: merging the traces of several daemons and
        // drawing them (a Mermaid sequence diagram, an HTML page, a two-column terminal view).
        .target(name: "LinkTrace", dependencies: ["LinkJSON"], path: "Sources/Shared/LinkTrace"),
        // One daemon: runtime + session + control wired together.
        .target(name: "LinkDaemon", dependencies: ["WireProtocol", "LinkStore", "LinkSession", "LinkSystem", "LinkCrypto", "LinkJSON", "LinkRuntime", "LinkControl", "LinkTrace", "LinkCollections"],
                path: "Sources/Shared/LinkDaemon"),

        // A deterministic simulation of the pair: the sessions, the real group commit and the
        // link codec on virtual time over a model store and files, worlds drawn from seeds.
        .target(name: "LinkSimulation", dependencies: ["LinkSession", "LinkStore", "LinkDaemon", "WireProtocol", "LinkCrypto", "CSQLite"],
                path: "Sources/Shared/LinkSimulation"),
        // The simulator's runner: seeds or a time budget, replay of one seed with its trace.
        .executableTarget(name: "linksim", dependencies: ["LinkSimulation", "LinkSystem"], path: "Sources/linksim"),
        .testTarget(name: "LinkSimulationTests", dependencies: ["LinkSimulation", "LinkStore", "LinkSession", "WireProtocol"],
                    path: "Tests/LinkSimulationTests"),

        // App side: an async client of a control socket, and Apple's WatchConnectivity API on it.
        .target(name: "WatchLinkClient", dependencies: ["LinkControl", "LinkJSON", "LinkSystem"], path: "Sources/AppSide/WatchLinkClient"),
        .target(name: "WatchConnectivity", dependencies: ["WatchLinkClient", "WatchLinkObservation", "LinkControl", "LinkJSON"],
                path: "Sources/AppSide/WatchConnectivity"),
        // Key-value observing as app code names it (NSKeyValueObservation, ...), where Foundation
        // has none (Linux), for the package's observable objects.
        .target(name: "WatchLinkObservation", path: "Sources/AppSide/WatchLinkObservation"),
        // Apple's PushKit and (the part a push reaches) File Provider, over phoned's push ops.
        .target(name: "PushKit", dependencies: ["WatchLinkClient", "LinkJSON"], path: "Sources/AppSide/PushKit"),
        .target(name: "FileProvider", dependencies: ["WatchLinkClient", "LinkJSON"], path: "Sources/AppSide/FileProvider"),
        // Apple's CallKit, the part PushKit's VoIP rule needs: reporting an incoming call to phoned.
        .target(name: "CallKit", dependencies: ["WatchLinkClient", "LinkJSON"], path: "Sources/AppSide/CallKit"),
        // Apple's WatchKit: the app delegate, its background tasks and the app object, over
        // watchd's WatchKit ops; WKInterfaceController for the code around it to compile.
        .target(name: "WatchKit", dependencies: ["WatchLinkClient", "LinkJSON"], path: "Sources/AppSide/WatchKit"),
        // Apple's HealthKit, the part that keeps a watch app reachable in the background: a workout session.
        .target(name: "HealthKit", dependencies: ["WatchLinkClient", "LinkJSON"], path: "Sources/AppSide/HealthKit"),
        // The PowerAuth SDK's iOS and watchOS modules over the state the daemons keep; their
        // shared types and the packet channel over the app's own WCSession.
        .target(name: "PowerAuthShared", dependencies: ["WatchConnectivity", "WatchLinkClient", "LinkJSON"],
                path: "Sources/AppSide/PowerAuthShared"),
        .target(name: "PowerAuth2", dependencies: ["PowerAuthShared", "WatchConnectivity", "WatchLinkClient", "LinkJSON"],
                path: "Sources/AppSide/PowerAuth2"),
        .target(name: "PowerAuth2ForWatch", dependencies: ["PowerAuthShared", "WatchConnectivity", "WatchKit", "WatchLinkClient", "LinkJSON"],
                path: "Sources/AppSide/PowerAuth2ForWatch"),
        .testTarget(name: "WatchLinkClientTests", dependencies: ["WatchLinkClient", "WatchConnectivity", "LinkControl", "LinkJSON", "LinkSystem", "TestSupport",
                                                                  "WireProtocol", "LinkSession"],
                    path: "Tests/WatchLinkClientTests"),
        // A source file written for Apple's framework, compiled unchanged against WatchConnectivity.
        .testTarget(name: "WatchConnectivityAPITests", dependencies: ["WatchConnectivity", "TestSupport"], path: "Tests/WatchConnectivityAPITests"),
        // The PowerAuth guides' code (iOS and watchOS), compiled unchanged in the language mode
        // it was written for; scripts/check-doc-code.sh checks it warns only where the SDK's does.
        .testTarget(name: "PowerAuth2APITests", dependencies: ["PowerAuth2"], path: "Tests/PowerAuth2APITests",
                    swiftSettings: [.swiftLanguageMode(.v5)]),
        .testTarget(name: "PowerAuth2ForWatchAPITests", dependencies: ["PowerAuth2ForWatch"], path: "Tests/PowerAuth2ForWatchAPITests",
                    swiftSettings: [.swiftLanguageMode(.v5)]),
        // Apple's File Provider page's PushKit code, compiled unchanged and run in-process against phoned.
        .testTarget(name: "PushKitAPITests", dependencies: ["PushKit", "FileProvider", "CallKit", "WatchLinkTesting", "LinkClient", "LinkJSON"],
                    path: "Tests/PushKitAPITests"),

        // The executables: flag parsing and wiring only.
        .executableTarget(name: "phoned", dependencies: ["LinkDaemon", "PushEmulator", "PowerAuthSync"], path: "Sources/phoned"),
        .executableTarget(name: "watchd", dependencies: ["LinkDaemon", "PowerAuthSync"], path: "Sources/watchd"),
        .executableTarget(name: "linkctl", dependencies: ["LinkControl", "LinkJSON", "LinkClient", "LinkTrace"], path: "Sources/linkctl"),

        // The app side: start a phone and its watches from this package's daemons for a test;
        // a provider client for phoned's APNs endpoint (HTTP/2 over TLS, ES256 tokens).
        .target(name: "WatchLinkTesting", dependencies: ["LinkClient", "LinkJSON", "LinkSystem", "LinkCrypto", "LinkTrace", "CSSL", "CNGHTTP2"],
                path: "Sources/AppSide/WatchLinkTesting"),
        // Two example apps written only against the WatchConnectivity API.
        .executableTarget(name: "WatchLinkExamplePhone", dependencies: ["WatchConnectivity"], path: "Examples/PhoneApp"),
        .executableTarget(name: "WatchLinkExampleWatch", dependencies: ["WatchConnectivity"], path: "Examples/WatchApp"),
        // The common pattern (a message while reachable, else transferUserInfo) under the device
        // weather: naive, and falling back on the send's error.
        .executableTarget(name: "WatchLinkExampleReadingsPhone", dependencies: ["WatchConnectivity"], path: "Examples/ReadingsPhoneApp"),
        .executableTarget(name: "WatchLinkExampleReadingsWatch", dependencies: ["WatchConnectivity"], path: "Examples/ReadingsWatchApp"),
        // A watch app run by its WatchKit delegate: background tasks, completed as Apple's sample does.
        .executableTarget(name: "WatchLinkExampleBackgroundWatch", dependencies: ["WatchKit", "WatchConnectivity"], path: "Examples/BackgroundWatchApp"),
        // A File Provider app written only against PushKit and File Provider, and its server.
        .executableTarget(name: "WatchLinkExampleFileProviderApp", dependencies: ["PushKit", "FileProvider"], path: "Examples/FileProviderApp"),
        .executableTarget(name: "WatchLinkExampleFileProviderServer", dependencies: ["WatchLinkTesting"], path: "Examples/FileProviderServer"),
        // Two PowerAuth example apps around the SDK guides' SessionManager, written only
        // against PowerAuth2 (and WatchConnectivity) and PowerAuth2ForWatch.
        .executableTarget(name: "WatchLinkExamplePowerAuthPhone", dependencies: ["PowerAuth2"], path: "Examples/PowerAuthPhoneApp",
                          swiftSettings: [.swiftLanguageMode(.v5)]),
        .executableTarget(name: "WatchLinkExamplePowerAuthWatch", dependencies: ["PowerAuth2ForWatch"], path: "Examples/PowerAuthWatchApp",
                          swiftSettings: [.swiftLanguageMode(.v5)]),
        // The app process the app-side tests drive: every delegate callback as a JSON line.
        .executableTarget(
            name: "WatchLinkAppProbe", dependencies: ["WatchConnectivity", "PushKit", "CallKit", "FileProvider", "HealthKit"], path: "Tests/AppProbe"),
        // The iOS and watchOS app processes of the PowerAuth app-side tests, written against
        // PowerAuth2 and PowerAuth2ForWatch only.
        .executableTarget(name: "WatchLinkPowerAuthPhoneProbe", dependencies: ["PowerAuth2", "ProbeSupport"], path: "Tests/PowerAuthPhoneProbe"),
        .executableTarget(name: "WatchLinkPowerAuthWatchProbe", dependencies: ["PowerAuth2ForWatch", "ProbeSupport"], path: "Tests/PowerAuthWatchProbe"),
        // The probes' flags, JSON lines out and commands in.
        .target(name: "ProbeSupport", path: "Tests/ProbeSupport"),
        .testTarget(name: "AppSideTests", dependencies: ["WatchLinkTesting", "LinkClient", "LinkControl", "LinkJSON", "LinkTrace", "TestSupport"],
                    path: "Tests/AppSideTests"),

        // What several test targets share (a seeded random generator, child processes, a fake daemon).
        .target(name: "TestSupport", dependencies: ["LinkSystem", "LinkControl", "LinkJSON"], path: "Tests/TestSupport"),
        .testTarget(name: "WireProtocolTests", dependencies: ["WireProtocol", "LinkCrypto", "TestSupport", "CByteScan"], path: "Tests/WireProtocolTests"),
        .testTarget(name: "LinkSessionTests", dependencies: ["LinkSession", "LinkStore", "LinkSimulation", "WireProtocol", "LinkCrypto", "LinkJSON", "TestSupport"], path: "Tests/LinkSessionTests"),
        .testTarget(name: "LinkStoreTests", dependencies: ["LinkStore"], path: "Tests/LinkStoreTests"),
        // The process LinkStoreTests' crash test kills: writes through DeliveryStore.
        .executableTarget(name: "CrashWriter", dependencies: ["LinkStore"], path: "Tests/CrashWriter"),
        .testTarget(name: "LinkSystemTests", dependencies: ["LinkSystem", "TestSupport"], path: "Tests/LinkSystemTests"),
        .testTarget(name: "LinkRuntimeTests", dependencies: ["LinkRuntime", "LinkSystem", "TestSupport"], path: "Tests/LinkRuntimeTests"),
        .testTarget(name: "LinkCollectionsTests", dependencies: ["LinkCollections", "TestSupport"], path: "Tests/LinkCollectionsTests"),
        .testTarget(name: "LinkJSONTests", dependencies: ["LinkJSON", "CByteScan"], path: "Tests/LinkJSONTests"),
        .testTarget(name: "LinkTraceTests", dependencies: ["LinkTrace", "LinkJSON"], path: "Tests/LinkTraceTests"),
        .testTarget(name: "LinkDaemonTests", dependencies: ["LinkDaemon", "LinkSession", "LinkStore", "LinkControl", "LinkJSON", "WireProtocol", "LinkTrace", "TestSupport"],
                    path: "Tests/LinkDaemonTests"),
        .testTarget(name: "LinkControlTests", dependencies: ["LinkControl", "LinkClient", "LinkJSON", "WireProtocol", "TestSupport"], path: "Tests/LinkControlTests"),
        // PowerAuthServer: decrypting raw status answers with the vector-checked code.
        .testTarget(name: "IntegrationTests", dependencies: ["LinkControl", "LinkClient", "LinkJSON", "WireProtocol", "LinkCrypto", "TestSupport", "PowerAuthServer", "LinkTrace",
                                                            "WatchLinkTesting"],
                    path: "Tests/IntegrationTests"),
        // HTTP/2 (nghttp2) and TLS (OpenSSL libssl) for the APNs provider endpoint.
        .systemLibrary(name: "CNGHTTP2", path: "Sources/Shared/CNGHTTP2", pkgConfig: "libnghttp2",
                       providers: [.apt(["libnghttp2-dev"]), .brew(["libnghttp2"])]),
        .systemLibrary(name: "CSSL", path: "Sources/Shared/CSSL", pkgConfig: "libssl",
                       providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]),
        // PushKit and an APNs provider endpoint, run by phoned.
        .target(name: "PushEmulator", dependencies: ["LinkDaemon", "LinkSystem", "LinkRuntime", "LinkControl", "WireProtocol", "LinkCrypto", "LinkJSON", "CNGHTTP2", "CSSL"],
                path: "Sources/Shared/PushEmulator"),
        .testTarget(name: "PushEmulatorTests", dependencies: ["PushEmulator", "LinkControl", "LinkJSON", "LinkSystem", "CSSL", "LinkCrypto", "TestSupport"], path: "Tests/PushEmulatorTests"),
        // PowerAuth SDK watch synchronisation, run by phoned and watchd.
        .target(name: "PowerAuthSync", dependencies: ["LinkDaemon", "LinkSession", "LinkStore", "LinkControl", "WireProtocol", "LinkCrypto", "LinkJSON", "PowerAuthServer"],
                path: "Sources/Shared/PowerAuthSync"),
        .testTarget(name: "PowerAuthSyncTests", dependencies: ["PowerAuthSync", "PowerAuthServer", "LinkDaemon", "LinkRuntime",
                                                            "LinkSession", "LinkStore", "LinkControl", "LinkJSON", "WireProtocol"],
                    path: "Tests/PowerAuthSyncTests"),
        // libFuzzer targets, built by scripts/fuzz.sh with --sanitize=fuzzer.
        .target(name: "FuzzSupport", path: "Sources/Fuzz/FuzzSupport"),
        .executableTarget(name: "FuzzFrameDecoder", dependencies: ["FuzzSupport", "WireProtocol", "LinkSession"],
                          path: "Sources/Fuzz/FuzzFrameDecoder", swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(name: "FuzzPropertyList", dependencies: ["FuzzSupport", "WireProtocol"],
                          path: "Sources/Fuzz/FuzzPropertyList", swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(name: "FuzzControlLine", dependencies: ["FuzzSupport", "LinkControl", "LinkJSON", "WireProtocol"],
                          path: "Sources/Fuzz/FuzzControlLine", swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(name: "FuzzPowerAuthPacket", dependencies: ["FuzzSupport", "PowerAuthSync", "PowerAuthServer", "WireProtocol"],
                          path: "Sources/Fuzz/FuzzPowerAuthPacket", swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(name: "FuzzAPNsRequest", dependencies: ["FuzzSupport", "PushEmulator", "LinkCrypto"],
                          path: "Sources/Fuzz/FuzzAPNsRequest", swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(name: "FuzzHTTP2Session", dependencies: ["FuzzSupport", "PushEmulator"],
                          path: "Sources/Fuzz/FuzzHTTP2Session", swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        // The emulated PowerAuth server: activation records, status blob, counter, time.
        .target(name: "PowerAuthServer", dependencies: ["LinkCrypto", "LinkJSON", "WireProtocol", "LinkStore"],
                path: "Sources/Shared/PowerAuthServer"),
        .testTarget(name: "PowerAuthServerTests", dependencies: ["PowerAuthServer", "LinkCrypto", "LinkJSON", "LinkStore", "TestSupport"],
                    path: "Tests/PowerAuthServerTests"),
    ],
    swiftLanguageModes: [.v6]
)
