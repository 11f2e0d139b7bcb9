"""A web server on an "outside" address, for Hearth's tests: it runs inside a network
namespace the test made, serves the files of ROOT, and appends every request line
(method, full path with its query) to LOG.

Usage: server.py ADDRESS PORT ROOT LOG
"""

import http.server
import mimetypes
import os
import sys

address, port, root, log = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(log, "a", encoding="utf-8") as out:
            out.write(f"{self.command} {self.path}\n")
        name = os.path.join(root, self.path.split("?", 1)[0].lstrip("/"))
        if not os.path.isfile(name):
            self.send_response(404)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "9")
            self.end_headers()
            self.wfile.write(b"not found")
            return
        with open(name, "rb") as source:
            body = source.read()
        kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer((address, port), Handler)
print("ready", flush=True)
server.serve_forever()
