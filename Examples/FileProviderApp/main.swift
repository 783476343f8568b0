import FileProvider

// A File Provider app written against Apple's PushKit and File Provider APIs: the app
// delegate and one extension object a domain register for `fileProvider` pushes as Apple's
// page shows, and print what their delegates see; the extensions print the signals the system
// sends them. It runs against WatchLink's phoned (WATCHLINK_HOME and WATCHLINK_SIDE=phone, or
// WATCHLINK_CONTROL, say which), until it is stopped.
//
//   --server-inbox DIR         "send the device token to the server": write it to DIR/device-token
//   --domains A,B              the domains to attach an extension for (default: main)
//   --unreachable-domain A     that domain's extension fails to fetch changes (serverUnreachable)

func option(_ name: String) -> String? {
    guard let index = CommandLine.arguments.firstIndex(of: name), index + 1 < CommandLine.arguments.count else { return nil }
    return CommandLine.arguments[index + 1]
}

let appDelegate = AppDelegate(serverInbox: option("--server-inbox"))
appDelegate.applicationDidFinishLaunching()

let extensions: [FileProviderExtension] = (option("--domains") ?? "main").split(separator: ",").map { name in
    let domain = NSFileProviderDomain(identifier: NSFileProviderDomainIdentifier(String(name)), displayName: String(name))
    let fileProvider = FileProviderExtension()
    fileProvider.serverIsUnreachable = option("--unreachable-domain") == String(name)
    do {
        try WatchLinkFileProvider.attach(fileProvider, to: domain)
    } catch {
        say("extension \(name): cannot attach: \(error.localizedDescription)")
        exit(1)
    }
    say("extension \(name): attached")
    return fileProvider
}

withExtendedLifetime(extensions) { dispatchMain() }
