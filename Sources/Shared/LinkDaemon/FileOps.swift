#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkControl
import LinkJSON
import LinkSession
import LinkStore
import WireProtocol

/// The file transfer ops (`file.transfer`, `file.outstanding`, `file.cancel`) and the
/// rendering of their results and events.
enum FileOps {
    static let names = ["file.transfer", "file.outstanding", "file.cancel"]

    static func dispatch(_ request: ControlRequest, args: Arguments, client: ControlClientConnection, daemon: Daemon) throws {
        switch request.op {
        case "file.transfer":
            try args.rejectUnknownKeys(allowed: ["path", "metadata"])
            let path = try args.string("path")
            guard path.hasPrefix("/"), !path.utf8.contains(0) else {
                throw ControlError.control(.invalidArgument, "file.transfer: 'path' must be an absolute path; got '\(path)'")
            }
            let metadata = args.value("metadata") != nil ? try ControlOps.dictionaryPayload(args, key: "metadata") : nil
            daemon.submit(.file(.transfer(path: path, metadata: metadata)), client: client, request: request)
        case "file.outstanding":
            try args.rejectUnknownKeys(allowed: [])
            daemon.submit(.file(.outstanding), client: client, request: request)
        case "file.cancel":
            try args.rejectUnknownKeys(allowed: ["transferId"])
            daemon.submit(.file(.cancel(transferId: try args.string("transferId"))), client: client, request: request)
        default:
            throw ControlError.control(.unknownOp, "unknown op '\(request.op)' (file ops: \(names.joined(separator: ", ")))")
        }
    }

    static func render(_ transfers: [OutstandingFileTransfer]) -> JSONObject {
        ["transfers": .array(transfers.map { transfer in
            .object([
                "transferId": .string(transfer.transferId),
                "path": .string(transfer.path),
                "metadata": ControlOps.dictionaryJSON(transfer.metadata),
                "totalBytes": .int(Int64(clamping: transfer.totalBytes)),
                "completedBytes": .int(Int64(clamping: transfer.completedBytes)),
                "isTransferring": .bool(transfer.isTransferring),
            ])
        })]
    }

    /// A received file as `received.list` and `file.received` show it.
    static func render(_ file: ReceivedFile) -> JSONObject {
        ["seq": .int(Int64(file.seq)), "kind": "file", "transferId": .string(file.transferId), "path": .string(file.path),
         "metadata": ControlOps.dictionaryJSON(file.metadata), "totalBytes": .int(Int64(clamping: file.totalBytes))]
    }

    /// A received file's inbox row as `received.list` shows it.
    static func render(_ item: InboxItem) -> JSONObject {
        guard let file = ReceivedFile(seq: item.seq, payload: item.payload) else {
            return ["seq": .int(Int64(item.seq)), "kind": "file"]
        }
        return render(file)
    }

    static func render(_ notification: FileNotification) -> (String, JSONObject) {
        switch notification {
        case .progress(let transferId, let completed, let total):
            return ("file.progress", ["transferId": .string(transferId), "completedBytes": .int(Int64(clamping: completed)),
                                      "totalBytes": .int(Int64(clamping: total))])
        case .didFinish(let transferId, let error):
            var data: JSONObject = ["transferId": .string(transferId)]
            if let error { data["error"] = ControlOps.controlError(error).json }
            return ("file.didFinish", data)
        case .received(let file):
            return ("file.received", render(file))
        case .problem(let text):
            return ("file.problem", ["message": .string(text)])
        }
    }
}
