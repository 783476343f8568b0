/// A request that APNs accepted, as the device receives it.
public struct APNsPush: Sendable, Equatable {
    public var apnsId: String
    public var deviceToken: String
    public var pushType: APNsPushType
    public var topic: String
    public var priority: Int?
    public var expiration: Int64?
    public var collapseId: String?
    public var payload: [UInt8]
}
