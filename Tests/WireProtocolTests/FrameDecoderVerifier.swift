import WireProtocol
import TestSupport
import XCTest

/// Feeds the same bytes to a ``FrameDecoder`` in many ways and checks that every way yields
/// the same frames and, if expected, the same error, like swift-nio's ByteToMessageDecoderVerifier.
enum FrameDecoderVerifier {
    enum Outcome: Equatable {
        case frames([Frame], pendingBytes: Int)
        case failed(framesBefore: [Frame], FrameDecodingError)
    }

    /// The seeds of the random splits: 1...25, or only WATCHLINK_SEED when it is set (printed once).
    static let randomSplitSeeds = testSeeds(default: 1...25, test: "FrameDecoderVerifier random splits")

    /// Checks that every way of feeding `input` gives `expected`.
    static func verify(_ input: [UInt8], expected: Outcome,
                       maximumFrameLength: UInt32 = FrameDecoder.defaultMaximumFrameLength,
                       file: StaticString = #filePath, line: UInt = #line) {
        var strategies: [(String, [[UInt8]])] = [
            ("all at once", [input]),
            ("byte by byte", input.map { [$0] }),
        ]
        for seed in randomSplitSeeds {
            strategies.append(("random splits, seed \(seed)", randomSplits(of: input, seed: seed)))
        }
        for (name, chunks) in strategies {
            let outcome = feed(chunks, maximumFrameLength: maximumFrameLength, useRawPointers: false)
            XCTAssertEqual(outcome, expected, "strategy: \(name)", file: file, line: line)
            let decoded = feedDecoding(chunks, maximumFrameLength: maximumFrameLength)
            XCTAssertEqual(decoded, expected, "strategy: \(name), through decode(_:_:)", file: file, line: line)
        }
        let rawOutcome = feed(randomSplits(of: input, seed: 99), maximumFrameLength: maximumFrameLength, useRawPointers: true)
        XCTAssertEqual(rawOutcome, expected, "strategy: random splits through UnsafeRawBufferPointer, seed 99", file: file, line: line)
    }

    static func randomSplits(of input: [UInt8], seed: UInt64) -> [[UInt8]] {
        var generator = SeededGenerator(seed: seed)
        var chunks: [[UInt8]] = []
        var index = 0
        while index < input.count {
            let maximumChunk = Bool.random(using: &generator) ? 8 : 200
            let length = min(Int.random(in: 0...maximumChunk, using: &generator), input.count - index)
            chunks.append(Array(input[index..<index + length]))
            index += length
        }
        return chunks
    }

    /// Hands each chunk to `decode(_:_:)`, the copy-free path.
    static func feedDecoding(_ chunks: [[UInt8]], maximumFrameLength: UInt32) -> Outcome {
        var decoder = FrameDecoder(maximumFrameLength: maximumFrameLength)
        var frames: [Frame] = []
        for chunk in chunks {
            do {
                try chunk.withUnsafeBytes { raw in
                    try decoder.decode(raw) { frame in
                        frames.append(frame)
                        return true
                    }
                }
            } catch let error as FrameDecodingError {
                return .failed(framesBefore: frames, error)
            } catch {
                XCTFail("unexpected error type \(error)")
                return .frames(frames, pendingBytes: -1)
            }
        }
        return .frames(frames, pendingBytes: decoder.bufferedByteCount)
    }

    /// Appends each chunk and drains every frame available after it.
    static func feed(_ chunks: [[UInt8]], maximumFrameLength: UInt32, useRawPointers: Bool) -> Outcome {
        var decoder = FrameDecoder(maximumFrameLength: maximumFrameLength)
        var frames: [Frame] = []
        for chunk in chunks {
            if useRawPointers {
                chunk.withUnsafeBytes { decoder.append($0) }
            } else {
                decoder.append(chunk)
            }
            do {
                while let frame = try decoder.next() {
                    frames.append(frame)
                }
            } catch let error as FrameDecodingError {
                return .failed(framesBefore: frames, error)
            } catch {
                XCTFail("unexpected error type \(error)")
                return .frames(frames, pendingBytes: -1)
            }
        }
        return .frames(frames, pendingBytes: decoder.bufferedByteCount)
    }
}
