"""The typed model of a program: every world with its resolved declarations.

The checker builds it; code generation, task validation, the diff tool and
the LLM repair loop read it. Each ``*Info`` keeps its syntax node so that
later stages can point diagnostics and ``# file.world:line`` anchors at the
spec. Expression types and name resolutions are kept in side tables keyed by
node identity (``id(node)``), valid as long as the model (which holds the
modules) is alive.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from worldspec.compiler.types import Optional, Type, Unknown
from worldspec.dsl import nodes as n

__all__ = [
    "FieldInfo", "RecordInfo", "EnumMemberInfo", "EnumInfo", "UnionInfo", "AliasInfo",
    "StateInfo", "InvariantInfo", "ParamInfo", "ToolInfo", "TaskInfo", "ConfigInfo",
    "WorldModel", "ProgramModel", "Resolution", "RESULT_CONVENTIONS",
    "REWARD_MODES", "WEIGHED_REWARD_MODES", "DEFAULT_REWARD",
]

RESULT_CONVENTIONS = ("envscaler", "bfcl", "tau2", "custom")
#: how a task's checks may combine (`reward: ...`): the names of the runtime's
#: worldspec.runtime.rewards.REWARD_MODES, which compute them (the compiler never loads the
#: runtime; tests/test_reward_modes.py keeps the two in step)
REWARD_MODES = ("weighted", "mean", "all")
#: the modes in which a check's `weight` changes the reward
WEIGHED_REWARD_MODES = ("weighted",)
DEFAULT_REWARD = "weighted"


@dataclass
class FieldInfo:
    """A field of a record or entity."""

    name: str
    type: Type
    default: n.Expr | None
    doc: str | None
    is_key: bool
    node: n.Field
    #: ``name?: T``: the field may be absent (stored as none, left out of the JSON)
    may_be_absent: bool = False

    @property
    def required_in_data(self) -> bool:
        """Whether data (a task's, a tool argument's record) must give the field: it has no
        default and is not optional (a ``json`` field without a default must be given too,
        if only as null). The rule of the data check and of the generated loaders alike."""
        return self.default is None and not isinstance(self.type, (Optional, Unknown))


@dataclass
class RecordInfo:
    """A record (value type) or an entity (keyed, stored in a table)."""

    name: str
    kind: Literal["record", "entity"]
    doc: str | None
    fields: dict[str, FieldInfo]
    node: n.RecordDecl | n.EntityDecl
    file: str

    @property
    def key(self) -> FieldInfo | None:
        keys = [f for f in self.fields.values() if f.is_key]
        return keys[0] if len(keys) == 1 else None


@dataclass
class EnumMemberInfo:
    """One enum member and the string it serialises as."""

    name: str
    value: str
    doc: str | None


@dataclass
class EnumInfo:
    """An enum."""

    name: str
    doc: str | None
    members: dict[str, EnumMemberInfo]
    node: n.EnumDecl
    file: str


@dataclass
class UnionInfo:
    """A tagged union of records: tag value -> variant record name."""

    name: str
    doc: str | None
    tag_field: str
    variants: dict[str, str]
    node: n.UnionDecl
    file: str


@dataclass
class AliasInfo:
    """``type Name = T``."""

    name: str
    type: Type
    doc: str | None
    node: n.AliasDecl
    file: str


@dataclass
class StateInfo:
    """A named piece of world state."""

    name: str
    kind: Literal["table", "sequence", "value"]
    type: Type
    default: n.Expr | None
    doc: str | None
    node: n.StateItem
    entity: str | None = None
    format: str | None = None

    @property
    def load_key(self) -> str:
        """The key loaded data gives the item under: its alias (``from "..."``) or its name."""
        return self.node.alias if self.node.alias is not None else self.name


@dataclass
class InvariantInfo:
    """A rule over the whole state, checked after every tool call."""

    name: str
    doc: str | None
    condition: n.Expr
    node: n.InvariantDecl


@dataclass
class ParamInfo:
    """A tool or helper parameter."""

    name: str
    type: Type
    default: n.Expr | None
    doc: str | None
    not_found: n.Expr | None
    node: n.Param


@dataclass
class ToolInfo:
    """A tool (``fn`` helpers use the same shape with ``is_fn``)."""

    name: str
    params: list[ParamInfo]
    returns: Type | None
    doc: str | None
    node: n.ToolDecl | n.FnDecl
    file: str
    is_fn: bool = False
    read_only: bool = True


@dataclass
class TaskInfo:
    """A task and the world it runs in."""

    name: str
    world: str
    node: n.TaskDecl
    file: str
    #: the merged, validated initial data (None when it has errors)
    initial_data: dict[str, object] | None = None
    #: the checks that read the conversation (``reply`` / ``replies``): answer checks
    answer_checks: frozenset[str] = frozenset()


@dataclass
class ConfigInfo:
    """World settings from the ``config`` block, with defaults."""

    results: str = "envscaler"
    clock: str = "2024-01-01T00:00:00"
    tick: int = 0
    seed: int = 0
    #: how argument errors read: "worldspec" (the runtime's messages) or "python" (the texts
    #: of Python's TypeError for `Class.tool(**arguments)`)
    arguments: str = "worldspec"
    #: the class name Python's messages quote (the world's name unless `class_name` is set)
    class_name: str | None = None
    #: the text an unknown tool name fails with (`{name}` stands for the name), or None for
    #: the runtime's `Unknown tool "x".`
    unknown_tool: str | None = None
    #: where `results` is set (for diagnostics about the convention)
    results_span: n.Span | None = None
    #: how a task's checks combine into its reward (`reward: all`), one of the runtime's
    #: REWARD_MODES; a task's own `reward` item overrides it
    reward: str = DEFAULT_REWARD
    #: where `reward` is set ("" above when its value is not a name)
    reward_span: n.Span | None = None


@dataclass
class Resolution:
    """What a bare name refers to."""

    kind: Literal["local", "param", "state", "enum", "enum_member", "record", "fn", "builtin",
                  "initial", "world_type", "conversation", "const"]
    name: str
    owner: str | None = None


@dataclass
class ConstInfo:
    """A top-level ``const``: its declared type (None: inferred from the value)."""

    name: str
    declared: Type | None
    node: n.ConstDecl
    file: str
    type: Type | None = None


@dataclass
class WorldModel:
    """One world: everything visible from its file, resolved and typed."""

    name: str
    doc: str | None
    file: str
    config: ConfigInfo
    enums: dict[str, EnumInfo] = field(default_factory=dict)
    records: dict[str, RecordInfo] = field(default_factory=dict)
    unions: dict[str, UnionInfo] = field(default_factory=dict)
    aliases: dict[str, AliasInfo] = field(default_factory=dict)
    state: dict[str, StateInfo] = field(default_factory=dict)
    invariants: dict[str, InvariantInfo] = field(default_factory=dict)
    tools: dict[str, ToolInfo] = field(default_factory=dict)
    fns: dict[str, ToolInfo] = field(default_factory=dict)
    tasks: dict[str, TaskInfo] = field(default_factory=dict)
    consts: dict[str, ConstInfo] = field(default_factory=dict)
    #: `on load { ... }`: run after initial data is loaded
    load_node: n.LoadDecl | None = None
    #: the shapes of a custom result convention (`results { success: ... failure: ... }`)
    results_node: n.ResultsDecl | None = None
    #: the rules the agent must follow (``policy``), shown to it with the tools; "" for none
    policy: str = ""
    #: the ``policy`` declaration the text comes from
    policy_node: n.PolicyDecl | None = None
    #: data files already checked against this world (many tasks share one large file):
    #: (path, mtime, size) -> what checking it gave, and a tuple of those keys -> what
    #: merging those files gave a task; filled by ``compiler.data_check``
    data_files: dict[tuple[Any, ...], Any] = field(default_factory=dict, repr=False,
                                                   compare=False)

    @property
    def entities(self) -> dict[str, RecordInfo]:
        return {k: v for k, v in self.records.items() if v.kind == "entity"}

    def table_of(self, entity: str) -> StateInfo | None:
        """The one table holding ``entity`` rows, if there is exactly one."""
        tables = [s for s in self.state.values() if s.kind == "table" and s.entity == entity]
        return tables[0] if len(tables) == 1 else None


@dataclass
class ProgramModel:
    """All worlds of a program plus the side tables of the type checker."""

    worlds: dict[str, WorldModel] = field(default_factory=dict)
    #: id(expression node) -> its type
    expr_types: dict[int, Type] = field(default_factory=dict)
    #: id(NameRef node) -> what it names
    resolutions: dict[int, Resolution] = field(default_factory=dict)
    #: ids of optional-typed names and fields known not to be none where they are read
    narrowed: set[int] = field(default_factory=set)
    #: id(expression) -> the float-holding type it is stored as: an ``int`` value widened to
    #: ``float`` (or a list of them) is converted where it is stored, so a float stays a float
    widened: dict[int, Type] = field(default_factory=dict)
    #: (world, tool) of the tools whose body asks ``given(p)``: they receive the names of the
    #: arguments the caller sent
    uses_given: set[tuple[str, str]] = field(default_factory=set)
    #: the modules, kept alive so the ids above stay valid
    modules: list[n.Module] = field(default_factory=list)

    def type_of(self, expr: n.Node) -> Type | None:
        return self.expr_types.get(id(expr))
