"""What a batch of rollouts came to: per run and task, as tau2-bench reports it.

Rollouts are grouped by :class:`Run`: the world, the setting (one-shot or conversational)
and the models (the agent's, and the simulated user's in a conversation). Samples of one
setting and model are tries of the same thing; another setting or model is another
experiment, so their figures are never pooled into one pass^k.

A rollout *passes* when its record says ``passed`` (every check held and the frame held;
whatever the task's reward mode, a weighted or mean reward below 1 never passes). Per task of
a run, over its ``n`` finished samples of which ``c`` passed: the mean reward, the pass rate
``c / n`` and pass^k for k = 1..n, the chance that k samples drawn without replacement all
pass, ``C(c, k) / C(n, k)`` (tau2's estimator; pass^1 is the pass rate, and pass^k falls as a
task is solved less reliably). A run's figures are the means of its tasks'. Records that
ended in an error are counted apart and enter no mean.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from math import comb
from typing import Any

from worldspec.rollout.records import RolloutRecord, record_passed

__all__ = ["BatchSummary", "GroupStats", "Run", "pass_hat_k", "run_of", "summarise"]



def pass_hat_k(successes: int, trials: int, k: int) -> float:
    """tau2's pass^k of one task: ``C(successes, k) / C(trials, k)``."""
    if not 1 <= k <= trials:
        raise ValueError(f"k must be between 1 and {trials}, not {k}")
    return comb(successes, k) / comb(trials, k)


#: A record's setting, by its ``conversational`` flag.
_SETTINGS = {False: "one-shot", True: "conversational"}


@dataclass(frozen=True, order=True)
class Run:
    """What makes samples comparable: a world, a setting and the models that played it."""

    world: str
    #: ``one-shot`` or ``conversational``
    setting: str
    #: the agent's model
    model: str
    #: the simulated user's model (a conversation only)
    user_model: str | None = None

    @property
    def label(self) -> str:
        """``World · setting · model`` (``· user M`` in a conversation that names one)."""
        user = f" \u00b7 user {self.user_model}" if self.user_model else ""
        return f"{self.world} \u00b7 {self.setting} \u00b7 {self.model}{user}"

    def to_json(self) -> dict[str, Any]:
        return {"world": self.world, "setting": self.setting, "model": self.model,
                "user_model": self.user_model}


def run_of(record: RolloutRecord) -> Run:
    """The run a record belongs to (``?`` for what an old or broken record lacks)."""
    models = record.get("models")
    models = models if isinstance(models, Mapping) else {}
    conversational = bool(record.get("conversational"))
    user = models.get("user") if conversational else None
    return Run(str(record.get("world", "?")), _SETTINGS[conversational],
               str(models.get("agent") or "?"), str(user) if user else None)


@dataclass
class GroupStats:
    """The figures of one task of a run, or of one run."""

    name: str
    rollouts: int = 0
    errors: int = 0
    mean_reward: float = 0.0
    pass_rate: float = 0.0
    #: k -> pass^k (for a run: the mean over its tasks that have k samples)
    pass_k: dict[int, float] = field(default_factory=dict)
    avg_steps: float = 0.0
    avg_tool_calls: float = 0.0
    tokens: int = 0
    rewards: list[float] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "rollouts": self.rollouts, "errors": self.errors,
                "mean_reward": round(self.mean_reward, 6),
                "pass_rate": round(self.pass_rate, 6),
                "pass_k": {str(k): round(v, 6) for k, v in sorted(self.pass_k.items())},
                "avg_steps": round(self.avg_steps, 3),
                "avg_tool_calls": round(self.avg_tool_calls, 3), "tokens": self.tokens}


def _task_stats(name: str, records: list[RolloutRecord]) -> GroupStats:
    stats = GroupStats(name)
    finished = [r for r in records if r.get("status") == "finished"]
    stats.errors = len(records) - len(finished)
    stats.rollouts = len(finished)
    stats.tokens = sum(int(r.get("usage", {}).get("total_tokens", 0)) for r in records)
    if not finished:
        return stats
    stats.rewards = [float(r.get("reward") or 0.0) for r in finished]
    passed = sum(1 for r in finished if record_passed(r))
    n = len(finished)
    stats.mean_reward = sum(stats.rewards) / n
    stats.pass_rate = passed / n
    stats.pass_k = {k: pass_hat_k(passed, n, k) for k in range(1, n + 1)}
    stats.avg_steps = sum(int(r.get("agent_messages", 0)) for r in finished) / n
    stats.avg_tool_calls = sum(len(r.get("steps", [])) for r in finished) / n
    return stats


