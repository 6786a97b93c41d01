import Mustache

/// The Mustache templates of the HTML pages, parsed once. Templates hold no logic (the view
/// models do) and every `{{value}}` is HTML-escaped by the library (no template uses the
/// unescaped `{{{…}}}`). The icons are `WeatherIcons.sprite`, a partial of constant SVG.
enum PageTemplates {
    static let library: MustacheLibrary = {
        do {
            var library = MustacheLibrary()
            try library.register(head, named: "head")
            try library.register(masthead, named: "masthead")
            try library.register(WeatherIcons.sprite, named: "icons")
            try library.register(landing, named: "landing")
            try library.register(place, named: "place")
            try library.register(notFound, named: "not-found")
            return library
        } catch {
            fatalError("a page template does not parse: \(error)")  // constant text; RoutesTests render each
        }
    }()

    static func render(_ content: Any, _ template: String) -> String {
        guard let html = library.render(content, withTemplate: template) else {
            fatalError("no page template named \(template)")
        }
        return html
    }

    /// Up to `<body>`: no script, and nothing loaded from anywhere but this server.
    static let head = """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="color-scheme" content="light dark">
        <title>{{title}}</title>
        {{#masthead}}
        <link rel="stylesheet" href="{{stylesheetPath}}">
        <link rel="icon" href="{{faviconPath}}" type="image/svg+xml">
        {{/masthead}}
        </head>
        <body>
        {{> icons}}

        """

    /// The bar on top of every page: readiness and version, and the exporter's other endpoints.
    static let masthead = """
        {{#masthead}}
        <header class="masthead">
        <a class="home" href="/">Cloudy exporter</a>
        <span class="version">{{version}}</span>
        <span class="readiness {{readinessClass}}">{{readiness}}</span>
        <nav><a href="{{metricsPath}}">Metrics</a> <a href="/healthz">Health</a> <a href="/readyz">Readiness</a></nav>
        </header>
        {{/masthead}}

        """

    /// `/`: a card per place.
    static let landing = """
        {{> head}}
        {{> masthead}}
        <main>
        <h1>Places</h1>
        {{^places}}
        <p class="empty">No places to show: this exporter watches none.</p>
        {{/places}}
        <ul class="cards">
        {{#places}}
        <li class="card">
        <h2><a dir="auto" href="{{link}}">{{name}}</a></h2>
        <p class="state {{state}}"><span class="badge">{{state}}</span>{{#stateDetail}} <span dir="auto">{{.}}</span>{{/stateDetail}}</p>
        {{#problems}}
        <p class="problem" dir="auto">{{.}}</p>
        {{/problems}}
        {{#warnings}}
        <p class="warning-mark warning-{{severity}}"><a href="{{link}}#warnings" dir="auto">{{summary}}</a></p>
        {{/warnings}}
        {{#weather}}
        <p class="now"><svg class="icon" viewBox="0 0 32 32" aria-hidden="true"><use href="#i-{{icon}}"/></svg>
        <span class="temperature">{{temperature}}</span> <span class="condition">{{condition}}</span></p>
        <dl class="facts">
        <div><dt>Low</dt><dd class="low">{{low}}</dd></div>
        <div><dt>High</dt><dd class="high">{{high}}</dd></div>
        <div><dt>Wind</dt><dd class="wind">{{wind}}</dd></div>
        <div><dt>Observed</dt><dd class="observed">{{observedAt}}</dd></div>
        </dl>
        {{#thresholdsAhead}}
        <p class="ahead"><span class="badge">Thresholds ahead</span> <span class="days">{{.}}</span></p>
        {{/thresholdsAhead}}
        {{/weather}}
        {{#airQuality}}
        <p class="air">Air <span class="aqi {{bandClass}}">{{value}}</span> {{band}}</p>
        {{/airQuality}}
        </li>
        {{/places}}
        </ul>
        </main>
        </body>
        </html>

        """

