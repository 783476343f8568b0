import LinkDaemon
import PushEmulator

DaemonMain.run(role: .phone, features: { [PushEmulatorFeature()] })
