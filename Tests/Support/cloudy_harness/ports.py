"""Free TCP ports on 127.0.0.1."""

import socket


def free_port() -> int:
    """A port that is free now (the kernel's pick). Another process may take it before the server
    that is handed it binds it; on a test machine that race is rare, and it shows up as a server
    that does not start, with its log."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
