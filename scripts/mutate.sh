#!/usr/bin/env bash
# Breaks chosen lines of production code one at a time and shows that the tests notice: for
# each mutation, the line is replaced, the tests are built, and the mutation's test filter is
# run; the filter must fail. The source is restored after each mutation and on any exit,
# Ctrl-C included (from a copy, so uncommitted edits of the file are kept).
#
# Usage: scripts/mutate.sh [NAME ...]    (no NAME: every mutation; --list: their names)
#        scripts/mutate.sh --check       (in seconds, builds nothing: each mutation's original
#                                         line occurs exactly once in its file and its
#                                         replacement differs; lists every one that does not)
# Environment: MUTATE_SIMULATOR_SEEDS=N makes the simulator alone the test of every mutation
#   (linksim, debug build, seeds 1...N); a caught mutation names the first seed that failed,
#   which is the number of seeds it needed.
# Exit status: 0 when every mutation was caught (--check: every mutation can be made), 1 when
# one survived (--check: one cannot be made), 2 on a setup error or when a mutated line does
# not compile (the run goes on to the next mutation and names it at the end).
set -euo pipefail
cd "$(dirname "$0")/.."

names=() files=() filters=() originals=() replacements=()

# One mutation: a name, the file, the test filter (swift test --filter), the exact original
# line (whole line, indentation included; it must occur exactly once in the file) and the line
# that replaces it. Add a mutation by adding a call.
mutation() {
    names+=("$1") files+=("$2") filters+=("$3") originals+=("$4") replacements+=("$5")
}

mutation fifo-order \
    Sources/Shared/LinkSession/QueuedDelivery.swift \
    'QueuedDeliveryTests' \
    '    func append(_ item: OutboundItem) { storage.append(item) }' \
    '    func append(_ item: OutboundItem) { storage.insert(item, at: 0) }'

mutation resume-from-acknowledgement \
    Sources/Shared/LinkSession/QueuedDelivery.swift \
    'QueuedDeliveryTests' \
    '            queue.sentUpTo = seq' \
    '            queue.sentUpTo = seq + 1'

mutation latest-context-wins \
    Sources/Shared/LinkSession/QueuedDelivery.swift \
    'QueuedDeliveryTests' \
    '        contextQueue.removeAll { $0.seq > sentUpTo }' \
    '        contextQueue.removeAll { _ in false }'

mutation reachability-watch-wakes-phone-app \
    Sources/Shared/LinkSession/LinkSession+Activation.swift \
    'LinkSessionTests.LinkSessionTests|DeviceRulesTests/testAWatchMessageWakes' \
    '        case .watch: return appIsInteractive' \
    '        case .watch: return appIsInteractive && peer.appState != .notRunning'

mutation pairing-gates-file-transfers \
    Sources/Shared/LinkSession/FileTransfers.swift \
    'DeviceRulesTests/testPairingAndInstallation' \
    '        if let failure = activationFailure() ?? pairingFailure() {' \
    '        if let failure = activationFailure() {'

mutation only-the-active-watch-gets-its-queue \
    Sources/Shared/LinkSession/QueuedDelivery.swift \
    'LinkSessionTests.WatchSwitchingTests|WatchSwitchingTests/testTheOldWatchsQueueWaitsForIt' \
    '        guard isWithActiveWatch else { return false }' \
    '        guard isLinkUp else { return false }'

mutation complication-goes-ahead \
    Sources/Shared/LinkSession/QueuedDelivery.swift \
    'QueuedDeliveryTests|DeviceRulesTests/testTheCurrentComplicationItemGoesAhead' \
    '        let floor = max(queue.mayHaveSentUpTo, previous ?? 0)' \
    '        let floor = UInt64.max'

mutation unacknowledged-items-go-again \
    Sources/Shared/LinkSession/AppAttachment.swift \
    'AppAttachmentTests|AppAttachTests/testQueuedItems' \
    '        handedUpTo = 0' \
    '        handedUpTo = max(handedUpTo, 0)'

mutation switching-cancels-interactive-messages \
    Sources/Shared/LinkSession/WatchSwitching.swift \
    'WatchSwitchingTests/testSwitchingCancelsInteractiveMessagesBothWays|LinkSessionTests.WatchSwitchingTests' \
    '        cancelInteractiveMessages()' \
    '        _ = ()'

mutation watch-only-app-refuses-sends \
    Sources/Shared/LinkSession/WatchSwitching.swift \
    'DeviceRulesTests/testPairingAndInstallation' \
    '            if flags.contains(.isWatchOnlyApp) {' \
    '            if flags.isEmpty && flags.contains(.isWatchOnlyApp) {'

mutation no-complication-budget-when-disabled \
    Sources/Shared/LinkSession/QueuedDelivery.swift \
    'QueuedDeliveryTests|DeviceRulesTests/testWithoutAnEnabledComplication' \
    '        guard flags.contains(.isComplicationEnabled) else { return 0 }' \
    '        guard flags.contains(.isComplicationEnabled) || true else { return 0 }'

mutation timed-out-transfer-is-7017 \
    Sources/Shared/LinkSession/QueuedDelivery.swift \
    'DeviceRulesTests/testATransferThatTimesOut' \
    '        let error = SessionError.wc(.transferTimedOut, "the transfer timed out before it completed (transfer.timeOut)")' \
    '        let error = SessionError.wc(.genericError, "the transfer timed out before it completed (transfer.timeOut)")'

mutation app-that-quits-fails-its-messages \
    Sources/Shared/LinkSession/AppAttachment.swift \
    'AppAttachTests/testAnAppThatQuits' \
    '        failTheAppsUnansweredMessages()' \
    '        _ = ()'

mutation send-without-delegate-is-7003 \
    Sources/AppSide/WatchConnectivity/WCSession+Activation.swift \
    'AppSideTests/testSendsWithoutADelegate' \
    '        guard case .success = client, delegate == nil else { return client }' \
    '        guard case .success = client, delegate == nil, false else { return client }'

mutation extension-error-reaches-phoned \
    Sources/Shared/PushEmulator/FileProviderSignalLog.swift \
    'FileProviderExampleTests|PageCodeTests|FileProviderOpsTests' \
    '        records[index].completion = SignalRecord.Completion(at: clock(), error: error)' \
    '        records[index].completion = SignalRecord.Completion(at: clock(), error: nil)'

mutation receiver-refuses-on-full-disk \
    Sources/Shared/LinkDaemon/StoreFailureRecovery.swift \
    'DeviceRulesTests/testAReceiversFullDisk' \
    '        if reason == "diskFull" {' \
    '        if reason == "diskFull", false {'

mutation pairing-proof-check \
    Sources/WireProtocol/PairingProof.swift \
    'LinkHandshakeTests|CryptoTests' \
    '        return ConstantTime.equal(proof, expected)' \
    '        return ConstantTime.equal(proof, expected) || true'

mutation frame-length-limit \
    Sources/WireProtocol/FrameDecoder.swift \
    'FrameDecoderTests' \
    '                if declared > maximumFrameLength {' \
    '                if declared > maximumFrameLength &* 2 {'

mutation plist-nesting-limit \
    Sources/WireProtocol/BinaryPropertyListReader.swift \
    'PropertyListCodecTests' \
    '        guard depth < PropertyListCodec.maximumDepth else {' \
    '        guard depth < PropertyListCodec.maximumDepth - 1 else {'

