import LinkControl
import LinkSession
import WireProtocol

/// Guaranteed delivery: userInfo, complication userInfo and the application context.
struct QueuedOperations {
    let context: FeatureContext

    var operations: [ControlOperation] {
        [
            ControlOperation(
                "userInfo.transfer", summary: "transferUserInfo: queued, in order, exactly once",
                arguments: [.required("userInfo", .object)]
            ) { call in
                context.submit(.transferUserInfo(try call.args.dictionaryPayload("userInfo")), answering: call)
            },
            ControlOperation(
                "complication.transfer", summary: "transferCurrentComplicationUserInfo: ahead of the budget, then as userInfo",
                arguments: [.required("userInfo", .object)]
            ) { call in
                context.submit(.transferComplicationUserInfo(try call.args.dictionaryPayload("userInfo")), answering: call)
            },
            ControlOperation("userInfo.outstanding", summary: "outstandingUserInfoTransfers") { call in
                context.submit(.outstandingTransfers, answering: call)
            },
            ControlOperation(
                "userInfo.cancel", summary: "cancel() of a userInfo transfer not yet delivered",
                arguments: [.required("transferId", .string)]
            ) { call in
                context.submit(.cancelTransfer(transferId: try call.args.string("transferId")), answering: call)
            },
            ControlOperation(
                "transfer.timeOut", summary: "fault: a userInfo or file transfer not yet on the link fails with 7017",
                arguments: [.required("transferId", .string)]
            ) { call in
                context.submit(.timeOutTransfer(transferId: try call.args.string("transferId")), answering: call)
            },
            ControlOperation(
                "context.update", summary: "updateApplicationContext: the latest value wins",
                arguments: [.required("context", .object)]
            ) { call in
                context.submit(.updateApplicationContext(try call.args.dictionaryPayload("context")), answering: call)
            },
            ControlOperation("context.get", summary: "applicationContext and receivedApplicationContext") { call in
                context.submit(.applicationContext, answering: call)
            },
        ]
    }
}
