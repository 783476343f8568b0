import LinkCrypto
import PushEmulator

/// Reads the input as an APNs request: the first line is the method, the second the path,
/// then `name: value` header lines up to an empty line, then the body. The request goes
/// through ``APNsRequestValidator`` with a provider key registered; the authorization header
/// also goes through ``ProviderToken/parse(_:)`` on its own.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    var lines: [String] = []
    var bodyStart = bytes.count
    var lineStart = 0
    for index in bytes.indices where bytes[index] == UInt8(ascii: "\n") {
        let line = String(decoding: bytes[lineStart..<index], as: UTF8.self)
        lineStart = index + 1
        if lines.count >= 2 && line.isEmpty { bodyStart = lineStart; break }
        lines.append(line)
    }
    if bodyStart == bytes.count, lineStart < bytes.count {
        lines.append(String(decoding: bytes[lineStart...], as: UTF8.self))
    }
    var headers: [(name: String, value: String)] = []
    for line in lines.dropFirst(2) {
        guard let colon = line.firstIndex(of: ":") else { continue }
        let name = String(line[..<colon]).lowercased()
        let value = String(line[line.index(after: colon)...].drop(while: { $0 == " " }))
        headers.append((name: name, value: value))
        if name == "authorization" { _ = ProviderToken.parse(value) }
        _ = ProviderToken.parse(line)
    }
    let body = Array(bytes[bodyStart...])
    let request = APNsRequest(
        method: lines.first, path: lines.count > 1 ? lines[1] : nil, headers: headers,
        body: Array(body.prefix(APNsRequest.maximumKeptBodySize)), bodyLength: body.count)
    let validator = APNsRequestValidator(
        bundleId: "com.example.app",
        device: DeviceRegistration(
            token: String(repeating: "ab", count: 32),
            types: [.fileProvider, .voIP],
            invalidated: [String(repeating: "cd", count: 32): 1]))
    _ = validator.validate(request, authenticator: FuzzProvider.makeAuthenticator(), now: 1_700_000_000)
    _ = APNsRequestValidator.isUUID(request.path ?? "")
    _ = APNsRequestValidator.isTopicSyntax(request.method ?? "")
    return 0
}

private enum FuzzProvider {
    /// The public half of the key that signed the provider token in the seed corpus, so that
    /// seeded requests pass authentication and reach the later checks.
    static let publicKeyPEM = """
        -----BEGIN PUBLIC KEY-----
        MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEGfPLA+biqxTqc34tj16F5sgbk7Lq
        JSvXMjdmoUvsMyP0o+cKwTaiKtsFFEs2nIMbmXgMDsTUmuBiqf0h2RulYA==
        -----END PUBLIC KEY-----
        """
    nonisolated(unsafe) static let key = try! P256PublicKey(pem: publicKeyPEM)

    static func makeAuthenticator() -> ProviderAuthenticator {
        let authenticator = ProviderAuthenticator(teamId: "TEAMID1234")
        authenticator.addKey(id: "KEYID12345", key)
        return authenticator
    }
}
