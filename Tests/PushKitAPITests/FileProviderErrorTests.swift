import FileProvider
import XCTest

/// `NSFileProviderError` against Apple's `NSFileProviderError.h`: every code with its name and
/// number, and the ways apps match one.
final class FileProviderErrorTests: XCTestCase {
    /// `NS_ERROR_ENUM(NSFileProviderErrorDomain, NSFileProviderErrorCode)` of the header, each
    /// constant as Swift names it (`NSFileProviderErrorDeletionRejected` → `deletionRejected`).
    static let header: [(name: String, value: Int)] = [
        ("notAuthenticated", -1000), ("filenameCollision", -1001), ("syncAnchorExpired", -1002),
        ("insufficientQuota", -1003), ("serverUnreachable", -1004), ("noSuchItem", -1005),
        ("deletionRejected", -1006), ("directoryNotEmpty", -1007), ("providerNotFound", -2001),
        ("providerTranslocated", -2002), ("olderExtensionVersionRunning", -2003),
        ("newerExtensionVersionFound", -2004), ("cannotSynchronize", -2005), ("nonEvictableChildren", -2006),
        ("unsyncedEdits", -2007), ("nonEvictable", -2008), ("versionNoLongerAvailable", -2009),
        ("excludedFromSync", -2010), ("domainDisabled", -2011), ("providerDomainTemporarilyUnavailable", -2012),
        ("providerDomainNotFound", -2013), ("applicationExtensionNotFound", -2014),
    ]

    func testTheCodesAreTheHeadersNamesAndNumbers() {
        XCTAssertEqual(NSFileProviderError.Code.allCases.map { "\($0)" }, Self.header.map(\.name))
        for (name, value) in Self.header {
            XCTAssertEqual(NSFileProviderError.Code(rawValue: value).map { "\($0)" }, name, "\(value)")
        }
        // NSFileProviderErrorPageExpired = NSFileProviderErrorSyncAnchorExpired
        XCTAssertEqual(NSFileProviderError.Code.pageExpired, .syncAnchorExpired)
        XCTAssertEqual(NSFileProviderError.pageExpired, .syncAnchorExpired)
    }

    func testAnErrorBridgesToNSErrorAndMatchesItsCode() {
        let error: any Error = NSFileProviderError(.noSuchItem)
        let bridged = error as NSError
        XCTAssertEqual(bridged.domain, NSFileProviderErrorDomain)
        XCTAssertEqual(bridged.code, -1005)

        for thrown in [error, NSError(domain: NSFileProviderErrorDomain, code: -1005)] as [any Error] {
            do {
                throw thrown
            } catch NSFileProviderError.noSuchItem {
                // what an extension's caller writes
            } catch {
                XCTFail("\(thrown) did not match NSFileProviderError.noSuchItem")
            }
        }
        XCTAssertFalse(NSFileProviderError.serverUnreachable ~= error)
        XCTAssertFalse(NSFileProviderError.noSuchItem ~= NSError(domain: "other", code: -1005))
        XCTAssertEqual((error as? NSFileProviderError)?.code, NSFileProviderError.noSuchItem)
    }
}
