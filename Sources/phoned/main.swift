import LinkDaemon

DaemonMain.run(role: .phone)
