import NIOCore

/// The weather icons, shipped in the binary as one inline SVG sprite per page: a `<symbol>` per
/// `WeatherCondition.icon` name (`i-rain`, `i-clear-night`, …) that the pages show with
/// `<use href="#i-NAME"/>`. Colours are presentation attributes, not CSS, so the icons need no
/// style and nothing from the network.
enum WeatherIcons {
    /// The pages' favicon (a sun behind a cloud), so no browser asks for a `/favicon.ico` that
    /// is not there.
    static let faviconPath = "/favicon.svg"
    static let favicon = ByteBuffer(
        string: """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">\
            <circle cx="11" cy="10" r="6" fill="\(sun)"/>\
            <path fill="\(cloud)" d="M9 26h15a5.5 5.5 0 0 0 .6-11A7.5 7.5 0 0 0 10 16a5 5 0 0 0-1 10z"/></svg>

            """)

    /// Every icon `WeatherCondition` names, and `unknown`.
    static let names = [
        "clear-day", "clear-night", "partly-cloudy-day", "partly-cloudy-night", "cloudy", "fog", "drizzle",
        "rain", "showers", "sleet", "snow", "thunderstorm", "unknown",
    ]

    private static let sun = "#f2a900"
    private static let moon = "#b9b38f"
    private static let cloud = "#8e9aa8"
    private static let water = "#2f7fd8"
    private static let ice = "#8fc4ef"

    /// A Mustache partial without tags: constant markup.
    static let sprite = """
        <svg xmlns="http://www.w3.org/2000/svg" class="sprite" aria-hidden="true" focusable="false">
        <defs>
        <g id="sun"><circle cx="16" cy="16" r="6" fill="\(sun)"/><path stroke="\(sun)" stroke-width="2.2" \
        stroke-linecap="round" d="M16 3v4M16 25v4M3 16h4M25 16h4M6.8 6.8l2.8 2.8M22.4 22.4l2.8 2.8M6.8 25.2l2.8-2.8\
        M22.4 9.6l2.8-2.8"/></g>
        <g id="moon"><path fill="\(moon)" d="M19 4a12 12 0 1 0 9 17.5A10 10 0 0 1 19 4z"/></g>
        <g id="cloud"><path fill="\(cloud)" d="M9 24h15a5.5 5.5 0 0 0 .6-11A7.5 7.5 0 0 0 10 14a5 5 0 0 0-1 10z"/></g>
        <g id="small-sun"><circle cx="11" cy="10" r="4.5" fill="\(sun)"/><path stroke="\(sun)" stroke-width="2" \
        stroke-linecap="round" d="M11 1.5v2M2.5 10h2M5 4l1.4 1.4M17 4l-1.4 1.4"/></g>
        <g id="low-cloud"><path fill="\(cloud)" d="M9 20h15a5 5 0 0 0 .5-10A7 7 0 0 0 11 11a4.5 4.5 0 0 0-2 9z"/></g>
        </defs>
        <symbol id="i-clear-day" viewBox="0 0 32 32"><use href="#sun"/></symbol>
        <symbol id="i-clear-night" viewBox="0 0 32 32"><use href="#moon"/></symbol>
        <symbol id="i-partly-cloudy-day" viewBox="0 0 32 32"><use href="#small-sun"/><use href="#cloud"/></symbol>
        <symbol id="i-partly-cloudy-night" viewBox="0 0 32 32">\
        <path fill="\(moon)" d="M12 2a8 8 0 1 0 8 11A7 7 0 0 1 12 2z"/><use href="#cloud"/></symbol>
        <symbol id="i-cloudy" viewBox="0 0 32 32"><use href="#cloud"/></symbol>
        <symbol id="i-fog" viewBox="0 0 32 32"><path stroke="\(cloud)" stroke-width="2.4" stroke-linecap="round" \
        d="M5 10h22M3 16h26M6 22h20M9 28h14"/></symbol>
        <symbol id="i-drizzle" viewBox="0 0 32 32"><use href="#low-cloud"/><path stroke="\(water)" \
        stroke-width="2.4" stroke-linecap="round" d="M11 24v.5M16 26v.5M21 24v.5M13.5 29v.5M18.5 29v.5"/></symbol>
        <symbol id="i-rain" viewBox="0 0 32 32"><use href="#low-cloud"/><path stroke="\(water)" stroke-width="2.2" \
        stroke-linecap="round" d="M11 23l-2 6M16 23l-2 6M21 23l-2 6"/></symbol>
        <symbol id="i-showers" viewBox="0 0 32 32"><use href="#small-sun"/><use href="#low-cloud"/>\
        <path stroke="\(water)" stroke-width="2.2" stroke-linecap="round" d="M13 23l-2 6M19 23l-2 6"/></symbol>
        <symbol id="i-sleet" viewBox="0 0 32 32"><use href="#low-cloud"/><path stroke="\(water)" stroke-width="2.2" \
        stroke-linecap="round" d="M11 23l-2 6M19 23l-2 6"/><circle cx="15.5" cy="26" r="1.6" fill="\(ice)"/>\
        <circle cx="23.5" cy="27" r="1.6" fill="\(ice)"/></symbol>
        <symbol id="i-snow" viewBox="0 0 32 32"><use href="#low-cloud"/><g fill="\(ice)"><circle cx="10" cy="25" \
        r="1.8"/><circle cx="16" cy="27.5" r="1.8"/><circle cx="22" cy="25" r="1.8"/><circle cx="13" cy="30" r="1.5"/>\
        <circle cx="19" cy="30" r="1.5"/></g></symbol>
        <symbol id="i-thunderstorm" viewBox="0 0 32 32"><use href="#low-cloud"/>\
        <path fill="\(sun)" d="M17 19l-5 7h4l-2 5 6-8h-4l2-4z"/></symbol>
        <symbol id="i-unknown" viewBox="0 0 32 32"><circle cx="16" cy="16" r="11" fill="none" stroke="\(cloud)" \
        stroke-width="2.4"/><path fill="none" stroke="\(cloud)" stroke-width="2.4" stroke-linecap="round" \
        d="M12.5 13a3.5 3.5 0 1 1 5 3.2c-1 .5-1.5 1.2-1.5 2.3"/><circle cx="16" cy="22.5" r="1.5" \
        fill="\(cloud)"/></symbol>
        </svg>

        """
}
