"""Serves a Roundup tracker on loopback under /demo/ through Roundup's own WSGI handler (the
way its documentation deploys it behind a WSGI server): roundup-server refuses to run as root,
which a CI machine is. Usage: python roundup_wsgi.py TRACKER_HOME PORT"""

import sys
from wsgiref.simple_server import WSGIRequestHandler, make_server

from roundup.cgi.wsgi_handler import RequestDispatcher

PREFIX = "/demo"


def main():
    home, port = sys.argv[1], int(sys.argv[2])
    tracker = RequestDispatcher(home)

    def app(environ, start_response):
        path = environ.get("PATH_INFO", "")
        if not path.startswith(PREFIX):
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"not found"]
        environ["SCRIPT_NAME"] = PREFIX
        environ["PATH_INFO"] = path[len(PREFIX):]
        return tracker(environ, start_response)

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args):
            pass

    make_server("127.0.0.1", port, app, handler_class=Quiet).serve_forever()


if __name__ == "__main__":
    main()