    /// `/places/<name>`: the day view (now and the next hours) and the week view.
    static let place = """
        {{> head}}
        {{> masthead}}
        <main>
        <p class="back"><a href="/">All places</a></p>
        {{#status}}
        <h1 dir="auto">{{name}}</h1>
        <p class="state {{state}}"><span class="badge">{{state}}</span>{{#stateDetail}} <span dir="auto">{{.}}</span>{{/stateDetail}}</p>
        {{#problems}}
        <p class="problem" dir="auto">{{.}}</p>
        {{/problems}}
        {{#warnings}}
        <section class="warnings" id="warnings" aria-labelledby="warnings-title">
        <h2 id="warnings-title">Official warnings</h2>
        {{#items}}
        <article class="warning warning-{{severity}}">
        <h3 dir="auto"><span class="badge">{{severity}}</span> {{event}}</h3>
        <p class="headline" dir="auto">{{headline}}</p>
        <dl class="readings">
        <div><dt>From</dt><dd>{{onset}}</dd></div>
        <div><dt>Until</dt><dd>{{expires}}</dd></div>
        <div><dt>Issued by</dt><dd dir="auto">{{issuer}}</dd></div>
        </dl>
        <p class="description" dir="auto">{{description}}</p>
        {{#instruction}}
        <p class="instruction" dir="auto">{{.}}</p>
        {{/instruction}}
        </article>
        {{/items}}
        </section>
        {{/warnings}}
        {{/status}}
        {{^day}}
        <p class="empty">No weather to show for this place now.</p>
        {{/day}}
        {{#day}}
        <section class="day" aria-labelledby="now">
        <h2 id="now">Now</h2>
        <div class="hero">
        <svg class="icon big" viewBox="0 0 32 32" aria-hidden="true"><use href="#i-{{icon}}"/></svg>
        <div><p class="temperature">{{temperature}}</p>
        <p><span class="condition">{{condition}}</span>, feels like <span class="feels-like">{{feelsLike}}</span></p></div>
        </div>
        <dl class="readings">
        {{#readings}}
        <div><dt>{{label}}</dt><dd>{{value}}</dd></div>
        {{/readings}}
        </dl>
        {{#crossingDays}}
        <h3>Thresholds crossed</h3>
        <ul class="crossings">
        {{#days}}
        <li><strong>{{name}}</strong>{{#crossings}} <span class="crossing {{alert}}">{{title}}: {{detail}}</span>{{/crossings}}</li>
        {{/days}}
        </ul>
        {{/crossingDays}}
        </section>
        {{/day}}
        {{#hours}}
        <section class="hours" aria-labelledby="hours">
        <h2 id="hours">Next hours</h2>
        <div class="scroll"><table>
        <thead><tr><th scope="col">Time</th><th scope="col">Sky</th><th scope="col">Temperature</th>
        <th scope="col">Chance</th><th scope="col">Precipitation</th><th scope="col">Wind</th></tr></thead>
        <tbody>
        {{#rows}}
        <tr><th scope="row">{{time}}</th>
        <td><svg class="icon" viewBox="0 0 32 32" role="img" aria-label="{{condition}}"><use href="#i-{{icon}}"/></svg></td>
        <td>{{temperature}}</td><td>{{precipitationProbability}}</td><td>{{precipitation}}</td><td>{{wind}}</td></tr>
        {{/rows}}
        </tbody></table></div>
        </section>
        {{/hours}}
        {{#week}}
        <section class="week" aria-labelledby="week">
        <h2 id="week">The week</h2>
        <div class="scroll"><table>
        <thead><tr><th scope="col">Day</th><th scope="col">Sky</th><th scope="col">Low</th><th scope="col">High</th>
        <th scope="col">Precipitation</th><th scope="col">Chance</th><th scope="col">Wind</th><th scope="col">Gusts</th>
        <th scope="col">UV</th><th scope="col">Sunrise</th><th scope="col">Sunset</th><th scope="col">Alerts</th></tr></thead>
        <tbody>
        {{#days}}
        <tr{{#rowClass}} class="{{.}}"{{/rowClass}}><th scope="row">{{name}}</th>
        <td><svg class="icon" viewBox="0 0 32 32" aria-hidden="true"><use href="#i-{{icon}}"/></svg>
        <span class="condition">{{condition}}</span></td>
        <td>{{low}}</td><td>{{high}}</td><td>{{precipitation}}</td><td>{{precipitationProbability}}</td>
        <td>{{wind}}</td><td>{{gusts}}</td><td>{{uvIndex}}</td><td>{{sunrise}}</td><td>{{sunset}}</td>
        <td class="marks">{{marks}}</td></tr>
        {{/days}}
        </tbody></table></div>
        </section>
        {{/week}}
        {{#airQuality}}
        <section class="air-quality" aria-labelledby="air">
        <h2 id="air">Air quality</h2>
        {{#hasReadings}}
        <dl class="readings">
        {{#indices}}
        <div><dt>{{scale}}</dt><dd><span class="aqi {{bandClass}}">{{value}}</span> {{band}}</dd></div>
        {{/indices}}
        {{#pollutants}}
        <div><dt>{{label}}</dt><dd>{{value}}</dd></div>
        {{/pollutants}}
        </dl>
        {{/hasReadings}}
        {{^hasReadings}}
        {{^pollen}}
        <p>The source's last answer has no values for this place.</p>
        {{/pollen}}
        {{/hasReadings}}
        {{#pollen}}
        <h3>Pollen</h3>
        <dl class="readings">
        {{#plants}}
        <div><dt>{{label}}</dt><dd>{{value}}</dd></div>
        {{/plants}}
        </dl>
        {{/pollen}}
        </section>
        {{/airQuality}}
        </main>
        </body>
        </html>

        """

    /// Any `/places/<name>` whose name is not a place of this exporter (answered with 404).
    static let notFound = """
        {{> head}}
        {{> masthead}}
        <main>
        <h1>No such place</h1>
        <p>This exporter watches no place by that name. <a href="/">All places</a></p>
        </main>
        </body>
        </html>

        """
}
