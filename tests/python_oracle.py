"""The real thing, for differential tests of ``arithmetic()``: Python's ``eval`` in a child
process, with a memory limit (``RLIMIT_AS``) and a timeout per expression.

``eval`` on text such as ``9**9**9`` runs for hours, so each question has a deadline; an
expression that passes it is answered ``None`` (and the child is started afresh). Two
questions are asked:

- ``calculate``: tau2-bench's retail ``calculate`` tool as TOOLS.md §4.1 gives it (refuse
  characters outside the alphabet, then ``str(round(float(eval(expression, {"__builtins__":
  None}, {})), 2))``), its failures as tau2 reports them, ``Error: <str(exception)>``;
- ``evaluate``: ``eval(text, {}, {})`` itself, answered as ``["int" | "float", repr]`` for a
  real result, or ``["error", <str(exception)>]`` (a result that is not an int or a float:
  the text ``float()`` gives for it).
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
from typing import Any

#: the child's address space: plenty for any expression that ends within the deadline
MEMORY = 1 << 30

CHILD = r'''
import json, resource, sys, warnings
resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
warnings.simplefilter("ignore")  # eval's SyntaxWarnings would go to stderr


def calculate(expression):
    if not all(char in "0123456789+-*/(). " for char in expression):
        return "Error: Invalid characters in expression"
    try:
        return str(round(float(eval(expression, {"__builtins__": None}, {})), 2))
    except Exception as exc:
        return f"Error: {exc}"


def evaluate(text):
    try:
        value = eval(text, {}, {})
        if type(value) in (int, float):
            return [type(value).__name__, repr(value)]
        float(value)
        return ["error", "(a real number that is not an int or a float)"]
    except Exception as exc:
        return ["error", str(exc)]


for line in sys.stdin:
    kind, text = json.loads(line)
    answer = calculate(text) if kind == "calculate" else evaluate(text)
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
'''.replace("MEMORY", str(MEMORY))


class Oracle:
    """A child Python answering ``calculate`` and ``evaluate`` questions, one at a time."""

    def __init__(self, timeout: float = 3.0) -> None:
        self.timeout = timeout
        self.child: subprocess.Popen[str] | None = None
        self.asked = 0

    def _start(self) -> subprocess.Popen[str]:
        if self.child is None or self.child.poll() is not None:
            self.child = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, text=True)
        return self.child

    def ask(self, kind: str, text: str) -> Any:
        """The child's answer, or None when it did not answer within the timeout."""
        child = self._start()
        assert child.stdin is not None and child.stdout is not None
        self.asked += 1
        child.stdin.write(json.dumps([kind, text]) + "\n")
        child.stdin.flush()
        ready, _, _ = select.select([child.stdout], [], [], self.timeout)
        line = child.stdout.readline() if ready else ""
        if not line:  # hung (or killed by the memory limit): start a fresh child
            self.close()
            return None
        return json.loads(line)

    def calculate(self, expression: str) -> str | None:
        answer = self.ask("calculate", expression)
        assert answer is None or isinstance(answer, str)
        return answer

    def evaluate(self, text: str) -> list[str] | None:
        answer = self.ask("evaluate", text)
        assert answer is None or isinstance(answer, list)
        return answer

    def close(self) -> None:
        if self.child is not None:
            self.child.kill()
            self.child.wait()
            self.child = None
