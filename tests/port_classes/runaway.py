"""A class that misbehaves, written for the sandbox tests of ``worldspec port``: it loops
forever, allocates without bound, opens sockets, starts processes, reads the environment and
prints. None of it may hang, crash or leak into the tool that runs it."""

import os
import socket
import subprocess


class Runaway:
    def __init__(self):
        self.calls = 0

    def ping(self) -> dict:
        """Answer, after printing (which must not reach the protocol)."""
        print("a line on stdout")
        self.calls += 1
        return {"pong": self.calls}

    def spin(self) -> dict:
        """Loop forever."""
        while True:
            self.calls += 1

    def hog(self) -> dict:
        """Allocate without bound."""
        blocks = []
        while True:
            blocks.append(bytearray(50_000_000))

    def connect(self) -> dict:
        """Open a network connection."""
        with socket.create_connection(("127.0.0.1", 9), timeout=1):
            return {"connected": True}

    def spawn(self) -> dict:
        """Start a process."""
        return {"out": subprocess.run(["true"], check=False).returncode}

    def environment(self) -> dict:
        """The environment variables the class can see."""
        return {"names": sorted(os.environ)}
