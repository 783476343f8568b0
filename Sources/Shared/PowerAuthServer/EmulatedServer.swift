#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkJSON
import LinkCrypto
import WireProtocol

/// The emulated PowerAuth server: activation records with their life cycle, fail counts,
/// temporary blocks, the hash-based counter with its look-ahead window, and the encrypted
/// status answer. Times are server times, Unix milliseconds.
public final class EmulatedServer {
    /// The status endpoint's answer (`/pa/v3/activation/status`).
    public struct StatusResponse: Hashable, Sendable {
        public var activationId: String
        public var encryptedStatusBlob: [UInt8]
        public var nonce: [UInt8]
        public var customObject: JSONObject?
        public var blockExpiration: Int64?
        public var serverTime: Int64
    }

    /// The outcome of `verifySignature`, as the server's `VerifySignatureResponse` has it.
    public struct SignatureVerification: Hashable, Sendable {
        public var signatureValid: Bool
        /// The record's state after the check; `removed` for an activation the server does not
        /// know (the server's `invalidStateResponse`).
        public var activationStatus: ServerActivationState
        /// After a valid signature the maximum, after an invalid one what is left; nil when the
        /// record was not checked (unknown, not active, or its fail count already at the maximum).
        public var remainingAttempts: Int?
        /// The type the signature was checked as; nil when the record was not checked.
        public var signatureType: SignatureFactor?
        /// How many counter values past the expected one the signature was found (0: the
        /// expected one); nil unless valid.
        public var skipped: Int?
        /// The record after the check; nil for an unknown activation.
        public var record: ServerActivation?

        public init(
            signatureValid: Bool, activationStatus: ServerActivationState, remainingAttempts: Int? = nil,
            signatureType: SignatureFactor? = nil, skipped: Int? = nil, record: ServerActivation? = nil
        ) {
            self.signatureValid = signatureValid
            self.activationStatus = activationStatus
            self.remainingAttempts = remainingAttempts
            self.signatureType = signatureType
            self.skipped = skipped
            self.record = record
        }
    }

    /// The outcome of `validateToken`, as the server's `ValidateTokenResponse` has it.
    public struct TokenValidation: Hashable, Sendable {
        public var tokenValid: Bool
        /// Nil for an unknown token, for which the server sets nothing else either.
        public var activation: ServerActivation?
        public var signatureType: SignatureFactor?
    }

    /// How far in the past a token's timestamp may be (`powerauth.service.token.timestamp.validity`).
    public static let tokenTimestampValidity: Int64 = 7_200_000
    /// How far in the future (`powerauth.service.token.timestamp.forward.validity`).
    public static let tokenTimestampForwardValidity: Int64 = 1_800_000
    /// How long a token's nonce is remembered, and how far ahead a 3.2 or 3.3 timestamp may be
    /// (`requestExpirationInMilliseconds`; 3.0 and 3.1 get the extended 2 h).
    public static let requestExpiration: Int64 = 60_000
    public static let requestExpirationExtended: Int64 = 7_200_000

    private let store: ServerStore
    /// The nonces of validated tokens, with the time they may be forgotten: the replay check
    /// of the server's `DefaultReplayVerificationService` (kept in memory here).
    private var usedTokenNonces: [String: Int64] = [:]

    public init(store: ServerStore) {
        self.store = store
    }

    /// The server's half of the key exchange (powerauth-crypto
    /// `docs/Activation-via-Activation-Code.md`, "Key Exchange"): a key pair of the server's, the
    /// master secret by ECDH with the device's public key, a random `CTR_DATA` and a new
    /// activation id (a lowercase UUID, as `Generator.randomUUID()`). The record is
    /// `pendingCommit`, or `active` when `committed` (the server's `ON_KEY_EXCHANGE` commit
    /// phase). Its `activationId`, `serverPublicKey` and `counterData` are what the server
    /// answers the device. The server's private key is not kept: the master secret is.
    public func prepareActivation(devicePublicKey: [UInt8], committed: Bool) throws -> ServerActivation {
        let device: P256PublicKey
        do { device = try P256PublicKey(sec1: devicePublicKey) } catch {
            throw ServerError.invalidValue("devicePublicKey is not a P-256 public key: \(error)")
        }
        let serverKey = try P256PrivateKey()
        let record = ServerActivation(
            activationId: try newActivationId(), state: committed ? .active : .pendingCommit,
            masterSecret: try ActivationKeyExchange.masterSecret(privateKey: serverKey, publicKey: device),
            counterData: SecureRandom.bytes(HashCounter.byteCount), devicePublicKey: devicePublicKey,
            serverPublicKey: serverKey.publicKey.uncompressedRepresentation)
        try store.save(record)
        return record
    }

