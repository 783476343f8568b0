/// The SDK's counter synchronisation on a status fetch (`Session::trySynchronizeCounter`):
/// the client places the server's CTR_DATA hash and CTR_BYTE against its own counter.
public enum CounterSynchronization {
    /// The SDK's `ActivationStatus::CounterState`.
    public enum Outcome: Hashable, Sendable {
        /// Nothing to do: in step, or the client is ahead by at most half the look-ahead (or
        /// the activation is still on protocol 2, or the client has no counter byte yet).
        case ok(Placement)
        /// The client adopts `counterData` and `counterByte` (the server is ahead, or the
        /// first counter byte was captured).
        case updated(counterData: [UInt8], counterByte: UInt8)
        /// The client is more than half the look-ahead (and at most the look-ahead) ahead:
        /// it should compute a possession signature the server validates.
        case calculateSignature(distance: Int)
        /// The counters cannot be placed: the activation is in deadlock.
        case invalid
    }

    /// Where an `.ok` counter stands.
    public enum Placement: Hashable, Sendable {
        case inSync
        case clientAhead(distance: Int)
        /// Protocol 2 activations, or a client without a counter byte whose hash did not
        /// match: the SDK cannot tell and carries on.
        case notChecked
    }

    /// `CalculateHashCounterDistance`: how many steps from `counterData` the server's hash
    /// is, trying `maximumIterations` values (0…max−1); nil when none matches. Also returns
    /// the last value tried (the matching one on success).
    public static func hashDistance(
        from counterData: [UInt8], to serverHash: [UInt8], transportKey: [UInt8],
        maximumIterations: Int
    ) -> (distance: Int?, value: [UInt8]) {
        let key = PowerAuthKDF.derive(transportKey, index: 4000)
        var value = counterData
        for iteration in 0..<max(0, maximumIterations) {
            if PowerAuthKDF.deriveInternal(key, data: value) == serverHash { return (iteration, value) }
            value = HashCounter.next(value)
        }
        return (nil, value)
    }

    /// `CalculateDistanceBetweenByteCounters`: local − server as the signed distance of least
    /// magnitude modulo 256 (positive: the client is ahead).
    public static func byteDistance(local: UInt8, server: UInt8) -> Int {
        let l = Int(local), s = Int(server)
        let candidates = [l - s, 256 + l - s, l - (256 + s)]
        let least = candidates.map(abs).min()!
        return candidates.first { abs($0) == least }!
    }

    /// Places the client's counter (`counterData`, and `counterByte` when it has one) against
    /// the decrypted blob, exactly as the SDK does.
    public static func synchronize(
        counterData: [UInt8], counterByte: UInt8?, blob: StatusBlob,
        transportKey: [UInt8]
    ) -> Outcome {
        if blob.currentVersion == 2 { return .ok(.notChecked) }
        let lookAhead = Int(blob.lookAhead)
        let (hash, matched) = hashDistance(
            from: counterData, to: blob.counterDataHash, transportKey: transportKey,
            maximumIterations: lookAhead)
        guard let counterByte else {
            if hash == 0 { return .updated(counterData: counterData, counterByte: blob.counterByte) }
            return .ok(.notChecked)
        }
        let bytes = byteDistance(local: counterByte, server: blob.counterByte)
        if hash == 0 && bytes == 0 { return .ok(.inSync) }
        if bytes > 0 && hash == nil {
            if bytes > lookAhead { return .invalid }
            if bytes > lookAhead / 2 { return .calculateSignature(distance: bytes) }
            return .ok(.clientAhead(distance: bytes))
        }
        if let hash, -bytes == hash { return .updated(counterData: matched, counterByte: blob.counterByte) }
        return .invalid
    }
}
