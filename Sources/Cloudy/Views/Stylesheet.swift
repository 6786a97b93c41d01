import NIOCore

/// The pages' one stylesheet, served at `path` from the binary: a separate file, not a
/// `<style>` element, so the pages work behind `style-src 'self'`. Light and dark follow
/// `prefers-color-scheme`; one column on a phone, a grid of cards on a desktop.
enum Stylesheet {
    static let path = "/cloudy.css"

    static let body = ByteBuffer(
        string: """
            :root{color-scheme:light dark;--bg:#f7f8fa;--fg:#1c2330;--muted:#5c6675;--card:#fff;--line:#dde2e8;\
            --link:#0b5cad;--up:#17803d;--down:#b42318;--stale:#9a5b00;--waiting:#5c6675}
            @media (prefers-color-scheme:dark){:root{--bg:#12161c;--fg:#e6e9ee;--muted:#9aa4b2;--card:#1b2129;\
            --line:#2c3440;--link:#7cb7ff;--up:#4cc47a;--down:#ff7b6e;--stale:#f0b454;--waiting:#9aa4b2}}
            *{box-sizing:border-box}
            body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.45 system-ui,-apple-system,"Segoe UI",\
            Roboto,sans-serif}
            a{color:var(--link)}
            .sprite{position:absolute;width:0;height:0;overflow:hidden}
            .masthead{display:flex;flex-wrap:wrap;gap:.4rem 1rem;align-items:baseline;padding:.7rem 1rem;\
            border-bottom:1px solid var(--line);background:var(--card)}
            .masthead .home{font-weight:700;text-decoration:none;color:var(--fg)}
            .masthead nav{margin-left:auto;display:flex;gap:1rem}
            .version,.readiness{color:var(--muted);font-size:.9rem}
            .readiness.ready{color:var(--up)}
            .readiness.not-ready{color:var(--down)}
            main{max-width:72rem;margin:0 auto;padding:1rem}
            h1{font-size:1.6rem;margin:.4rem 0 .8rem}
            h2{font-size:1.15rem;margin:1.4rem 0 .6rem}
            .cards{list-style:none;padding:0;margin:0;display:grid;gap:1rem;\
            grid-template-columns:repeat(auto-fill,minmax(17rem,1fr))}
            .card{background:var(--card);border:1px solid var(--line);border-radius:.6rem;padding:.9rem 1rem}
            .card h2{margin:0 0 .3rem;font-size:1.2rem;overflow-wrap:anywhere}
            .state{margin:.2rem 0 .5rem;color:var(--muted);font-size:.9rem;overflow-wrap:anywhere}
            .badge{display:inline-block;font-weight:600;margin-right:.3rem}
            .state.up .badge{color:var(--up)}
            .state.down .badge{color:var(--down)}
            .state.stale .badge{color:var(--stale)}
            .state.waiting .badge{color:var(--waiting)}
            .now{display:flex;align-items:center;gap:.5rem;margin:.3rem 0;flex-wrap:wrap}
            .now .temperature{font-size:1.4rem;font-weight:600}
            .icon{width:2rem;height:2rem;vertical-align:middle;flex:none}
            .icon.big{width:4.5rem;height:4.5rem}
            .facts{display:grid;grid-template-columns:1fr 1fr;gap:.2rem 1rem;margin:.4rem 0 0}
            .facts div,.readings div{display:flex;justify-content:space-between;gap:.5rem;\
            border-bottom:1px solid var(--line);padding:.15rem 0}
            dt{color:var(--muted)}
            dd{margin:0;text-align:right}
            h1{overflow-wrap:anywhere}
            .hero{display:flex;align-items:center;gap:1rem}
            .hero .temperature{font-size:2.4rem;font-weight:600;margin:0}
            .hero p{margin:.1rem 0}
            .readings{display:grid;grid-template-columns:repeat(auto-fill,minmax(15rem,1fr));gap:.2rem 1.5rem}
            .scroll{overflow-x:auto;background:var(--card);border:1px solid var(--line);border-radius:.6rem}
            table{border-collapse:collapse;width:100%;font-size:.95rem}
            th,td{padding:.35rem .6rem;text-align:left;white-space:nowrap;border-bottom:1px solid var(--line)}
            thead th{color:var(--muted);font-weight:600}
            tbody tr:last-child th,tbody tr:last-child td{border-bottom:0}
            .week .condition{margin-left:.3rem}
            .week tr.crossed th,.week .marks,.ahead .badge{color:var(--down)}
            .ahead{margin:.5rem 0 0;font-size:.9rem;overflow-wrap:anywhere}
            ul.crossings{padding-left:1.2rem;margin:.3rem 0}
            h3{font-size:1rem;margin:1rem 0 .3rem}
            .empty{color:var(--muted)}
            .aqi{display:inline-block;min-width:2.2rem;padding:0 .35rem;border-radius:.3rem;text-align:center;\
            font-weight:600;color:#1c2330}
            .aqi-eu-1{background:#50f0e6}.aqi-eu-2{background:#50ccaa}.aqi-eu-3{background:#f0e641}
            .aqi-eu-4{background:#ff5050}.aqi-eu-5{background:#960032;color:#fff}.aqi-eu-6{background:#7d2181;color:#fff}
            .aqi-us-1{background:#00e400}.aqi-us-2{background:#ff0}.aqi-us-3{background:#ff7e00}
            .aqi-us-4{background:#f00;color:#fff}.aqi-us-5{background:#8f3f97;color:#fff}.aqi-us-6{background:#7e0023;color:#fff}
            .air{margin:.5rem 0 0}
            .problem{margin:.2rem 0 .5rem;color:var(--stale);font-size:.9rem;overflow-wrap:anywhere}
            .warning-mark{margin:.2rem 0 .5rem;padding:.2rem .5rem;border-left:.3rem solid var(--sev);\
            overflow-wrap:anywhere}
            .warning{background:var(--card);border:1px solid var(--line);border-left:.4rem solid var(--sev);\
            border-radius:.6rem;padding:.6rem 1rem;margin:0 0 1rem;overflow-wrap:anywhere}
            .warning h3{margin:.2rem 0;font-size:1.05rem}
            .warning .badge{color:var(--sev)}
            .warning .description,.warning .instruction{white-space:pre-line}
            .warning-extreme{--sev:#8b0000}
            .warning-severe{--sev:#d4380d}
            .warning-moderate{--sev:#d48806}
            .warning-minor{--sev:#1677c5}
            .warning-unknown{--sev:var(--muted)}
            @media (max-width:40rem){main{padding:.7rem}.masthead nav{margin-left:0}.week .condition{display:none}}

            """)
}
