// A writer for LinkStoreTests' crash test: WatchLink's own durable path (DeliveryStore, as a
// daemon uses it) enqueues userInfo items, one to three per transaction (a daemon's group
// commit), and prints each item's sequence number once the commit that holds it has returned.
// The test kills it with SIGKILL at a random moment and checks that every printed item is in
// the database, whole, with no gap before it.
//
// Usage: CrashWriter DATABASE FIRST_SEQ
import Foundation
import LinkStore

/// The payload of item `seq`: its length and bytes follow from `seq`, so a reader can check it.
func payload(_ seq: UInt64) -> [UInt8] {
    (0..<Int(seq % 3000)).map { UInt8((Int(seq) * 7 + $0) % 256) }
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let first = UInt64(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: CrashWriter DATABASE FIRST_SEQ\n".utf8))
    exit(2)
}
do {
    let store = try DeliveryStore(path: arguments[1])
    var seq = first
    while true {
        let group = seq..<seq + seq % 3 + 1
        for item in group {
            try store.apply(
                .enqueue(
                    OutboundItem(
                        channel: .userInfo, seq: item, transferId: "t\(item)",
                        payload: payload(item), flags: [], createdAt: 0)))
        }
        try store.commit()
        FileHandle.standardOutput.write(Data(group.map { "\($0)\n" }.joined().utf8))
        seq = group.upperBound
    }
} catch {
    FileHandle.standardError.write(Data("CrashWriter: \(error)\n".utf8))
    exit(1)
}
