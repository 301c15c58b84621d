/// The project's version: `hlsplay --version`, `hls-origin --version`, the session log header, the HAR creator.
public enum ProjectVersion {
    public static let string = "0.1.0"
}
