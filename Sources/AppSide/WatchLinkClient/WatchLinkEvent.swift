import LinkControl

/// One event of a subscribed control connection:
/// `{"event": "session.reachabilityDidChange", "at": "...", "data": {...}}` — the control
/// protocol's own event value (`name`, `at`, `data`, `date`).
public typealias WatchLinkEvent = ControlEvent
