#!/usr/bin/env python3
"""price_server.py - a loopback stand-in for the providers' price lists,
serving the recorded responses of tests/fixtures/fetch/ for
tests/cli/test_prices_fetch.sh.

    price_server.py FIXTURES MODE PORTFILE LOG [LIFETIME_S]

Binds 127.0.0.1 on a free port, writes the port to PORTFILE, logs each
request's path (and whether it carried an API key header) to LOG, and
exits after LIFETIME_S seconds (default 60) whatever happens.  Routes, as
the real services lay them out:

    /offers/v1.0/aws/AmazonEC2/current/REGION/index.csv  aws-REGION.csv
    /api/retail/prices?...             azure-page1.json, or azure-page2.json
                                       with $skip= in the query
    /v1/services/6F81-5844-456A/skus?  gcp-page1.json, or gcp-page2.json
                                       with pageToken= (a key must come in
                                       the X-goog-api-key header; one in
                                       the URL is refused with 400)
    /api/v1/instance-types             lambda-instance-types.json (a key
                                       must come as "Authorization: Bearer
                                       KEY"; without one, 401 and Lambda's
                                       error body)

"{BASE}" in a body becomes this server's address.  MODE: ok; 500 (every
request fails); slow (no answer before the client gives up); truncate
(every body cut after half, the Content-Length promising all of it);
truncate2 (the second request's body cut so; the first is whole).
"""
import http.server
import os
import sys
import threading
import time

FIX, MODE, PORTFILE, LOG = sys.argv[1:5]
LIFETIME = float(sys.argv[5]) if len(sys.argv) > 5 else 60.0
count = 0


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        global count
        count += 1
        path, _, query = self.path.partition("?")
        keyed = bool(self.headers.get("X-goog-api-key")) or \
            self.headers.get("Authorization", "").startswith("Bearer ")
        with open(LOG, "a") as log:
            log.write("%s key=%s\n" % (self.path, "header" if keyed else "none"))
        name = None
        if path.startswith("/offers/v1.0/aws/AmazonEC2/current/") and path.endswith("/index.csv"):
            name = "aws-%s.csv" % path.split("/")[-2]
        elif path == "/api/retail/prices":
            name = "azure-page2.json" if "$skip=" in query or "%24skip=" in query else "azure-page1.json"
        elif path == "/v1/services/6F81-5844-456A/skus":
            if "key=" in query.replace("pageToken=", "") or not keyed:
                return self.reply(400 if keyed else 403, b'{"error": "API key"}\n')
            name = "gcp-page2.json" if "pageToken=" in query else "gcp-page1.json"
        elif path == "/api/v1/instance-types":
            if not keyed or query:
                return self.reply(401, b'{"error": {"code": "global/invalid-api-key", '
                                  b'"message": "API key was invalid, expired, or deleted."}}\n')
            name = "lambda-instance-types.json"
        if not name or not os.path.exists(os.path.join(FIX, name)):
            return self.reply(404, b"not found\n")
        with open(os.path.join(FIX, name), "rb") as f:
            body = f.read().replace(b"{BASE}", b"http://127.0.0.1:%d" % self.server.server_port)
        if MODE == "500":
            return self.reply(500, b"internal error\n")
        if MODE == "slow":
            time.sleep(LIFETIME)
            return
        cut = MODE == "truncate" or (MODE == "truncate2" and count == 2)
        self.reply(200, body, cut)

    def reply(self, status, body, cut=False):
        self.send_response(status)
        self.send_header("Content-Type", "text/csv" if self.path.endswith(".csv") else "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[: len(body) // 2] if cut else body)
        self.wfile.flush()
        if cut:
            self.close_connection = True


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
with open(PORTFILE + ".tmp", "w") as f:
    f.write("%d\n" % server.server_port)
os.rename(PORTFILE + ".tmp", PORTFILE)
threading.Thread(target=server.serve_forever, daemon=True).start()
time.sleep(LIFETIME)
server.shutdown()
