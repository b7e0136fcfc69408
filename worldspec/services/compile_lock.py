"""The one lock under which model-written text is compiled and its world run.

Front ends that judge what a model wrote (``synth``, ``port``, the corpus review) compile
and run generated worlds in worker threads, so model requests go on meanwhile, but one at a
time: the compiler and the import machinery are not meant for concurrent use. They share
this lock, so two of them in one process still take turns.
"""

from __future__ import annotations

import threading

__all__ = ["COMPILE_LOCK"]

#: held while compiling or running a generated world in a worker thread
COMPILE_LOCK = threading.Lock()
