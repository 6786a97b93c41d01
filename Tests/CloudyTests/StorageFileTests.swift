import Foundation
import XCTest

@testable import Cloudy

/// The files under `--storage.path` when they are not what Cloudy wrote: a write that fails
/// says why as the system does, an oversized `places.json` is not read, and a quota file kept for
/// another URL is replaced with a log line.
final class StorageFileTests: XCTestCase {
    var storage: URL!
    let log = RecordedLog()

    override func setUpWithError() throws {
        storage = FileManager.default.temporaryDirectory.appendingPathComponent("cloudy-storage-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: storage, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: storage)
    }

    func testAFailedWriteSaysWhyAndLeavesNoTemporaryFile() throws {
        let file = storage.appendingPathComponent("quota.json")
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: false)
        XCTAssertThrowsError(try StorageFile.write(Data("{}".utf8), to: file)) {
            XCTAssertEqual("\($0)", "\(file.path): Is a directory")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: file.path + ".tmp"), "the rename failed: it is removed")
        try FileManager.default.removeItem(at: file)
        try FileManager.default.createDirectory(atPath: file.path + ".tmp", withIntermediateDirectories: false)
        XCTAssertThrowsError(try StorageFile.write(Data("{}".utf8), to: file)) {
            XCTAssertEqual("\($0)", "\(file.path).tmp: Is a directory")
        }
    }

    /// A storage path that cannot be a directory is said in the system's words, by the lock (the
    /// exporter serves on, keeping nothing) and by a write, not in Foundation's error text.
    func testAStoragePathThatIsAFileSaysWhy() throws {
        let file = storage.appendingPathComponent("data")
        XCTAssertTrue(FileManager.default.createFile(atPath: file.path, contents: nil))
        try StorageLock.acquire(file.appendingPathComponent("shard-1").path, logger: log.logger)
        let warning = try XCTUnwrap(log.entries(containing: "cannot lock the storage path").first)
        XCTAssertEqual(warning.metadata["error"], "\(file.path): Not a directory")
        XCTAssertThrowsError(try StorageFile.write(Data("{}".utf8), to: file.appendingPathComponent("quota.json"))) {
            XCTAssertEqual("\($0)", "\(file.path): Not a directory")
        }
        let loop = storage.appendingPathComponent("loop")
        try FileManager.default.createSymbolicLink(atPath: loop.path, withDestinationPath: loop.path)
        XCTAssertThrowsError(try StorageFile.makeDirectory(loop.appendingPathComponent("x"))) {
            XCTAssertEqual("\($0)", "\(loop.path): Too many levels of symbolic links", "not 'File exists'")
        }
        try StorageFile.makeDirectory(storage.appendingPathComponent("a/b/c"))
        try StorageFile.makeDirectory(storage.appendingPathComponent("a/b/c"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: storage.appendingPathComponent("a/b/c").path))
    }

    func testAnOversizedPlacesFileIsNotRead() throws {
        let file = storage.appendingPathComponent("places.json")
        XCTAssertTrue(FileManager.default.createFile(atPath: file.path, contents: nil))
        XCTAssertEqual(truncate(file.path, off_t(Geocoder.maxFileBytes + 1)), 0)  // sparse: nothing is written
        _ = Geocoder(
            baseURL: "http://127.0.0.1:1", storagePath: storage.path, client: CurlHTTPClient(userAgent: "test"),
            recorder: ExporterTelemetry(startedAt: 0), logger: log.logger)
        let warned = log.entries(containing: "cannot read the state file")
        XCTAssertEqual(warned.count, 1)
        XCTAssertEqual(warned.first?.metadata["reason"], "over 16777216 bytes")
    }

    /// A state file that is a link to a device that never ends is read to the limit, not until
    /// memory runs out: a device's size says nothing (`/dev/zero`'s is 0).
    func testAStateFileLinkedToADeviceIsReadToTheLimitOnly() throws {
        for name in ["places.json", "quota.json"] {
            try FileManager.default.createSymbolicLink(
                atPath: storage.appendingPathComponent(name).path, withDestinationPath: "/dev/zero")
        }
        _ = Geocoder(
            baseURL: "http://127.0.0.1:1", storagePath: storage.path, client: CurlHTTPClient(userAgent: "test"),
            recorder: ExporterTelemetry(startedAt: 0), logger: log.logger)
        let warned = log.entries(containing: "cannot read the state file")
        XCTAssertEqual(warned.first?.metadata["reason"], "File too large")
        XCTAssertNil(
            QuotaState.load(
                from: QuotaState.file(in: storage.path), provider: .openMeteo, url: "http://h", logger: log.logger))
    }

    func testAQuotaFileForAnotherURLIsReplacedWithALogLine() throws {
        let file = QuotaState.file(in: storage.path)
        let account = QuotaAccount(
            provider: .openMeteo, url: "http://localhost:8080", quota: Quota(limits: [.hour: 100]), file: file,
            now: 0, logger: log.logger)
        account.settle(places: 0, callsPerPlace: 2.9, spent: 2.9, at: 1)
        XCTAssertNotNil(
            QuotaState.load(from: file, provider: .openMeteo, url: "http://127.0.0.1:8080/", logger: log.logger),
            "the same server, respelled")
        XCTAssertNil(
            QuotaState.load(from: file, provider: .openMeteo, url: "http://127.0.0.1:8081", logger: log.logger))
        let told = log.entries(containing: "the quota state file is for another provider, server or key")
        XCTAssertEqual(told.count, 1)
        XCTAssertEqual(told.first?.metadata["kept_for"], "open-meteo http://localhost:8080")
        let replacing = QuotaAccount(
            provider: .openMeteo, url: "http://127.0.0.1:8081", quota: Quota(limits: [.hour: 100]), file: file,
            now: 2, logger: log.logger)
        replacing.settle(places: 0, callsPerPlace: 2.9, spent: 5.8, at: 3)
        let kept = QuotaState.load(from: file, provider: .openMeteo, url: "http://127.0.0.1:8081", logger: log.logger)
        XCTAssertEqual(kept?.ledger.spent(inLast: 3600, at: 3), 5.8, "the file is this URL's now")
    }
}

extension StorageFileTests {
    /// A link left where the temporary file goes is replaced, never written through: what it
    /// points to keeps its bytes.
    func testALinkInPlaceOfTheTemporaryFileIsNotWrittenThrough() throws {
        let file = QuotaState.file(in: storage.path)
        let victim = storage.appendingPathComponent("operator-data.txt")
        try FileManager.default.createDirectory(at: storage, withIntermediateDirectories: true)
        try Data("operator data".utf8).write(to: victim)
        try FileManager.default.createSymbolicLink(
            at: file.appendingPathExtension("tmp"), withDestinationURL: victim)
        try StorageFile.write(Data("{}".utf8), to: file)
        XCTAssertEqual(String(decoding: try Data(contentsOf: victim), as: UTF8.self), "operator data")
        XCTAssertEqual(String(decoding: try Data(contentsOf: file), as: UTF8.self), "{}")
    }
}
