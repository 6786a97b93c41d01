"""The Open-Meteo geocoding API (geocoding-api.open-meteo.com) as the fake serves it.

Geocoding, GET /v1/search?name=&count=&language=&format=json[&countryCode=]
(answers like geocoding-api.open-meteo.com):
    The known places are the "results" of open-meteo-geocoding.json (three Springfields: MO,
    MA, IL) until POST /-/geocoding replaces them. `name` is split at its first comma:
      before the comma   matched against each place's "name", case- and diacritic-insensitive:
                         0-1 characters match nothing, 2 characters must equal the name, 3 or
                         more are a prefix of it; all digits also match an entry of "postcodes"
      after the comma    (optional, trimmed) must equal, case-insensitively, the place's
                         "country", "country_code", "admin1" or the admin1 abbreviation from
                         ADMIN1_ABBREVIATIONS (Missouri MO, Massachusetts MA, Illinois IL, ...)
    countryCode          keeps places whose "country_code" equals it (case-insensitive)
    count                1-100 (default 10) limits the results, else 400 {"error":true,
                         "reason":"Parameter count must be between 1 and 100."}
    format               json (default); anything else 400. language is accepted and ignored.
    Matches keep the stored order: {"results":[...],"generationtime_ms":0.9871721}. No match
    (or no name): the body of open-meteo-geocoding-empty.json, which has no "results" key.
"""

import unicodedata

from .open_meteo import corrupted
from .protocol import JSON_TYPE, BadRequest, dumps

GEOCODING_PATH = "/v1/search"
ADMIN1_ABBREVIATIONS = {
    "Missouri": "MO", "Massachusetts": "MA", "Illinois": "IL", "Ohio": "OH", "Oregon": "OR",
    "California": "CA", "New York": "NY", "Texas": "TX", "Florida": "FL", "Virginia": "VA",
}


def folded(text):
    """Lower-case text without diacritics, for the geocoder's comparisons."""
    decomposed = unicodedata.normalize("NFKD", str(text))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold().strip()


def geocoding_matches(place, name, qualifier):
    place_name = folded(place.get("name", ""))
    if len(name) < 2:
        matched = False
    elif len(name) == 2:
        matched = place_name == name
    else:
        matched = place_name.startswith(name)
    if not matched and name.isdigit():
        matched = name in (str(code) for code in place.get("postcodes", []))
    if not matched:
        return False
    if not qualifier:
        return True
    admin1 = place.get("admin1", "")
    candidates = (place.get("country"), place.get("country_code"), admin1, ADMIN1_ABBREVIATIONS.get(admin1))
    return qualifier in {folded(c) for c in candidates if c}


def geocoding_answer(fixtures, query, places):
    """(status, JSON bytes) for /v1/search."""
    try:
        count = 10
        if "count" in query:
            try:
                count = int(query["count"])
            except ValueError:
                raise corrupted("count", query["count"], "Int") from None
            if not 1 <= count <= 100:
                raise BadRequest("Parameter count must be between 1 and 100.")
        form = query.get("format", "json")
        if form != "json":
            raise BadRequest(f"The fake geocoder only serves format=json, not {form!r}.")
    except BadRequest as error:
        return 400, dumps({"error": True, "reason": str(error)})
    name, _, qualifier = query.get("name", "").partition(",")
    name, qualifier = folded(name), folded(qualifier)
    country = folded(query.get("countryCode", ""))
    results = [place for place in places
               if geocoding_matches(place, name, qualifier)
               and (not country or folded(place.get("country_code", "")) == country)]
    if not results:
        return 200, dumps(fixtures.geocoding_empty)
    body = {"results": results[:count]}
    body.update((key, value) for key, value in fixtures.geocoding.items() if key != "results")
    return 200, dumps(body)


def parse_geocoding(body, default_places):
    unknown = set(body) - {"results"}
    if unknown or "results" not in body:
        raise ValueError("body must be {\"results\": [place, ...]} (or null for the fixture's places)")
    places = body["results"]
    if places is None:
        return default_places
    if not isinstance(places, list):
        raise ValueError("'results' must be a list of place objects or null")
    for index, place in enumerate(places):
        numbers_ok = isinstance(place, dict) and all(
            isinstance(place.get(key), (int, float)) and not isinstance(place.get(key), bool)
            for key in ("latitude", "longitude"))
        if not numbers_ok or not isinstance(place.get("name"), str):
            raise ValueError(f"results[{index}] needs a string 'name' and numeric 'latitude' and 'longitude'")
    return tuple(places)


def geocoding_endpoint(fixtures, request):
    status, body = geocoding_answer(fixtures, request.query, request.job.settings["places"])
    return status, JSON_TYPE, body, []


ROUTES = {GEOCODING_PATH: geocoding_endpoint}
