import FuzzSupport

/// Without `--sanitize=fuzzer`: replays the files named on the command line.
@_cdecl("FuzzHTTP2Session_main")
public func replayMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    replay(target: "FuzzHTTP2Session", argc: argc, argv: argv, fuzz)
}
