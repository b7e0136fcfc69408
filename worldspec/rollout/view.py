"""One self-contained HTML page for a batch of rollouts (``worldspec view``).

No network: the styles, the small script and the plots (inline SVG) are in the page, and a
Content-Security-Policy forbids loading anything else. Every piece of text that comes from a
record (model output, tool results, names, check messages) goes through :func:`_text`
(``html.escape`` with quotes), so a hostile model reply shows as text and never becomes markup
or script. The record data is never embedded in a ``<script>``.

Layout: a table with one row per group, a task of a :class:`~worldspec.rollout.summary.Run`
(world, setting -- one-shot or conversational -- and models), with its rollouts, mean
reward, pass rate, pass^k and the reward distribution as a bar plot; then per group its
rollouts, numbered from 0 within the group, as ``<details id="rollout-N">`` blocks: the
model, setting, tokens (prompt / completion, as recorded) and steps, the verdict (reward,
each check passed or failed with its message and, for a failed one, what it compared; the
frame, with the values of what broke it), then the conversation, with every tool call, its
raw result, whether it failed and the state diff it made. Opening ``report.html#rollout-N``
opens that rollout.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from typing import Any

from worldspec.rollout.records import RolloutRecord
from worldspec.rollout.summary import Run, run_of, summarise
from worldspec.runtime.values import escape_surrogates

__all__ = ["render_report"]

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:70em;padding:0 1em;
color:#1d1d1f;background:#fff}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:2em;border-bottom:1px solid #ddd}
table{border-collapse:collapse}td,th{padding:.25em .7em;border-bottom:1px solid #eee;
text-align:left;vertical-align:middle}
details.rollout{border:1px solid #ddd;border-radius:6px;margin:.5em 0;padding:.3em .8em}
details.rollout>summary{cursor:pointer;font-weight:600}
.pass{color:#17803d}.fail{color:#b3261e}.err{color:#8a5a00}
ul.checks{list-style:none;padding-left:.5em}ol.conversation{padding-left:1.5em}
li.msg{margin:.5em 0}.role{font-size:.8em;text-transform:uppercase;color:#666}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f6f7;padding:.4em .6em;
border-radius:4px;margin:.2em 0}
.call{font-family:ui-monospace,monospace;background:#eef3fb;padding:.2em .5em;
border-radius:4px;display:block;margin:.2em 0}
.diff{font-family:ui-monospace,monospace;font-size:.9em;color:#444}
.failed>pre{border-left:3px solid #b3261e}.toolbar button{margin-right:.5em}
.hidden{display:none}.meta{color:#555;font-size:.9em;margin:.3em 0}
.detail{font-family:ui-monospace,monospace;font-size:.9em;color:#444;margin-left:1.4em}
"""

_SCRIPT = """
(function(){
  function openFromHash(){
    var id = decodeURIComponent(location.hash.slice(1));
    if(!id){return;}
    var el = document.getElementById(id);
    if(!el || el.tagName !== 'DETAILS'){return;}
    el.open = true;
    el.scrollIntoView();
    document.body.setAttribute('data-opened', id);
    document.body.setAttribute('data-checks',
      String(el.querySelectorAll('li.check').length));
  }
  function all(open){
    document.querySelectorAll('details.rollout').forEach(function(d){d.open = open;});
  }
  document.getElementById('expand').addEventListener('click', function(){all(true);});
  document.getElementById('collapse').addEventListener('click', function(){all(false);});
  document.getElementById('failing').addEventListener('change', function(e){
    var only = e.target.checked;
    document.querySelectorAll('details.rollout').forEach(function(d){
      d.classList.toggle('hidden', only && d.getAttribute('data-passed') === 'true');
    });
  });
  window.addEventListener('hashchange', openFromHash);
  openFromHash();
})();
"""

_CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
        "img-src data:")


def _text(value: Any) -> str:
    """Any value as escaped text: strings as they are, the rest as JSON; a lone surrogate
    (which no HTML page can hold) shows as its escape, ``\\ud800``."""
    if not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return html.escape(escape_surrogates(value), quote=True)


def _histogram(rewards: Sequence[float], *, bins: int = 10) -> str:
    """The rewards' distribution over [0, 1] as a small inline SVG bar plot."""
    counts = [0] * bins
    for reward in rewards:
        counts[min(bins - 1, max(0, int(reward * bins)))] += 1
    top = max(counts) or 1
    width, height, bar = bins * 12, 32, 10
    rects = []
    for index, count in enumerate(counts):
        h = round(height * count / top)
        low, high = index / bins, (index + 1) / bins
        label = f"{count} rollout(s) with reward in [{low:.1f}, {high:.1f}" + \
            ("]" if index == bins - 1 else ")")
        rects.append(f'<rect x="{index * 12}" y="{height - h}" width="{bar}" height="{h}" '
                     f'fill="#4a7bd0"><title>{_text(label)}</title></rect>')
    return (f'<svg class="dist" width="{width}" height="{height + 2}" role="img" '
            f'aria-label="reward distribution" xmlns="http://www.w3.org/2000/svg">'
            f'<line x1="0" y1="{height + 1}" x2="{width}" y2="{height + 1}" stroke="#999"/>'
            + "".join(rects) + "</svg>")


