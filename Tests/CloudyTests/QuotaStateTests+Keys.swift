import Foundation
import XCTest

@testable import Cloudy

/// A key is part of the quota's owner only where it makes the quota another one (Open-Meteo's
/// commercial API): a provider always asked with a key keeps the quota.json written before the
/// key counted, as it keeps any of its own.
extension QuotaStateTests {
    /// A quota.json an older Cloudy wrote for `provider`, refused until `until`: no `keyed` field.
    func writeAnOlderFile(_ provider: ProviderName, until: Double) throws {
        let json = """
            {"provider":"\(provider.rawValue)","url":"\(rig.server.baseURL)",\
            "ledger":{"hours":[],"minutes":[],"recent":[]},"quietPeriod":{"provider":"\(provider.rawValue)",\
            "reason":"\(provider.rawValue): HTTP 429: the quota is spent","until":\(until)}}
            """
        try FileManager.default.createDirectory(at: rig.storage, withIntermediateDirectories: true)
        try Data(json.utf8).write(to: file)
        XCTAssertNil(try XCTUnwrap(QuotaState.read(from: file, logger: rig.log.logger)).keyed)
    }

    func testAProviderAlwaysAskedWithAKeyKeepsItsQuotaFileOverTheUpgrade() throws {
        let until = rig.clock.now() + 86_400
        try writeAnOlderFile(.darkSky, until: until)
        var config = rig.config(places: 1, interval: 600)
        config.provider = ProviderSettings(name: .darkSky, url: rig.server.baseURL, apiKey: Secret("k"))
        rig.start(config)
        XCTAssertEqual(rig.refresher.quietPeriod?.until, until, "the month's refusal still holds")
        XCTAssertFalse(config.provider.spendsAKeysQuota)

        var openMeteo = rig.config(places: 1, interval: 600)
        openMeteo.provider = ProviderSettings(name: .openMeteo, url: rig.server.baseURL, apiKey: Secret("k"))
        XCTAssertTrue(openMeteo.provider.spendsAKeysQuota, "the commercial API")
        openMeteo.provider.apiKey = nil
        XCTAssertFalse(openMeteo.provider.spendsAKeysQuota)
    }

    /// An Open-Meteo quota.json written before the key counted does not say whether a key was
    /// used: it stays the account's over the upgrade, with a key or without (one written since
    /// says: `LinkedQuotaAccountTests.testAKeyAddedOnTheSameURLIsAnotherQuota`).
    func testAnOlderOpenMeteoFileCountsWithAKeyOrWithout() throws {
        let until = rig.clock.now() + 3600
        try writeAnOlderFile(.openMeteo, until: until)
        var config = rig.config(places: 1, interval: 600)
        rig.start(config)
        XCTAssertEqual(rig.refresher.quietPeriod?.until, until, "without a key")
        config.provider.apiKey = Secret("k")
        restart(config)
        XCTAssertEqual(rig.refresher.quietPeriod?.until, until, "with one: the commercial API's refusal, kept")
    }
}
