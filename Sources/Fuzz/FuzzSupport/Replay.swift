#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The `main` of a fuzz target built without `--sanitize=fuzzer` (where libFuzzer provides
/// `main`): runs each file named on the command line through `fuzz` once, so a crash
/// reproducer can be replayed with an ordinary debug build.
public func replay(
    target: String, argc: CInt, argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>,
    _ fuzz: (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt {
    let paths = (1..<Int(argc)).compactMap { argv[$0].map { String(cString: $0) } }
    guard !paths.isEmpty else {
        print("usage: \(target) FILE...  (scripts/fuzz.sh builds this target with libFuzzer)")
        return 2
    }
    for path in paths {
        guard let contents = FileManager.default.contents(atPath: path) else {
            print("cannot read \(path)")
            return 1
        }
        let bytes = [UInt8](contents)
        _ = bytes.withUnsafeBufferPointer { buffer in
            fuzz(buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!, buffer.count)
        }
        print("ran \(path) (\(bytes.count) bytes)")
    }
    return 0
}
