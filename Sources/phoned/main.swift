import LinkDaemon
import PowerAuthSync
import PushEmulator

DaemonMain.run(role: .phone, features: { [PushEmulatorFeature(), PowerAuthFeature(role: .phone)] })
