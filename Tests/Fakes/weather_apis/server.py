"""The HTTP server: weather requests routed to each API's module (with latency, faults and the
request log), control requests to control.py; and the command line.
"""

import argparse
import gzip
import json
import signal
import socketserver
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from . import air_quality, brightsky, dark_sky, geocoding, met_alerts, met_norway, nws_alerts, open_meteo, openweathermap
from .control import CONTROL_POSTS, NEEDS_FIXTURES, State
from .faults import CAPTIVE_PORTAL_PAGE, provider_status_fault_body
from .fixtures import DEFAULT_FIXTURES, Fixtures, load_templates
from .dark_sky import DEFAULT_DARK_SKY_KEY
from .openweathermap import DEFAULT_OWM_KEY
from .protocol import HTML_TYPE, JSON_TYPE, TEXT_TYPE, dumps

HANG_SECONDS = 600


class WeatherRequest:
    """One weather request as the endpoints see it."""

    def __init__(self, path, query, headers, job):
        self.path, self.query, self.headers, self.job = path, query, headers, job


WEATHER_ENDPOINTS = {
    **open_meteo.ROUTES, **air_quality.ROUTES, **geocoding.ROUTES, **openweathermap.ROUTES, **met_norway.ROUTES,
    **nws_alerts.ROUTES, **met_alerts.ROUTES, **brightsky.ROUTES,
}
# APIs that carry a parameter in the path (Dark Sky's key and place): every path under the prefix.
WEATHER_PREFIXES = {**dark_sky.PREFIX_ROUTES}


def weather_endpoint(path):
    """The endpoint serving `path`, or None."""
    if path in WEATHER_ENDPOINTS:
        return WEATHER_ENDPOINTS[path]
    return next((endpoint for prefix, endpoint in WEATHER_PREFIXES.items() if path.startswith(prefix)), None)