def _compared(detail: Mapping[str, Any]) -> str:
    return (f"compared {_text(detail.get('expression', ''))}: left "
            f"<code>{_text(detail.get('left'))}</code>, right "
            f"<code>{_text(detail.get('right'))}</code>")


def _state(detail: Mapping[str, Any]) -> str:
    count = detail.get("differences")
    more = f" ({_text(count)} path(s) differ)" if isinstance(count, int) and count > 1 else ""
    return (f"first difference at {_text(detail.get('path', ''))}: expected "
            f"<code>{_text(detail.get('expected'))}</code>, found "
            f"<code>{_text(detail.get('found'))}</code>{more}")


#: a check detail's ``kind`` -> how it reads (see ``worldspec.runtime.verdicts``)
_DETAILS = {"compare": _compared, "state": _state}


def _detail(check: Mapping[str, Any]) -> str:
    """What a failed check compared, where its record says (nothing for a passed one)."""
    detail = check.get("detail")
    if check.get("passed") or not isinstance(detail, Mapping):
        return ""
    shown = _DETAILS.get(str(detail.get("kind")))
    body = shown(detail) if shown is not None else _text(detail)
    return f'<div class="detail">{body}</div>'


def _checks(record: RolloutRecord) -> str:
    items = []
    for check in record.get("checks") or []:
        status = str(check.get("status", "passed" if check.get("passed") else "failed"))
        mark, css = {"passed": ("\u2713", "pass"), "error": ("!", "err")}.get(
            status, ("\u2717", "fail"))
        message = f" \u2014 {_text(check.get('message'))}" if check.get("message") else ""
        items.append(f'<li class="check {css}" data-check="{_text(check.get("name"))}" '
                     f'data-status="{_text(status)}">{mark} {_text(check.get("name"))}'
                     f"{message}{_detail(check)}</li>")
    frame = record.get("frame") or {}
    if frame:
        if frame.get("ok", True):
            items.append('<li class="frame pass">\u2713 frame: nothing else changed</li>')
        else:
            broken = ", ".join(str(v) for v in frame.get("violations", []))
            changes = "".join(
                f'<div class="detail">~ {_text(c.get("path"))}: {_text(c.get("old"))} '
                f"\u2192 {_text(c.get('new'))}</div>"
                for c in frame.get("changes") or [] if isinstance(c, Mapping))
            items.append(f'<li class="frame fail">\u2717 frame broken (reward 0): '
                         f"{_text(broken)}{changes}</li>")
    return '<ul class="checks">' + "".join(items) + "</ul>"


def _tokens(usage: Any) -> str:
    """``prompt P / completion C`` of one model's usage, as recorded."""
    if not isinstance(usage, Mapping):
        return "not recorded"
    return (f"prompt {_text(usage.get('prompt_tokens', '?'))} / completion "
            f"{_text(usage.get('completion_tokens', '?'))}")


def _meta(record: RolloutRecord) -> str:
    """Who played the rollout, in which setting, and what it cost."""
    run = run_of(record)
    recorded = record.get("usage")
    usage: Mapping[str, Any] = recorded if isinstance(recorded, Mapping) else {}
    parts = [f"model {_text(run.model)}", f"setting {_text(run.setting)}",
             f"agent tokens {_tokens(usage.get('agent'))}"]
    if run.user_model:
        parts.append(f"user {_text(run.user_model)}, tokens {_tokens(usage.get('user'))}")
    parts.append(f"{_text(record.get('agent_messages', 0))} step(s) (agent messages)")
    return '<p class="meta">' + " \u00b7 ".join(parts) + "</p>"


def _conversation(record: RolloutRecord) -> str:
    steps = {str(s.get("call_id")): s for s in record.get("steps") or []}
    out = ['<ol class="conversation">']
    for message in record.get("messages") or []:
        role = str(message.get("role", "?"))
        parts = [f'<div class="role">{_text(role)}</div>']
        content = message.get("content")
        if content:
            parts.append(f"<pre>{_text(content)}</pre>")
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            parts.append(f'<code class="call">{_text(function.get("name", ""))}('
                         f'{_text(function.get("arguments", ""))})</code>')
        css = ""
        step = steps.get(str(message.get("tool_call_id"))) if role == "tool" else None
        if step is not None:
            if step.get("failed"):
                css = " failed"
                parts.insert(1, '<div class="fail">failed</div>')
            for change in step.get("diff") or []:
                parts.append(f'<div class="diff">~ {_text(change.get("path"))}: '
                             f'{_text(change.get("old"))} \u2192 {_text(change.get("new"))}'
                             "</div>")
        out.append(f'<li class="msg role-{_text(role)}{css}">' + "".join(parts) + "</li>")
    out.append("</ol>")
    return "".join(out)


