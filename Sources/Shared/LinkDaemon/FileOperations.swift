import LinkControl
import LinkSession
import WireProtocol

/// File transfers: `transferFile` with metadata, the outstanding transfers, cancel.
struct FileOperations {
    let context: FeatureContext

    var operations: [ControlOperation] {
        [
            ControlOperation(
                "file.transfer", summary: "transferFile: copied into the outbox, sent in chunks, resumed after faults",
                arguments: [.required("path", .string, "an absolute path"), .optional("metadata", .object)]
            ) { call in
                let path = try call.args.string("path")
                guard path.hasPrefix("/"), !path.utf8.contains(0) else {
                    throw call.args.invalid("'path' must be an absolute path; got '\(path)'")
                }
                let metadata = call.args.contains("metadata") ? try call.args.dictionaryPayload("metadata") : nil
                context.submit(.file(.transfer(path: path, metadata: metadata)), answering: call)
            },
            ControlOperation("file.outstanding", summary: "outstandingFileTransfers, with progress") { call in
                context.submit(.file(.outstanding), answering: call)
            },
            ControlOperation(
                "file.cancel", summary: "cancel() of a file transfer",
                arguments: [.required("transferId", .string)]
            ) { call in
                context.submit(.file(.cancel(transferId: try call.args.string("transferId"))), answering: call)
            },
        ]
    }
}
