/// How the app's calls behave in the system's call interface.
open class CXProviderConfiguration: NSObject, @unchecked Sendable {
    /// The name the system's interface shows; `nil` takes the app's name (iOS 14 and later).
    open private(set) var localizedName: String?
    open var ringtoneSound: String?
    open var iconTemplateImageData: Data?
    open var maximumCallGroups = 2
    open var maximumCallsPerCallGroup = 5
    open var includesCallsInRecents = true
    open var supportsVideo = false
    open var supportedHandleTypes: Set<CXHandle.HandleType> = []

    public override init() {
        super.init()
    }

    @available(iOS, deprecated: 14.0, message: "Use init() (the system takes the app's name)")
    public convenience init(localizedName: String) {
        self.init()
        self.localizedName = localizedName
    }
}
