"""The box's optional site: the files of this directory over HTTP on 127.0.0.1:<port>, plus
/health. Optional in the declaration: chant observes it only once the supervisor lists it.

Usage: python3 site.py <port>
"""
import functools
import http.server
import os
import sys


class Handler(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/health":
            body = b"ok\n"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def log_message(self, *args):
        pass


here = os.path.dirname(os.path.abspath(__file__))
handler = functools.partial(Handler, directory=here)
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), handler).serve_forever()
