import FuzzSupport

/// Without `--sanitize=fuzzer`: replays the files named on the command line.
@_cdecl("FuzzPowerAuthPacket_main")
public func replayMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    replay(target: "FuzzPowerAuthPacket", argc: argc, argv: argv, fuzz)
}
