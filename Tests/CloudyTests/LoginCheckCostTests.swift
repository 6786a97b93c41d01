import Foundation
import NIOConcurrencyHelpers
import XCTest

@testable import Cloudy

/// What a login that is not cached costs, on the server's real pipeline: the bcrypt work of the
/// highest cost whoever it names, at most `LoginCheckQueue.maximumPending` waiting, and wrong
/// logins never pushing a good one out of the cache.
final class LoginCheckCostTests: WebConfigTestCase {
    /// Every login that is not cached does the bcrypt work of the highest cost, whether the user
    /// is known, unknown, at a lower cost, right or wrong: counted in rounds (2^cost per bcrypt)
    /// through the verifier, which runs the real bcrypt.
    func testEveryUncachedCheckDoesTheWorkOfTheHighestCost() throws {
        let rounds = NIOLockedValueBox(0)
        let users = [
            "alice": try TestCertificates.htpasswdHash("alice's", cost: 7),
            "bob": try TestCertificates.htpasswdHash("bob's", cost: 4),
            "carol": try TestCertificates.htpasswdHash("carol's", cost: 5),
        ]
        let auth = BasicAuth(users: users, dummyHash: Bcrypt.dummyHash(cost: BasicAuth.dummyCost(users))) {
            password, hash in
            rounds.withLockedValue { $0 += 1 << (Bcrypt.cost(of: hash) ?? 0) }
            return Bcrypt.verify(password: password, hash: hash)
        }
        let tries: [(String, String, Bool)] = [
            ("alice", "wrong", false), ("bob", "wrong", false), ("carol", "wrong", false),
            ("nobody", "bob's", false), ("bob", String(repeating: "x", count: 80), false),
            ("bob", "bob's", true), ("alice", "alice's", true),
        ]
        for (user, password, expected) in tries {
            rounds.withLockedValue { $0 = 0 }
            guard case .needsBcrypt(let check) = auth.check(authorization: "Basic " + Self.base64(user, password))
            else { return XCTFail("\(user) was not checked") }
            XCTAssertEqual(check(), expected, user)
            XCTAssertEqual(rounds.withLockedValue { $0 }, 1 << 7, "\(user) with \(password.prefix(8))")
        }
    }

    /// The same with the real bcrypt's CPU time on this thread (not wall time): a wrong password
    /// for a cost-4 user costs what one for a cost-9 user does (without padding: 1/32 of it).
    func testAWrongPasswordForACheapUserTakesTheCPUTimeOfTheCostliest() throws {
        let users = [
            "alice": try TestCertificates.htpasswdHash("alice's", cost: 9),
            "bob": try TestCertificates.htpasswdHash("bob's", cost: 4),
        ]
        let auth = BasicAuth(users: users, dummyHash: Bcrypt.dummyHash(cost: 9))
        func cpuTime(_ user: String) -> Double {
            (0..<3).map { _ in
                let before = Bcrypt.threadCPUSeconds()
                _ = auth.verify(password: Array("wrong".utf8), hash: users[user])
                return Bcrypt.threadCPUSeconds() - before
            }.min()!
        }
        let alice = cpuTime("alice")
        let bob = cpuTime("bob")
        let nobody = cpuTime("nobody")
        XCTAssertGreaterThan(bob / alice, 0.75, "bob \(bob) s, alice \(alice) s")
        XCTAssertLessThan(bob / alice, 1.33, "bob \(bob) s, alice \(alice) s")
        XCTAssertGreaterThan(nobody / alice, 0.75, "nobody \(nobody) s, alice \(alice) s")
        XCTAssertLessThan(nobody / alice, 1.33, "nobody \(nobody) s, alice \(alice) s")
    }

    /// Over the bound on logins waiting for bcrypt, a login not in the cache is answered 503 at
    /// once; a cached one still gets in; the bound frees as checks finish.
    func testLoginsOverTheBoundAreAnswered503AtOnce() throws {
        let (first, web) = try connection(users, maximumPendingLogins: 2)
        let login = basic("prometheus", Self.password)
        try first.send("GET", "/metrics", headers: [login])
        first.runOffloadedWork()
        XCTAssertEqual(try XCTUnwrap(first.readResponse()).status, 200)

        let waiting = [
            try EmbeddedHTTPConnection(routes: routes(web)), try EmbeddedHTTPConnection(routes: routes(web)),
        ]
        for (n, connection) in waiting.enumerated() {
            try connection.send("GET", "/metrics", headers: [basic("prometheus", "wrong \(n)")])
            XCTAssertNil(try connection.readResponse())
        }
        XCTAssertEqual(web.loginChecks.count, 2)
        let over = try EmbeddedHTTPConnection(routes: routes(web))
        let busy = try over.request("/metrics", headers: [basic("prometheus", "wrong again")])
        XCTAssertEqual(busy.status, 503)
        XCTAssertEqual(busy.text, "503 too many logins waiting to be checked; try again shortly\n")
        XCTAssertEqual(busy.header("Retry-After"), "1")
        XCTAssertEqual(over.offloadedWorkCount, 0, "no bcrypt queued for it")
        XCTAssertTrue(over.isOpen)
        XCTAssertEqual(try over.request("/metrics", headers: [login]).status, 200, "a cached login gets in")

        waiting[0].runOffloadedWork()
        XCTAssertEqual(try XCTUnwrap(waiting[0].readResponse()).status, 401)
        XCTAssertEqual(web.loginChecks.count, 1)
        try over.send("GET", "/metrics", headers: [basic("prometheus", "wrong again")])
        XCTAssertEqual(over.offloadedWorkCount, 1, "room again: checked")
        over.runOffloadedWork()
        waiting[1].runOffloadedWork()
        XCTAssertEqual(try XCTUnwrap(over.readResponse()).status, 401)
        XCTAssertEqual(web.loginChecks.count, 0)
    }

    /// Refusals are never cached, so any number of distinct wrong logins leaves a good one cached.
    func testWrongLoginsNeverEvictAGoodOne() throws {
        let users = ["prometheus": hash]
        let auth = BasicAuth(users: users, dummyHash: Bcrypt.dummyHash(cost: 4), cache: LoginCache(capacity: 4))
        let good = "Basic " + Self.base64("prometheus", Self.password)
        guard case .needsBcrypt(let check) = auth.check(authorization: good) else { return XCTFail("not checked") }
        XCTAssertTrue(check())
        for n in 0..<40 {
            guard case .needsBcrypt(let check) = auth.check(authorization: "Basic " + Self.base64("user\(n)", "\(n)"))
            else { return XCTFail("wrong login \(n) was answered from the cache") }
            XCTAssertFalse(check())
        }
        XCTAssertEqual(auth.cache.count, 1, "only the good login is kept")
        guard case .verified = auth.check(authorization: good) else { return XCTFail("the good login was evicted") }
    }
}