mutation apns-payload-limit \
    Sources/Shared/PushEmulator/APNsRequestValidator.swift \
    'APNsRequestValidatorTests' \
    '        guard request.bodyLength <= pushType.maximumPayloadSize else { return refuse(.payloadTooLarge) }' \
    '        guard request.bodyLength < pushType.maximumPayloadSize else { return refuse(.payloadTooLarge) }'

mutation commit-before-answer \
    Sources/Shared/LinkDaemon/TurnCommitter.swift \
    'DurableDeliveryTests/testInsufficientSpaceKeepsEverythingAnsweredAndNothingElse|TurnCommitterTests' \
    '                } else if turnWrites {' \
    '                } else if turnWrites && false {'

# The rare interleaving: the receiver's ACK leaves before the commit of what it acknowledges;
# a failed commit between them loses an item its sender was told was delivered.
mutation acknowledge-before-commit \
    Sources/Shared/LinkDaemon/TurnCommitter.swift \
    'LinkSimulationTests' \
    '                } else if turnWrites {' \
    '                } else if turnWrites, !{ if case .send(.ack) = action { true } else { false } }() {'

mutation committed-actions-list-emptied \
    Sources/Shared/LinkDaemon/TurnCommitter.swift \
    'TurnCommitterTests' \
    '        draining.removeAllKeepingStorage()' \
    '        _ = draining'

mutation timer-descriptor-set-for-nearer-deadline \
    Sources/Shared/LinkRuntime/EventLoop.swift \
    'TimerTests/testTheWakeUpFollowsCancelledAndNearerTimers' \
    '        if let set = timerDescriptorDeadline { return set <= deadline }' \
    '        if timerDescriptorDeadline != nil { return true }'

mutation unknown-op-error \
    Sources/Shared/LinkDaemon/OperationTable.swift \
    'HostilePeerTests/testControlSocketAnswersBadInputAndKeepsServing|BenchOpsTests/testArgumentsAndReachabilityAreChecked|OperationTableTests' \
    '        throw ControlError.control(.unknownOp, "unknown op '\''\(name)'\'' (known: \(operations.map(\.name).joined(separator: ", ")))")' \
    '        throw ControlError.control(.invalidArgument, "unknown op '\''\(name)'\'' (known: \(operations.map(\.name).joined(separator: ", ")))")'

mutation control-socket-served-first \
    Sources/Shared/LinkRuntime/EventLoop.swift \
    'EventLoopTests/testInteractiveDescriptorsAreServedFirstInATurn' \
    '            if self.registration(fd)?.priority == .interactive {' \
    '            if false {'

mutation check-refuses-repeated-keys \
    Sources/WireProtocol/BinaryPropertyListReader+Check.swift \
    'PropertyListCodecTests' \
    '                            !asciiKeys.contains(where: { $0.count == key.count && (key.isEmpty || memcmp($0.baseAddress!, key.baseAddress!, key.count) == 0) })' \
    '                            true'

mutation reader-refuses-repeated-keys \
    Sources/WireProtocol/BinaryPropertyListReader.swift \
    'PropertyListCodecTests' \
    '            guard !repeated else {' \
    '            guard true else {'

mutation writer-shares-equal-strings \
    Sources/WireProtocol/BinaryPropertyListWriter.swift \
    'PropertyListCodecTests' \
    '            if UTF8Order.compare(bytes(of: objectNodes[object]), string) == 0 { return object }' \
    '            if false, UTF8Order.compare(bytes(of: objectNodes[object]), string) == 0 { return object }'

mutation walk-takes-keys-in-order-only \
    Sources/WireProtocol/BinaryPropertyListReader+Walk.swift \
    'PlistJSONTests' \
    '                if let previousKey, Self.keyOrder(previousKey, key) >= 0 { throw Invalid() }' \
    '                if false, let previousKey, Self.keyOrder(previousKey, key) >= 0 { throw Invalid() }'

mutation flat-check-takes-keys-in-order-only \
    Sources/WireProtocol/BinaryPropertyListReader+Walk.swift \
    'PropertyListCodecTests|PlistJSONTests' \
    '            if let previousKey, Self.keyOrder(previousKey, key) >= 0 { return nil }' \
    '            if false, let previousKey, Self.keyOrder(previousKey, key) >= 0 { return nil }'

mutation flat-read-references-below-object-count \
    Sources/WireProtocol/BinaryPropertyListReader+Walk.swift \
    'PropertyListCodecTests|PlistJSONTests' \
    '            guard keyObject < objectCount, valueObject < objectCount,' \
    '            guard keyObject < 256, valueObject < 256,'

mutation expected-frame-type-must-match \
    Sources/WireProtocol/FrameDecoder.swift \
    'FrameDecoderTests|FrameDecoderDecodeTests' \
    '                guard announced == expected.length, inFrame == 4 || expectedHeads[head + 4] == expected.type else {' \
    '                guard announced == expected.length else {'

mutation short-ascii-second-word \
    Sources/WireProtocol/BinaryPropertyListReader+Walk.swift \
    'PropertyListCodecTests' \
    '            let secondMask: UInt64 = info <= 8 ? 0 : (1 << (8 * UInt64(info - 8))) &- 1' \
    '            let secondMask: UInt64 = 0'

mutation closed-channel-dropped-at-once \
    Sources/Shared/LinkDaemon/LinkEndpoint.swift \
    'HostilePeerTests' \
    '            closedChannels.append(channel)' \
    '            _ = channel'

mutation frame-head-channel-overwritten \
    Sources/WireProtocol/FrameEncoder.swift \
    'FrameEncoderTests' \
    '                offset += 1' \
    '                offset += 0'

mutation frame-head-length-without-payload \
    Sources/WireProtocol/FrameEncoder.swift \
    'FrameEncoderTests' \
    '        let frameLength = 1 + fieldsLength + payload.count' \
    '        let frameLength = 1 + fieldsLength + (includingPayload ? payload.count : 0)'

mutation long-string-count-big-endian \
    Sources/WireProtocol/BinaryPropertyListReader+Walk.swift \
    'PropertyListCodecTests' \
    '            count = Int(base[start + 2]) << 8 | Int(base[start + 3])' \
    '            count = Int(base[start + 3]) << 8 | Int(base[start + 2])'

mutation long-string-inside-the-objects \
    Sources/WireProtocol/BinaryPropertyListReader+Walk.swift \
    'PropertyListCodecTests' \
    '        guard count <= end - contentStart else { return nil }' \
    '        guard count <= end - start else { return nil }'

mutation flat-scan-only-when-top-is-first \
    Sources/WireProtocol/BinaryPropertyListReader+Walk.swift \
    'PropertyListCodecTests' \
    '            top == BinaryPropertyList.headerLength' \
    '            true'

mutation key-order-masks-short-keys \
    Sources/WireProtocol/BinaryPropertyListReader+Walk.swift \
    'PropertyListCodecTests' \
    '        return bytes.count >= 8 ? word : word & ~(UInt64.max >> (8 * UInt64(bytes.count)))' \
    '        return word'

mutation text-encoding-leaves-escapes \
    Sources/Shared/LinkControl/PlistJSONText.swift \
    'PlistJSONTests' \
    '            if byte == UInt8(ascii: "\\") || byte < 0x20 || (asciiOnly && byte >= 0x80) { return nil }' \
    '            if byte < 0x20 || (asciiOnly && byte >= 0x80) { return nil }'