    /// Keeps a record made elsewhere (another server's, a test's), as it is; refuses an
    /// activation id the server already has.
    public func importActivation(_ record: ServerActivation) throws -> ServerActivation {
        guard !record.activationId.isEmpty else { throw ServerError.invalidValue("the activation id must not be empty") }
        guard try store.activation(record.activationId) == nil else {
            throw ServerError.invalidValue("the server already has an activation '\(record.activationId)'")
        }
        guard record.counterData.count == HashCounter.byteCount else {
            throw ServerError.invalidValue("ctrData has 16 bytes, got \(record.counterData.count)")
        }
        try store.save(record)
        return record
    }

    /// A fresh lowercase UUID that no record has.
    public func newActivationId() throws -> String {
        var activationId = UUID().uuidString.lowercased()
        while try store.activation(activationId) != nil { activationId = UUID().uuidString.lowercased() }
        return activationId
    }

    /// The record as of `now`: a temporary block that has expired is lifted first.
    public func activation(_ activationId: String, now: Int64) throws -> ServerActivation {
        guard var record = try store.activation(activationId) else { throw ServerError.unknownActivation(activationId) }
        if record.state == .blocked, let expiration = record.blockExpiration, now >= expiration {
            record.state = .active
            record.failCount = 0
            record.blockExpiration = nil
            try store.save(record)
        }
        return record
    }

    public func activations(now: Int64) throws -> [ServerActivation] {
        try store.activations().map { try activation($0.activationId, now: now) }
    }

    @discardableResult
    public func apply(_ action: ServerAction, to activationId: String, now: Int64) throws -> ServerActivation {
        var record = try activation(activationId, now: now)
        func require(_ states: ServerActivationState...) throws {
            guard states.contains(record.state) else { throw ServerError.invalidState(action: action.name, state: record.state) }
        }
        switch action {
        case .commit:
            try require(.created, .pendingCommit)
            record.state = .active
        case .block:
            try require(.active)
            record.state = .blocked
        case .unblock:
            try require(.blocked)
            record.state = .active
            record.failCount = 0
            record.blockExpiration = nil
        case .remove:
            try require(.created, .pendingCommit, .active, .blocked)
            record.state = .removed
            record.blockExpiration = nil
        case .failAttempt:
            try require(.active)
            record.failCount += 1
            if record.failCount >= record.maxFailCount { record.state = .blocked }
        case .succeedAttempt:
            try require(.active)
            record.failCount = 0
        case .temporaryBlock(let until):
            try require(.active)
            guard until > now else { throw ServerError.invalidValue("a temporary block must end in the future") }
            record.state = .blocked
            record.blockExpiration = until
        case .advanceCounter(let steps):
            guard steps >= 1 else { throw ServerError.invalidValue("the counter moves by at least 1") }
            record.counterData = HashCounter.advance(record.counterData, by: steps)
            record.counter += Int64(steps)
        }
        try store.save(record)
        return record
    }

    /// Changes the record's settings; nil leaves a setting as it is.
    @discardableResult
    public func configure(
        _ activationId: String, maxFailCount: Int? = nil, customObject: JSONObject?? = nil,
        currentVersion: Int? = nil, upgradeVersion: Int? = nil, lookAhead: Int? = nil,
        now: Int64
    ) throws -> ServerActivation {
        var record = try activation(activationId, now: now)
        if let maxFailCount {
            guard (1...255).contains(maxFailCount) else { throw ServerError.invalidValue("maxFailCount must be 1…255") }
            record.maxFailCount = maxFailCount
        }
        if let customObject { record.customObject = customObject }
        if let currentVersion {
            guard (2...3).contains(currentVersion) else { throw ServerError.invalidValue("currentVersion must be 2 or 3") }
            record.currentVersion = currentVersion
        }
        if let upgradeVersion {
            guard (2...255).contains(upgradeVersion) else { throw ServerError.invalidValue("upgradeVersion must be 2…255") }
            record.upgradeVersion = upgradeVersion
        }
        if let lookAhead {
            guard (1...Int(StatusBlob.maximumLookAhead)).contains(lookAhead) else {
                throw ServerError.invalidValue("lookAhead must be 1…\(StatusBlob.maximumLookAhead)")
            }
            record.lookAhead = lookAhead
        }
        try store.save(record)
        return record
    }

