#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LinkSimulation
import LinkSystem

/// linksim [--seeds N | --seconds S] [--seed S] [--check-determinism K] [--progress FILE] [--quiet]
///
/// With --seeds or --seconds: runs worlds from seed S on (S drawn from the clock when not
/// given), each `K`th twice (their event hashes must match), and prints the seeds, schedules,
/// schedules a second, steps and frames per schedule and the rare states reached. A failing
/// seed is printed with the command that replays it. With --seed alone: runs that one world
/// and prints every event of it.
struct Arguments {
    var seeds: Int?
    var seconds: Double?
    var seed: UInt64?
    var determinismEvery = 64
    var progressPath: String?

    init(_ arguments: [String]) {
        var index = 0
        func number<T: LosslessStringConvertible>(_ type: T.Type) -> T {
            guard let parsed = T(value()) else { usage("\(arguments[index - 1]) takes a number") }
            return parsed
        }
        func value() -> String {
            index += 1
            guard index < arguments.count else { usage("\(arguments[index - 1]) needs a value") }
            return arguments[index]
        }
        while index < arguments.count {
            switch arguments[index] {
            case "--seeds": seeds = number(Int.self)
            case "--seconds": seconds = number(Double.self)
            case "--seed": seed = number(UInt64.self)
            case "--check-determinism": determinismEvery = number(Int.self)
            case "--progress": progressPath = value()
            case "--help", "-h":
                print("usage: linksim [--seeds N | --seconds S] [--seed S] [--check-determinism K] [--progress FILE]")
                exit(0)
            default: usage("unknown argument \(arguments[index])")
            }
            index += 1
        }
    }
}

func usage(_ message: String) -> Never {
    print("linksim: \(message)")
    exit(2)
}

func replayCommand(_ seed: UInt64) -> String { "scripts/simulate.sh --seed \(seed)" }

func replay(_ seed: UInt64) -> Int32 {
    let world = SimWorld(seed: seed)
    print("seed \(seed): \(world.options)")
    world.traceLine = { print($0) }
    let failures = world.run()
    print("seed \(seed): \(world.steps) steps, \(world.frames) frames, event hash \(String(world.hash, radix: 16))")
    for failure in failures { print("FAILED: \(failure)") }
    print(failures.isEmpty ? "seed \(seed) passed" : "seed \(seed) failed")
    return failures.isEmpty ? 0 : 1
}

let arguments = Arguments(Array(CommandLine.arguments.dropFirst()))
if arguments.seeds == nil && arguments.seconds == nil {
    guard let seed = arguments.seed else { usage("give --seeds N, --seconds S or --seed S") }
    exit(replay(seed))
}

let start = arguments.seed ?? (Syscall.monotonicNanoseconds() ^ UInt64(Syscall.realtime().tv_nsec)) % 1_000_000_000_000
let progress = arguments.progressPath.flatMap { try? Syscall.open($0, O_WRONLY | O_CREAT | O_TRUNC, 0o644) }
let coverage = SimCoverage()
let began = Syscall.monotonicNanoseconds()
let deadline = arguments.seconds.map { began + UInt64($0 * 1e9) }
var schedules = 0
var steps = 0
var frames = 0
var twice = 0
var seed = start
var failed: [UInt64] = []
/// Worlds on SQLite and the time they took (their own rate is printed).
var sqliteSchedules = 0
var sqliteNanoseconds: UInt64 = 0
print("linksim: seeds from \(start)")
while true {
    if let count = arguments.seeds, schedules >= count { break }
    if let deadline, Syscall.monotonicNanoseconds() >= deadline { break }
    if let progress {
        let text = Array("\(seed)\n".utf8)
        _ = text.withUnsafeBytes { try? Syscall.pwrite(progress, $0.baseAddress!, $0.count, 0) }
    }
    let worldBegan = Syscall.monotonicNanoseconds()
    let world = SimWorld(seed: seed, coverage: coverage)
    let failures = world.run()
    if world.options.onSQLite {
        sqliteSchedules += 1
        sqliteNanoseconds += Syscall.monotonicNanoseconds() - worldBegan
    }
    schedules += 1
    steps += world.steps
    frames += world.frames
    if !failures.isEmpty {
        print("FAILED seed \(seed): \(failures.count) failure(s), the first: \(failures[0])")
        print("replay it with its trace: \(replayCommand(seed))")
        failed.append(seed)
        if failed.count >= 3 { break }
    } else if arguments.determinismEvery > 0, schedules % arguments.determinismEvery == 0 {
        let again = SimWorld(seed: seed)
        _ = again.run()
        twice += 1
        if again.hash != world.hash {
            print("FAILED seed \(seed): not deterministic (event hashes \(String(world.hash, radix: 16)) and \(String(again.hash, radix: 16)))")
            print("replay it with its trace: \(replayCommand(seed))")
            failed.append(seed)
        }
    }
    seed &+= 1
}
let elapsed = Double(Syscall.monotonicNanoseconds() - began) / 1e9
let per = Double(max(schedules, 1))
let rate: Double = Double(schedules) / max(elapsed, 1e-9)
let seconds: String = tenths(elapsed)
let perSecond: String = String(Int(rate.rounded()))
print("linksim: seeds \(start)...\(seed &- 1): \(schedules) schedules in \(seconds) s, \(perSecond) schedules/s")
let stepsEach: String = String(Int((Double(steps) / per).rounded()))
let framesEach: String = String(Int((Double(frames) / per).rounded()))
let sqliteSeconds = Double(sqliteNanoseconds) / 1e9
let otherRate = Double(schedules - sqliteSchedules) / max(elapsed - sqliteSeconds, 1e-9)
let sqliteRate = Double(sqliteSchedules) / max(sqliteSeconds, 1e-9)
print(
    "linksim: \(sqliteSchedules) schedules on SQLite, \(Int(sqliteRate.rounded())) schedules/s; "
        + "the others \(Int(otherRate.rounded())) schedules/s")
print("linksim: per schedule \(stepsEach) steps, \(framesEach) frames; \(twice) seeds run twice with equal event hashes")
print("linksim: rare states reached:")
for mark in SimCoverage.Mark.allCases {
    print("  \(String(coverage.count(of: mark)).leftPadded(8))  \(mark.rawValue)")
}
if let progress { Syscall.close(progress) }
if !failed.isEmpty {
    print("linksim: \(failed.count) seed(s) failed: \(failed.map(String.init).joined(separator: " "))")
    exit(1)
}
print("linksim: every seed passed")

func tenths(_ value: Double) -> String {
    let tenths = Int((value * 10).rounded())
    return "\(tenths / 10).\(tenths % 10)"
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
