"""KGClient tries a call refused for now (503 with Retry-After) again, a bounded number of times,
against a real HTTP server on loopback that answers from a script."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from agent_interface import KGClient, KGError
from agent_interface import client as client_module


def _serve(answers):
    """A server answering its requests in turn with ``answers`` (the last from then on)."""
    taken = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            status, retry_after, body = answers[min(len(taken), len(answers) - 1)]
            taken.append(self.path)
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            if retry_after is not None:
                self.send_header("Retry-After", str(retry_after))
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}", taken


FULL = (503, 1, {"success": False, "error": {"code": "SERVICE_UNAVAILABLE", "message": "disk full",
                                              "details": {"retry": True}}})
DONE = (200, None, {"success": True})


def test_a_refusal_for_now_is_tried_again_after_the_time_it_asks():
    server, url, taken = _serve([FULL, DONE])
    try:
        started = time.monotonic()
        assert KGClient(url, token="").get_graph_stats() == {"success": True}
        assert len(taken) == 2
        assert time.monotonic() - started >= 1.0
    finally:
        server.shutdown()


def test_a_refusal_that_lasts_is_raised_after_two_more_tries():
    server, url, taken = _serve([FULL])
    try:
        with pytest.raises(KGError) as refused:
            KGClient(url, token="").get_graph_stats()
        assert refused.value.status == 503 and refused.value.retry_after == 1.0
        assert len(taken) == 1 + client_module.RETRIES
    finally:
        server.shutdown()


def test_other_errors_are_not_tried_again():
    server, url, taken = _serve([(404, None, {"success": False, "error": {"code": "NOT_FOUND", "message": "x"}})])
    try:
        with pytest.raises(KGError):
            KGClient(url, token="").get_graph_stats()
        assert len(taken) == 1
    finally:
        server.shutdown()
