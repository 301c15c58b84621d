// swift-tools-version:6.0
import PackageDescription

// Module arrows point one way:
//   HLSCore (pure)  <-  HLSNet (libcurl), HLSMedia (FFmpeg)  <-  HLSPlayer (threads, timers, clock)  <-  hlsplay
//   HLSOrigin (loopback test origin)  <-  hls-origin, hlsplay (embedded default), tests
//   HLSCore (the shared command-line grammar, the version)  <-  hls-origin
//   HLSOrigin  <-  TestSupport (shared test helpers, in no product)  <-  test targets
//   HLSCore  <-  HLSReport (presentation: a session log as an HTML page)  <-  hlsplay
let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "hlsplay",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "hlsplay", targets: ["hlsplay"]),
        .executable(name: "hls-origin", targets: ["hls-origin"])
    ],
    targets: [
        .systemLibrary(
            name: "CFFmpeg",
            path: "CFFmpeg",
            pkgConfig: "libavformat libavcodec libavutil libswresample",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswresample-dev"])]
        ),
        .systemLibrary(
            name: "CCurl",
            path: "Sources/CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .target(name: "HLSCore", swiftSettings: strict),
        .target(name: "HLSNet", dependencies: ["CCurl", "HLSCore"], swiftSettings: strict),
        .target(name: "HLSMedia", dependencies: ["CFFmpeg"], swiftSettings: strict),
        .target(name: "HLSOrigin", swiftSettings: strict),
        .target(name: "HLSPlayer", dependencies: ["HLSCore", "HLSNet", "HLSMedia"], swiftSettings: strict),
        .target(name: "HLSReport", dependencies: ["HLSCore"], swiftSettings: strict),
        .executableTarget(name: "hlsplay", dependencies: ["HLSPlayer", "HLSOrigin", "HLSReport"], swiftSettings: strict),
        .executableTarget(name: "hls-origin", dependencies: ["HLSOrigin", "HLSCore"], swiftSettings: strict),
        // Helpers every test target shares (process runner, repository paths, origin start, report
        // reading). A plain target no product names, so it never ships.
        .target(name: "TestSupport", dependencies: ["HLSOrigin"], path: "Tests/TestSupport", swiftSettings: strict),
        .testTarget(name: "HLSCoreTests", dependencies: ["HLSCore", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "HLSNetTests", dependencies: ["HLSNet", "HLSOrigin"], swiftSettings: strict),
        .testTarget(name: "HLSMediaTests", dependencies: ["HLSMedia", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "HLSOriginTests", dependencies: ["HLSOrigin", "HLSCore", "HLSMedia", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "HLSReportTests", dependencies: ["HLSReport", "TestSupport"], swiftSettings: strict),
        .testTarget(
            name: "HLSPlayerTests", dependencies: ["HLSPlayer", "HLSOrigin", "HLSCore", "HLSNet", "HLSReport", "TestSupport"], exclude: ["Fixtures"],
            swiftSettings: strict)
    ]
)
