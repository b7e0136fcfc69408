"""``worldspec port``: from a Python environment class to a checked world, proven equal.

- ``worldspec port FILE.py [--class NAME] [--init-data FILE.json]... -o OUT.world``: a
  preflight (the original must import and build with every initial data, in the sandbox,
  before the first model request: one line and exit status 1 if not), skeleton,
  translation by the model (compiler in the loop), differential test against the sandboxed
  original (differences back to the model), and a report;
- ``worldspec port FILE.py --skeleton-only -o OUT.world``: the skeleton alone, no model;
- ``worldspec port --batch DIR [-o OUTDIR]``: every class of every ``*.py`` file in DIR
  (``NAME.json`` or ``STEM.json`` beside a file is its initial data), one journal,
  resumable, with a progress line, on this machine or on Ray (``--backend ray``).

Every model request and answer is recorded in a request journal (``OUT.requests.jsonl``, or
``OUTDIR/requests.jsonl``), so an interrupted port asks nothing twice; the batch journal
(``OUTDIR/journal.jsonl``) skips finished classes. A rejected port writes its last world,
marked REJECTED in its header, and a report of the differences left beside it
(``OUT.port.json``).

Exit status: 0 every class ported, 1 some rejected or failed, 2 bad arguments, no endpoint
configured or an unusable input.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from worldspec.cli.compare import (
    InputProblem,
    add_compare_options,
    add_original_options,
    class_name_of,
    compare_options,
    interpreter_problem,
    limits_problem,
    missing_extra,
    original_from_args,
    original_problem,
    read_init_data,
    read_init_files,
    read_source,
    sandbox_refusal,
)
from worldspec.cli.console import (
    EXIT_OK,
    EXIT_PROBLEMS,
    EXIT_USAGE,
    Console,
    add_backend_options,
    cannot_write,
    output_problem,
)

if TYPE_CHECKING:
    from worldspec.llm_frontend.batch import BatchItem, ItemRecord
    from worldspec.port.work import PortPayload, PortResult

__all__ = ["configure_port", "run_port"]


def configure_port(parser: argparse.ArgumentParser) -> None:
    from worldspec.cli.synth import add_batch_options, add_model_options

    parser.add_argument("file", nargs="?", metavar="FILE.py",
                        help="the Python file with the class to port")
    parser.add_argument("--batch", metavar="DIR",
                        help="port every class of every *.py file in DIR (initial data from "
                             "NAME.json or STEM.json beside the file)")
    parser.add_argument("-o", "--out", metavar="PATH",
                        help="the .world file to write (default: FILE.world beside the "
                             "class), or with --batch the folder (default: DIR/ported)")
    parser.add_argument("--skeleton-only", action="store_true",
                        help="write the spec skeleton read from the class and stop (no model)")
    parser.add_argument("--max-rounds", type=int, default=4, metavar="N",
                        help="repair rounds per method, and differential rounds (default 4)")
    parser.add_argument("--requests", metavar="FILE",
                        help="the request journal: every model request and answer (default: "
                             "OUT.requests.jsonl, or OUTDIR/requests.jsonl)")
    add_original_options(parser)
    add_compare_options(parser, confirm_by_default=True)
    add_batch_options(parser)
    add_model_options(parser)
    add_backend_options(parser)


def run_port(args: argparse.Namespace, console: Console) -> int:
    if (args.file is None) == (args.batch is None):
        console.error("give either FILE.py or --batch DIR")
        return EXIT_USAGE
    problem = missing_extra() or limits_problem(args) or interpreter_problem(args)
    if problem is None and args.max_rounds < 0:
        problem = "--max-rounds must be at least 0"
    if problem is not None:
        console.error(problem)
        return EXIT_USAGE
    if args.batch is not None and args.skeleton_only:
        console.error("--skeleton-only reads one FILE.py, not --batch")
        return EXIT_USAGE
    refusal = None if args.skeleton_only else sandbox_refusal(args)
    if refusal is not None:
        console.error(refusal)
        return EXIT_USAGE
    try:
        if args.skeleton_only:
            return _skeleton_only(args, console)
        items = _items(args)
    except InputProblem as exc:
        console.error(str(exc))
        return EXIT_USAGE
    if args.batch is None:  # a batch checks each class in its worker, see port_work
        file, _, class_name, inits = items[0]
        refusal = original_problem(original_from_args(args, file, class_name, inits), args)
        if refusal is not None:
            console.error(refusal)
            return EXIT_PROBLEMS
    from worldspec.cli.synth import _run_guarded

    return _run_guarded(console, lambda: asyncio.run(_port_batch(args, items, console)))


def _default_out(args: argparse.Namespace) -> Path:
    if args.out:
        return Path(args.out)
    if args.batch is not None:
        return Path(args.batch) / "ported"
    return Path(args.file).with_suffix(".world")


def _skeleton_only(args: argparse.Namespace, console: Console) -> int:
    from worldspec.port.skeleton import PortInputError, emit_skeleton, module_finder, read_class
    from worldspec.services.files import write_atomically

    source = read_source(args.file)
    class_name = class_name_of(source, args.file, args.class_name)
    inits = read_init_files(args.init_data)
    data = inits[0][1] if inits else None
    out = _default_out(args)
    problem = output_problem(str(out), folder=False)
    if problem is not None:
        console.error(problem)
        return EXIT_USAGE
    try:
        load = None if args.load == "none" else args.load
        skeleton = emit_skeleton(read_class(source, class_name, args.file,
                                            module_source=module_finder(Path(args.file)),
                                            load=load), data,
                                 source_name=Path(args.file).name)
    except PortInputError as exc:
        console.error(str(exc))
        return EXIT_USAGE
    try:
        write_atomically(out, skeleton.text)
    except OSError as exc:
        console.error(cannot_write(out, exc))
        return EXIT_PROBLEMS
    if args.format == "json":
        console.line(json.dumps({"world": skeleton.world, "output": str(out),
                                 "results": skeleton.convention, "tools": skeleton.tools,
                                 "notes": skeleton.notes}, ensure_ascii=False, indent=2))
    else:
        console.line(f"skeleton of {class_name}: {len(skeleton.tools)} tool(s), results: "
                     f"{skeleton.convention}; wrote {out}")
        for note in skeleton.notes:
            console.line(f"  note: {note}")
    return EXIT_OK


#: one class to port: its file, source, name and every initial data as (file, object)
Item = tuple[str, str, str, list[tuple[str, dict[str, Any]]]]


def _items(args: argparse.Namespace) -> list[Item]:
    """``(file, source, class, inits)`` for every class to port."""
    if args.batch is None:
        source = read_source(args.file)
        return [(args.file, source, class_name_of(source, args.file, args.class_name),
                 read_init_files(args.init_data))]
    folder = Path(args.batch)
    if not folder.is_dir():
        raise InputProblem(f"--batch: '{args.batch}' " + ("is not a folder" if folder.exists()
                                                          else "does not exist"))
    from worldspec.port.skeleton import PortInputError, list_classes

    found = []
    for path in sorted(folder.glob("*.py")):
        source = read_source(str(path))
        try:
            classes = list_classes(source, str(path))
        except PortInputError as exc:
            raise InputProblem(str(exc)) from None
        if args.class_name is not None:
            classes = [c for c in classes if c == args.class_name]
        for name in classes:
            data_file = next((p for p in (path.with_name(f"{name}.json"),
                                          path.with_suffix(".json")) if p.is_file()), None)
            data = read_init_data(str(data_file)) if data_file else None
            found.append((str(path), source, name,
                          [(str(data_file), data)] if data_file and data is not None else []))
    if not found:
        raise InputProblem(f"--batch: no classes found in the *.py files of '{args.batch}'")
    return found


async def _port_batch(args: argparse.Namespace,
                      items_in: list[Item],
                      console: Console) -> int:
    from worldspec.cli.synth import _progress, _report, make_batch_executor, model_config
    from worldspec.llm_frontend.batch import (
        BatchItem,
        ClientWorker,
        ItemRecord,
        Journal,
        SplitWork,
        run_batch,
        sha256_text,
        write_output,
    )
    from worldspec.port.translate import PortOptions
    from worldspec.port.work import PortPayload, port_work
    from worldspec.services.files import write_atomically

    config = model_config(args)
    single = args.batch is None
    out = _default_out(args)
    problem = output_problem(str(out), folder=not single)
    if problem is not None:
        console.error(problem)
        return EXIT_USAGE
    executor = make_batch_executor(args, config.concurrency)
    requests = args.requests or str(out.with_suffix(".requests.jsonl") if single
                                    else out / "requests.jsonl")
    journal_path = args.journal or (None if single else str(out / "journal.jsonl"))
    journal = Journal.open(journal_path) if journal_path else None
    options = PortOptions(max_rounds=args.max_rounds, compare=compare_options(args))
    load = None if args.load == "none" else args.load
    payloads: dict[str, PortPayload] = {}
    items: list[BatchItem] = []
    for file, source, class_name, inits in items_in:
        data = inits[0][1] if inits else None
        item = BatchItem.make("port", {"source": sha256_text(source), "class": class_name,
                                       "data": data, "load": load, "seed_key": args.seed_key,
                                       "ignore": list(args.ignore_state),
                                       "rounds": args.max_rounds, "examples": args.examples},
                              f"{Path(file).name}:{class_name}")
        items.append(item)
        payloads[item.key] = PortPayload(file, source, class_name, data, load, args.seed_key,
                                         tuple(args.ignore_state), options, requests,
                                         progress=_steps_shown(args, console),
                                         inits=tuple(inits), python=args.python,
                                         package_root=args.package_root)

    def settle(item: BatchItem, result: PortResult) -> ItemRecord:
        outcome = result.outcome
        record = ItemRecord(item.key, "accepted" if result.accepted else "rejected",
                            item.label, int(outcome.get("rounds", 0)),
                            str(outcome.get("reason", "")), str(outcome.get("detail", "")),
                            data={"outcome": outcome, "notes": result.notes,
                                  "last_text": None if result.accepted else result.text})
        if result.accepted and result.text is not None:
            if single:
                write_atomically(out, result.text)
                path, digest = out, sha256_text(result.text)
            else:
                stem = item.label.split(":")[-1].lower()
                path, digest = write_output(out, stem, result.text)
            record.output, record.output_sha256 = str(path), digest
        elif result.text is not None:
            if single:
                where = (out, out.with_suffix(".port.json"))
            else:
                stem = f"{item.label.split(':')[-1].lower()}-{sha256_text(result.text)[:12]}"
                where = (out / f"{stem}.rejected.world", out / f"{stem}.port.json")
            _keep_rejected(record, result, *where)
        return record

    work = SplitWork(ClientWorker(config, port_work), lambda item: payloads[item.key], settle)
    summary = await run_batch("port", items, work, journal=journal,
                              concurrency=config.concurrency, executor=executor,
                              progress=_progress(args, len(items), console, "classes: "))
    if args.format == "json":
        document = summary.to_json()
        document["classes"] = [{"label": r.label, "status": r.status, "output": r.output,
                                **(r.data.get("outcome") or {}), "notes": r.data.get("notes", []),
                                "rejected_world": r.data.get("draft"),
                                "report": r.data.get("report")}
                               for r in summary.records]
        console.line(json.dumps(document, ensure_ascii=False, indent=2))
        return EXIT_OK if summary.ok else EXIT_PROBLEMS
    for record in summary.records:
        _render_record(record, console)
    return _report(summary, args, console)


def _keep_rejected(record: ItemRecord, result: PortResult, world_path: Path,
                   report_path: Path) -> None:
    """Write a rejected port's last world, marked REJECTED in its header, and its report
    (the remaining differences with their shrunk call sequences) beside it: ``OUT.world`` and
    ``OUT.port.json``, or in a batch ``OUTDIR/name-<sha12>.rejected.world`` and
    ``...port.json``. Their paths go into the record (``draft``, ``report``)."""
    from worldspec.port.translate import rejected_report, rejected_world
    from worldspec.services.files import write_atomically

    assert result.text is not None
    report = rejected_report(record.label, result.outcome)
    text = json.dumps(report, ensure_ascii=False, indent=2)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from the model: escape everything
        text = json.dumps(report, indent=2)
    try:
        write_atomically(world_path, rejected_world(result.text, result.outcome,
                                                    report_path.name))
        write_atomically(report_path, text + "\n")
    except OSError as exc:
        record.data["write_error"] = cannot_write(world_path, exc)
        return
    record.data["draft"], record.data["report"] = str(world_path), str(report_path)


def _steps_shown(args: argparse.Namespace, console: Console) -> bool:
    """Each class's steps on stderr: with --progress always, or auto on a terminal."""
    if args.progress != "auto":
        return bool(args.progress == "always")
    try:
        return bool(console.err.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _render_record(record: ItemRecord, console: Console) -> None:
    outcome = record.data.get("outcome") or {}
    if not isinstance(outcome, dict):
        return
    tools = outcome.get("tools_ported") or []
    usage = outcome.get("usage") or {}
    verdict = "ported" if record.status == "accepted" else record.status
    console.line(f"{record.label}: {verdict}: {len(tools)} tool(s) ported, "
                 f"{outcome.get('calls_compared', 0):,} call(s) compared, "
                 f"{len(outcome.get('differences') or [])} difference(s) left, "
                 f"{outcome.get('rounds', 0)} repair round(s), "
                 f"{usage.get('total_tokens', 0):,} tokens (prompt "
                 f"{usage.get('prompt_tokens', 0):,}, cached {usage.get('cached_tokens', 0):,}, "
                 f"completion {usage.get('completion_tokens', 0):,}"
                 + (f"; {usage.get('replayed_requests')} request(s) answered from the request "
                    "journal" if usage.get("replayed_requests") else "") + ")"
                 + (f"; wrote {record.output}" if record.output else ""))
    if record.data.get("report"):
        console.line(f"  the last world, marked REJECTED, in {record.data.get('draft')}; the "
                     f"differences left in {record.data.get('report')}")
    if record.data.get("write_error"):
        console.line(f"  {record.data.get('write_error')}")
    persisting = {(p.get("kind"), p.get("tool"), p.get("message")): p.get("repair_rounds")
                  for p in outcome.get("persisting") or [] if isinstance(p, dict)}
    for difference in outcome.get("differences") or []:
        rounds = persisting.get((difference.get("kind"), difference.get("tool"),
                                 difference.get("message")))
        console.line(f"  {difference.get('kind')} in {difference.get('tool') or '(start)'}: "
                     f"{difference.get('message')}"
                     + (f" (persisting: unchanged through {rounds} repair rounds)"
                        if rounds is not None else ""))
        for number, call in enumerate(difference.get("calls") or [], 1):
            console.line(f"      {number}. {call.get('call')}")
    for problem in (outcome.get("diagnostics") or [])[:5]:
        console.line(f"  line {problem.get('line')}: {problem.get('code')}: "
                     f"{problem.get('message')}")
