// What of a URL goes into logs. Query strings often carry access tokens and
// signed-URL signatures, and userinfo carries credentials: by default the
// logs keep every parameter name but none of their values, and no userinfo.

import Foundation

public enum URLRedaction {
    /// The placeholder written instead of a secret.
    public static let placeholder = "REDACTED"

    /// `url` as it may be logged: userinfo replaced, each query value replaced
    /// (names kept, so the shape of the URL stays readable), fragment dropped.
    public static func redacted(_ url: URL) -> String {
        guard var c = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url.absoluteString }
        if c.user != nil || c.password != nil {
            c.user = placeholder
            c.password = nil
        }
        if let items = c.percentEncodedQueryItems, !items.isEmpty {
            c.percentEncodedQueryItems = items.map { item in
                URLQueryItem(name: item.name, value: (item.value?.isEmpty ?? true) ? item.value : placeholder)
            }
        }
        c.fragment = nil
        return c.string ?? url.absoluteString
    }
}
