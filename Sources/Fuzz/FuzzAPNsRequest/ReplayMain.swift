import FuzzSupport

/// Without `--sanitize=fuzzer`: replays the files named on the command line.
@_cdecl("FuzzAPNsRequest_main")
public func replayMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    replay(target: "FuzzAPNsRequest", argc: argc, argv: argv, fuzz)
}
