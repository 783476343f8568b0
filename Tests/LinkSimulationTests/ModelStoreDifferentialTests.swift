import Foundation
import LinkSimulation
import LinkStore
import WireProtocol
import XCTest

/// The model store the simulator runs on and the real `DeliveryStore` agree on every
/// sequence of store calls the simulator makes: each world's calls (turns applied, committed
/// or rolled back, crashes) are replayed on a `DeliveryStore`, and after each commit and each
/// reopen both read back the same committed state and the same delivered items.
final class ModelStoreDifferentialTests: XCTestCase {
    /// Seeds of the differential check; `WATCHLINK_SIM_DIFFERENTIAL_SEEDS` asks for more.
    private var seeds: ClosedRange<UInt64> {
        1...UInt64(ProcessInfo.processInfo.environment["WATCHLINK_SIM_DIFFERENTIAL_SEEDS"].flatMap(Int.init) ?? 40)
    }

    func testTheModelAndDeliveryStoreAgreeOnEveryCallOfTheSimulator() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("linksim-differential-\(getpid())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var compared = 0
        for seed in seeds {
            var calls: [Role: [ModelStore.Call]] = [.phone: [], .watch: []]
            let world = SimWorld(seed: seed) { role, call in calls[role, default: []].append(call) }
            XCTAssertEqual(world.run(), [], "seed \(seed)")
            for role in [Role.phone, .watch] {
                let path = "\(directory)/\(seed)-\(role == .phone ? "phone" : "watch").db"
                compared += try replay(calls[role] ?? [], path: path, seed: seed, role: role)
            }
        }
        XCTAssertGreaterThan(compared, 100, "too few commits compared to mean anything")
    }

    /// The fields in which two states differ, with both values.
    private static func differences(_ real: DurableState, _ modelled: DurableState) -> String {
        var fields: [String] = []
        func check<T: Equatable>(_ name: String, _ path: KeyPath<DurableState, T>) {
            if real[keyPath: path] != modelled[keyPath: path] {
                fields.append("\(name): DeliveryStore \(real[keyPath: path]), model \(modelled[keyPath: path])")
            }
        }
        check("cursors", \.cursors)
        check("outbox", \.outbox)
        check("undelivered", \.undelivered)
        check("applicationContext", \.applicationContext)
        check("receivedApplicationContext", \.receivedApplicationContext)
        check("complicationDay", \.complicationDay)
        check("complicationTransfersUsed", \.complicationTransfersUsed)
        check("reservedSeq", \.reservedSeq)
        check("incomingFiles", \.incomingFiles)
        check("finished", \.finished)
        return fields.joined(separator: "; ")
    }

    /// Replays `calls` on a model and on a `DeliveryStore`; the number of states compared.
    /// Every commit is compared, except in worlds of thousands of commits (the shipped limits'
    /// bursts), where every reopen, the last commit and 500 commits spread evenly are: reading
    /// back thousands of queued items after each of thousands of commits would take minutes.
    private func replay(_ calls: [ModelStore.Call], path: String, seed: UInt64, role: Role) throws -> Int {
        let commits = calls.reduce(0) { count, call in if case .commit = call { count + 1 } else { count } }
        let stride = max(1, commits / 500)
        var commitNumber = 0
        let model = ModelStore()
        var store = try DeliveryStore(path: path, synchronous: .off)
        var compared = 0
        func compare(_ step: Int) throws {
            compared += 1
            let real = try store.load()
            let modelled = try model.load()
            guard real != modelled else { return }
            XCTFail("seed \(seed), \(role.name), call \(step): the states differ in \(Self.differences(real, modelled))")
            throw CancellationError()
        }
        for (step, call) in calls.enumerated() {
            switch call {
            case .apply(let operation):
                try model.apply(operation)
                try store.apply(operation)
            case .commit:
                try model.commit()
                try store.commit()
                commitNumber += 1
                guard commitNumber % stride == 0 || commitNumber == commits else { continue }
                try compare(step)
                XCTAssertEqual(
                    try store.deliveredItems(after: 0, limit: .max), try model.deliveredItems(after: 0, limit: .max),
                    "seed \(seed), \(role.name), call \(step): delivered items differ")
            case .rollback:
                model.rollback()
                store.rollback()
            case .reopen:
                model.crash()
                store.close()
                store = try DeliveryStore(path: path, synchronous: .off)
                try compare(step)
            }
        }
        store.close()
        return compared
    }
}
