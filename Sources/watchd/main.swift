import LinkDaemon

DaemonMain.run(role: .watch)
