import LinkStore
import WireProtocol

/// `didFinish` of the app's userInfo and file transfers, also when the app was not running as
/// they finished: "Will be called on next launch if the sender was not running when the user
/// info finished" (`WCSession.h`, `session:didFinishUserInfoTransfer:error:`; the same for
/// files).
///
/// A transfer is the app's when an app process was attached as it was accepted
/// (``ItemFlags/madeByApp``). One that finishes while no app process is attached is kept in
/// the store (``FinishedTransfer``) under a number of the receiver's `seq` counter, and handed
/// to the next app process with the received items, in `seq` order, once the session is
/// activated; the app acknowledges it (`app.acknowledge`) once its delegate returned, as it
/// does a received item, so a kill before that tells it again at the following launch. An app
/// process that did not make a transfer it is told of (made in an earlier launch) gets what it
/// needs to make the transfer object anew: the userInfo, or the file's name and metadata.
extension LinkSession {
    /// The most finished transfers kept for an app that is not running; the oldest go first.
    public static let maximumFinishedWhileAway = 1_000

    /// A userInfo or file transfer left the queue: delivered (`error` nil) or failed.
    func transferFinished(_ item: OutboundItem, error: SessionError?) {
        let madeByTheAttachedApp = transfersOfTheAttachedApp.remove(item.transferId) != nil
        var earlier: EarlierTransfer?
        if item.flags.contains(.madeByApp) {
            if attachedApp == nil {
                keepForTheNextLaunch(item, error: error)
            } else if !madeByTheAttachedApp {
                earlier = earlierTransfer(item, seq: nil)
            }
        }
        switch item.channel {
        case .file: actions.append(.notify(.file(.didFinish(transferId: item.transferId, error: error, earlier: earlier))))
        default: actions.append(.notify(.userInfoDidFinish(transferId: item.transferId, error: error, earlier: earlier)))
        }
    }

    private func keepForTheNextLaunch(_ item: OutboundItem, error: SessionError?) {
        var code: Int?, message: String?
        if let error {
            switch error {
            case .wc(let wcCode, let text): (code, message) = (wcCode.rawValue, text)
            case .invalidArgument(let text): (code, message) = (WCErrorCode.genericError.rawValue, text)
            }
        }
        let record = FinishedTransfer(
            seq: allocateReceivedSeq(), channel: item.channel, transferId: item.transferId, payload: item.payload,
            flags: item.flags, errorCode: code, errorMessage: message, finishedAt: configuration.wallClock())
        finishedWhileAway.append(record)
        actions.append(.persist(.recordFinished(record)))
        if finishedWhileAway.count > Self.maximumFinishedWhileAway {
            let dropped = finishedWhileAway.removeFirst()
            actions.append(.persist(.removeFinished(upTo: dropped.seq)))
        }
    }

    /// What the app needs to make the transfer object of `item` anew.
    func earlierTransfer(_ item: OutboundItem, seq: UInt64?) -> EarlierTransfer {
        switch item.channel {
        case .file:
            let header = try? FileHeader(decoding: item.payload)
            return EarlierTransfer(
                payload: header?.metadata ?? [], isCurrentComplicationInfo: false,
                file: .init(path: filePaths.outbox(item.transferId), name: header?.name ?? item.transferId, totalBytes: header?.totalBytes ?? 0),
                seq: seq)
        default:
            return EarlierTransfer(
                payload: item.payload, isCurrentComplicationInfo: item.flags.contains(.currentComplication), file: nil, seq: seq)
        }
    }

    /// Tells the attached app of a transfer that finished while it was not running.
    func notifyFinishedWhileAway(_ record: FinishedTransfer) {
        let item = OutboundItem(
            channel: record.channel, seq: 0, transferId: record.transferId, payload: record.payload, flags: record.flags,
            createdAt: record.finishedAt)
        let error = record.errorCode.map { code in
            SessionError.wc(WCErrorCode(rawValue: code) ?? .genericError, record.errorMessage ?? "")
        }
        let earlier = earlierTransfer(item, seq: record.seq)
        switch record.channel {
        case .file: actions.append(.notify(.file(.didFinish(transferId: record.transferId, error: error, earlier: earlier))))
        default: actions.append(.notify(.userInfoDidFinish(transferId: record.transferId, error: error, earlier: earlier)))
        }
    }

    /// The app acknowledged everything handed up to `seq`: those finished transfers are told.
    func finishedWhileAwayAcknowledged(upTo seq: UInt64) {
        guard let first = finishedWhileAway.first, first.seq <= seq else { return }
        finishedWhileAway.removeAll { $0.seq <= seq }
        actions.append(.persist(.removeFinished(upTo: seq)))
    }

    /// The flags of an item the app (or the daemon playing it) accepts now.
    var acceptedItemFlags: ItemFlags { attachedApp != nil ? [.madeByApp] : [] }

    /// An item accepted now: the attached app knows its transfer object.
    func noteAccepted(_ item: OutboundItem) {
        if item.flags.contains(.madeByApp) { transfersOfTheAttachedApp.insert(item.transferId) }
    }
}
