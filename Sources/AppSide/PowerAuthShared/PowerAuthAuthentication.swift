import Foundation

/// Which factors a signature uses: possession always, knowledge (a password) and biometry as
/// asked. Made with the class methods, as the SDK's.
///
/// The emulated device signs with the knowledge key directly: a password is carried, not
/// checked (see docs/powerauth.md).
public final class PowerAuthAuthentication: NSObject, @unchecked Sendable {
    /// Whether the possession factor is used.
    public let usePossession: Bool
    /// Whether the biometry factor is used.
    public let useBiometry: Bool
    /// The password of the knowledge factor, when it is used.
    public let password: String?
    /// The text of the biometric prompt.
    public let biometryPrompt: String?
    /// A possession key of the app's.
    public let overridenPossessionKey: Data?
    /// A biometry key of the app's.
    public let overridenBiometryKey: Data?
    /// Whether it persists an activation rather than signs.
    package let isPersist: Bool

    private init(
        possession: Bool = true, biometry: Bool = false, password: String? = nil, prompt: String? = nil,
        possessionKey: Data? = nil, biometryKey: Data? = nil, persist: Bool = false
    ) {
        usePossession = possession
        useBiometry = biometry
        self.password = password
        biometryPrompt = prompt
        overridenPossessionKey = possessionKey
        overridenBiometryKey = biometryKey
        isPersist = persist
    }

    // MARK: Signing

    @discardableResult
    public static func possession() -> PowerAuthAuthentication { PowerAuthAuthentication() }

    @discardableResult
    public static func possession(customPossessionKey: Data) -> PowerAuthAuthentication {
        PowerAuthAuthentication(possessionKey: customPossessionKey)
    }

    @discardableResult
    public static func possessionWithBiometry() -> PowerAuthAuthentication { PowerAuthAuthentication(biometry: true) }

    @discardableResult
    public static func possessionWithBiometry(prompt: String) -> PowerAuthAuthentication {
        PowerAuthAuthentication(biometry: true, prompt: prompt)
    }

    @discardableResult
    public static func possessionWithBiometry(prompt: String, customPossessionKey: Data) -> PowerAuthAuthentication {
        PowerAuthAuthentication(biometry: true, prompt: prompt, possessionKey: customPossessionKey)
    }

    @discardableResult
    public static func possessionWithBiometry(customBiometryKey: Data?, customPossessionKey: Data?) -> PowerAuthAuthentication {
        PowerAuthAuthentication(biometry: true, possessionKey: customPossessionKey, biometryKey: customBiometryKey)
    }

    @discardableResult
    public static func possessionWithPassword(password: String) -> PowerAuthAuthentication {
        PowerAuthAuthentication(password: password)
    }

    @discardableResult
    public static func possessionWithPassword(password: String, customPossessionKey: Data) -> PowerAuthAuthentication {
        PowerAuthAuthentication(password: password, possessionKey: customPossessionKey)
    }

    // MARK: Persisting an activation

    @discardableResult
    public static func persistWithPassword(password: String) -> PowerAuthAuthentication {
        PowerAuthAuthentication(password: password, persist: true)
    }

    @discardableResult
    public static func persistWithPassword(password: String, customPossessionKey: Data) -> PowerAuthAuthentication {
        PowerAuthAuthentication(password: password, possessionKey: customPossessionKey, persist: true)
    }

    @discardableResult
    public static func persistWithPasswordAndBiometry(password: String) -> PowerAuthAuthentication {
        PowerAuthAuthentication(biometry: true, password: password, persist: true)
    }

    @discardableResult
    public static func persistWithPasswordAndBiometry(
        password: String, customBiometryKey: Data?,
        customPossessionKey: Data?
    ) -> PowerAuthAuthentication {
        PowerAuthAuthentication(
            biometry: true, password: password, possessionKey: customPossessionKey, biometryKey: customBiometryKey,
            persist: true)
    }

    /// The factors as the daemon names them (`pa.token.create`'s `signatureType`).
    package var signatureType: String {
        var parts: [String] = []
        if usePossession { parts.append("possession") }
        if password != nil { parts.append("knowledge") }
        if useBiometry { parts.append("biometry") }
        return parts.joined(separator: "_")
    }
}