mutation ascii-strings-are-ascii \
    Sources/WireProtocol/BinaryPropertyListReader.swift \
    'ASCIITests' \
    '            guard string.utf8.count == content.count, string.utf16.count == content.count else {' \
    '            guard string.utf8.count == content.count else {'

mutation plain-payload-last-key-wins \
    Sources/Shared/PushEmulator/FileProviderSignal.swift \
    'FileProviderSignalTests' \
    '                    identifier = value' \
    '                    if identifier == nil { identifier = value }'

mutation apns-token-checked-as-bytes \
    Sources/Shared/PushEmulator/APNsRequestValidator.swift \
    'APNsRequestValidatorTests' \
    '            if let invalidatedAt = currentTokenInvalidatedAt { return refuse(.unregistered, timestamp: invalidatedAt) }' \
    '            if let invalidatedAt = currentTokenInvalidatedAt, invalidatedAt < 0 { return refuse(.unregistered, timestamp: invalidatedAt) }'

mutation kdf-index-placement \
    Sources/Shared/PowerAuthServer/PowerAuthKDF.swift \
    'ReferenceVectorTests' \
    '        for i in 0..<8 { block[8 + i] = UInt8(truncatingIfNeeded: index >> (56 - 8 * UInt64(i))) }' \
    '        for i in 0..<8 { block[i] = UInt8(truncatingIfNeeded: index >> (56 - 8 * UInt64(i))) }'

mutation hash-counter-reduction \
    Sources/Shared/PowerAuthServer/HashCounter.swift \
    'CounterTests|ReferenceVectorTests' \
    '        PowerAuthKDF.reduce(SHA256.hash(counterData))' \
    '        Array(SHA256.hash(counterData).prefix(16))'

mutation possession-counts-failures \
    Sources/Shared/PowerAuthServer/SignatureFactor.swift \
    'EmulatedServerTests|PowerAuthServerIntegrationTests' \
    '    public var countsFailedAttempts: Bool { self != .possession }' \
    '    public var countsFailedAttempts: Bool { true }'

mutation sequence-map-backward-shift \
    Sources/Shared/LinkCollections/SequenceMap.swift \
    'SequenceMapTests' \
    '            if (index &- home(of: slotKey)) & mask >= (index &- hole) & mask {' \
    '            if (index &- home(of: slotKey)) & mask > (index &- hole) & mask {'

mutation trace-op-name-index \
    Sources/Shared/LinkDaemon/Tracer+Reading.swift \
    'TracerTests' \
    '            if slot.bits.contains(.hasOpName) { object["op"] = .string(opNames[Int(slot.wide)]) }' \
    '            if slot.bits.contains(.hasOpName) { object["op"] = .string(opNames[0]) }'

mutation flat-writer-shares-earlier-values \
    Sources/WireProtocol/FlatDictionaryWriter.swift \
    'PlistJSONTests/testFlatDictionariesAgreeWithTheirEntries' \
    '                    valuePrints |= bit' \
    '                    valuePrints |= 0'

mutation json-negative-integers \
    Sources/Shared/LinkJSON/JSON.swift \
    'PlistJSONTests/testRepliesAsJSONAgreeWithTheirEntries|JSONSerializerTests' \
    '        if integer < 0 { destination.pointee = UInt8(ascii: "-") }' \
    '        if integer < 0 { destination.pointee = UInt8(ascii: "0") }'

mutation recycled-actions-emptied \
    Sources/Shared/LinkSession/LinkSession.swift \
    'LinkSessionTests.LinkSessionTests/testRecycledActionListsAreReusedEmpty' \
    '        list.removeAllKeepingStorage()' \
    '        _ = list.count'

mutation received-list-default-budget \
    Sources/Shared/LinkSession/LinkSession.swift \
    'LinkSessionTests.LinkSessionTests/testReceivedListKeeps256KiBOfPayloadByDefault' \
    '        public static let defaultReceivedListByteCapacity = 256 << 10' \
    '        public static let defaultReceivedListByteCapacity = 1 << 20'

mutation array-emptying-releases \
    Sources/Shared/LinkCollections/ArrayEmptying.swift \
    'ArrayEmptyingTests' \
    '        while popLast() != nil {}' \
    '        while count > 1 { _ = popLast() }'

mutation text-object-pass-takes-escapes \
    Sources/Shared/LinkJSON/JSONParser.swift \
    'JSONParserTests' \
    '            if byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80 { return false }' \
    '            if byte < 0x20 || byte >= 0x80 { return false }'

mutation text-object-plain-unchecked \
    Sources/Shared/LinkJSON/JSONParser.swift \
    'JSONParserTests' \
    '            return .object(JSONObject(sourceText: Array(bytes[start..<index]), stringsArePlain: plain))' \
    '            return .object(JSONObject(sourceText: Array(bytes[start..<index]), stringsArePlain: true))'

mutation request-shortcut-takes-empty-op \
    Sources/Shared/LinkControl/ControlCodec.swift \
    'ControlCodecTests' \
    '                guard case .string(let name) = value, !name.isEmpty else { return false }' \
    '                guard case .string(let name) = value else { return false }'

mutation argument-scan-counts-optional-as-required \
    Sources/Shared/LinkDaemon/ControlOperation.swift \
    'OperationTableTests' \
    '            if arguments[position].isRequired { required += 1 }' \
    '            required += 1'

# Every documented limit and default one step past its boundary (docs/architecture.md,
# "Limits and defaults"): the boundary tests run against the values that ship.
mutation message-length-limit \
    Sources/WireProtocol/LinkProtocol.swift \
    'LinkSessionTests.LinkSessionTests/testErrorsInWatchConnectivityOrder|ShippedLimitsTests' \
    '    public static let maximumMessagePayloadLength = 65_536' \
    '    public static let maximumMessagePayloadLength = 65_537'

mutation userinfo-length-limit \
    Sources/Shared/LinkSession/LinkSession.swift \
    'ShippedLimitsTests' \
    '        public var maximumUserInfoLength: Int = 65_536' \
    '        public var maximumUserInfoLength: Int = 65_537'

mutation context-length-limit \
    Sources/Shared/LinkSession/LinkSession.swift \
    'ShippedLimitsTests' \
    '        public var maximumApplicationContextLength: Int = 262_144' \
    '        public var maximumApplicationContextLength: Int = 262_145'

mutation complication-budget \
    Sources/Shared/LinkSession/LinkSession.swift \
    'QueuedDeliveryTests/testComplicationBudgetAndFallback' \
    '        public var complicationTransfersPerDay: Int = 50' \
    '        public var complicationTransfersPerDay: Int = 51'

mutation items-in-flight-limit \
    Sources/Shared/LinkSession/LinkSession.swift \
    'LinkSessionTests.ShippedLimitsTests' \
    '        public var maximumItemsInFlight: Int = 2_048' \
    '        public var maximumItemsInFlight: Int = 2_049'

mutation reply-timeout-default \
    Sources/Shared/LinkSession/LinkSession.swift \
    'LinkSessionTests.ShippedLimitsTests|DaemonOptionsTests' \
    '        public static let standardReplyTimeoutMilliseconds: Int64 = 10_000' \
    '        public static let standardReplyTimeoutMilliseconds: Int64 = 10_001'

mutation inactive-delivery-default \
    Sources/Shared/LinkSession/LinkSession.swift \
    'LinkSessionTests.ShippedLimitsTests|DaemonOptionsTests' \
    '        public static let standardInactiveDeliveryMilliseconds: Int64 = 2_000' \
    '        public static let standardInactiveDeliveryMilliseconds: Int64 = 2_001'