def _run_stats(name: str, tasks: list[GroupStats]) -> GroupStats:
    stats = GroupStats(name)
    scored = [t for t in tasks if t.rollouts]
    stats.rollouts = sum(t.rollouts for t in tasks)
    stats.errors = sum(t.errors for t in tasks)
    stats.tokens = sum(t.tokens for t in tasks)
    if scored:
        stats.mean_reward = sum(t.mean_reward for t in scored) / len(scored)
        stats.pass_rate = sum(t.pass_rate for t in scored) / len(scored)
        stats.avg_steps = sum(t.avg_steps for t in scored) / len(scored)
        stats.avg_tool_calls = sum(t.avg_tool_calls for t in scored) / len(scored)
        for k in range(1, max(t.rollouts for t in scored) + 1):
            having = [t.pass_k[k] for t in scored if k in t.pass_k]
            if len(having) == len(scored):
                stats.pass_k[k] = sum(having) / len(having)
    return stats


def summarise(records: Iterable[RolloutRecord]
              ) -> tuple[dict[Run, GroupStats], dict[Run, dict[str, GroupStats]]]:
    """Per run, and per run and task, the figures of ``records`` (runs in sorted order,
    tasks in the order they first appear)."""
    grouped: dict[Run, dict[str, list[RolloutRecord]]] = {}
    for record in records:
        grouped.setdefault(run_of(record), {}).setdefault(str(record.get("task", "?")), []
                                                          ).append(record)
    tasks = {run: {task: _task_stats(task, rs) for task, rs in grouped[run].items()}
             for run in sorted(grouped)}
    runs = {run: _run_stats(run.label, list(by_task.values()))
            for run, by_task in tasks.items()}
    return runs, tasks


@dataclass
class BatchSummary:
    """A batch: its records (resumed ones included) and how many were done before."""

    total: int = 0
    resumed: int = 0
    records: list[RolloutRecord] = field(default_factory=list)

    @property
    def errors(self) -> int:
        return sum(1 for r in self.records if r.get("status") != "finished")

    @property
    def ok(self) -> bool:
        return self.errors == 0 and len(self.records) == self.total

    def to_json(self) -> dict[str, Any]:
        runs, tasks = summarise(self.records)
        return {"rollouts": self.total, "resumed": self.resumed, "errors": self.errors,
                "runs": [{**run.to_json(), **stats.to_json(),
                          "tasks": {t: ts.to_json() for t, ts in tasks[run].items()}}
                         for run, stats in runs.items()],
                "failures": [{"task": r.get("task"), "sample": r.get("sample"),
                              "error": r.get("error")}
                             for r in self.records if r.get("status") != "finished"]}

    def render_text(self) -> str:
        runs, tasks = summarise(self.records)
        resumed = f" ({self.resumed} finished before, resumed)" if self.resumed else ""
        lines = [f"{self.total} rollout(s){resumed}, {self.errors} error(s)"]
        for run, stats in runs.items():
            lines.append(_row(run.label, stats))
            for task, task_stats in tasks[run].items():
                lines.append("  " + _row(task, task_stats))
        for record in self.records:
            if record.get("status") != "finished":
                lines.append(f"  error {record.get('task')}#{record.get('sample')}: "
                             f"{record.get('error')}")
        return "\n".join(lines) + "\n"


def _row(name: str, stats: GroupStats) -> str:
    shown = ", ".join(f"pass^{k} {v:.3f}" for k, v in sorted(stats.pass_k.items())[:4])
    errors = f", {stats.errors} error(s)" if stats.errors else ""
    return (f"{name}: {stats.rollouts} rollout(s){errors}, mean reward "
            f"{stats.mean_reward:.3f}, pass rate {stats.pass_rate:.3f}"
            f"{', ' + shown if shown else ''}, avg steps {stats.avg_steps:.1f}, "
            f"{stats.tokens:,} tokens")