def accepts_gzip(header):
    """True when Accept-Encoding lists gzip (or *) without q=0."""
    for item in header.split(","):
        coding, *parameters = (part.strip().lower() for part in item.split(";"))
        if coding not in ("gzip", "x-gzip", "*"):
            continue
        qualities = [parameter[2:] for parameter in parameters if parameter.startswith("q=")]
        try:
            return not qualities or float(qualities[0]) > 0
        except ValueError:
            return False
    return False


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-open-meteo"
    disable_nagle_algorithm = True

    def do_GET(self):
        url = urlsplit(self.path)
        endpoint = weather_endpoint(url.path)
        if endpoint is not None:
            self.serve_weather(url, endpoint)
        elif url.path == "/-/requests":
            self.send_json(200, self.server.state.report())
        elif url.path in CONTROL_POSTS:
            self.send_plain(405, "Method Not Allowed")
        else:
            self.send_plain(404, "Not Found")

    def do_POST(self):
        try:
            body = self.read_json_body()  # read first, so keep-alive stays in step
        except ValueError as error:
            self.close_connection = True
            return self.send_json(400, {"error": str(error)})
        action = CONTROL_POSTS.get(urlsplit(self.path).path)
        if action is None:
            return self.send_plain(404, "Not Found")
        try:
            if action in NEEDS_FIXTURES:
                self.send_json(200, action(self.server.state, body, self.server.fixtures.warning_alerts))
            else:
                self.send_json(200, action(self.server.state, body))
        except ValueError as error:
            self.send_json(400, {"error": str(error)})

    def read_json_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            raise ValueError("send the body with Content-Length, not chunked")
        length = int(self.headers.get("Content-Length") or 0)
        text = self.rfile.read(length) if length > 0 else b""
        try:
            body = json.loads(text) if text.strip() else {}
        except ValueError as error:
            raise ValueError(f"body is not JSON: {error}") from None
        if not isinstance(body, dict):
            raise ValueError("body must be a JSON object")
        return body

    # Weather requests

    def serve_weather(self, url, endpoint):
        query = {name: ",".join(values) for name, values in parse_qs(url.query, keep_blank_values=True).items()}
        headers = {name.lower(): value for name, value in self.headers.items()}
        record = {"path": url.path, "query": query, "headers": headers, "time": time.time()}
        state = self.server.state
        job = state.begin(record)
        self.answering = True  # end_headers ends it: the client cannot have the answer before
        try:
            time.sleep(job.latency_ms / 1000)
            self.answer_weather(endpoint, WeatherRequest(url.path, query, headers, job))
        finally:
            self.end_answer()  # no headers sent (hang, error)

    def end_answer(self):
        if getattr(self, "answering", False):
            self.answering = False
            self.server.state.end()

    def end_headers(self):
        # Counted out of flight before the headers leave: a sequential client's next request
        # then never meets this one still counted (as it did when end() ran after the body).
        self.end_answer()
        super().end_headers()

    def answer_weather(self, endpoint, request):
        fault = request.job.fault
        mode = fault["mode"]
        if mode == "hang":
            return self.hang()
        if mode == "huge":
            return self.stream_huge(fault["bytes"])
        if mode == "status":
            content_type, body = provider_status_fault_body(fault, request.path, self.server.fixtures)
            extra = [("Retry-After", str(fault["retry_after"]))] if "retry_after" in fault else []
            return self.send_body(fault["status"], content_type, body, extra)
        if mode == "empty":
            return self.send_body(200, JSON_TYPE, b"")
        if mode == "html":
            return self.send_body(200, HTML_TYPE, CAPTIVE_PORTAL_PAGE.encode())
        status, content_type, body, extra = endpoint(self.server.fixtures, request)
        if status == 304:
            return self.send_not_modified(extra)
        if mode == "malformed_json":
            body = body[: len(body) // 2]
        body, encoding = self.encoded(body)
        headers = [*extra, *encoding]
        if mode == "truncated":
            self.close_connection = True
            self.send_head(status, content_type, len(body), headers)
            self.wfile.write(body[: len(body) // 2])
        elif mode == "slow":
            self.send_head(status, content_type, len(body), headers)
            for index in range(len(body)):
                if index:
                    time.sleep(fault["delay_ms"] / 1000)
                self.wfile.write(body[index:index + 1])
        else:
            self.send_head(status, content_type, len(body), headers)
            self.wfile.write(body)

    def send_not_modified(self, headers):
        """304: the headers, no Content-Type and no body."""
        self.send_response(304)
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()

    def hang(self):
        """Answers nothing; returns when the client closes or HANG_SECONDS pass."""
        self.close_connection = True
        deadline = time.monotonic() + HANG_SECONDS
        while (remaining := deadline - time.monotonic()) > 0:
            self.connection.settimeout(remaining)
            try:
                if not self.connection.recv(65536):
                    return
            except (TimeoutError, ConnectionError):
                return

    def stream_huge(self, size):
        """`size` bytes of "[0,0,0,..." in 64 KiB writes; the array never closes."""
        self.send_head(200, JSON_TYPE, size)
        self.wfile.write(b"[")
        chunk = b"0," * 32768
        sent = 1
        while sent < size:
            piece = chunk[: size - sent]
            self.wfile.write(piece)
            sent += len(piece)

    # Plumbing

    def encoded(self, body):
        """(body, extra headers): gzipped when the client accepts it, as the real server does."""
        if body and accepts_gzip(self.headers.get("Accept-Encoding", "")):
            return gzip.compress(body, compresslevel=6, mtime=0), [("Content-Encoding", "gzip")]
        return body, []

    def send_head(self, status, content_type, length, headers=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(length))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()

    def send_body(self, status, content_type, body, headers=()):
        body, encoding = self.encoded(body)
        self.send_head(status, content_type, len(body), [*headers, *encoding])
        self.wfile.write(body)

    def send_json(self, status, value):
        body = dumps(value)
        self.send_head(status, JSON_TYPE, len(body))
        self.wfile.write(body)

    def send_plain(self, status, text):
        body = text.encode()
        self.send_head(status, TEXT_TYPE, len(body))
        self.wfile.write(body)

    def log_request(self, code="-", size="-"):
        if not self.server.quiet:
            path = self.path if len(self.path) <= 100 else self.path[:97] + "..."
            sys.stderr.write(f"{self.command} {path} {code}\n")

    def log_message(self, format, *args):
        sys.stderr.write(f"fake_weather: {format % args}\n")


class FakeServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024

    def __init__(self, address, fixtures, latency_ms, quiet, owm_key=DEFAULT_OWM_KEY,
                 dark_sky_key=DEFAULT_DARK_SKY_KEY):
        if isinstance(fixtures, list):  # the Open-Meteo templates alone, as before
            fixtures = Fixtures(fixtures, DEFAULT_FIXTURES)
        self.fixtures = fixtures
        self.templates = fixtures.templates
        self.state = State(latency_ms, owm_key, fixtures.geocoding.get("results", []), dark_sky_key)
        self.quiet = quiet
        super().__init__(address, Handler)

    def server_bind(self):
        # HTTPServer.server_bind would resolve the host name (getfqdn), which can stall offline.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return  # the client went away (timeouts, aborted huge/slow bodies): expected here
        super().handle_error(request, client_address)


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description="Fake weather APIs: Open-Meteo, OpenWeatherMap, MET Norway, Dark Sky "
                                                 "(see the module docstring).")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--fixtures", default=str(DEFAULT_FIXTURES))
    parser.add_argument("--owm-key", default=DEFAULT_OWM_KEY, help="the OpenWeatherMap appid the fake accepts")
    parser.add_argument("--dark-sky-key", default=DEFAULT_DARK_SKY_KEY,
                        help="the Dark Sky key (in the request path) the fake accepts")
    parser.add_argument("--quiet", action="store_true", help="no per-request log lines")
    return parser.parse_args(argv)


def main(argv=None):
    arguments = parse_arguments(argv)
    fixtures = Fixtures(load_templates(arguments.fixtures), arguments.fixtures)
    try:
        server = FakeServer((arguments.host, arguments.port), fixtures, arguments.latency_ms, arguments.quiet,
                            arguments.owm_key, arguments.dark_sky_key)
    except OSError as error:
        sys.exit(f"fake_weather: cannot listen on {arguments.host}:{arguments.port}: {error}")

    def stop(_signum, _frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    host, port = server.server_address[:2]
    print(f"listening {host}:{port}", flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