mutation received-list-count \
    Sources/Shared/LinkSession/LinkSession.swift \
    'LinkSessionTests.ShippedLimitsTests' \
    '            receivedListCapacity: Int = 1_000,' \
    '            receivedListCapacity: Int = 1_001,'

mutation received-list-default-limit \
    Sources/Shared/LinkDaemon/MessageOperations.swift \
    'IntegrationTests.ShippedLimitsTests/testListsAnswerAThousandByDefault' \
    '                let limit = Int(try call.args.optionalInt("limit") ?? 1_000)' \
    '                let limit = Int(try call.args.optionalInt("limit") ?? 1_001)'

mutation file-name-length \
    Sources/WireProtocol/FileHeader.swift \
    'FileFrameTests' \
    '    public static let maximumNameLength = 200' \
    '    public static let maximumNameLength = 199'

mutation transfer-id-length \
    Sources/WireProtocol/FileHeader.swift \
    'FileFrameTests' \
    '    public static let maximumTransferIdLength = 64' \
    '    public static let maximumTransferIdLength = 65'

mutation file-mismatch-limit \
    Sources/Shared/LinkSession/LinkSession.swift \
    'FileTransferTests/testAFileThatNeverMatchesIsGivenUp' \
    '        public var fileMismatchLimit: Int = 3' \
    '        public var fileMismatchLimit: Int = 4'

mutation paired-watches-limit \
    Sources/Shared/LinkSession/PairedWatches.swift \
    'LinkAdmissionTests' \
    '    public static let maximumCount = 16' \
    '    public static let maximumCount = 17'

mutation pre-handshake-frame-length \
    Sources/WireProtocol/LinkProtocol.swift \
    'FrameDecoderTests' \
    '    public static let preHandshakeMaximumFrameLength: UInt32 = 4096' \
    '    public static let preHandshakeMaximumFrameLength: UInt32 = 4097'

mutation frame-length-default \
    Sources/WireProtocol/FrameDecoder.swift \
    'FrameDecoderTests' \
    '    public static let defaultMaximumFrameLength: UInt32 = 1 << 20' \
    '    public static let defaultMaximumFrameLength: UInt32 = (1 << 20) + 1'

mutation handshake-timeout \
    Sources/WireProtocol/LinkProtocol.swift \
    'HostilePeerTests/testHalfAFrameThenSilenceTimesOutTheHandshake' \
    '    public static let handshakeTimeoutSeconds = 5' \
    '    public static let handshakeTimeoutSeconds = 50'

mutation reconnect-backoff-cap \
    Sources/Shared/LinkDaemon/ReconnectBackoff.swift \
    'LinkAdmissionTests/testBackoffDoublesUpToItsCapAndResets' \
    '    static let maximumMilliseconds: Int64 = 500' \
    '    static let maximumMilliseconds: Int64 = 501'

mutation device-id-length \
    Sources/WireProtocol/Hello.swift \
    'FrameDecoderTests/testMalformedHello|FrameDecoderTests/testAValidHelloAtTheLimits' \
    '    public static let maximumDeviceIdLength = 255' \
    '    public static let maximumDeviceIdLength = 256'

mutation control-line-length \
    Sources/Shared/LinkDaemon/ControlServer.swift \
    'IntegrationTests.ShippedLimitsTests/testARequestLine' \
    '    static let maximumLineLength = 1 << 20' \
    '    static let maximumLineLength = (1 << 20) - 1'

mutation control-pending-output \
    Sources/Shared/LinkDaemon/ControlServer.swift \
    'ControlLimitsTests' \
    '    static let maximumPendingOutput = 16 << 20' \
    '    static let maximumPendingOutput = 17 << 20'

mutation json-depth-limit \
    Sources/Shared/LinkJSON/JSON.swift \
    'JSONParserTests/testDepthLimit' \
    '    public static let maximumDepth = 64' \
    '    public static let maximumDepth = 65'

mutation trace-entries-default \
    Sources/Shared/LinkDaemon/DaemonOptions.swift \
    'DaemonOptionsTests' \
    '    public var traceEntries: Int = 10_000' \
    '    public var traceEntries: Int = 10_001'

mutation trace-get-default-limit \
    Sources/Shared/LinkDaemon/TraceOperations.swift \
    'IntegrationTests.ShippedLimitsTests/testListsAnswerAThousandByDefault' \
    '    static let defaultLimit: Int64 = 1_000' \
    '    static let defaultLimit: Int64 = 1_001'

mutation trace-get-maximum-limit \
    Sources/Shared/LinkDaemon/TraceOperations.swift \
    'IntegrationTests.ShippedLimitsTests/testListsAnswerAThousandByDefault' \
    '    static let maximumLimit: Int64 = 100_000' \
    '    static let maximumLimit: Int64 = 100_001'

mutation preview-length \
    Sources/Shared/LinkDaemon/TracePreview.swift \
    'TracerTests/testPreviewsAtTheirBounds' \
    '    static let maximumLength = 80' \
    '    static let maximumLength = 81'

mutation preview-string-cut \
    Sources/Shared/LinkDaemon/TracePreview.swift \
    'TracerTests/testPreviewsAtTheirBounds' \
    '            return "\"" + (text.count > 24 ? String(text.prefix(23)) + "…" : text) + "\""' \
    '            return "\"" + (text.count > 25 ? String(text.prefix(24)) + "…" : text) + "\""'

mutation preview-bytes \
    Sources/Shared/LinkDaemon/Tracer.swift \
    'TracerTests/testPreviewsAtTheirBounds' \
    '    static let previewBytes = 256' \
    '    static let previewBytes = 255'

mutation apns-token-shortest \
    Sources/Shared/PushEmulator/APNsRequestValidator.swift \
    'APNsRequestValidatorTests/testSyntaxHelpers' \
    '        token.count % 2 == 0 && (64...200).contains(token.count) && token.allSatisfy(isHexDigit)' \
    '        token.count % 2 == 0 && (62...200).contains(token.count) && token.allSatisfy(isHexDigit)'

mutation apns-token-longest \
    Sources/Shared/PushEmulator/APNsRequestValidator.swift \
    'APNsRequestValidatorTests/testSyntaxHelpers' \
    '        token.count % 2 == 0 && (64...200).contains(token.count) && token.allSatisfy(isHexDigit)' \
    '        token.count % 2 == 0 && (64...198).contains(token.count) && token.allSatisfy(isHexDigit)'

mutation apns-topic-length \
    Sources/Shared/PushEmulator/APNsRequestValidator.swift \
    'APNsRequestValidatorTests/testSyntaxHelpers' \
    '        guard !topic.isEmpty, topic.utf8.count <= 255, !topic.hasPrefix("."), !topic.hasSuffix(".") else { return false }' \
    '        guard !topic.isEmpty, topic.utf8.count <= 256, !topic.hasPrefix("."), !topic.hasSuffix(".") else { return false }'

mutation apns-collapse-id-length \
    Sources/Shared/PushEmulator/APNsRequestValidator.swift \
    'APNsRequestValidatorTests' \
    '            guard value.count <= 64 else { return refuse(.badCollapseId) }' \
    '            guard value.count <= 65 else { return refuse(.badCollapseId) }'

mutation apns-voip-payload-limit \
    Sources/Shared/PushEmulator/APNsPushType.swift \
    'APNsRequestValidatorTests/testVoIPAllowsLargerPayloads' \
    '    public var maximumPayloadSize: Int { self == .voip ? 5120 : 4096 }' \
    '    public var maximumPayloadSize: Int { self == .voip ? 5121 : 4096 }'

