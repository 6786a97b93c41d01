import Foundation
import XCTest

@testable import Cloudy

/// A key is part of the quota's owner only where it makes the quota another one (Open-Meteo's
/// commercial API): a provider always asked with a key keeps the quota.json written before the
/// key counted, as it keeps any of its own.
extension QuotaStateTests {
    func testAProviderAlwaysAskedWithAKeyKeepsItsQuotaFileOverTheUpgrade() throws {
        let until = rig.clock.now() + 86_400
        // Written before the key counted: no `keyed` field.
        let json = """
            {"provider":"dark-sky","url":"\(rig.server.baseURL)","ledger":{"hours":[],"minutes":[],"recent":[]},\
            "quietPeriod":{"provider":"dark-sky","reason":"dark-sky: HTTP 429: the month's calls are spent",\
            "until":\(until)}}
            """
        try FileManager.default.createDirectory(at: rig.storage, withIntermediateDirectories: true)
        try Data(json.utf8).write(to: file)
        XCTAssertNil(try XCTUnwrap(QuotaState.read(from: file, logger: rig.log.logger)).keyed)
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
}