    /// Answers a status request carrying the client's 16-byte challenge with a random 16-byte
    /// nonce and the encrypted blob, as the server's `getActivationStatus` does: a record
    /// `created` (its keys not exchanged yet) and an activation the server does not know get 32
    /// random bytes instead of a blob (and the unknown one no custom object).
    public func status(_ activationId: String, challenge: [UInt8], now: Int64) throws -> StatusResponse {
        guard challenge.count == 16 else { throw ServerError.invalidValue("the status challenge has 16 bytes, got \(challenge.count)") }
        let nonce = SecureRandom.bytes(16)
        guard try store.activation(activationId) != nil else {
            return StatusResponse(
                activationId: activationId, encryptedStatusBlob: SecureRandom.bytes(StatusBlob.byteCount), nonce: nonce,
                customObject: nil, blockExpiration: nil, serverTime: now)
        }
        let record = try activation(activationId, now: now)
        let encrypted: [UInt8]
        if record.state == .created {
            encrypted = SecureRandom.bytes(StatusBlob.byteCount)
        } else {
            let blob = record.statusBlob(reserved: SecureRandom.bytes(StatusBlob.reservedByteCount))
            encrypted = try StatusBlobCipher.encrypt(blob, transportKey: record.transportKey, challenge: challenge, nonce: nonce)
        }
        return StatusResponse(
            activationId: activationId, encryptedStatusBlob: encrypted, nonce: nonce, customObject: record.customObject,
            blockExpiration: record.state == .blocked ? record.blockExpiration : nil, serverTime: now)
    }

    /// `verifySignature` (online) and `verifyOfflineSignature` as the server checks them
    /// (`OnlineSignatureServiceBehavior`, `SignatureSharedServiceBehavior`):
    ///
    /// - an activation the server does not know: not valid, `removed`; one that is not active:
    ///   not valid, its state, nothing changes;
    /// - an active one whose fail count already reached the maximum is blocked, not checked;
    /// - the signature is compared with the one computed for the expected `CTR_DATA` and the
    ///   values after it, `lookAhead` values in all (ctr … ctr+LA−1); a match moves the counter
    ///   past it, and resets the fail count unless the type is possession only;
    /// - no match: a type other than possession only adds a failed attempt; none left blocks.
    public func verifySignature(
        _ activationId: String, signature: String, factor: SignatureFactor, data: [UInt8],
        format: PowerAuthSignature.Format, now: Int64
    ) throws -> SignatureVerification {
        if case .decimal(let length) = format, !PowerAuthSignature.Format.componentLengths.contains(length) {
            throw ServerError.invalidValue("an offline signature's components have 4 to 8 digits, not \(length)")
        }
        guard try store.activation(activationId) != nil else { return SignatureVerification(signatureValid: false, activationStatus: .removed) }
        var record = try activation(activationId, now: now)
        guard record.state == .active else {
            return SignatureVerification(signatureValid: false, activationStatus: record.state, record: record)
        }
        guard record.failCount < record.maxFailCount else {
            // handleInactiveActivationWithMismatchSignature: the record should have been blocked.
            record.state = .blocked
            try store.save(record)
            return SignatureVerification(signatureValid: false, activationStatus: record.state, record: record)
        }
        var candidate = record.counterData
        for skipped in 0..<record.lookAhead {
            let expected = PowerAuthSignature.compute(keys: record.keys, factor: factor, counterData: candidate, data: data, format: format)
            candidate = HashCounter.next(candidate)
            if expected == signature {
                record.counterData = candidate
                record.counter += Int64(skipped + 1)
                if factor.countsFailedAttempts { record.failCount = 0 }
                try store.save(record)
                return SignatureVerification(
                    signatureValid: true, activationStatus: record.state, remainingAttempts: record.maxFailCount,
                    signatureType: factor, skipped: skipped, record: record)
            }
        }
        if factor.countsFailedAttempts { record.failCount += 1 }
        if record.maxFailCount - record.failCount <= 0 { record.state = .blocked }
        try store.save(record)
        return SignatureVerification(
            signatureValid: false, activationStatus: record.state, remainingAttempts: record.maxFailCount - record.failCount,
            signatureType: factor, record: record)
    }

