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
    static func verify(
        _ input: [UInt8], expected: Outcome,
        maximumFrameLength: UInt32 = FrameDecoder.defaultMaximumFrameLength,
        file: StaticString = #filePath, line: UInt = #line
    ) {
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
            let scattered = feedScattered(chunks, maximumFrameLength: maximumFrameLength)
            XCTAssertEqual(scattered, expected, "strategy: \(name), through readExpectedFrames", file: file, line: line)
        }
        // Reads that each hold whole frames, as a round trip's do: the expected frame's payload
        // is read in place whenever the guess is right.
        for framesPerRead in [1, 2, 3] {
            let chunks = wholeFrameReads(of: input, framesPerRead: framesPerRead)
            let scattered = feedScattered(chunks, maximumFrameLength: maximumFrameLength)
            XCTAssertEqual(
                scattered, expected, "strategy: \(framesPerRead) whole frames a read, through readExpectedFrames",
                file: file, line: line)
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
        outcome(maximumFrameLength: maximumFrameLength) { decoder, frames in
            for chunk in chunks {
                try chunk.withUnsafeBytes { raw in
                    try decoder.decode(raw) {
                        frames.append($0); return true
                    }
                }
            }
        }
    }

    /// What feeding the decoder with `body` came to: the frames it decoded and the bytes left,
    /// or the frames before the error it threw.
    private static func outcome(
        maximumFrameLength: UInt32,
        _ body: (inout FrameDecoder, inout [Frame]) throws -> Void
    ) -> Outcome {
        var decoder = FrameDecoder(maximumFrameLength: maximumFrameLength)
        var frames: [Frame] = []
        do {
            try body(&decoder, &frames)
        } catch let error as FrameDecodingError {
            return .failed(framesBefore: frames, error)
        } catch {
            XCTFail("unexpected error type \(error)")
            return .frames(frames, pendingBytes: -1)
        }
        return .frames(frames, pendingBytes: decoder.bufferedByteCount)
    }

    /// The input cut at frame boundaries, `framesPerRead` frames a piece (what follows a length
    /// prefix that cannot be followed is one last piece).
    static func wholeFrameReads(of input: [UInt8], framesPerRead: Int) -> [[UInt8]] {
        var chunks: [[UInt8]] = []
        var start = 0
        var index = 0
        var frames = 0
        while input.count - index >= 4 {
            let length = input[index..<index + 4].reduce(0) { $0 << 8 | Int($1) }
            guard length > 0, input.count - index - 4 >= length else { break }
            index += 4 + length
            frames += 1
            if frames == framesPerRead {
                chunks.append(Array(input[start..<index]))
                start = index
                frames = 0
            }
        }
        if start < input.count { chunks.append(Array(input[start...])) }
        return chunks
    }

    /// Hands each chunk over as a connection reading with ``FrameDecoder/readExpectedFrames(_:)``
    /// would: whenever the decoder expects a frame, the chunk fills the lent heads and payloads
    /// first and then a buffer of the read's own.
    static func feedScattered(_ chunks: [[UInt8]], maximumFrameLength: UInt32) -> Outcome {
        outcome(maximumFrameLength: maximumFrameLength) { decoder, frames in
            for chunk in chunks {
                guard decoder.expectsFrame else {
                    try chunk.withUnsafeBytes { raw in
                        try decoder.decode(raw) {
                            frames.append($0); return true
                        }
                    }
                    continue
                }
                var rest = [UInt8](repeating: 0, count: chunk.count)
                let count = rest.withUnsafeMutableBytes { rest in
                    decoder.readExpectedFrames { parts in scatter(chunk, into: Array(parts) + [rest]) }
                }
                XCTAssertEqual(count, chunk.count)
                try rest.withUnsafeBytes { rest in
                    try decoder.decode(expectedFramesRead: chunk.count, rest: rest) {
                        frames.append($0); return true
                    }
                }
            }
        }
    }

    /// Copies `chunk` into `targets` in order, as a `readv` would; returns the byte count.
    static func scatter(_ chunk: [UInt8], into targets: [UnsafeMutableRawBufferPointer]) -> Int {
        var written = 0
        chunk.withUnsafeBytes { raw in
            for target in targets where written < chunk.count {
                let n = min(target.count, chunk.count - written)
                UnsafeMutableRawBufferPointer(rebasing: target[..<n]).copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[written..<(written + n)]))
                written += n
            }
        }
        return written
    }

    /// Appends each chunk and drains every frame available after it.
    static func feed(_ chunks: [[UInt8]], maximumFrameLength: UInt32, useRawPointers: Bool) -> Outcome {
        outcome(maximumFrameLength: maximumFrameLength) { decoder, frames in
            for chunk in chunks {
                if useRawPointers {
                    chunk.withUnsafeBytes { decoder.append($0) }
                } else {
                    decoder.append(chunk)
                }
                while let frame = try decoder.next() {
                    frames.append(frame)
                }
            }
        }
    }
}
