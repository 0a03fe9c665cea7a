"""The box's app: HTTP on 127.0.0.1:<port>, answering /health with 200.

Usage: python3 app.py <port>
"""
import http.server
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/health":
            body, code = b"ok\n", 200
        elif self.path == "/":
            body, code = b"hello from the box's app\n", 200
        else:
            body, code = b"not found\n", 404
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
