import Foundation
import LinkJSON
import WatchLinkClient

/// The File Provider system of this process: the attached extensions by domain, and the
/// `fileProvider.signalEnumerator` events of the process's connection to phoned, handed to
/// them; their completion goes back as `fileProvider.complete`.
final class FileProviderSystem: Sendable {
    static let shared = FileProviderSystem()
    static let framework = "FileProvider"

    private final class Attachment: @unchecked Sendable {
        weak var receiver: (any WatchLinkSignalReceiver)?
        let queue: DispatchQueue

        init(_ receiver: any WatchLinkSignalReceiver, queue: DispatchQueue) {
            self.receiver = receiver
            self.queue = queue
        }
    }

    /// Domain identifier (`""`: the default domain) → its attachment.
    private let attachments = Locked([String: Attachment]())

    private static func key(_ domain: String?) -> String { domain ?? "" }

    func attach(_ receiver: any WatchLinkSignalReceiver, to domain: NSFileProviderDomain?, queue: DispatchQueue?) throws {
        let connection: SystemConnection
        switch SystemConnection.shared(framework: Self.framework) {
        case .success(let shared): connection = shared
        case .failure(let failure): throw NSFileProviderError(.providerNotFound, failure.description)
        }
        connection.addEventHandler(key: Self.framework) { [self] event in
            guard event.name == "fileProvider.signalEnumerator" else { return }
            signalled(event.data, on: connection)
        }
        let name = domain?.identifier.rawValue
        let attachment = Attachment(receiver, queue: queue ?? DispatchQueue(label: "FileProvider.extension \(name ?? "(default domain)")"))
        (receiver as? NSFileProviderExtension)?.setDomain(domain)
        attachments.withLock { $0[Self.key(name)] = attachment }
        // phoned hands this process the domain's signals from now on, those not answered first:
        // a `fileprovider` push runs the installed extension, which attaches here.
        var args: JSONObject = [:]
        if let name { args["domain"] = .string(name) }
        connection.client.send("fileProvider.attach", args) { result in
            if case .failure(let failure) = result { Self.warn("cannot attach the extension of \(name ?? "the default domain"): \(failure)") }
        }
    }

    func detach(_ receiver: any WatchLinkSignalReceiver) {
        attachments.withLock { attachments in
            attachments = attachments.filter { $0.value.receiver.map { $0 !== receiver } ?? false }
        }
    }

    /// One signal: the domain's receiver runs, and its completion is reported once.
    private func signalled(_ data: JSONObject, on connection: SystemConnection) {
        guard let seq = data["seq"]?.intValue, let identifier = data["containerIdentifier"]?.stringValue else { return }
        let domain = data["domain"]?.stringValue
        guard let attachment = attachments.withLock({ $0[Self.key(domain)] }) else { return }
        let reported = Locked(false)
        let completion: @Sendable ((any Error)?) -> Void = { error in
            guard
                reported.withLock({ done in
                    defer { done = true }; return !done
                })
            else {
                return Self.warn("the completion handler of signal \(seq) was called again; only the first call counts")
            }
            var args: JSONObject = ["seq": .int(seq)]
            if let error {
                let bridged = error as NSError
                args["error"] = [
                    "domain": .string(bridged.domain), "code": .int(Int64(bridged.code)),
                    "message": .string(bridged.localizedDescription),
                ]
            }
            connection.client.send("fileProvider.complete", args) { result in
                if case .failure(let failure) = result { Self.warn("cannot report signal \(seq) done: \(failure)") }
            }
        }
        attachment.queue.async {
            guard let receiver = attachment.receiver else { return }
            receiver.didSignalEnumerator(
                for: NSFileProviderItemIdentifier(identifier), in: domain.map { NSFileProviderDomainIdentifier($0) },
                completionHandler: completion)
        }
    }

    /// Writes a line to standard error: what a device would log to the console.
    static func warn(_ text: String) {
        FileHandle.standardError.write(Data("\(framework): \(text)\n".utf8))
    }
}
