"""A tool's description promises only fields its result contains."""

from __future__ import annotations

import re
from typing import ClassVar

from worldspec.compiler import types as t
from worldspec.compiler.model import FieldInfo, ToolInfo, WorldModel
from worldspec.compiler.rules import RuleContext
from worldspec.compiler.shown import result_contents

__all__ = ["ToolDocFields", "promised_missing_fields", "field_mention"]

#: the last word of a field holding a date or time, and the words a doc may say for it
#: (`due_on` is a "due date", `placed_at` a "placed time")
_WHEN_WORDS = {"on": "dates?|days?", "at": "times?|dates?", "date": "dates?", "time": "times?"}


def _plural(word: str) -> str:
    """A pattern for ``word`` and its plural (``fee``/``fees``, ``copy``/``copies``)."""
    if word.endswith("y") and len(word) > 2:
        return f"{re.escape(word[:-1])}(?:y|ies)"
    return f"{re.escape(word)}(?:s|es)?"


def field_mention(name: str) -> re.Pattern[str]:
    """How a doc mentions field ``name``, loosely: its words apart (underscores as spaces or
    hyphens), the last one in the singular or plural; a field ending in ``_on``/``_at``
    also as "<words> date(s)"/"time(s)"."""
    words = [w for w in name.lower().split("_") if w]
    sep = r"[\s_-]+"
    forms = [sep.join([*map(re.escape, words[:-1]), _plural(words[-1])])]
    if len(words) > 1 and words[-1] in _WHEN_WORDS:
        forms.append(sep.join([*map(re.escape, words[:-1]), f"(?:{_WHEN_WORDS[words[-1]]})"]))
    return re.compile(rf"(?<![\w]){'|'.join(f'(?:{f})' for f in forms)}(?![\w])", re.IGNORECASE)


def _snake(name: str) -> str:
    """A type's name as field words: ``BalanceTransaction`` is ``balance_transaction``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _telling(field: FieldInfo, world: WorldModel) -> bool:
    """Whether a doc's mention of ``field`` can only mean the field: not a key (a result
    shows keys), not a reference (its name is the entity's), not named like a type, and no
    two-letter word ("at", "on")."""
    if field.is_key or t.referenced_entity(field.type) is not None or len(field.name) < 3:
        return False
    types = {x.lower() for x in (*world.records, *world.enums, *world.unions)}
    return field.name.lower() not in types


def promised_missing_fields(tool: ToolInfo, world: WorldModel) -> list[str]:
    """The fields of entities a lookup's result shows by key only, that its doc mentions and
    that its result never contains (the tool's own parameter names aside), in order.

    Only a tool that changes nothing is judged: there the doc says what the agent will
    learn, while the doc of a tool that acts names fields as the conditions and effects of
    the act ("drop before the drop deadline")."""
    if tool.returns is None or not tool.read_only or not (tool.doc or "").strip():
        return []
    contents = result_contents(tool.returns, world)
    own = {p.name for p in tool.params} | contents.fields
    asked = " ".join(p.doc or "" for p in tool.params)
    doc = tool.doc or ""
    # a word inside what the doc says of the result's own fields ("points redeemed" for
    # points_redeemed, "prices" for unit_price) or inside a type's name ("balance
    # transaction") is no mention of a keyed entity's field (a customer's points, balance)
    said = {*contents.fields, *(name.rsplit("_", 1)[-1] for name in contents.fields),
            *(_snake(name) for name in (*world.records, *world.enums, *world.unions))}
    told = [m.span() for name in sorted(said) for m in field_mention(name).finditer(doc)]
    missing: list[str] = []
    for entity in sorted(contents.keyed_entities):
        for field in world.records[entity].fields.values():
            if field.name in own or field.name in missing or not _telling(field, world):
                continue
            mention = field_mention(field.name)
            if mention.search(asked):  # "find patients by name": what the agent sends
                continue
            if any(_promises(field, doc, m.start()) for m in mention.finditer(doc)
                   if not any(a <= m.start() and m.end() <= b for a, b in told)):
                missing.append(field.name)
    return missing


#: the words before a yes/no field that make its mention a promise ("whether they are on
#: sale"); without them it is an adjective choosing the rows ("list the in-service cars")
_WHETHER = re.compile(r"\b(?:whether|if)\b", re.IGNORECASE)


def _promises(field: FieldInfo, doc: str, at: int) -> bool:
    """Whether the mention of ``field`` at ``at`` in ``doc`` promises its value."""
    if t.strip_optional(field.type) != t.BOOL:
        return True
    sentence = re.split(r"[.;:!?]\s", doc[:at])[-1]
    return _WHETHER.search(sentence) is not None


class ToolDocFields:
    """Warn when a tool's doc names fields its result shows only by key (WS515)."""

    codes: ClassVar[tuple[str, ...]] = ("WS515",)

    def check(self, ctx: RuleContext) -> None:
        world = ctx.world
        for tool in world.tools.values():
            missing = promised_missing_fields(tool, world)
            if not missing or tool.returns is None:
                continue
            named = ", ".join(f"'{m}'" for m in missing)
            keyed = sorted(result_contents(tool.returns, world).keyed_entities)
            example = keyed[0]
            ctx.sink.report(
                "WS515", tool.node.name.span,
                f"the description of tool '{tool.name}' mentions {named}, which its result "
                f"({t.show(tool.returns)}) does not contain: it shows "
                f"{' and '.join(keyed)} by key only",
                hints=[f"where the result should show the whole row, write row[{example}] "
                       f"for {example} (e.g. list[row[{example}]]), or say less in the "
                       "description"])
