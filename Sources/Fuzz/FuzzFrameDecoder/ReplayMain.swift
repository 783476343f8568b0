import FuzzSupport

/// Without `--sanitize=fuzzer`: replays the files named on the command line.
@_cdecl("FuzzFrameDecoder_main")
public func replayMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    replay(target: "FuzzFrameDecoder", argc: argc, argv: argv, fuzz)
}
