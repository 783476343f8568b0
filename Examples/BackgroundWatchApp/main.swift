import WatchKit

// A watch app whose data arrives while it is not running, written only against WatchKit and
// WatchConnectivity as a watch app is: the delegate keeps the WatchConnectivity background tasks
// it is handed and completes them once its session is activated and has delivered what was
// pending (the pattern of Apple's sample "Transferring data with Watch Connectivity"), and can
// schedule a background refresh when it has done so. Every step is a line on
// standard output (`HOME/watch-app.log` when watchd launches it).
//
//   --never-complete     keeps its WatchConnectivity tasks open (the watchdog ends it)
//   --stall-on N         the delegate never returns from the userInfo whose "n" is N
//   --refresh-after S    schedules a background refresh S seconds ahead once it completed its
//                        WatchConnectivity tasks, and when it leaves the foreground

WKApplicationMain(ExtensionDelegate())
