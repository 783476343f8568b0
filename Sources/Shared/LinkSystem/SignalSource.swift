#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CSystem

/// Per signal number, the write end of the self-pipe of the loop that handles it, or -1.
/// Read from signal handlers with an atomic load.
private let signalTableSize = 128
nonisolated(unsafe) private let signalPipeTable: UnsafeMutablePointer<Int32> = {
    let table = UnsafeMutablePointer<Int32>.allocate(capacity: signalTableSize)
    table.initialize(repeating: -1, count: signalTableSize)
    return table
}()

private func forwardSignalToPipe(_ signo: Int32) {
    guard signo > 0, Int(signo) < signalTableSize else { return }
    let fd = wl_atomic_load_int(signalPipeTable + Int(signo))
    guard fd >= 0 else { return }
    let savedErrno = wl_errno()
    var byte = UInt8(truncatingIfNeeded: signo)
    _ = write(fd, &byte, 1)
    wl_set_errno(savedErrno)
}

/// The descriptors through which an event loop learns about signals, and the handlers.
public final class SignalSource {
    public let delivery: SignalDelivery
    private var handlers: [Int32: (Int32) -> Void] = [:]
    private var previousActions: [Int32: sigaction] = [:]
    private let pipeRead: Int32
    private let pipeWrite: Int32
    #if os(Linux)
    private var signalFD: Int32 = -1
    private var blocked = sigset_t()
    private let siginfoBuffer: UnsafeMutablePointer<signalfd_siginfo>
    private static let siginfoCapacity = 16
    #endif

    public init(delivery: SignalDelivery) throws {
        guard delivery.isAvailable else {
            throw SystemError(operation: "signal delivery \(delivery.rawValue)", errno: Errno(rawValue: ENOSYS))
        }
        self.delivery = delivery
        (pipeRead, pipeWrite) = try Syscall.pipe()
        #if os(Linux)
        sigemptyset(&blocked)
        siginfoBuffer = .allocate(capacity: Self.siginfoCapacity)
        #endif
    }

    deinit {
        for (signo, previous) in previousActions {
            if wl_atomic_load_int(signalPipeTable + Int(signo)) == pipeWrite {
                wl_atomic_store_int(signalPipeTable + Int(signo), -1)
                var action = previous
                _ = wl_sigaction_restore(signo, &action)
            }
        }
        Syscall.close(pipeRead)
        Syscall.close(pipeWrite)
        #if os(Linux)
        if signalFD >= 0 { Syscall.close(signalFD) }
        siginfoBuffer.deallocate()
        #endif
    }

    /// The descriptors to watch for readability.
    public var descriptors: [Int32] {
        #if os(Linux)
        return signalFD >= 0 ? [pipeRead, signalFD] : [pipeRead]
        #else
        return [pipeRead]
        #endif
    }

    /// Routes `signals` to `handler`. ``descriptors`` may have grown afterwards.
    public func register(_ signals: [Int32], _ handler: @escaping (Int32) -> Void) throws {
        for signo in signals {
            guard signo > 0, Int(signo) < signalTableSize, signo != SIGKILL, signo != SIGSTOP else {
                throw SystemError(operation: "onSignals(\(signo))", errno: .invalidArgument)
            }
        }
        var set = sigset_t()
        _ = signals.withUnsafeBufferPointer { wl_sigset_fill_from(&set, $0.baseAddress, Int32($0.count)) }

        if delivery == .signalDescriptor {
            #if os(Linux)
            try Self.setMask(SIG_BLOCK, &set)
            for signo in signals { sigaddset(&blocked, signo) }
            if signalFD < 0 {
                signalFD = try Syscall.retrying("signalfd") {
                    signalfd(-1, &blocked, Int32(SFD_NONBLOCK) | Int32(SFD_CLOEXEC))
                }
            } else {
                let fd = signalFD
                _ = try Syscall.retrying("signalfd") {
                    signalfd(fd, &blocked, Int32(SFD_NONBLOCK) | Int32(SFD_CLOEXEC))
                }
            }
            #endif
        }

        for signo in signals {
            handlers[signo] = handler
            wl_atomic_store_int(signalPipeTable + Int(signo), pipeWrite)
            if previousActions[signo] == nil {
                var previous = sigaction()
                _ = try Syscall.retrying("sigaction(\(signo))") {
                    wl_sigaction_install(signo, forwardSignalToPipe, &previous)
                }
                previousActions[signo] = previous
            }
        }

        if delivery == .selfPipe {
            try Self.setMask(SIG_UNBLOCK, &set)
        }
    }

    /// Reads what is pending on `fd` and calls the handlers, in arrival order.
    public func drain(_ fd: Int32) {
        if fd == pipeRead {
            var bytes: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
            while true {
                let count = withUnsafeMutableBytes(of: &bytes) { buffer in
                    (try? Syscall.read(pipeRead, buffer.baseAddress!, buffer.count)) ?? nil
                }
                guard let count, count > 0 else { return }
                withUnsafeBytes(of: &bytes) { buffer in
                    for index in 0..<count { deliver(Int32(buffer[index])) }
                }
                if count < MemoryLayout.size(ofValue: bytes) { return }
            }
        }
        #if os(Linux)
        if fd == signalFD {
            let size = MemoryLayout<signalfd_siginfo>.stride
            while true {
                let count = (try? Syscall.read(signalFD, siginfoBuffer, size * Self.siginfoCapacity)) ?? nil
                guard let count, count >= size else { return }
                for index in 0..<(count / size) {
                    deliver(Int32(bitPattern: siginfoBuffer[index].ssi_signo))
                }
                if count < size * Self.siginfoCapacity { return }
            }
        }
        #endif
    }

    private func deliver(_ signo: Int32) {
        handlers[signo]?(signo)
    }

    private static func setMask(_ how: Int32, _ set: inout sigset_t) throws {
        let result = pthread_sigmask(how, &set, nil)
        if result != 0 {
            throw SystemError(operation: "pthread_sigmask", errno: Errno(rawValue: result))
        }
    }
}
