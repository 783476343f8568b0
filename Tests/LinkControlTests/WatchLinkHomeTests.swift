import XCTest
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import LinkControl

final class WatchLinkHomeTests: XCTestCase {
    func testDefaultPathOrder() {
        XCTAssertEqual(WatchLinkHome.defaultPath(environment: ["WATCHLINK_HOME": "/w", "XDG_RUNTIME_DIR": "/run/user/1"]), "/w")
        XCTAssertEqual(WatchLinkHome.defaultPath(environment: ["XDG_RUNTIME_DIR": "/run/user/1"]), "/run/user/1/watchlink")
        XCTAssertEqual(WatchLinkHome.defaultPath(environment: ["XDG_RUNTIME_DIR": "/run/user/1/"]), "/run/user/1/watchlink")
        XCTAssertEqual(WatchLinkHome.defaultPath(environment: ["WATCHLINK_HOME": "", "XDG_RUNTIME_DIR": ""]), "/tmp/watchlink-\(getuid())")
        XCTAssertEqual(WatchLinkHome.defaultPath(environment: [:]), "/tmp/watchlink-\(getuid())")
    }

    func testPaths() {
        XCTAssertEqual(WatchLinkHome.path(WatchLinkHome.phoneControlSocketName, in: "/h"), "/h/phone.ctl")
        XCTAssertEqual(WatchLinkHome.path(WatchLinkHome.watchControlSocketName, in: "/h/"), "/h/watch.ctl")
    }
}
