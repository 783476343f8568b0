import LinkCrypto
import LinkRuntime
import LinkSession
import LinkSystem
import WireProtocol

/// Sending a file: the copy into the outbox, a few MiB a loop turn, hashed on the way.
extension FileTransferEngine {
    func startCopy(token: RequestToken, source: String, destination: String) {
        let input: RandomAccessFile
        do {
            input = try RandomAccessFile(path: source, mode: .read)
            guard try input.isRegularFile else {
                return finishCopy(token, .failure(.wc(.fileAccessDenied, "\(source) is not a regular file")))
            }
        } catch {
            return finishCopy(token, .failure(.wc(.fileAccessDenied, "cannot read \(source): \(error.errno)")))
        }
        let output: RandomAccessFile
        do {
            output = try RandomAccessFile(path: destination, mode: .createNew)
        } catch {
            return finishCopy(token, .failure(Self.writeFailure(destination, error)))
        }
        let digest = SHA256Digest()
        var total: UInt64 = 0
        func fail(_ error: SessionError) {
            input.close()
            output.close()
            _ = try? FileSystem.removeFile(destination)
            finishCopy(token, .failure(error))
        }
        func step() {
            var budget = Self.copyBytesPerTurn
            while budget > 0 {
                let count: Int
                do {
                    count = try input.read(into: buffer)
                } catch {
                    return fail(.wc(.fileAccessDenied, "cannot read \(source): \(error.errno)"))
                }
                if count == 0 {
                    do {
                        try output.synchronize()
                        output.close()
                        input.close()
                        try FileSystem.synchronizeDirectory(paths.outboxDirectory)
                    } catch {
                        return fail(Self.writeFailure(destination, error))
                    }
                    logger.debug("file: copied \(source) (\(total) bytes) to \(destination)")
                    return finishCopy(token, .success(CopiedFile(totalBytes: total, sha256: digest.finalize())))
                }
                let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
                do {
                    try output.write(bytes)
                } catch {
                    return fail(Self.writeFailure(destination, error))
                }
                digest.update(bytes)
                total += UInt64(count)
                budget -= count
            }
            // Written back a step at a time, so that the final sync does not block the loop
            // for as long as the whole file takes to reach the disk.
            do { try output.synchronizeData() } catch { return fail(Self.writeFailure(destination, error)) }
            loop.execute(step)
        }
        loop.execute(step)
    }

    private func finishCopy(_ token: RequestToken, _ result: Result<CopiedFile, SessionError>) {
        loop.execute { [weak self] in self?.copyFinished?(token, result) }
    }

    private static func writeFailure(_ path: String, _ error: Error) -> SessionError {
        if let error = error as? SystemError, error.errno.isNoSpace {
            return .wc(.insufficientSpace, "not enough space for the outbox copy \(path): \(error.errno); nothing of it was kept")
        }
        return .wc(.genericError, "cannot write the outbox copy \(path): \(error)")
    }
}
