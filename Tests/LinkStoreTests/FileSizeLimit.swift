#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Runs `body` with the process's file size limit (`RLIMIT_FSIZE`) lowered to `bytes` and
/// `SIGXFSZ` ignored, so that writes past the limit fail with `EFBIG` as they do on a full
/// disk. Both are restored afterwards.
func withFileSizeLimit<R>(_ bytes: Int, _ body: () throws -> R) throws -> R {
    #if os(Linux)
    let resource = __rlimit_resource_t(RLIMIT_FSIZE.rawValue)
    #else
    let resource = RLIMIT_FSIZE
    #endif
    var saved = rlimit()
    guard getrlimit(resource, &saved) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    var limited = saved
    limited.rlim_cur = rlim_t(bytes)
    let savedHandler = signal(SIGXFSZ, SIG_IGN)
    defer { signal(SIGXFSZ, savedHandler) }
    guard setrlimit(resource, &limited) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    defer { setrlimit(resource, &saved) }
    return try body()
}
