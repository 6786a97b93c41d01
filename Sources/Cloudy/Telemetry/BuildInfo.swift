/// What `--version` prints and `cloudy_exporter_build_info` carries.
public enum BuildInfo {
    public static let version = "0.1.0"
    /// SwiftPM cannot stamp the git commit into a build without a plugin; until one is worth
    /// its build time, the revision is "unknown" and the version is the thing to go by.
    public static let revision = "unknown"

    public static let swiftVersion: String = {
        #if swift(>=6.3)
            return "6.3"
        #elseif swift(>=6.2)
            return "6.2"
        #elseif swift(>=6.1)
            return "6.1"
        #else
            return "6.0"
        #endif
    }()
}
