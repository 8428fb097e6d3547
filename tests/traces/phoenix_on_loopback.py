"""Starts Arize Phoenix (`phoenix serve`) with every listener on loopback.

Phoenix binds its HTTP server to PHOENIX_HOST, but its OTLP gRPC receiver to `[::]` (every
interface) whatever it is told. The tests must not open a port to the network, so the gRPC
server's bind address is rewritten to 127.0.0.1 before Phoenix starts it.
"""

import sys

import grpc.aio._server as aio_server

_add_insecure_port = aio_server.Server.add_insecure_port


def _on_loopback(self, address):
    host, _, port = address.rpartition(":")
    return _add_insecure_port(self, f"127.0.0.1:{port}")


aio_server.Server.add_insecure_port = _on_loopback

from phoenix.server.main import main  # noqa: E402

sys.argv = ["phoenix", "serve"]
main()
