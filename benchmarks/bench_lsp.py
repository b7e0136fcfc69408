"""Language server benchmark: a keystroke in a 1,000-line spec to its diagnostics.

Starts ``worldspec lsp`` (stdio) with pygls's own client, opens a generated spec
(``gen_spec.py``, ``--lines`` lines, checks clean), then types: each keystroke is one
incremental ``didChange`` of one character, and its latency is the time from sending the
change to receiving the ``publishDiagnostics`` for that version, as the editor sees it. Three
kinds of keystrokes, in turn:

- ``clean``: a character typed into a comment (the spec stays clean);
- ``error``: a typo in a name inside a tool body (an unknown name, WS2xx), then its repair;
- ``syntax``: a character that breaks a declaration's syntax (a WS101), then its repair.

After the keystrokes, the latency of a hover and of a completion right after a change (they
build the index of the new version first) is measured too. Beside the protocol numbers, the
same check in this process (``worldspec.lsp.analysis.Analyser``: parse and check the unit)
shows what the server's own work costs.

    python benchmarks/bench_lsp.py                 # table
    python benchmarks/bench_lsp.py --lines 5000    # a bigger spec
    python benchmarks/bench_lsp.py --json          # one JSON document on stdout
    python benchmarks/bench_lsp.py --quick         # a smoke test (a few keystrokes)

The goal from the brief: **a keystroke in a 1,000-line spec gets its diagnostics back in under
100 ms** (median of the ``clean`` and ``error`` keystrokes); ``--strict`` exits 1 when missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from lsprotocol import types as lsp  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402
from pygls.uris import from_fs_path  # noqa: E402

from benchmarks.gen_spec import generate  # noqa: E402
from benchmarks.processes import cpu_seconds  # noqa: E402
from worldspec.lsp.analysis import Analyser  # noqa: E402

GOAL_MS = 100.0


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _summary(values: list[float]) -> dict[str, float]:
    return {"median_ms": statistics.median(values), "p90_ms": _percentile(values, 0.9),
            "min_ms": min(values), "max_ms": max(values), "n": len(values)}


def _position(text: str, offset: int) -> lsp.Position:
    line = text.count("\n", 0, offset)
    return lsp.Position(line, offset - (text.rfind("\n", 0, offset) + 1))


class _Typist:
    """A client with one open document, typing one character at a time."""

    def __init__(self, client: LanguageClient, uri: str, text: str) -> None:
        self.client = client
        self.uri = uri
        self.text = text
        self.version = 1
        self.published: dict[int, tuple[float, list[lsp.Diagnostic]]] = {}

        @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: lsp.PublishDiagnosticsParams) -> None:
            if params.uri == self.uri and params.version is not None:
                self.published[params.version] = (time.perf_counter(), list(params.diagnostics))

    async def wait(self, version: int) -> tuple[float, list[lsp.Diagnostic]]:
        deadline = time.perf_counter() + 60
        while version not in self.published:
            if time.perf_counter() > deadline:
                raise TimeoutError(f"no diagnostics for version {version}")
            await asyncio.sleep(0.0005)
        return self.published[version]

    async def edit(self, offset: int, remove: int, insert: str) -> tuple[float, list[str]]:
        """Replace ``remove`` characters at ``offset`` by ``insert``; the latency in ms and
        the codes of the diagnostics published for the new version."""
        start, end = _position(self.text, offset), _position(self.text, offset + remove)
        self.text = self.text[:offset] + insert + self.text[offset + remove:]
        self.version += 1
        sent = time.perf_counter()
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(version=self.version, uri=self.uri),
            content_changes=[lsp.TextDocumentContentChangePartial(
                range=lsp.Range(start, end), text=insert)]))
        received, diagnostics = await self.wait(self.version)
        return (received - sent) * 1000, [str(d.code) for d in diagnostics]


async def _session(path: Path, text: str, keystrokes: int) -> dict[str, Any]:
    client = LanguageClient("bench-lsp", "1")
    await client.start_io(sys.executable, "-m", "worldspec", "lsp", cwd=str(path.parent))
    uri = from_fs_path(str(path)) or str(path)
    await client.initialize_async(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(), root_uri=from_fs_path(str(path.parent))))
    client.initialized(lsp.InitializedParams())
    typist = _Typist(client, uri, text)
    opened = time.perf_counter()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        lsp.TextDocumentItem(uri=uri, language_id="worldspec", version=1, text=text)))
    received, first = await typist.wait(1)
    if first:
        raise SystemExit(f"the generated spec is not clean: {[d.code for d in first]}")
    open_ms = (received - opened) * 1000

    comment = text.index("\n#") + 2  # a comment line to type into (the file's header)

    def typo() -> int:  # the first name of a condition
        return typist.text.index("require ") + len("require ")

    def broken() -> int:  # `tool(name` breaks one declaration
        return typist.text.index("\ntool ") + len("\ntool")
    runs: dict[str, list[float]] = {"clean": [], "error": [], "syntax": []}
    pid = client._server.pid if client._server is not None else None  # the server process
    cpu: dict[str, float] = {"clean": 0.0, "error": 0.0, "syntax": 0.0}

    async def timed(kind: str, offset: int, remove: int, insert: str) -> tuple[float, list[str]]:
        """One keystroke, its server CPU time added to ``cpu[kind]`` (/proc ticks are 10 ms:
        summed over many keystrokes, the mean is good)."""
        before = cpu_seconds(pid) if pid is not None else None
        out = await typist.edit(offset, remove, insert)
        after = cpu_seconds(pid) if pid is not None else None
        if before is not None and after is not None:
            cpu[kind] += after - before
        return out

    for i in range(keystrokes):
        ms, codes = await timed("clean", comment + i, 0, "x")
        assert codes == [], codes
        runs["clean"].append(ms)
        ms, codes = await timed("error", typo(), 0, "q")
        assert codes and all(c.startswith("WS2") for c in codes), codes  # an unknown name
        runs["error"].append(ms)
        ms, codes = await timed("error", typo(), 1, "")
        assert codes == [], codes
        runs["error"].append(ms)
        at = broken()
        ms, codes = await timed("syntax", at, 0, "(")
        assert codes == ["WS101"], codes
        runs["syntax"].append(ms)
        ms, codes = await timed("syntax", at, 1, "")
        assert codes == [], codes
        runs["syntax"].append(ms)
    server_cpu = ({k: cpu[k] * 1000 / len(runs[k]) for k in runs}
                  if pid is not None and cpu_seconds(pid) is not None else None)

    requests: dict[str, list[float]] = {"hover after a change": [],
                                        "completion after a change": []}
    name_at = _position(typist.text, typist.text.index("\ntool ") + 7)
    for i in range(max(3, keystrokes // 3)):
        await typist.edit(comment + keystrokes + i, 0, "y")
        sent = time.perf_counter()
        await client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(uri), name_at))
        requests["hover after a change"].append((time.perf_counter() - sent) * 1000)
        await typist.edit(comment + keystrokes + i + 1, 0, "z")
        sent = time.perf_counter()
        await client.text_document_completion_async(lsp.CompletionParams(
            lsp.TextDocumentIdentifier(uri), name_at))
        requests["completion after a change"].append((time.perf_counter() - sent) * 1000)

    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return {"open_ms": open_ms, "server_cpu_ms_per_keystroke": server_cpu,
            "keystrokes": {k: _summary(v) for k, v in runs.items()},
            "requests": {k: _summary(v) for k, v in requests.items()}}


def _in_process(path: Path, text: str, repeat: int) -> tuple[dict[str, float], dict[str, float]]:
    """The keystroke path without the protocol (a character typed into the first declaration,
    the worst case: every later declaration is moved): wall time, and CPU time, which the
    machine's other load does not inflate."""
    analyser = Analyser(lambda _path: None)
    analyser.analyse(path, text)  # warm: parser tables, imports
    wall, cpu = [], []
    for i in range(repeat):
        edited = text.replace("\n#", f"\n#{'x' * (i % 7)}", 1)
        start, start_cpu = time.perf_counter(), time.process_time()
        analyser.analyse(path, edited)
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
    return _summary(wall), _summary(cpu)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--lines", type=int, default=1000, help="lines of the spec (1000)")
    parser.add_argument("--keystrokes", type=int, default=20,
                        help="rounds of keystrokes, five each (20)")
    parser.add_argument("--quick", action="store_true", help="a few keystrokes only")
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    parser.add_argument("--strict", action="store_true",
                        help=f"exit 1 if the median keystroke misses {GOAL_MS:.0f} ms")
    args = parser.parse_args(argv)
    keystrokes = 3 if args.quick else args.keystrokes
    text = generate(args.lines)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.world"
        path.write_text(text, encoding="utf-8")
        result = asyncio.run(_session(path, text, keystrokes))
        wall, cpu = _in_process(path, text, 5 if args.quick else 20)
        result["in_process_check"], result["in_process_check_cpu"] = wall, cpu
    result["lines"] = text.count("\n")
    result["load_average"] = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    result["cpus"] = os.cpu_count()
    typed = [result["keystrokes"]["clean"]["median_ms"],
             result["keystrokes"]["error"]["median_ms"]]
    result["goal_ms"] = GOAL_MS
    result["goal_met"] = max(typed) < GOAL_MS
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"worldspec lsp on a generated {result['lines']}-line spec "
              f"(open to first diagnostics: {result['open_ms']:.0f} ms)\n")
        print(f"{'keystroke -> diagnostics':<28}{'median ms':>10}{'p90 ms':>9}{'min ms':>9}"
              f"{'max ms':>9}{'n':>5}")
        rows = [*result["keystrokes"].items(), *result["requests"].items(),
                ("check in process", result["in_process_check"]),
                ("check in process, CPU", result["in_process_check_cpu"])]
        for name, s in rows:
            print(f"{name:<28}{s['median_ms']:>10.1f}{s['p90_ms']:>9.1f}{s['min_ms']:>9.1f}"
                  f"{s['max_ms']:>9.1f}{s['n']:>5}")
        per = result["server_cpu_ms_per_keystroke"]
        if per is not None:
            print("\nthe server's CPU time per keystroke (protocol included): " +
                  ", ".join(f"{k} {v:.1f} ms" for k, v in per.items()))
        if result["load_average"] is not None:
            print(f"\nload average {result['load_average']:.1f} on {result['cpus']} CPUs "
                  "(wall times grow with it; the CPU times do not)")
        verdict = "met" if result["goal_met"] else "MISSED"
        print(f"\ngoal: a keystroke's diagnostics in under {GOAL_MS:.0f} ms (median of clean "
              f"and error keystrokes): {verdict}")
    return 1 if args.strict and not result["goal_met"] else 0


if __name__ == "__main__":
    sys.exit(main())
