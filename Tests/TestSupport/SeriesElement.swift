// Reading the timeline report's page (`hlsplay report --html`) in tests, by plain text search.
import Foundation

/// The element (start tag … its end) carrying `data-series="name"`, found by plain text search.
public struct SeriesElement {
    public var tag: String
    public var body: String

    public init?(_ html: String, _ name: String) {
        guard let mark = html.range(of: "data-series=\"\(name)\"") else { return nil }
        guard let open = html[..<mark.lowerBound].range(of: "<", options: .backwards),
            let close = html[mark.upperBound...].range(of: ">")
        else { return nil }
        tag = String(html[open.lowerBound..<close.upperBound])
        if tag.hasPrefix("<g ") {
            let end = html[close.upperBound...].range(of: "</g>")?.lowerBound ?? html.endIndex
            body = String(html[close.upperBound..<end])
        } else {
            body = ""
        }
    }

    public func attribute(_ name: String) -> String? { Self.attribute(name, in: tag) }

    public static func attribute(_ name: String, in tag: String) -> String? {
        guard let start = tag.range(of: " \(name)=\"") else { return nil }
        guard let end = tag[start.upperBound...].firstIndex(of: "\"") else { return nil }
        return String(tag[start.upperBound..<end])
    }

    /// The start tags of the children named `element` (e.g. "rect", "circle").
    public func children(_ element: String) -> [String] {
        body.components(separatedBy: "<\(element) ").dropFirst().map { "<\(element) " + ($0.components(separatedBy: ">").first ?? "") + ">" }
    }

    public var points: Int? { attribute("data-points").flatMap { Int($0) } }
    public var isMissing: Bool { attribute("data-missing") == "true" }
    /// Coordinate pairs in a path's `d` (`M x,y L x,y …`).
    public var pathPairs: Int { (attribute("d") ?? "").split(separator: " ").filter { $0.contains(",") }.count }
}
