"""Stand-in for the OpenTelemetry collector: takes OTLP/HTTP exports on :4318 and logs each.

One line per export (``otlp /v1/traces 1234 bytes from 10.89.0.7``) on stdout, which is
all the live check reads. Its arguments (the collector's ``--config``) are ignored.
"""

from __future__ import annotations

import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SIGNALS = ("/v1/traces", "/v1/metrics", "/v1/logs")


class Sink(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        if self.path not in SIGNALS:
            self.send_error(404, f"OTLP/HTTP takes {', '.join(SIGNALS)}")
            return
        print(f"otlp {self.path} {len(body)} bytes from {self.client_address[0]}", flush=True)
        # An empty Export*ServiceResponse: zero bytes of protobuf, "{}" in JSON.
        json = self.headers.get("Content-Type", "").startswith("application/json")
        reply = b"{}" if json else b""
        self.send_response(200)
        self.send_header("Content-Type", "application/json" if json else "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, format: str, *args: object) -> None:
        """Only the exports are logged (above), not every request line."""


def main() -> None:
    print(f"otlp sink listening on :4318 (ignoring {sys.argv[1:]})", flush=True)
    ThreadingHTTPServer(("0.0.0.0", 4318), Sink).serve_forever()


if __name__ == "__main__":
    main()
