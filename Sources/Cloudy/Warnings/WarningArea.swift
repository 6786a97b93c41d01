/// Where each warning source issues warnings, decided from a place's coordinates alone (no
/// request, no geocoder): a few latitude/longitude boxes per source that hold its country, its
/// territories and its waters.
///
/// The boxes are generous at borders on purpose. A place just outside a country but inside its
/// box (Windsor, Ontario beside Detroit; Strasbourg beside Kehl) is asked, and the source answers
/// with no warnings (NWS and MET Norway with an empty list, Bright Sky with its 404 "not covered",
/// which the source reads as none): one wasted request every `warnings.interval`. A box tight
/// enough to cut some border towns off would lose their warnings silently, which is worse.
/// `locations[].warnings` overrides the choice for a place either way.
public enum WarningArea {
    struct Box: Sendable {
        let south: Double
        let north: Double
        let west: Double
        let east: Double

        func contains(latitude: Double, longitude: Double) -> Bool {
            (south...north).contains(latitude) && (west...east).contains(longitude)
        }
    }

    static func boxes(_ source: WarningSourceName) -> [Box] {
        switch source {
        case .nws:
            return [
                Box(south: 24.0, north: 50.0, west: -125.5, east: -66.5),  // the 48 states
                Box(south: 51.0, north: 72.0, west: -180.0, east: -129.5),  // Alaska
                Box(south: 51.0, north: 53.5, west: 172.0, east: 180.0),  // the western Aleutians
                Box(south: 18.5, north: 22.5, west: -161.0, east: -154.5),  // Hawaii
                Box(south: 17.5, north: 18.8, west: -68.0, east: -64.3),  // Puerto Rico, US Virgin Islands
                Box(south: 13.0, north: 21.0, west: 144.0, east: 146.5),  // Guam, Northern Mariana Islands
                Box(south: -14.8, north: -10.8, west: -171.2, east: -168.0),  // American Samoa
            ]
        case .metNorway:
            return [
                Box(south: 56.0, north: 72.0, west: 0.0, east: 32.0),  // the mainland, its coast and sea areas
                Box(south: 73.5, north: 81.0, west: 10.0, east: 35.0),  // Svalbard and Bjørnøya
            ]
        case .dwd:
            return [Box(south: 47.2, north: 55.1, west: 5.8, east: 15.1)]  // Germany
        }
    }

    /// Whether `source` is asked for a place at these coordinates (decimal degrees).
    public static func covers(_ source: WarningSourceName, latitude: Double, longitude: Double) -> Bool {
        boxes(source).contains { $0.contains(latitude: latitude, longitude: longitude) }
    }
}
