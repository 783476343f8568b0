import Foundation

// The UIKit types Apple's File Provider page uses around its PushKit code. UIKit is no part
// of WatchLink; these stand-ins let the page's classes compile as the page writes them.

class UIResponder: NSObject {}

protocol UIApplicationDelegate {}

final class UIApplication: NSObject {}

struct UIApplicationLaunchOptionsKey: Hashable {
    let rawValue: String
}
