// Which local files a session may read. A top-level playlist given as a path
// is a local input, and so is every URI it names; a playlist is text anyone
// may have written, so it may name only files under its own directory
// (`file:///etc/shadow`, `../../secret`, a symlink pointing out: refused)
// unless the user allows any local file (`--allow-any-local-file`). Playlists
// fetched over HTTP never read local files at all.
//
// The check is made on real paths (every symlink resolved, no `.` or `..`),
// which the loader obtains with realpath(3); this part is pure.

/// Whether `path` lies inside `directory`, both absolute real paths (symlinks
/// resolved, no `.` or `..` components): component by component, so
/// `/data/stream-2/x` is not inside `/data/stream`. The directory itself is not
/// inside it (it is not a file it contains).
public func localPath(_ path: String, isInside directory: String) -> Bool {
    func components(_ p: String) -> [Substring]? {
        guard p.hasPrefix("/") else { return nil }
        let parts = p.split(separator: "/", omittingEmptySubsequences: true)
        guard !parts.contains(where: { $0 == "." || $0 == ".." }) else { return nil }
        return parts
    }
    guard let file = components(path), let dir = components(directory), file.count > dir.count else { return false }
    return Array(file.prefix(dir.count)) == dir
}
