import Foundation
import XCTest

/// The outcome of work started on another thread or task, waited for with a deadline.
final class Pending<Value>: @unchecked Sendable {
    private let condition = NSCondition()
    private var value: Value?

    func fulfil(_ value: Value) {
        condition.lock()
        self.value = value
        condition.broadcast()
        condition.unlock()
    }

    /// The value, waiting up to `timeout` seconds; fails the test and returns `nil` when none came.
    func wait(timeout: Double = 10, file: StaticString = #filePath, line: UInt = #line) -> Value? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while value == nil {
            if !condition.wait(until: deadline), value == nil {
                XCTFail("timed out after \(timeout) s", file: file, line: line)
                return nil
            }
        }
        return value
    }
}

/// Starts `body` as a task; its result arrives in the returned ``Pending``.
func start<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> Pending<Result<T, any Error>> {
    let pending = Pending<Result<T, any Error>>()
    Task.detached {
        do { pending.fulfil(.success(try await body())) } catch { pending.fulfil(.failure(error)) }
    }
    return pending
}

/// Runs `body` on another thread (for calls that block until the fake server answers).
func onThread<T>(_ body: @escaping @Sendable () -> T) -> Pending<T> {
    let pending = Pending<T>()
    Thread { pending.fulfil(body()) }.start()
    return pending
}

/// Things that happened, in order, from any thread; a test waits for how many it expects.
final class Recorder: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [String] = []

    func record(_ item: String) {
        condition.lock()
        items.append(item)
        condition.broadcast()
        condition.unlock()
    }

    var all: [String] {
        condition.lock()
        defer { condition.unlock() }
        return items
    }

    /// Waits until `count` items are recorded and returns them.
    @discardableResult
    func wait(for count: Int, timeout: Double = 10, file: StaticString = #filePath, line: UInt = #line) -> [String] {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while items.count < count {
            if !condition.wait(until: deadline), items.count < count {
                XCTFail("only \(items.count) of \(count) recorded: \(items)", file: file, line: line)
                return items
            }
        }
        return items
    }
}