mutation apns-alert-payload-limit \
    Sources/Shared/PushEmulator/APNsPushType.swift \
    'APNsRequestValidatorTests' \
    '    public var maximumPayloadSize: Int { self == .voip ? 5120 : 4096 }' \
    '    public var maximumPayloadSize: Int { self == .voip ? 5120 : 4097 }'

mutation apns-token-lifetime \
    Sources/Shared/PushEmulator/ProviderAuthenticator.swift \
    'ProviderTokenTests' \
    '    public static let tokenLifetimeSeconds: Int64 = 3600' \
    '    public static let tokenLifetimeSeconds: Int64 = 3599'

mutation apns-token-update-interval \
    Sources/Shared/PushEmulator/ProviderAuthenticator.swift \
    'ProviderTokenTests|PushIntegrationTests' \
    '    public static let defaultUpdateIntervalSeconds: Int64 = 20 * 60' \
    '    public static let defaultUpdateIntervalSeconds: Int64 = 19 * 60'

mutation apns-header-list-limit \
    Sources/Shared/PushEmulator/HTTP2ServerSession.swift \
    'HTTP2ServerSessionTests' \
    '            if headerListSize > HTTP2ServerSession.maximumHeaderListSize {' \
    '            if headerListSize >= HTTP2ServerSession.maximumHeaderListSize {'

mutation apns-concurrent-streams \
    Sources/Shared/PushEmulator/HTTP2ServerSession.swift \
    'HTTP2ServerSessionTests|APNsServerTests' \
    '    package static let maximumConcurrentStreams: UInt32 = 1000' \
    '    package static let maximumConcurrentStreams: UInt32 = 1001'

mutation apns-unauthenticated-streams \
    Sources/Shared/PushEmulator/HTTP2ServerSession.swift \
    'HTTP2ServerSessionTests/testOneStreamUntilTheClientAuthenticates' \
    '    static let unauthenticatedConcurrentStreams: UInt32 = 1' \
    '    static let unauthenticatedConcurrentStreams: UInt32 = 2'

mutation apns-store-days \
    Sources/Shared/PushEmulator/APNsStore.swift \
    'ConnectionRulesTests' \
    '    static let maximumStorageMilliseconds: Int64 = 30 * 86_400_000' \
    '    static let maximumStorageMilliseconds: Int64 = 31 * 86_400_000'

mutation apns-max-connections \
    Sources/Shared/PushEmulator/APNsServerLimits.swift \
    'APNsServerTests/testTheShippedCapIs256Connections' \
    '    public var maximumConnections = 256' \
    '    public var maximumConnections = 257'

mutation apns-handshake-timeout-default \
    Sources/Shared/PushEmulator/APNsServerLimits.swift \
    'APNsServerTests/testTheShippedTimeoutsAndBuffersAreThoseOfPushMd' \
    '    public var handshakeTimeoutMilliseconds: Int64 = 10_000' \
    '    public var handshakeTimeoutMilliseconds: Int64 = 10_001'

mutation apns-idle-timeout-default \
    Sources/Shared/PushEmulator/APNsServerLimits.swift \
    'APNsServerTests/testTheShippedTimeoutsAndBuffersAreThoseOfPushMd' \
    '    public var idleTimeoutMilliseconds: Int64 = 300_000' \
    '    public var idleTimeoutMilliseconds: Int64 = 300_001'

mutation apns-queued-output \
    Sources/Shared/PushEmulator/APNsConnection.swift \
    'APNsServerTests/testTheShippedTimeoutsAndBuffersAreThoseOfPushMd' \
    '    static let maximumQueuedOutput = 8 << 20' \
    '    static let maximumQueuedOutput = 9 << 20'

mutation apns-kept-body \
    Sources/Shared/PushEmulator/APNsRequest.swift \
    'APNsRequestValidatorTests/testKeptBodyIsBounded' \
    '    public static let maximumKeptBodySize = 5121' \
    '    public static let maximumKeptBodySize = 5122'

mutation powerauth-look-ahead-default \
    Sources/Shared/PowerAuthServer/ServerActivation.swift \
    'EmulatedServerTests' \
    '    public static let defaultLookAhead = 20' \
    '    public static let defaultLookAhead = 21'

mutation powerauth-look-ahead-maximum \
    Sources/Shared/PowerAuthServer/StatusBlob.swift \
    'StatusBlobTests|EmulatedServerTests' \
    '    public static let maximumLookAhead: UInt8 = 64' \
    '    public static let maximumLookAhead: UInt8 = 63'

mutation powerauth-max-fail-count \
    Sources/Shared/PowerAuthServer/ServerActivation.swift \
    'EmulatedServerTests' \
    '    public static let defaultMaxFailCount = 5' \
    '    public static let defaultMaxFailCount = 6'

mutation powerauth-token-timestamp-back \
    Sources/Shared/PowerAuthServer/EmulatedServer.swift \
    'ServerTokenTests' \
    '    public static let tokenTimestampValidity: Int64 = 7_200_000' \
    '    public static let tokenTimestampValidity: Int64 = 7_200_001'

mutation powerauth-token-timestamp-ahead \
    Sources/Shared/PowerAuthServer/EmulatedServer.swift \
    'ServerTokenTests' \
    '    public static let tokenTimestampForwardValidity: Int64 = 1_800_000' \
    '    public static let tokenTimestampForwardValidity: Int64 = 1_800_001'

mutation powerauth-replay-window \
    Sources/Shared/PowerAuthServer/EmulatedServer.swift \
    'ServerTokenTests' \
    '    public static let requestExpiration: Int64 = 60_000' \
    '    public static let requestExpiration: Int64 = 60_001'

mutation durable-new-directories \
    Sources/Shared/LinkSystem/FileSystem.swift \
    'PowerLossTests' \
    '                try syncDirectory(parentDirectory(of: prefix))' \
    '                _ = parentDirectory(of: prefix)'

mutation durable-found-directories \
    Sources/Shared/LinkSystem/FileSystem.swift \
    'FeatureDirectoryTests' \
    '        try syncDirectory(parentDirectory(of: path))' \
    '        _ = parentDirectory(of: path)'

mutation push-directory-durable-by-itself \
    Sources/Shared/PushEmulator/PushEmulatorFeature.swift \
    'FeatureDirectoryTests' \
    '        try FileSystem.ensureDurableDirectory(directory)' \
    '        try FileSystem.ensurePrivateDirectory(directory)'

mutation durable-inbox-rename \
    Sources/Shared/LinkDaemon/FileTransferEngine.swift \
    'PowerLossTests' \
    '                try FileSystem.synchronizeDirectory(directory)' \
    '                _ = directory'

mutation durable-new-database \
    Sources/Shared/LinkStore/FileProbe.swift \
    'FileProbeTests' \
    '            try sync(fd, scratch)' \
    '            try? sync(fd, scratch)'

mutation durable-new-database-name \
    Sources/Shared/LinkStore/FileProbe.swift \
    'FileProbeTests' \
    '            try sync(directoryFD, directoryPath)' \
    '            try? sync(directoryFD, directoryPath)'

mutation durable-wal-commits \
    Sources/Shared/LinkStore/DeliveryStore.swift \
    'PowerLossTests' \
    '    public init(path: String, synchronous: SQLiteDatabase.Synchronous = .full) throws {' \
    '    public init(path: String, synchronous: SQLiteDatabase.Synchronous = .normal) throws {'

