import PowerAuthServer

/// The SDK's local counter state of an activation: the transport key agreed with the server,
/// the current CTR_DATA, the numeric counter, and the previous CTR_DATA values (oldest first,
/// at most 64) that let it recognise how far it is ahead of the server.
public struct ClientCounter: Hashable, Sendable {
    public static let historyLimit = Int(StatusBlob.maximumLookAhead)

    public var transportKey: [UInt8]
    public var counterData: [UInt8]
    public var counter: Int64
    public var history: [[UInt8]]

    public init(transportKey: [UInt8], counterData: [UInt8], counter: Int64 = 0, history: [[UInt8]] = []) {
        self.transportKey = transportKey
        self.counterData = counterData
        self.counter = counter
        self.history = history
    }

    /// Computes a code with the current CTR_DATA and moves the counter on.
    public mutating func sign(data: [UInt8]) -> String {
        let code = HashCounter.authenticationCode(transportKey: transportKey, counterData: counterData, data: data)
        moveTo(HashCounter.next(counterData), steps: 1)
        return code
    }

    /// Adopts a later CTR_DATA `steps` ahead (fast-forward after the server moved on).
    public mutating func moveTo(_ value: [UInt8], steps: Int) {
        history.append(counterData)
        if history.count > Self.historyLimit { history.removeFirst(history.count - Self.historyLimit) }
        counterData = value
        counter += Int64(steps)
    }

    static func split(_ bytes: [UInt8]) -> [[UInt8]] {
        stride(from: 0, to: bytes.count - bytes.count % HashCounter.byteCount, by: HashCounter.byteCount).map {
            Array(bytes[$0..<$0 + HashCounter.byteCount])
        }
    }
}
