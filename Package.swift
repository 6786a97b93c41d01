// swift-tools-version:6.0
import PackageDescription

// An ordinary package: `swift build -c release` builds a working exporter. The release binary as
// shipped (static Swift runtime, laid out for a small resident size) is scripts/build-release's.

// The SwiftNIO parts the server is built on; the tests drive the same pipeline on EmbeddedChannel.
let nio: [Target.Dependency] = ["NIOCore", "NIOPosix", "NIOHTTP1"].map { .product(name: $0, package: "swift-nio") }

let package = Package(
    name: "Cloudy",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "cloudy_exporter", targets: ["cloudy_exporter"]),
        .library(name: "Cloudy", targets: ["Cloudy"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.0"),
        // TLS and mutual TLS for --web.config.file (BoringSSL inside; no system OpenSSL).
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.0"),
        // HTML of the status and place pages: logic-less templates, every value HTML-escaped.
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
    ],
    targets: [
        // libcurl, the HTTP client for weather APIs (Debian: libcurl4-openssl-dev).
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // zlib, for the gzip exposition rendered once per refresh (Debian: zlib1g-dev).
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // libxcrypt's bcrypt and OpenSSL's SHA-256, for the web config's basic_auth_users
        // (Debian: libcrypt-dev, libssl-dev).
        .systemLibrary(
            name: "CCrypt",
            providers: [.apt(["libcrypt-dev", "libssl-dev"])]
        ),
        // glibc's malloc.h: arena limit and trimming, to keep the resident size honest.
        .systemLibrary(name: "CMalloc"),
        .target(
            name: "Cloudy",
            dependencies: [
                "CCurl",
                "CZlib",
                "CMalloc",
                "CCrypt",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Mustache", package: "swift-mustache"),
            ] + nio
        ),
        .executableTarget(
            name: "cloudy_exporter",
            dependencies: [
                "Cloudy",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "CloudyTests",
            dependencies: [
                "Cloudy", .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ] + nio,
            // Fixtures are read from the source tree (TestPaths), never from a bundle.
            exclude: ["Fixtures"]
        ),
    ]
)
