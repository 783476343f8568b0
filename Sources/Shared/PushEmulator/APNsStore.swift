#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkJSON

/// A push APNs accepted and keeps for a device it cannot reach.
struct StoredPush: Equatable {
    var push: APNsPush
    /// The app it is kept for: "APNs stores only one notification per bundle ID".
    var bundleId: String
    /// When APNs accepted it, and when it gives up on it (ms since 1970).
    var acceptedAt: Int64
    var expiresAt: Int64

    var json: JSONObject {
        var object: JSONObject = [
            "apnsId": .string(push.apnsId), "bundleId": .string(bundleId), "topic": .string(push.topic),
            "pushType": .string(push.pushType.rawValue), "deviceToken": .string(push.deviceToken),
            "acceptedAt": .int(acceptedAt), "expiresAt": .int(expiresAt),
            "payload": .string(Data(push.payload).base64EncodedString()),
        ]
        if let priority = push.priority { object["priority"] = .int(Int64(priority)) }
        if let expiration = push.expiration { object["expiration"] = .int(expiration) }
        if let collapseId = push.collapseId { object["collapseId"] = .string(collapseId) }
        return object
    }

    init(push: APNsPush, bundleId: String, acceptedAt: Int64, expiresAt: Int64) {
        self.push = push
        self.bundleId = bundleId
        self.acceptedAt = acceptedAt
        self.expiresAt = expiresAt
    }

    init?(json: JSONValue) {
        guard let object = json.objectValue, let apnsId = object["apnsId"]?.stringValue, let bundleId = object["bundleId"]?.stringValue,
            let topic = object["topic"]?.stringValue, let typeName = object["pushType"]?.stringValue,
            let pushType = APNsPushType(rawValue: typeName), let deviceToken = object["deviceToken"]?.stringValue,
            let acceptedAt = object["acceptedAt"]?.intValue, let expiresAt = object["expiresAt"]?.intValue,
            let payload = object["payload"]?.stringValue.flatMap({ Data(base64Encoded: $0) })
        else { return nil }
        push = APNsPush(
            apnsId: apnsId, deviceToken: deviceToken, pushType: pushType, topic: topic,
            priority: object["priority"]?.intValue.map { Int($0) }, expiration: object["expiration"]?.intValue,
            collapseId: object["collapseId"]?.stringValue, payload: Array(payload))
        self.bundleId = bundleId
        self.acceptedAt = acceptedAt
        self.expiresAt = expiresAt
    }
}

/// APNs' store and forward, under Apple's rules ("Sending notification requests to APNs"):
///
/// - "If APNs can't deliver a notification immediately, it may store the notification for 30
///   days or less, depending on the date you specify in the `apns-expiration` header."
/// - "If the value is `0`, APNs attempts to deliver the notification only once and doesn't
///   store it"; a date already past has expired: the push is not stored either.
/// - "APNs stores only one notification per bundle ID. ... In most cases, the latest
///   notification is stored."
/// - "If you omit this header, APNs stores the push according to APNs storage policy": for
///   30 days ("defaults to time-to-live (TTL) of 30 days").
struct APNsStore: Equatable {
    static let maximumStorageMilliseconds: Int64 = 30 * 86_400_000

    private(set) var pushes: [StoredPush] = []

    init(pushes: [StoredPush] = []) {
        self.pushes = pushes
    }

    enum Outcome: Equatable {
        /// Kept; the push it replaced, if one was kept for the app.
        case stored(replaced: StoredPush?)
        /// Not kept, and why (`expirationZero`, `expired`).
        case notStored(String)
    }

    mutating func store(_ push: APNsPush, bundleId: String, now: Int64) -> Outcome {
        var expiresAt = now + Self.maximumStorageMilliseconds
        if let expiration = push.expiration {
            if expiration == 0 { return .notStored("expirationZero") }
            let milliseconds = expiration.multipliedReportingOverflow(by: 1000)
            let end = milliseconds.overflow ? Int64.max : milliseconds.partialValue
            if end <= now { return .notStored("expired") }
            expiresAt = min(expiresAt, end)
        }
        let replaced = pushes.firstIndex { $0.bundleId == bundleId }.map { pushes.remove(at: $0) }
        pushes.append(StoredPush(push: push, bundleId: bundleId, acceptedAt: now, expiresAt: expiresAt))
        return .stored(replaced: replaced)
    }

    /// The pushes whose time is over at `now`, removed.
    mutating func expire(now: Int64) -> [StoredPush] {
        let expired = pushes.filter { $0.expiresAt <= now }
        pushes.removeAll { $0.expiresAt <= now }
        return expired
    }

    /// Every push still kept, oldest first, removed: the device can be reached again.
    mutating func takeAll(now: Int64) -> (deliver: [StoredPush], expired: [StoredPush]) {
        let expired = expire(now: now)
        defer { pushes.removeAll() }
        return (pushes, expired)
    }

    /// When the next kept push expires.
    var nextExpiration: Int64? { pushes.map(\.expiresAt).min() }
}
