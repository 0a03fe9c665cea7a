"""The box's worker, which needs the app (the supervisor starts the app first): HTTP on
127.0.0.1:<port>. /health answers 200 while the worker itself serves; / reports whether the
app's health URL answers, so a dead app does not make the worker look broken too.

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
        if self.path == "/health":
            code, body = 200, b"ok\n"
        elif self.path == "/":
            code, body = 200, b"app: up\n" if app_ok() else b"app: down\n"
        else:
            code, body = 404, b"not found\n"
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