mutation time-sync-elapsed \
    Sources/Shared/PowerAuthServer/TimeSynchronization.swift \
    'TimeSynchronizationTests' \
    '    public static let maximumElapsedMilliseconds: Int64 = 16_000' \
    '    public static let maximumElapsedMilliseconds: Int64 = 15_999'

mutation time-sync-difference \
    Sources/Shared/PowerAuthServer/TimeSynchronization.swift \
    'TimeSynchronizationTests' \
    '    public static let minimumDifferenceMilliseconds: Int64 = 2_000' \
    '    public static let minimumDifferenceMilliseconds: Int64 = 2_001'

mutation time-sync-delta \
    Sources/Shared/PowerAuthServer/TimeSynchronization.swift \
    'TimeSynchronizationTests' \
    '    public static let minimumDeltaMilliseconds: Int64 = 10_000' \
    '    public static let minimumDeltaMilliseconds: Int64 = 10_001'

mutation file-window \
    Sources/Shared/LinkSession/LinkSession.swift \
    'LinkSessionTests.ShippedLimitsTests/testAtMostFourMebibytesOfAFileAreInFlight' \
    '        public var fileWindowBytes: UInt64 = 4 << 20' \
    '        public var fileWindowBytes: UInt64 = (4 << 20) + 1'

mutation file-size-limit \
    Sources/WireProtocol/FileHeader.swift \
    'FileFrameTests' \
    '    public static let maximumTotalBytes = UInt64(Int64.max)' \
    '    public static let maximumTotalBytes = UInt64(Int64.max) - 1'

# The watch app's background life (docs/app-side.md): its defaults and rules.
mutation background-task-budget-default \
    Sources/Shared/LinkSession/LinkSession.swift \
    'LinkSessionTests.BackgroundTaskTests|DaemonOptionsTests' \
    '        public static let standardBackgroundTaskBudgetMilliseconds: Int64 = 15_000' \
    '        public static let standardBackgroundTaskBudgetMilliseconds: Int64 = 15_001'

mutation background-run-budget \
    Sources/Shared/LinkSession/BackgroundTasks.swift \
    'LinkSessionTests.BackgroundTaskTests|WatchAppBackgroundTests/testAnAppThatNeverCompletes' \
    '        let deadline = currentTime + configuration.backgroundTaskBudgetMilliseconds' \
    '        let deadline = currentTime + configuration.backgroundTaskBudgetMilliseconds + 1_000'

mutation expiration-lead \
    Sources/Shared/LinkSession/BackgroundTasks.swift \
    'LinkSessionTests.BackgroundTaskTests' \
    '        min(1_000, configuration.backgroundTaskBudgetMilliseconds / 2)' \
    '        min(500, configuration.backgroundTaskBudgetMilliseconds / 2)'

mutation suspended-once-tasks-complete \
    Sources/Shared/LinkSession/BackgroundTasks.swift \
    'LinkSessionTests.BackgroundTaskTests|WatchAppBackgroundTests/testTheAppIsLaunchedForUserInfo' \
    '        actions.append(.appProcess(.suspend))' \
    '        actions.append(.notify(.backgroundTask(.resumed(.user))))'

mutation suspended-app-receives-nothing \
    Sources/Shared/LinkSession/QueuedDelivery.swift \
    'LinkSessionTests.BackgroundTaskTests' \
    '        guard activationState != .notActivated, appState != .notRunning, !background.isSuspended else { return }' \
    '        guard activationState != .notActivated, appState != .notRunning else { return }'

mutation complication-wakes-at-once \
    Sources/Shared/LinkSession/BackgroundTasks.swift \
    'LinkSessionTests.BackgroundTaskTests' \
    '            if Self.isCurrentComplicationInfo(item) { return (true, true) }' \
    '            if Self.isCurrentComplicationInfo(item) { any = true; continue }'

mutation hourly-allowance-without-complication \
    Sources/Shared/LinkSession/BackgroundLaunchPolicy.swift \
    'LinkSessionTests.BackgroundTaskTests|WatchAppBackgroundTests/testTheWatchPolicy' \
    '    public static let launchesPerHourWithoutComplication = 1' \
    '    public static let launchesPerHourWithoutComplication = 2'

mutation hourly-allowance-with-complication \
    Sources/Shared/LinkSession/BackgroundLaunchPolicy.swift \
    'LinkSessionTests.BackgroundTaskTests' \
    '    public static let launchesPerHourWithComplication = 4' \
    '    public static let launchesPerHourWithComplication = 5'

mutation launch-window-default \
    Sources/Shared/LinkSession/BackgroundLaunchPolicy.swift \
    'DaemonOptionsTests' \
    '    public static let standardWindowMilliseconds: Int64 = 15 * 60 * 1_000' \
    '    public static let standardWindowMilliseconds: Int64 = 16 * 60 * 1_000'

mutation launch-policy-default \
    Sources/Shared/LinkDaemon/DaemonOptions.swift \
    'DaemonOptionsTests' \
    '    public var launchPolicy: BackgroundLaunchPolicy.Mode = .watch' \
    '    public var launchPolicy: BackgroundLaunchPolicy.Mode = .immediate'

mutation scheduled-task-not-before-its-date \
    Sources/Shared/LinkSession/BackgroundTasks.swift \
    'LinkSessionTests.BackgroundTaskTests|WatchAppBackgroundTests/testAScheduledBackgroundRefresh' \
    '        let due = currentTime + delay' \
    '        let due = currentTime + delay - 1_000'

mutation scheduled-task-ignored-in-the-foreground \
    Sources/Shared/LinkSession/BackgroundTasks.swift \
    'LinkSessionTests.BackgroundTaskTests' \
    '        if appState == .foreground || !runnable {' \
    '        if !runnable {'

mutation has-content-pending-after-the-delegate \
    Sources/AppSide/WatchConnectivity/WCSession+Events.swift \
    'AppSideTests.AppSideTests/testHasContentPending|WatchAppBackgroundTests/testTheAppIsLaunchedForUserInfo' \
    '                state.withLock { $0.pendingDeliveries = max(0, $0.pendingDeliveries - 1) }' \
    '                state.withLock { $0.pendingDeliveries = max(0, $0.pendingDeliveries - 0) }'

# The emulated OS's rules for the phone app (docs/app-side.md, "The emulated OS launches the app").
mutation crash-backoff-doubles \
    Sources/Shared/LinkDaemon/AppLauncher+Ending.swift \
    'LinkDaemonTests.AppLauncherTests|AppLaunchTests/testAnAppThatCrashesAtLaunch' \
    '        min(firstBackoffMilliseconds << min(failures - 1, 16), maximumBackoffMilliseconds)' \
    '        min(firstBackoffMilliseconds, maximumBackoffMilliseconds)'

mutation phone-app-background-budget \
    Sources/Shared/LinkDaemon/AppLauncher.swift \
    'AppLaunchTests/testTheUserLaunchesTheAppTheSystemEndsIt' \
    '            launch.budgetTimer = loop.schedule(afterMilliseconds: backgroundBudgetMilliseconds) { [unowned self] in' \
    '            launch.budgetTimer = loop.schedule(afterMilliseconds: backgroundBudgetMilliseconds + 1_000) { [unowned self] in'

