import Foundation
import Testing

/// What is wrong with a HAR document against HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/):
/// every required field present with its type, `send`/`wait`/`receive` never negative, the other phases
/// -1 or more, and each entry's `time` the sum of its phases that applied (`ssl` is inside `connect`).
/// And hlsplay's own promises: a failed entry says why (`_error`, `_errorKind`), and an aborted one
/// (`_aborted`) carries the time it really ran. Empty when the document is valid.
func harProblems(_ document: Any?) -> [String] {
    var problems: [String] = []
    func fail(_ what: String) { problems.append(what) }
    func isNumber(_ v: Any?) -> Bool { v is Double || v is Int || v is NSNumber && !(v is Bool) }
    func number(_ v: Any?) -> Double? { (v as? NSNumber)?.doubleValue }
    func isString(_ v: Any?) -> Bool { v is String }
    func checkFields(_ v: Any?, _ path: String) {
        guard let list = v as? [Any] else { return fail("\(path) is not an array") }
        for (i, item) in list.enumerated() {
            guard let o = item as? [String: Any], isString(o["name"]), isString(o["value"]) else {
                fail("\(path)[\(i)] is not {name: string, value: string}: \(item)")
                continue
            }
        }
    }
    func require(_ o: [String: Any], _ key: String, _ path: String, _ check: (Any?) -> Bool, _ type: String) {
        if !check(o[key]) { fail("\(path).\(key) is not a \(type): \(String(describing: o[key]))") }
    }

    guard let root = document as? [String: Any], let log = root["log"] as? [String: Any] else { return ["no log object"] }
    require(log, "version", "log", isString, "string")
    if let creator = log["creator"] as? [String: Any] {
        require(creator, "name", "log.creator", isString, "string")
        require(creator, "version", "log.creator", isString, "string")
    } else {
        fail("log.creator is not an object")
    }
    guard let entries = log["entries"] as? [Any] else { return problems + ["log.entries is not an array"] }
    let dates = ISO8601DateFormatter()
    dates.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    for (i, item) in entries.enumerated() {
        let path = "entries[\(i)]"
        guard let e = item as? [String: Any] else {
            fail("\(path) is not an object")
            continue
        }
        if let started = e["startedDateTime"] as? String {
            if dates.date(from: started) == nil { fail("\(path).startedDateTime is not ISO 8601: \(started)") }
        } else {
            fail("\(path).startedDateTime is not a string")
        }
        require(e, "time", path, isNumber, "number")
        if !(e["cache"] is [String: Any]) { fail("\(path).cache is not an object") }
        for key in ["serverIPAddress", "connection", "comment"] where e[key] != nil {
            require(e, key, path, isString, "string")
        }
        if let request = e["request"] as? [String: Any] {
            let p = path + ".request"
            for key in ["method", "url", "httpVersion"] { require(request, key, p, isString, "string") }
            for key in ["headersSize", "bodySize"] { require(request, key, p, isNumber, "number") }
            if !(request["cookies"] is [Any]) { fail("\(p).cookies is not an array") }
            checkFields(request["headers"], p + ".headers")
            checkFields(request["queryString"], p + ".queryString")
        } else {
            fail("\(path).request is not an object")
        }
        let response = e["response"] as? [String: Any]
        if let response {
            let p = path + ".response"
            for key in ["statusText", "httpVersion", "redirectURL"] { require(response, key, p, isString, "string") }
            for key in ["status", "headersSize", "bodySize"] { require(response, key, p, isNumber, "number") }
            if !(response["cookies"] is [Any]) { fail("\(p).cookies is not an array") }
            checkFields(response["headers"], p + ".headers")
            if let content = response["content"] as? [String: Any] {
                require(content, "size", p + ".content", isNumber, "number")
                require(content, "mimeType", p + ".content", isString, "string")
            } else {
                fail("\(p).content is not an object")
            }
        } else {
            fail("\(path).response is not an object")
        }
        guard let timings = e["timings"] as? [String: Any] else {
            fail("\(path).timings is not an object")
            continue
        }
        var sum = 0.0
        for key in ["send", "wait", "receive"] {
            guard let v = number(timings[key]), v >= 0 else {
                fail("\(path).timings.\(key) is not a non-negative number: \(String(describing: timings[key]))")
                continue
            }
            sum += v
        }
        for key in ["blocked", "dns", "connect", "ssl"] where timings[key] != nil {
            guard let v = number(timings[key]), v >= -1 else {
                fail("\(path).timings.\(key) is not a number ≥ -1: \(String(describing: timings[key]))")
                continue
            }
            if key != "ssl", v > 0 { sum += v }
        }
        if let ssl = number(timings["ssl"]), ssl > 0, let connect = number(timings["connect"]), ssl > connect + 0.001 {
            fail("\(path).timings.ssl \(ssl) exceeds connect \(connect), which includes it")
        }
        let time = number(e["time"]) ?? -1
        if abs(time - sum) > 1 { fail("\(path).time \(time) is not the sum of its timings \(sum): \(timings)") }
        // hlsplay's own fields.
        if let response {
            let aborted = response["_aborted"] as? Bool
            if aborted == nil { fail("\(path).response._aborted is not a boolean") }
            if response["_error"] != nil || aborted == true {
                require(response, "_error", path + ".response", { ($0 as? String).map { !$0.isEmpty } ?? false }, "non-empty string")
                require(response, "_errorKind", path + ".response", isString, "string")
            }
            // A request that got an answer or bytes before it was cut ran for a while: never 0.
            let answered = (response["status"] as? Int ?? 0) > 0 || (response["bodySize"] as? Int ?? 0) > 0
            if aborted == true, answered, time <= 0 {
                fail("\(path) aborted after it ran, with time \(time)")
            }
        }
    }
    return problems
}

/// Records an issue for each HAR 1.2 problem of the document at `path` (nothing when there is no file).
func expectValidHAR(at path: URL, sourceLocation: SourceLocation = #_sourceLocation) {
    guard let data = try? Data(contentsOf: path) else { return }
    expectValidHAR(text: String(decoding: data, as: UTF8.self), sourceLocation: sourceLocation)
}

/// Records an issue for each HAR 1.2 problem of the document `text`.
func expectValidHAR(text: String, sourceLocation: SourceLocation = #_sourceLocation) {
    guard let document = try? JSONSerialization.jsonObject(with: Data(text.utf8)) else {
        Issue.record("the HAR is not JSON: \(text.prefix(2000))", sourceLocation: sourceLocation)
        return
    }
    for problem in harProblems(document).prefix(20) {
        Issue.record("HAR: \(problem)", sourceLocation: sourceLocation)
    }
}
