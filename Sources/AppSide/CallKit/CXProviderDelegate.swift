/// The object a ``CXProvider`` tells of what happens to its calls, on the queue given to
/// ``CXProvider/setDelegate(_:queue:)``.
///
/// `providerDidReset(_:)` is required, as in Apple's protocol; `providerDidBegin(_:)` has a
/// default that does nothing. WatchLink emulates no call interface, so the actions a user
/// takes in it (answering, ending) never arrive.
public protocol CXProviderDelegate: NSObjectProtocol {
    /// The system reset the provider: end every call.
    func providerDidReset(_ provider: CXProvider)
    /// The provider began.
    func providerDidBegin(_ provider: CXProvider)
}

extension CXProviderDelegate {
    /// Does nothing.
    public func providerDidBegin(_ provider: CXProvider) {}
}