    // MARK: - Tokens

    /// `/pa/v3/token/create`, after its signature was validated: a new token for an active
    /// activation (else `ERR0008` `ACTIVATION_INCORRECT_STATE`), a lowercase UUID and 16 random bytes.
    public func createToken(for activationId: String, signatureType: SignatureFactor, now: Int64) throws -> ServerToken {
        let record = try activation(activationId, now: now)
        guard record.state == .active else {
            throw ServerError.rejected(
                code: 8, name: "ACTIVATION_INCORRECT_STATE",
                message: "activation '\(activationId)' is \(record.state.name), not active")
        }
        var tokenId = UUID().uuidString.lowercased()
        while try store.token(tokenId) != nil { tokenId = UUID().uuidString.lowercased() }
        let token = ServerToken(
            tokenId: tokenId, activationId: activationId, secret: SecureRandom.bytes(ServerToken.secretLength),
            signatureType: signatureType, created: now)
        try store.save(token)
        return token
    }

    /// `/pa/v3/token/remove`: removed only when the token exists and belongs to the activation;
    /// otherwise `false`, not an error, as the server's `removeToken` answers.
    public func removeToken(_ tokenId: String, activationId: String) throws -> Bool {
        guard let token = try store.token(tokenId), token.activationId == activationId else { return false }
        return try store.removeToken(tokenId)
    }

    public func tokens(of activationId: String) throws -> [ServerToken] { try store.tokens(activationId: activationId) }

    /// `validateToken`, in the order of the server's `TokenBehavior`: the timestamp window (an
    /// error either way), the token (unknown: not valid, nothing else set), the activation
    /// (not active: not valid), the nonce's replay check (a nonce seen before is an error), the
    /// digest, compared in constant time.
    public func validateToken(_ header: TokenHeaderFields, now: Int64) throws -> TokenValidation {
        if header.timestamp < now - Self.tokenTimestampValidity {
            throw ServerError.rejected(
                code: 30, name: "TOKEN_TIMESTAMP_TOO_OLD",
                message: "the token's timestamp is \(now - header.timestamp) ms in the past, over \(Self.tokenTimestampValidity)")
        }
        if header.timestamp > now + Self.tokenTimestampForwardValidity {
            throw ServerError.rejected(
                code: 44, name: "TOKEN_TIMESTAMP_TOO_IN_FUTURE",
                message: "the token's timestamp is \(header.timestamp - now) ms in the future, over \(Self.tokenTimestampForwardValidity)")
        }
        guard let token = try store.token(header.tokenId) else { return TokenValidation(tokenValid: false) }
        let record = try activation(token.activationId, now: now)
        guard record.state == .active else {
            return TokenValidation(tokenValid: false, activation: record, signatureType: token.signatureType)
        }
        try checkAndRememberNonce(header, now: now)
        let expected = PowerAuthTokenHeader.digest(
            secret: token.secret, nonce: header.nonce, timestamp: String(header.timestamp),
            version: header.version)
        let valid = ConstantTime.equal(Array(expected.utf8), Array(Data(header.digest).base64EncodedString().utf8))
        return TokenValidation(tokenValid: valid, activation: record, signatureType: token.signatureType)
    }

    private func checkAndRememberNonce(_ header: TokenHeaderFields, now: Int64) throws {
        let expiration = header.version == "3.2" || header.version == "3.3" ? Self.requestExpiration : Self.requestExpirationExtended
        if header.timestamp > now + expiration {
            throw ServerError.rejected(
                code: 24, name: "INVALID_REQUEST",
                message: "the token's timestamp is more than \(expiration) ms in the future")
        }
        usedTokenNonces = usedTokenNonces.filter { $0.value > now }
        let key = Data(header.nonce + Array(header.tokenId.utf8)).base64EncodedString()
        guard usedTokenNonces[key] == nil else {
            throw ServerError.rejected(code: 24, name: "INVALID_REQUEST", message: "the token's nonce was used before")
        }
        usedTokenNonces[key] = now + Self.requestExpiration
    }

    /// The keys of a record, for `pa.server.secrets` (an emulator-only look inside).
    public func secrets(_ activationId: String, now: Int64) throws -> SignatureKeys {
        try activation(activationId, now: now).keys
    }
}