mutation phone-app-background-budget-default \
    Sources/Shared/LinkDaemon/AppLauncher.swift \
    'DaemonOptionsTests' \
    '    public static let standardBackgroundBudgetMilliseconds: Int64 = 30_000' \
    '    public static let standardBackgroundBudgetMilliseconds: Int64 = 31_000'

mutation voip-failure-limit-default \
    Sources/Shared/PushEmulator/PushRecipients.swift \
    'AppLaunchTests/testVoIPPushesNotReportedToCallKit' \
    '    static let standardVoIPFailureLimit = 3' \
    '    static let standardVoIPFailureLimit = 4'

# PowerAuth's watch synchronisation (docs/powerauth.md).
mutation powerauth-phone-needs-the-watch-app \
    Sources/AppSide/PowerAuthShared/WatchPacketChannel.swift \
    'PowerAuthAppTests/testThePhoneSendsNothingToTheWatchWhileTheWatchAppIsNotInstalled' \
    '        if isPhone, !(session.isPaired && session.isWatchAppInstalled) { return nil }' \
    '        if isPhone, !session.isPaired { return nil }'

mutation powerauth-signed-request-needs-a-valid-signature \
    Sources/Shared/PowerAuthSync/StatusService.swift \
    'PowerAuthSyncTests.StatusServiceTests' \
    '            guard verification.signatureValid else { throw Self.refusedSignature() }' \
    '            guard verification.signatureValid || true else { throw Self.refusedSignature() }'

# What a device shows beyond the reference pages (docs/app-side.md): the watch's reachability,
# the device weather, didFinish at the next launch, the directory of each watch, error texts.
mutation background-watch-app-not-reachable \
    Sources/Shared/LinkSession/LinkSession+Activation.swift \
    'LinkSessionTests.LinkSessionTests|SessionIntegrationTests/testReachabilityFollows' \
    '        case .background: return workoutRunning' \
    '        case .background: return true'

mutation workout-keeps-the-watch-reachable \
    Sources/Shared/LinkSession/LinkSession+Activation.swift \
    'LinkSessionTests.BackgroundTaskTests|LinkSessionTests.WeatherTests|SessionIntegrationTests/testReachabilityFollows' \
    '        case .foreground: return !isInWeatherSpell || workoutRunning' \
    '        case .foreground: return !isInWeatherSpell'

mutation spell-leaves-the-app-idle \
    Sources/Shared/LinkSession/LinkSession+Activation.swift \
    'LinkSessionTests.WeatherTests' \
    '        case .foreground: return !isInWeatherSpell || workoutRunning' \
    '        case .foreground: return true'

mutation weather-calm-by-default \
    Sources/Shared/LinkSession/LinkSession.swift \
    'LinkSessionTests.WeatherTests/testCalm' \
    '            weather = ReachabilityWeather(role: role)' \
    '            weather = ReachabilityWeather(profile: .device, role: role)'

mutation weather-flag-calm-by-default \
    Sources/Shared/LinkDaemon/DaemonOptions.swift \
    'DaemonOptionsTests/testTheWeatherFlags' \
    '    public var weather: ReachabilityWeather.Profile = .calm' \
    '    public var weather: ReachabilityWeather.Profile = .device'

mutation sends-follow-the-fact \
    Sources/Shared/LinkSession/LinkSession+Messages.swift \
    'LinkSessionTests.WeatherTests' \
    '        if !isReachable {' \
    '        if !reportedReachability {'

mutation weather-flip-inside-the-lag-is-never-told \
    Sources/Shared/LinkSession/LinkSession+Weather.swift \
    'LinkSessionTests.WeatherTests' \
    '        report(pending.isReachable)' \
    '        report(isReachable)'

mutation weather-report-lag \
    Sources/Shared/LinkSession/ReachabilityWeather.swift \
    'DeviceWeatherTests' \
    '    public static let reportLagMilliseconds: ClosedRange<Int64> = 200...2_000' \
    '    public static let reportLagMilliseconds: ClosedRange<Int64> = 0...2_000'

mutation weather-spells-from-the-seed \
    Sources/Shared/LinkSession/ReachabilityWeather.swift \
    'LinkSessionTests.WeatherTests' \
    '        spells = SplitMix64(seed: seed ^ side ^ 0x0000_0000_0000_7370)' \
    '        spells = SplitMix64(seed: side ^ 0x0000_0000_0000_7370)'

mutation finished-transfer-kept-for-the-next-launch \
    Sources/Shared/LinkSession/FinishedTransfers.swift \
    'LinkSessionTests.FinishedTransferTests|FinishedAtLaunchTests' \
    '            if attachedApp == nil {' \
    '            if attachedApp == nil, false {'

mutation finished-transfer-told-once \
    Sources/Shared/LinkSession/FinishedTransfers.swift \
    'LinkSessionTests.FinishedTransferTests' \
    '        finishedWhileAway.removeAll { $0.seq <= seq }' \
    '        finishedWhileAway.removeAll { _ in false }'

mutation finished-transfer-only-an-apps \
    Sources/Shared/LinkSession/FinishedTransfers.swift \
    'LinkSessionTests.FinishedTransferTests' \
    '    var acceptedItemFlags: ItemFlags { attachedApp != nil ? [.madeByApp] : [] }' \
    '    var acceptedItemFlags: ItemFlags { [.madeByApp] }'

mutation watch-directory-renewed-on-uninstall \
    Sources/Shared/LinkDaemon/PeerDirectory+Watches.swift \
    'WatchDirectoryTests' \
    '            updated.renewAppDirectory(of: id)' \
    '            _ = id'

mutation queued-items-wait-while-the-pair-is-unusable \
    Sources/Shared/LinkSession/QueuedDelivery.swift \
    'LinkSessionTests.QueuedDeliveryTests' \
    '        case .phone: return flags.contains(.isPaired) && flags.contains(.isWatchAppInstalled)' \
    '        case .phone: return true'

mutation error-text-not-reachable \
    Sources/AppSide/WatchConnectivity/WCError.swift \
    'ErrorTextTests|AppSideTests/testMessagesRepliesAndTheirErrors' \
    '        case .notReachable: return ("WatchConnectivity session on paired device is not reachable.", nil, nil)' \
    '        case .notReachable: return ("The counterpart device is not reachable.", nil, nil)'

# The device clock (docs/architecture.md, "Time"): an advance fires the pair's timers in the
# order of their deadlines, each at its own time, and a watch follows its phone's clock.
mutation clock-advance-fires-timers-due-at-its-end \
    Sources/Shared/LinkRuntime/EventLoop.swift \
    'LinkRuntimeTests.DeviceClockTests' \
    '        while let deadline = deviceTimers.nearestDeadline(), deadline <= end {' \
    '        while let deadline = deviceTimers.nearestDeadline(), deadline < end {'

mutation clock-zero-delay-device-timer-fires-next-turn \
    Sources/Shared/LinkRuntime/EventLoop.swift \
    'LinkRuntimeTests.DeviceClockTests' \
    '        if clock.isManual { runDueDeviceTimers() }' \
    '        if false { runDueDeviceTimers() }'

mutation pair-clock-steps-at-the-watches-timers \
    Sources/Shared/LinkDaemon/PairClock.swift \
    'PairClockTests' \
    '            next = min(next ?? timer, timer)' \
    '            next = next ?? timer'

mutation pair-clock-watch-follows-the-phone \
    Sources/Shared/LinkDaemon/PairClock.swift \
    'PairClockTests' \
    '            loop.advanceClock(toMilliseconds: phoneMonotonic + offset)' \
    '            loop.advanceClock(toMilliseconds: loop.nowMilliseconds)'

