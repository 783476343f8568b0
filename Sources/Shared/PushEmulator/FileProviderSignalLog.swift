#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkControl
import LinkJSON

/// The File Provider signals the device made, the newest ``capacity`` kept in memory: one for
/// each `fileprovider` push (usable or not) and each `signalEnumerator(for:)` of the app
/// (`fileProvider.signalEnumerator`), with the extension's answer once it reports it
/// (`fileProvider.complete`).
final class FileProviderSignalLog {
    static let capacity = 1000

    /// Oldest first from `start`, wrapping around once full.
    private var records: [SignalRecord] = []
    private var start = 0
    private var nextSeq: Int64 = 1
    /// The wall clock records are stamped with, in milliseconds since 1970 (the device's).
    var clock: () -> Int64 = PushEmulator.systemMilliseconds

    /// Records a signal or an unusable payload; the new record.
    func add(
        source: SignalRecord.Source, apnsId: String?, outcome: Result<FileProviderSignal, UnusablePayload>,
        payload: [UInt8], at now: Int64? = nil
    ) -> SignalRecord {
        let record = SignalRecord(
            seq: nextSeq, at: now ?? clock(), source: source, apnsId: apnsId,
            outcome: outcome, payload: payload)
        nextSeq += 1
        if records.count < Self.capacity {
            records.append(record)
        } else {
            records[start] = record
            start = (start + 1) % Self.capacity
        }
        return record
    }

    /// The extension finished handling signal `seq`, with `error` when it failed; the record.
    ///
    /// - Throws: `invalidArgument` when `seq` is no kept signal, names an unusable payload, or
    ///   was completed already.
    func complete(seq: Int64, error: JSONObject?) throws -> SignalRecord {
        guard let index = records.firstIndex(where: { $0.seq == seq }) else {
            let kept = records.isEmpty ? "none is kept" : "kept: \(records.map(\.seq).min()!)...\(records.map(\.seq).max()!)"
            throw ControlError.control(.invalidArgument, "fileProvider.complete: no signal with seq \(seq) (\(kept))")
        }
        guard case .success = records[index].outcome else {
            throw ControlError.control(.invalidArgument, "fileProvider.complete: entry \(seq) is an unusable push, not a signal")
        }
        guard records[index].completion == nil else {
            throw ControlError.control(.invalidArgument, "fileProvider.complete: signal \(seq) was completed already")
        }
        records[index].completion = SignalRecord.Completion(at: clock(), error: error)
        return records[index]
    }

    /// The usable signals of `domain` (nil: the default domain) that no extension answered yet,
    /// oldest first.
    func pending(domain: String?) -> [SignalRecord] {
        (records[start...] + records[..<start]).filter { record in
            guard record.completion == nil, case .success(let signal) = record.outcome else { return false }
            return signal.domain == domain
        }
    }

    /// `push.signals`: the records after `after`, oldest first, at most `limit`.
    func list(after: Int64, limit: Int) -> JSONObject {
        let ordered = records[start...] + records[..<start]
        let selected = ordered.filter { $0.seq > after }
        var result: JSONObject = ["signals": .array(selected.prefix(limit).map { .object($0.json) })]
        if selected.count > limit { result["more"] = true }
        return result
    }
}

/// One signal as the device handled it: what asked for it, the signal it made (or why a push
/// could not make one), and the extension's answer.
struct SignalRecord {
    /// What asked for the signal.
    enum Source: String {
        /// A `fileprovider` push.
        case push
        /// The app's `NSFileProviderManager.signalEnumerator(for:completionHandler:)`.
        case app
    }

    /// The extension's answer: when, and its error (`{"domain", "code", "message"}`) if any.
    struct Completion {
        let at: Int64
        let error: JSONObject?
    }

    let seq: Int64
    /// When, in ms since 1970.
    let at: Int64
    let source: Source
    /// The push's `apns-id`; nil for the app's own signals.
    let apnsId: String?
    let outcome: Result<FileProviderSignal, UnusablePayload>
    /// The push's payload as received (empty for the app's own signals); shown only when it
    /// could not be used, so it is kept as bytes and read only then.
    let payload: [UInt8]
    var completion: Completion?

    var eventName: String {
        if case .success = outcome { return "fileProvider.signalEnumerator" }
        return "fileProvider.unusablePush"
    }

    /// As `push.signals` and the events show it.
    var json: JSONObject {
        var entry: JSONObject = [
            "seq": .int(seq), "at": Self.timestamp(at), "source": .string(source.rawValue),
            "apnsId": apnsId.map(JSONValue.string) ?? .null,
        ]
        switch outcome {
        case .success(let signal):
            entry["signaled"] = true
            entry["containerIdentifier"] = .string(signal.containerIdentifier)
            entry["container"] = .string(signal.container.rawValue)
            entry["domain"] = signal.domain.map(JSONValue.string) ?? .null
            entry["completed"] = .bool(completion != nil)
            if let completion {
                entry["completedAt"] = Self.timestamp(completion.at)
                entry["error"] = completion.error.map(JSONValue.object) ?? .null
            }
        case .failure(let unusable):
            entry["signaled"] = false
            entry["problem"] = .string(unusable.problem)
            entry["payload"] = PushEmulator.payloadJSON(payload)
        }
        return entry
    }

    /// `fileProvider.signalCompleted`: `{"seq", "containerIdentifier", "domain", "error"}`.
    var completionEvent: JSONObject {
        var event: JSONObject = ["seq": .int(seq), "error": completion?.error.map(JSONValue.object) ?? .null]
        if case .success(let signal) = outcome {
            event["containerIdentifier"] = .string(signal.containerIdentifier)
            event["domain"] = signal.domain.map(JSONValue.string) ?? .null
        }
        return event
    }

    private static func timestamp(_ milliseconds: Int64) -> JSONValue {
        .string(ISO8601Timestamp.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000)))
    }
}
