// swift-tools-version:6.0
import PackageDescription

// The release executable is linked for a small resident size (bench/README.md, "Memory"). Build it
// with scripts/build-release: the Swift runtime and Foundation are then part of the executable,
// and every package's functions sit in sections of their own. Then, from
// Sources/cloudy_exporter/release-link/:
// - lld, with compact relative relocations (the loader reads ~20 KB of them instead of 2.2 MB);
// - the functions that run when serving laid out side by side, in the order of hot-functions.txt
//   (written by bench/hot-functions), and the compiler's unnamed helpers gathered next to them
//   (unnamed-functions.ld), so that the code a running exporter touches shares few pages;
// - libstdc++ linked statically: its only users are the Swift runtime and ICU, already static;
//   the shared one costs ~1 MB resident, mostly its symbol tables read by the loader. The
//   toolchain asks for it with -lstdc++, and the first libstdc++.so on the library path is that
//   directory's linker script, which names the static archive.
// Debug builds and tests link as usual.
let releaseLink = "\(Context.packageDirectory)/Sources/cloudy_exporter/release-link"
let releaseLinkerFlags = [
    "-L", releaseLink,
    "-use-ld=lld",
    "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
    "-Xlinker", "--no-export-dynamic",
    "-Xlinker", "--symbol-ordering-file=\(releaseLink)/hot-functions.txt",
    "-Xlinker", "--no-warn-symbol-ordering",
    "-Xlinker", "-T", "-Xlinker", "\(releaseLink)/unnamed-functions.ld",
]

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
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.0"),
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
        // glibc's malloc.h: arena limit and trimming, to keep the resident size honest.
        .systemLibrary(name: "CMalloc"),
        .target(
            name: "Cloudy",
            dependencies: [
                "CCurl",
                "CZlib",
                "CMalloc",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        .executableTarget(
            name: "cloudy_exporter",
            dependencies: [
                "Cloudy",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            exclude: ["release-link"],
            linkerSettings: [.unsafeFlags(releaseLinkerFlags, .when(platforms: [.linux], configuration: .release))]
        ),
        .testTarget(
            name: "CloudyTests",
            dependencies: [
                "Cloudy",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            resources: [.copy("Fixtures")]
        ),
    ]
)
