import FuzzSupport

/// Without `--sanitize=fuzzer`: replays the files named on the command line.
@_cdecl("FuzzControlLine_main")
public func replayMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    replay(target: "FuzzControlLine", argc: argc, argv: argv, fuzz)
}
