import LinkDaemon
import PowerAuthSync

DaemonMain.run(role: .watch, features: { [PowerAuthFeature(role: .watch)] })