def _rollout(index: int, number: int, record: RolloutRecord) -> str:
    """One rollout's block; ``number`` counts the rollouts of its group from 0."""
    finished = record.get("status") == "finished"
    reward = float(record.get("reward") or 0.0)
    passed = finished and reward >= 1.0 - 1e-9
    css = "pass" if passed else "fail"
    verdict = f"reward {reward:.3f}" if finished else "error"
    run = run_of(record)
    head = (f'<summary><span class="{css}">{_text(verdict)}</span> \u00b7 sample {number} '
            f'\u00b7 {_text(run.setting)} \u00b7 {_text(run.model)} '
            f'\u00b7 {_text(record.get("termination") or "")} '
            f'\u00b7 {len(record.get("steps") or [])} tool call(s)</summary>')
    error = f'<p class="err">{_text(record.get("error"))}</p>' if record.get("error") else ""
    return (f'<details class="rollout" id="rollout-{index}" '
            f'data-task="{_text(record.get("task"))}" data-setting="{_text(run.setting)}" '
            f'data-model="{_text(run.model)}" data-sample="{number}" data-reward="{reward}" '
            f'data-passed="{"true" if passed else "false"}">{head}{_meta(record)}{error}'
            f"{_checks(record)}{_conversation(record)}</details>")


def _sample_order(record: RolloutRecord) -> tuple[int, str]:
    sample = record.get("sample")
    return (sample if isinstance(sample, int) else 0, str(record.get("key", "")))


def render_report(records: Sequence[RolloutRecord], *, title: str = "rollouts") -> str:
    """The whole page for ``records`` (finished and failed ones)."""
    runs, tasks = summarise(records)
    members: dict[tuple[Run, str], list[RolloutRecord]] = {}
    for record in records:
        members.setdefault((run_of(record), str(record.get("task", "?"))), []).append(record)
    rows, sections = [], []
    index = 0
    for group, (run, task) in enumerate(sorted(members)):
        stats = tasks[run][task]
        anchor = f"group-{group}"
        shown = ", ".join(f"{k}: {v:.2f}" for k, v in sorted(stats.pass_k.items())[:4])
        rows.append(f'<tr class="group" data-setting="{_text(run.setting)}" '
                    f'data-model="{_text(run.model)}" data-task="{_text(task)}">'
                    f"<td>{_text(run.world)}</td><td>{_text(run.setting)}</td>"
                    f"<td>{_text(run.model)}</td><td>"
                    f'<a href="#{anchor}">{_text(task)}</a></td><td>{stats.rollouts}</td>'
                    f"<td>{stats.errors}</td><td>{stats.mean_reward:.3f}</td>"
                    f"<td>{stats.pass_rate:.3f}</td><td>{_text(shown)}</td>"
                    f"<td>{_histogram(stats.rewards)}</td></tr>")
        sections.append(f'<h2 id="{anchor}">{_text(run.label)} \u00b7 {_text(task)}</h2>')
        for number, record in enumerate(sorted(members[(run, task)], key=_sample_order)):
            sections.append(_rollout(index, number, record))
            index += 1
    overall = ", ".join(f"{_text(r.label)}: mean reward {s.mean_reward:.3f}, pass rate "
                        f"{s.pass_rate:.3f}" for r, s in runs.items())
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        f"<title>Rollouts \u2014 {_text(title)}</title><style>{_STYLE}</style></head>"
        f"<body><h1>Rollouts \u2014 {_text(title)}</h1><p>{len(records)} rollout(s). "
        f"{overall}</p>"
        '<table class="tasks"><thead><tr><th>world</th><th>setting</th><th>model</th>'
        "<th>task</th><th>rollouts</th>"
        "<th>errors</th><th>mean reward</th><th>pass rate</th><th>pass^k</th>"
        "<th>rewards (0 \u2192 1)</th></tr></thead><tbody>" + "".join(rows) +
        "</tbody></table>"
        '<p class="toolbar"><button id="expand" type="button">expand all</button>'
        '<button id="collapse" type="button">collapse all</button>'
        '<label><input id="failing" type="checkbox"> only rollouts that did not pass'
        "</label></p>" + "".join(sections) +
        f"<script>{_SCRIPT}</script></body></html>\n"
    )
