"""A challenge's spec: a YAML or JSON file (or a platform API request's body), read and checked field by field.

A spec is one object::

    name: deid-2026                    # a name: letters, digits, '_', '.', '-'; at most 60
    title: De-identification 2026      # optional
    description: …                     # optional
    phases:                            # at least one, in order
      - name: dev
        tasks: [phi]                   # task names (`nlpbench submissions queue` lists the queues)
        datasets: [notes@1]            # NAME@VERSION, each in the store (a dataset, or a task's gold)
        queue: dev                     # the queue its submissions go to (opened if new)
        opens: 2026-11-01T00:00:00Z    # UTC (an offset is converted; a time without one is refused)
        closes: 2026-12-01T00:00:00Z   # after opens
        kinds: [command, predictions]  # of tool, command, archive, image, predictions
        quota:                         # optional; none: no quota
          submissions: 3
          window: day                  # day, week or month (as queues count them)
          per_task: false              # false: counted across the phase's tasks
        limits:                        # optional; each defaults to the sandbox's
          memory_mb: 2048
          cpu_seconds: 3600
          processes: 64
          wall_seconds: 7200           # also the phase's time budget for annotating
        visibility: public             # public, private or blind
        freeze_at_close: false

Every field is checked: an unknown one, a missing one, a value of the wrong
type or out of range is an :class:`~nlpbench.errors.InputError` naming the
file and the field (``phases[1].closes``), so the command line prints one
line and exits 2. Nothing is written until the whole spec is valid.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nlpbench import files
from nlpbench.errors import InputError, excerpt, json_kind
from nlpbench.platform import tasks
from nlpbench.runner.limits import Limits
from nlpbench.store.submissions import KINDS
from nlpbench.store.vocabulary import PHASE_VISIBILITIES, WINDOWS

#: The largest spec file read, in bytes.
MAX_SPEC_BYTES = 2**20
#: A name a challenge, a phase or a queue may have (as queues' names).
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,59}")
#: A dataset as a phase names it: NAME@VERSION.
DATASET = re.compile(r"([A-Za-z0-9][A-Za-z0-9_.-]{0,59})@([A-Za-z0-9][A-Za-z0-9_.-]{0,39})")
_TOP = {"name", "title", "description", "phases"}
_PHASE = {
    "name",
    "tasks",
    "datasets",
    "queue",
    "opens",
    "closes",
    "kinds",
    "quota",
    "limits",
    "visibility",
    "freeze_at_close",
}
_QUOTA = {"submissions", "window", "per_task"}
_LIMITS = {"memory_mb", "cpu_seconds", "processes", "wall_seconds"}


@dataclass(frozen=True)
class PhaseSpec:
    """A phase as its spec gives it, checked."""

    name: str
    tasks: tuple[str, ...]
    datasets: dict[str, str]
    queue: str
    opens_at: datetime
    closes_at: datetime
    kinds: tuple[str, ...]
    quota: int | None
    quota_window: str
    quota_per_task: bool
    limits: Limits
    visibility: str
    freeze_at_close: bool


@dataclass(frozen=True)
class ChallengeSpec:
    """A challenge as its spec gives it, checked; its phases in order."""

    name: str
    title: str
    description: str
    phases: tuple[PhaseSpec, ...]


def read_spec(path: Path) -> ChallengeSpec:
    """The spec in the file at ``path``: JSON when it ends in ``.json``, else YAML."""
    data = files.read_bytes(path)
    if len(data) > MAX_SPEC_BYTES:
        raise InputError(f"over the {MAX_SPEC_BYTES} bytes a challenge spec may have", path)
    text = files.decoded(data, path, bom=True)
    return parsed_spec(_loaded(text, path, json_file=path.suffix.lower() == ".json"), path)


def _loaded(text: str, path: Path, *, json_file: bool) -> Any:
    """The spec's text decoded; a key given twice in one object is refused (it would silently keep one)."""
    if json_file:
        try:
            return json.loads(text, object_pairs_hook=_unique)
        except json.JSONDecodeError as error:
            raise InputError(f"not JSON: {error.msg} at line {error.lineno}, column {error.colno}", path) from None
        except RecursionError:
            raise InputError("nested too deeply", path) from None
    import yaml

    class Loader(yaml.SafeLoader):
        """YAML's safe loader refusing a key given twice."""

    def mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
        return _unique(loader.construct_pairs(node, deep=True))

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    try:
        return yaml.load(text, Loader=Loader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise InputError(f"not YAML: {error.problem or error.context}{where}", path) from None
    except (yaml.YAMLError, RecursionError) as error:
        raise InputError(f"not YAML: {type(error).__name__}", path) from None


def _unique(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    seen: dict[Any, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise InputError(f"the key {excerpt(key)} is given twice in one object")
        seen[key] = value
    return seen


def parsed_spec(data: Any, where: str | Path) -> ChallengeSpec:
    """A decoded spec checked; ``where`` names it in errors (a file, or the request's body)."""
    try:
        top = _object(data, "", _TOP, {"name", "phases"})
        phases_given = top["phases"]
        if not isinstance(phases_given, list) or not phases_given:
            raise _Wrong("phases", "a list of at least one phase")
        phases = tuple(_phase(given, f"phases[{i}]") for i, given in enumerate(phases_given))
        names = [phase.name for phase in phases]
        for i, name in enumerate(names):
            if name in names[:i]:
                raise _Wrong(f"phases[{i}].name", f"a name no other phase has ({name} is given twice)")
        return ChallengeSpec(
            name=_name(top["name"], "name"),
            title=_text(top.get("title", ""), "title"),
            description=_text(top.get("description", ""), "description", 10000),
            phases=phases,
        )
    except _Wrong as wrong:
        raise InputError(wrong.problem, where, wrong.field or None) from None
    except InputError as error:  # a key given twice, found while loading
        raise error.at(where) from None


class _Wrong(Exception):
    """A field of the spec is wrong: which (``phases[0].quota.window``) and what it should be."""

    def __init__(self, field: str, expected: str, value: Any = None, *, shown: bool = True):
        self.field = field
        got = f", not {excerpt(value, 40)}" if shown and value is not None else ""
        self.problem = f"should be {expected}{got}"


def _object(value: Any, at: str, allowed: set[str], required: set[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Wrong(at, f"an object, not {json_kind(value)}", shown=False)
    for key in value:
        if key not in allowed:
            field = f"{at}.{key}" if at else str(key)
            raise _Wrong(field[:120], f"one of the fields {', '.join(sorted(allowed))} (an unknown field)", shown=False)
    for key in sorted(required):
        if key not in value:
            raise _Wrong(f"{at}.{key}" if at else key, "given (it is required)", shown=False)
    return value


def _name(value: Any, at: str) -> str:
    if not isinstance(value, str) or not NAME.fullmatch(value):
        raise _Wrong(at, "a name (letters, digits, '_', '.', '-'; at most 60)", value)
    return value


def _text(value: Any, at: str, limit: int = 200) -> str:
    if not isinstance(value, str) or len(value) > limit or "\x00" in value:
        raise _Wrong(at, f"text of at most {limit} characters", value if not isinstance(value, str) else None)
    return value


def _names(value: Any, at: str, known: tuple[str, ...] | None = None) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise _Wrong(at, "a list of at least one name", value)
    for i, item in enumerate(value):
        if not isinstance(item, str) or (known is not None and item not in known):
            raise _Wrong(f"{at}[{i}]", f"one of {', '.join(known)}" if known else "a name", item)
        if item in value[:i]:
            raise _Wrong(f"{at}[{i}]", "given once", item)
    return tuple(value)


def _moment(value: Any, at: str) -> datetime:
    """A time with its offset, as YAML gives it (a datetime) or as text (ISO 8601, ``Z`` allowed); in UTC."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise _Wrong(at, "a time like 2026-12-01T00:00:00Z", value) from None
    if not isinstance(value, datetime):  # a date alone (YAML reads 2026-12-01 as one) has no time
        raise _Wrong(at, "a time like 2026-12-01T00:00:00Z", value)
    if value.tzinfo is None:
        raise _Wrong(at, "a time with its offset (Z for UTC)", value.isoformat())
    return value.astimezone(UTC)


def _number(value: Any, at: str, kind: type, *, minimum: float) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float) if kind is float else int) or value < minimum:
        raise _Wrong(at, f"{'a number' if kind is float else 'a whole number'} of at least {minimum:g}", value)
    return kind(value)


def _flag(value: Any, at: str) -> bool:
    if not isinstance(value, bool):
        raise _Wrong(at, "true or false", value)
    return value


def _phase(given: Any, at: str) -> PhaseSpec:
    phase = _object(given, at, _PHASE, {"name", "tasks", "datasets", "queue", "opens", "closes", "kinds"})
    task_names = _names(phase["tasks"], f"{at}.tasks")
    for i, task in enumerate(task_names):
        if not tasks.known(task):
            raise _Wrong(f"{at}.tasks[{i}]", f"a task nlpbench scores ({', '.join(tasks.names())})", task)
    datasets: dict[str, str] = {}
    for i, item in enumerate(_names(phase["datasets"], f"{at}.datasets")):
        matched = DATASET.fullmatch(item)
        if matched is None:
            raise _Wrong(f"{at}.datasets[{i}]", "NAME@VERSION", item)
        if matched[1] in datasets:
            raise _Wrong(f"{at}.datasets[{i}]", "one version of each dataset", item)
        datasets[matched[1]] = matched[2]
    opens, closes = _moment(phase["opens"], f"{at}.opens"), _moment(phase["closes"], f"{at}.closes")
    if closes <= opens:
        raise _Wrong(f"{at}.closes", f"after opens ({opens:%Y-%m-%d %H:%M} UTC)", closes.isoformat())
    kinds = _names(phase["kinds"], f"{at}.kinds", KINDS)
    for i, kind in enumerate(kinds):
        if kind != "predictions" and not all(tasks.on_dataset(task) for task in task_names):
            raise _Wrong(f"{at}.kinds[{i}]", "predictions only: a file-scored task takes no tool", kind)
    quota = _object(phase.get("quota", {"submissions": None}), f"{at}.quota", _QUOTA, {"submissions"})
    submissions = quota["submissions"]
    visibility = phase.get("visibility", "public")
    if visibility not in PHASE_VISIBILITIES:
        raise _Wrong(f"{at}.visibility", f"one of {', '.join(PHASE_VISIBILITIES)}", visibility)
    window = quota.get("window", "day")
    if window not in WINDOWS:
        raise _Wrong(f"{at}.quota.window", f"one of {', '.join(WINDOWS)}", window)
    return PhaseSpec(
        name=_name(phase["name"], f"{at}.name"),
        tasks=task_names,
        datasets=datasets,
        queue=_name(phase["queue"], f"{at}.queue"),
        opens_at=opens,
        closes_at=closes,
        kinds=kinds,
        quota=None if submissions is None else _number(submissions, f"{at}.quota.submissions", int, minimum=1),
        quota_window=window,
        quota_per_task=_flag(quota.get("per_task", False), f"{at}.quota.per_task"),
        limits=_limits(phase.get("limits", {}), f"{at}.limits"),
        visibility=visibility,
        freeze_at_close=_flag(phase.get("freeze_at_close", False), f"{at}.freeze_at_close"),
    )


def _limits(given: Any, at: str) -> Limits:
    limits = _object(given, at, _LIMITS, set())
    default = Limits()
    return Limits(
        memory_bytes=_number(limits.get("memory_mb", default.memory_bytes // 2**20), f"{at}.memory_mb", int, minimum=16)
        * 2**20,
        cpu_seconds=_number(limits.get("cpu_seconds", default.cpu_seconds), f"{at}.cpu_seconds", float, minimum=1),
        processes=_number(limits.get("processes", default.processes), f"{at}.processes", int, minimum=1),
        wall_seconds=_number(limits.get("wall_seconds", default.wall_seconds), f"{at}.wall_seconds", float, minimum=1),
    )
