"""A generated world's tasks and policy, declared as data: read from its package on first use.

Part of the contract between generated code and the runtime (with
:mod:`worldspec.runtime.contract` and :mod:`worldspec.runtime.arguments`). A world keeps its
tasks as tau2-bench keeps its ``tasks.json``: a JSON file beside its ``world.py`` holds every
task's instruction, the name of its initial data file, its checks, frame and reference
solution; the world's class declares the registry in one statement::

    class Shop(Episode):
        TASKS = task_registry(__name__, "tasks.json")

and each check names the method of that class that evaluates it on the final episode
(``"test": "_check_refund__paid"``; only a check's method, ``_check_<task>__<check>``, can
be named). The file is read on the first use of the registry, not when the world is
imported. A task in the file::

    {"name": "refund", "instruction": "Refund order O1.", "data": "data/3f1c0de2.json",
     "checks": [{"name": "paid", "weight": 1.0, "doc": "", "test": "_check_refund__paid",
                 "explains": ["orders[\\"O1\\"].status == refunded"]}],
     "frame": ["orders.status"], "solution": [["refund", {"order": "O1"}]],
     "tags": ["billing"], "split": "train"}

``explains`` holds, once, the spec text of each comparison the check explains when it
fails (:func:`~worldspec.runtime.verdicts.expect`, in the order of the condition): the
check's method compares, the text is data. ``takes`` lists what the method takes where it
does not read everything a check may (``["ep"]``: the final state only, its ``self``; by
default ``ep``, ``init`` and ``replies``); :class:`CheckTest` calls it with those. Keys after
``solution`` are :class:`~worldspec.runtime.episode.TaskSpec`'s keyword fields, left out at
their defaults.

A world's policy is a file of its package too, ``policy.md``, as tau2-bench keeps its own
beside its code; the class declares it in one line, and the text is read when first asked
for::

    POLICY = PackageText(__name__, "policy.md")
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import ModuleType
from typing import Any

from worldspec.runtime.episode import CheckSpec, TaskSpec
from worldspec.runtime.helpers import package_data, package_text
from worldspec.runtime.verdicts import Verdict, explained

__all__ = ["CHECK_PREFIX", "CHECK_SEPARATOR", "PARAMETERS", "CheckTest", "PackageText",
           "TaskRegistry", "task_registry"]

#: ``test(episode, initial, replies)``: a check's function
Test = Callable[[Any, Any, tuple[str, ...]], "bool | Verdict"]

#: how the name of a check's method starts, ``_check_<task>__<check>`` (the class's other
#: names, ``_check_invariants`` among them, are out of reach)
CHECK_PREFIX = "_check_"
#: what separates the task from the check in the name of a check's method
CHECK_SEPARATOR = "__"

#: the parameters of a check's method that takes everything a check may read: the final
#: episode (its ``self``), the initial one, the agent's replies
PARAMETERS = ("ep", "init", "replies")

#: the keyword fields of TaskSpec a task's JSON may hold, and how each is read back
_KEYWORDS: Mapping[str, Callable[[Any], Any]] = {
    "seed": int, "persona": str, "known": str, "unknown": str, "tags": tuple, "split": str,
    "doc": str, "replies": tuple, "reward": str,
}


class CheckTest:
    """A check's function as ``CheckSpec.test`` calls it, ``test(episode, initial,
    replies)``, where the function takes only what it reads (``takes``: its parameters, of
    ``ep``, ``init`` and ``replies``) and names the spec text of its comparisons by position
    (``texts``, see :func:`~worldspec.runtime.verdicts.explained`)."""

    __slots__ = ("_picks", "function", "takes", "texts")

    def __init__(self, function: Callable[..., bool | Verdict], texts: Sequence[str] = (),
                 takes: Sequence[str] = PARAMETERS) -> None:
        self.function = function
        self.texts = tuple(texts)
        self.takes = tuple(takes)
        self._picks = tuple(PARAMETERS.index(name) for name in self.takes)

    def __call__(self, episode: Any, initial: Any, replies: tuple[str, ...]) -> bool | Verdict:
        given = (episode, initial, replies)
        verdict = self.function(*[given[i] for i in self._picks])
        return explained(verdict, self.texts) if self.texts else verdict

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CheckTest) and self.function is other.function and \
            self.texts == other.texts and self.takes == other.takes

    def __hash__(self) -> int:
        return hash((self.function, self.texts, self.takes))

    def __repr__(self) -> str:
        return f"CheckTest({getattr(self.function, '__name__', self.function)!r})"


class TaskRegistry(Mapping[str, TaskSpec]):
    """A world's tasks by name, read from its package's JSON file on first use; each check's
    method is found in the world's class (the class attribute the registry is, see
    :meth:`__set_name__`)."""

    __slots__ = ("_file", "_loaded", "_package", "_world")

    def __init__(self, module: ModuleType, file: str) -> None:
        self._package = module.__package__
        self._file = file
        self._loaded: dict[str, TaskSpec] | None = None
        self._world: type | None = None

    def __set_name__(self, owner: type, name: str) -> None:
        """The registry is the class attribute ``name`` of the world ``owner``, whose methods
        evaluate the checks."""
        self._world = owner

    @property
    def tasks(self) -> dict[str, TaskSpec]:
        """The tasks, read once."""
        loaded = self._loaded
        if loaded is None:
            loaded = self._loaded = {entry["name"]: self._task(entry)
                                     for entry in package_data(self._package, self._file)}
        return loaded

    def _task(self, entry: Mapping[str, Any]) -> TaskSpec:
        checks = tuple(self._check(entry["name"], c) for c in entry["checks"])
        frame = entry["frame"]
        solution = tuple((tool, arguments) for tool, arguments in entry["solution"])
        keywords = {key: _KEYWORDS[key](value) for key, value in entry.items()
                    if key in _KEYWORDS}
        return TaskSpec(entry["name"], entry["instruction"],
                        package_data(self._package, entry["data"]), checks,
                        tuple(frame) if frame is not None else None, solution, **keywords)

    def _check(self, task: str, entry: Mapping[str, Any]) -> CheckSpec:
        name = entry["test"]
        function = vars(self._world).get(name) if self._world is not None and \
            name.startswith(CHECK_PREFIX) and CHECK_SEPARATOR in name else None
        if not callable(function):
            raise LookupError(f"task {task!r}, check {entry['name']!r}: the world has no "
                              f"check method {entry['test']!r} (rebuild the world)")
        texts, takes = entry.get("explains", ()), tuple(entry.get("takes", PARAMETERS))
        if not set(takes) <= set(PARAMETERS):
            raise LookupError(f"task {task!r}, check {entry['name']!r}: a check's function "
                              f"takes {', '.join(PARAMETERS)}, not {', '.join(takes)}")
        test: Test = CheckTest(function, texts, takes) if texts or takes != PARAMETERS \
            else function
        return CheckSpec(entry["name"], float(entry["weight"]), entry["doc"], test)

    def __getitem__(self, name: str) -> TaskSpec:
        return self.tasks[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.tasks)

    def __len__(self) -> int:
        return len(self.tasks)

    def __contains__(self, name: object) -> bool:
        return name in self.tasks

    def __repr__(self) -> str:
        return f"TaskRegistry({self._package!r}, {self._file!r})"


class PackageText:
    """A class attribute whose value is the text of a file of the world's package (its
    ``policy.md``), read on first use and kept: ``World.POLICY`` and ``world.POLICY`` are
    that text. Line ends are ``\\n`` (the compiler writes the file so; a checkout that made
    them ``\\r\\n`` changes nothing)."""

    __slots__ = ("_package", "_text", "file")

    def __init__(self, module: str, file: str) -> None:
        found = sys.modules.get(module)
        if found is None:
            raise LookupError(f"PackageText: no module {module!r} is being imported")
        self._package = found.__package__
        self.file = file
        self._text: str | None = None

    def __get__(self, instance: object, owner: type | None = None) -> str:
        text = self._text
        if text is None:
            text = self._text = package_text(self._package, self.file).replace("\r\n", "\n")
        return text

    def __repr__(self) -> str:
        return f"PackageText({self._package!r}, {self.file!r})"


def task_registry(module: str, file: str) -> TaskRegistry:
    """The tasks of the world declared in the module named ``module`` (its ``__name__``, while
    it is being imported), kept in its package's JSON file ``file``: the world's class
    attribute ``TASKS``, each check's method found by name in that class."""
    found = sys.modules.get(module)
    if found is None:
        raise LookupError(f"task_registry: no module {module!r} is being imported")
    return TaskRegistry(found, file)
