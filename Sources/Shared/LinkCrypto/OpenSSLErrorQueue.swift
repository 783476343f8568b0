import CCrypto

/// OpenSSL's per-thread error queue.
public enum OpenSSLErrorQueue {
    /// The text of OpenSSL's queued errors for this thread, emptying the queue.
    public static func describeAndClear() -> String {
        let messages = takeMessages()
        return messages.isEmpty ? "no OpenSSL error queued" : messages.joined(separator: "; ")
    }

    /// OpenSSL's queued errors for this thread, oldest first, emptying the queue.
    public static func takeMessages() -> [String] {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var text = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &text, text.count)
            messages.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages
    }
}
