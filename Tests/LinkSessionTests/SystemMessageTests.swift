import XCTest
import LinkSession
import LinkStore
import WireProtocol

/// Messages and userInfo meant for a framework on the receiving side (PowerAuth packets)
/// never reach the app while the daemon plays it, and the framework answers them whatever the
/// reply mode; an app that is a process (attached or installed) has its frameworks in it, and
/// gets them as its own.
final class SystemMessageTests: XCTestCase {
    private static let prefix = Array("PAwc1".utf8)

    func testSystemMessagesBypassTheAppAndTheReplyMode() {
        let pair = SessionPair { configuration in
            configuration.isSystemMessage = { payload in
                if case .data(let bytes) = payload { return bytes.starts(with: SystemMessageTests.prefix) }
                return false
            }
        }
        pair.linkUp()
        pair.activateBoth()
        pair.command(.watch, .setReplies(ReplyConfiguration(mode: .echo)))
        pair.clearNotifications()
        let packet = Self.prefix + Array(#"{"target":"session:1"}"#.utf8)
        let token = pair.command(.phone, .sendMessage(.data(packet), wantsReply: true, timeoutMilliseconds: nil))
        XCTAssertNil(pair.result(token), "echo mode must not answer a system message")
        guard case .systemMessageReceived(let replyId?, .data(let bytes))? = pair.watchNotifications.last else {
            return XCTFail("\(pair.watchNotifications)")
        }
        XCTAssertEqual(bytes, packet)
        XCTAssertFalse(
            pair.watchNotifications.contains {
                if case .messageReceived = $0 { return true }; return false
            })
        let answer = Self.prefix + Array(#"{"target":"*"}"#.utf8)
        pair.command(.watch, .reply(replyId: replyId, payload: .data(answer)))
        XCTAssertEqual(pair.result(token), .success(.reply(.data(answer))))
        let list = pair.command(.watch, .receivedList(after: nil))
        XCTAssertEqual(pair.result(list), .success(.received([])))

        let ordinary = pair.command(.phone, .sendMessage(.data([1, 2]), wantsReply: true, timeoutMilliseconds: nil))
        XCTAssertEqual(pair.result(ordinary), .success(.reply(.data([1, 2]))))
    }

    func testSystemUserInfoIsDeliveredToTheFrameworkNotTheApp() {
        let key = "io.getlime.PowerAuth.PA2WCSessionPacket"
        let pair = DurablePair(configure: { configuration in
            configuration.isSystemUserInfo = { payload in
                (try? PropertyListCodec.decodeDictionary(payload))?[key] != nil
            }
        })
        pair.command(.phone, .activate)
        pair.command(.watch, .activate)
        pair.setLink(up: true)
        pair.pump()
        let packet = try! PropertyListCodec.encode([key: .data(Self.prefix)])
        pair.command(.phone, .transferUserInfo(packet))
        pair.command(.phone, .transferUserInfo(try! PropertyListCodec.encode(["app": 1])))
        pair.pump()
        let system = pair.watch.notifications.compactMap { notification -> [UInt8]? in
            if case .systemUserInfoReceived(_, let bytes) = notification { return bytes }
            return nil
        }
        XCTAssertEqual(system, [packet])
        let app = pair.watch.notifications.filter {
            if case .userInfoReceived = $0 { return true }; return false
        }
        XCTAssertEqual(app.count, 1)
    }

    func testAnAppThatIsAProcessGetsItsFrameworksPacketsAsItsOwn() {
        let key = "io.getlime.PowerAuth.PA2WCSessionPacket"
        let pair = SessionPair { configuration in
            configuration.isSystemMessage = { payload in
                if case .data(let bytes) = payload { return bytes.starts(with: SystemMessageTests.prefix) }
                return false
            }
            configuration.isSystemUserInfo = { payload in
                (try? PropertyListCodec.decodeDictionary(payload))?[key] != nil
            }
        }
        pair.linkUp()
        pair.activateBoth()
        XCTAssertTrue(pair.watch.frameworksRunInTheDaemon)
        pair.command(.watch, .attachApp(.foreground, .all))
        XCTAssertFalse(pair.watch.frameworksRunInTheDaemon)
        pair.clearNotifications()
        let packet = Self.prefix + Array(#"{"target":"session:1"}"#.utf8)
        pair.command(.phone, .sendMessage(.data(packet), wantsReply: true, timeoutMilliseconds: nil))
        XCTAssertTrue(
            pair.watchNotifications.contains {
                if case .messageReceived = $0 { return true }; return false
            },
            "the attached app's delegate gets the packet: \(pair.watchNotifications)")
        XCTAssertFalse(
            pair.watchNotifications.contains {
                if case .systemMessageReceived = $0 { return true }; return false
            })
        pair.command(.phone, .transferUserInfo(try! PropertyListCodec.encode([key: .data(packet)])))
        XCTAssertFalse(
            pair.watchNotifications.contains {
                if case .systemUserInfoReceived = $0 { return true }; return false
            },
            "nor is its userInfo the daemon's: \(pair.watchNotifications)")

        pair.command(.watch, .setAppInstalled(true))
        pair.command(.watch, .detachApp)
        XCTAssertFalse(pair.watch.frameworksRunInTheDaemon, "an installed app runs its frameworks when it is launched")
        pair.command(.watch, .setAppInstalled(false))
        XCTAssertTrue(pair.watch.frameworksRunInTheDaemon)
    }
}