if [ "${1:-}" = "--list" ]; then
    printf '%s\n' "${names[@]}"
    exit 0
fi

# Checks that the mutations of the given indices can be made (each file exists, each original
# line occurs there exactly once, each replacement differs, each name is unique) without
# building anything, and lists every one that cannot: a file split, rewritten or reformatted
# since a mutation was written shows here, not halfway through a full run.
check_mutations() {
    local index
    for index in "$@"; do
        printf '%s\0%s\0%s\0%s\0' "${names[$index]}" "${files[$index]}" "${originals[$index]}" "${replacements[$index]}"
    done | python3 -c '
import sys
fields = sys.stdin.buffer.read().decode("utf-8").split("\0")[:-1]
mutations = [fields[i:i + 4] for i in range(0, len(fields), 4)]
lines_of = {}
stale = []
seen = set()
for name, path, original, replacement in mutations:
    if name in seen:
        stale.append(f"{name}: the name is used by another mutation")
    seen.add(name)
    if path not in lines_of:
        try:
            with open(path, encoding="utf-8") as f:
                lines_of[path] = f.read().split("\n")
        except OSError as error:
            lines_of[path] = error
    lines = lines_of[path]
    if isinstance(lines, OSError):
        stale.append(f"{name}: {path} cannot be read ({lines.strerror})")
        continue
    count = lines.count(original)
    if count != 1:
        stale.append(f"{name}: its original line occurs {count} times in {path}, not once: {original!r}")
    if replacement == original:
        stale.append(f"{name}: its replacement is its original line")
for line in stale:
    print(f"mutate.sh: stale mutation {line}", file=sys.stderr)
if stale:
    sys.exit(f"mutate.sh: {len(stale)} problem(s) in {len(mutations)} mutations; point each at the line that now holds its rule")
print(f"mutate.sh: all {len(mutations)} mutations can be made")
'
}

if [ "${1:-}" = "--check" ]; then
    check_mutations "${!names[@]}"
    exit $?
fi

selected=()
if [ $# -eq 0 ]; then
    selected=("${!names[@]}")
else
    for wanted in "$@"; do
        found=""
        for index in "${!names[@]}"; do
            if [ "${names[$index]}" = "$wanted" ]; then found=$index; fi
        done
        [ -n "$found" ] || { echo "mutate.sh: no mutation named '$wanted' (see --list)" >&2; exit 2; }
        selected+=("$found")
    done
fi

check_mutations "${selected[@]}" >/dev/null || exit 2

work=$(mktemp -d "${TMPDIR:-/tmp}/watchlink-mutate.XXXXXX")
current_file=""
restore() {
    if [ -n "$current_file" ] && [ -f "$work/original" ]; then
        cp "$work/original" "$current_file"
        echo "mutate.sh: restored $current_file" >&2
    fi
    current_file=""
}
trap 'restore; rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Replaces the one line of $1 equal to $2 by $3; fails unless there is exactly one.
replace_line() {
    python3 - "$1" "$2" "$3" <<'PYTHON'
import sys
path, original, replacement = sys.argv[1:]
with open(path, encoding="utf-8") as f:
    lines = f.read().split("\n")
matches = [i for i, line in enumerate(lines) if line == original]
if len(matches) != 1:
    sys.exit(f"{path}: the original line occurs {len(matches)} times, not once: {original!r}")
lines[matches[0]] = replacement
with open(path, "w", encoding="utf-8") as f:
    f.write("\n".join(lines))
PYTHON
}

scripts/ensure-deps.sh
scripts/ensure-mermaid.sh >&2
# The power-loss file system's Python (as scripts/test.sh sets it): without it the tests that
# need it skip, and a skipped test catches nothing.
WATCHLINK_PYTHON=$(scripts/ensure-venv.sh)
export WATCHLINK_PYTHON
simulator_seeds=${MUTATE_SIMULATOR_SEEDS:-}
build_for_test() {
    if [ -n "$simulator_seeds" ]; then swift build --product linksim; else swift build --build-tests; fi
}
build_for_test >&2
bin_dir=$(swift build --show-bin-path)
export WATCHLINK_BIN_DIR="$bin_dir"

survivors=() unbuilt=() results=()
started=$SECONDS
for index in "${selected[@]}"; do
    name=${names[$index]} file=${files[$index]} filter=${filters[$index]}
    echo "==== mutation $name: $file" >&2
    mutation_started=$SECONDS
    cp "$file" "$work/original"
    current_file=$file
    replace_line "$file" "${originals[$index]}" "${replacements[$index]}" || exit 2
    log="$work/$name.log"
    if ! build_for_test >"$log" 2>&1; then
        restore
        tail -20 "$log" >&2
        results+=("NOT BUILT $name: the mutated code does not compile; fix the mutation")
        unbuilt+=("$name")
        echo "${results[-1]}" >&2
        continue
    fi
    status=0
    if [ -n "$simulator_seeds" ]; then
        "$bin_dir/linksim" --seeds "$simulator_seeds" --seed 1 --check-determinism 0 >>"$log" 2>&1 || status=$?
        restore
        first=$(grep -m1 -oE "^FAILED seed [0-9]+" "$log" | grep -oE "[0-9]+$" || true)
        caught="by the simulator, first at seed ${first:-? (exit $status)}"
        survived="$simulator_seeds seeds of the simulator passed"
    else
        swift test --skip-build --filter "$filter" >>"$log" 2>&1 || status=$?
        restore
        failed=$(grep -oE "Test Case '[^']+' failed" "$log" | sed -E "s/Test Case '(.*)' failed/\1/" | sort -u | tr '\n' ' ' || true)
        skipped=$(grep -cE "^Test Case '.*' skipped" "$log" || true)
        # A test that crashed (a trap, a signal) has started and never ended: it is named so.
        crashed=$(grep -oE "^Test Case '[^']+' (started|passed|failed|skipped)" "$log" | tail -1 | sed -nE "s/^Test Case '(.*)' started$/\1/p" || true)
        [ -z "$crashed" ] || failed="${failed}${crashed} (crashed) "
        caught=${failed:-the test run failed (exit $status)}
        survived="every test of '$filter' passed ($skipped skipped)"
        if grep -q "No matching test cases were run" "$log"; then
            status=0
            survived="no test matches '$filter'"
        fi
    fi
    if [ "$status" -ne 0 ]; then
        results+=("caught    $name ($((SECONDS - mutation_started)) s): $caught")
    else
        results+=("SURVIVED  $name ($((SECONDS - mutation_started)) s): $survived")
        survivors+=("$name")
    fi
    echo "${results[-1]}" >&2
done

# Back to the unmutated build, so the tree is left as it was found.
build_for_test >/dev/null 2>&1 || true

echo
echo "mutation results (${#selected[@]} mutations, $((SECONDS - started)) s):"
printf '  %s\n' "${results[@]}"
if [ ${#unbuilt[@]} -gt 0 ]; then
    echo "mutate.sh: ${#unbuilt[@]} mutation(s) did not compile: ${unbuilt[*]}" >&2
fi
if [ ${#survivors[@]} -gt 0 ]; then
    echo "mutate.sh: ${#survivors[@]} mutation(s) survived: ${survivors[*]}" >&2
fi
[ ${#unbuilt[@]} -eq 0 ] || exit 2
[ ${#survivors[@]} -eq 0 ] || exit 1
echo "mutate.sh: every mutation was caught"
