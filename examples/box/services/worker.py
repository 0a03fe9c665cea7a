"""The box's worker, which needs the app: HTTP on 127.0.0.1:<port>, answering /health with 200
only while the app's health URL answers 200 (503 otherwise).

Usage: python3 worker.py <port> <app health URL>
"""
import http.server
import sys
import urllib.request

APP = sys.argv[2]


def app_ok():
    try:
        with urllib.request.urlopen(APP, timeout=2) as r:
            return r.status == 200
    except Exception:
        return False


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path != "/health":
            code, body = 404, b"not found\n"
        elif app_ok():
            code, body = 200, b"ok\n"
        else:
            code, body = 503, b"the app does not answer\n"
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
