/// What the app tells the system about a call: who calls, and what the call can do.
open class CXCallUpdate: NSObject, @unchecked Sendable {
    open var remoteHandle: CXHandle?
    open var localizedCallerName: String?
    open var supportsHolding = false
    open var supportsGrouping = false
    open var supportsUngrouping = false
    open var supportsDTMF = false
    open var hasVideo = false

    public override init() {
        super.init()
    }
}
