import Foundation
import XCTest

@testable import Cloudy

/// bcrypt through libxcrypt, checked against hashes made by htpasswd and Python's crypt (both
/// independent of the code under test), and the login cache's key.
final class BcryptTests: XCTestCase {
    func testHashesFromHtpasswdVerify() throws {
        for password in ["secret", "pässwörd ☂", String(repeating: "x", count: 72)] {
            let hash = try TestCertificates.htpasswdHash(password)
            XCTAssertTrue(hash.hasPrefix("$2y$04$"), hash)
            XCTAssertEqual(Bcrypt.cost(of: hash), 4)
            XCTAssertTrue(Bcrypt.verify(password: Array(password.utf8), hash: hash), password)
            XCTAssertFalse(Bcrypt.verify(password: Array((password + "!").utf8), hash: hash), password)
            XCTAssertFalse(Bcrypt.verify(password: [], hash: hash))
        }
    }

    func testTheThreePrefixesVerify() throws {
        let hash = try TestCertificates.htpasswdHash("secret")
        for prefix in ["$2a$", "$2b$", "$2y$"] {
            let variant = prefix + hash.dropFirst(4)
            XCTAssertTrue(Bcrypt.verify(password: Array("secret".utf8), hash: variant), variant)
        }
    }

    func testBytesThatAreNotUTF8AndNULAndOverlongPasswords() throws {
        // htpasswd hashes the bytes it reads, as they are: Latin-1 "café" here.
        let latin1: [UInt8] = [0x63, 0x61, 0x66, 0xE9]
        let latin1Hash = try TestCertificates.htpasswdHash(bytes: latin1)
        XCTAssertTrue(Bcrypt.verify(password: latin1, hash: latin1Hash))
        XCTAssertFalse(Bcrypt.verify(password: Array("café".utf8), hash: latin1Hash), "UTF-8 café is other bytes")
        let hash = try TestCertificates.htpasswdHash("secret")
        XCTAssertFalse(Bcrypt.verify(password: Array("secret".utf8) + [0, 0x41], hash: hash), "NUL never truncates")
        let long = String(repeating: "x", count: 72)
        let longHash = try TestCertificates.htpasswdHash(long)
        XCTAssertFalse(Bcrypt.verify(password: Array((long + "tail").utf8), hash: longHash), "73+ bytes are refused")
    }

    func testTheDummyHashHasTheCostAsked() {
        let dummy = Bcrypt.dummyHash(cost: 5)
        XCTAssertEqual(Bcrypt.cost(of: dummy), 5, dummy)
        XCTAssertFalse(Bcrypt.verify(password: Array("".utf8), hash: dummy))
    }

    func testCacheKeysSeparateUserFromPassword() {
        let cache = LoginCache(capacity: 3)
        let ab = cache.key(user: Array("ab".utf8), password: Array("c".utf8))
        let a = cache.key(user: Array("a".utf8), password: Array("bc".utf8))
        XCTAssertNotEqual(ab, a)
        XCTAssertEqual(ab, cache.key(user: Array("ab".utf8), password: Array("c".utf8)))
        XCTAssertNotEqual(ab, LoginCache().key(user: Array("ab".utf8), password: Array("c".utf8)), "salted per cache")
    }

    /// Bounded by forgetting the login used longest ago, never by starting over.
    func testTheCacheForgetsTheLoginUsedLongestAgo() {
        let cache = LoginCache(capacity: 3)
        let keys = (0..<4).map { cache.key(user: [UInt8($0)], password: []) }
        for key in keys.prefix(3) { cache.remember(key) }
        XCTAssertTrue(cache.contains(keys[0]), "used again: now the newest")
        cache.remember(keys[3])
        XCTAssertEqual(cache.count, 3)
        XCTAssertFalse(cache.contains(keys[1]), "used longest ago: forgotten")
        for key in [keys[0], keys[2], keys[3]] { XCTAssertTrue(cache.contains(key)) }
        cache.remember(keys[3])
        XCTAssertEqual(cache.count, 3, "remembering one it holds forgets nothing")
    }

    func testTheDummyHashTakesNoBcryptAndNoPasswordMatchesIt() {
        let dummy = Bcrypt.dummyHash(cost: 31)  // would take days if it ran bcrypt
        XCTAssertEqual(Bcrypt.cost(of: dummy), 31)
        XCTAssertNotEqual(Bcrypt.dummyHash(cost: 31), dummy, "random")
        let cheap = Bcrypt.withCost(dummy, 4)
        XCTAssertEqual(Bcrypt.cost(of: cheap), 4)
        XCTAssertEqual(cheap.dropFirst(7), dummy.dropFirst(7), "same salt and digest")
        XCTAssertFalse(Bcrypt.verify(password: [], hash: cheap))
    }

    func testCredentialsAreReadFromTheHeaderOnly() {
        func basic(_ bytes: [UInt8]) -> String { "Basic " + Data(bytes).base64EncodedString() }
        XCTAssertEqual(BasicAuth.credentials(basic(Array("alice:se:cret".utf8)))?.user, Array("alice".utf8))
        XCTAssertEqual(BasicAuth.credentials(basic(Array("alice:se:cret".utf8)))?.password, Array("se:cret".utf8))
        XCTAssertEqual(BasicAuth.credentials("basic " + Data("a:b".utf8).base64EncodedString())?.user, [0x61])
        XCTAssertNil(BasicAuth.credentials(basic(Array("no colon".utf8))))
        XCTAssertNil(BasicAuth.credentials("Basic !!!notbase64"))
        XCTAssertNil(BasicAuth.credentials("Bearer abc"))
        XCTAssertNil(BasicAuth.credentials("Basic"))
        XCTAssertNil(BasicAuth.credentials(nil))
        XCTAssertEqual(BasicAuth.credentials(basic([0xFF, 0x3A, 0xE9]))?.password, [0xE9], "bytes as sent")
        XCTAssertEqual(
            BasicAuth.credentials("  BASIC " + Data("a:b".utf8).base64EncodedString() + " ")?.password, [0x62])
        XCTAssertNil(BasicAuth.credentials("Basicx " + Data("a:b".utf8).base64EncodedString()))
    }

    /// The decoder against Foundation's encoder, every length and every byte value.
    func testBase64DecodingMatchesFoundation() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<64 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoded = Array(Data(bytes).base64EncodedString().utf8)
            XCTAssertEqual(BasicAuth.base64Decoded(encoded[...]), length == 0 ? nil : bytes, "\(length) bytes")
        }
        XCTAssertEqual(BasicAuth.base64Decoded(Array("/+8=".utf8)[...]), [0xFF, 0xEF])
        for bad in ["abc", "ab=c", "a===", "ab!c", "abcd=", "=abc", "ab==abcd"] {
            XCTAssertNil(BasicAuth.base64Decoded(Array(bad.utf8)[...]), bad)
        }
    }
}
