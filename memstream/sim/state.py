"""Typed state with its JSON form derived from the fields, never listed by hand.

A component's state is a dataclass; :class:`Stateful` gives it ``get_state`` (plain JSON data,
one key per field) and ``set_state`` (the fields back from that data, each to its declared
type), so a field added to a component is checkpointed and restored with no other change.
A key missing from an older state keeps the field's default. A field is saved under its name, or
under ``metadata={"key": ...}`` where a checkpoint format names it otherwise; ``metadata={"state":
False}`` leaves it out (what is rebuilt, not restored).
"""

from __future__ import annotations

import types
import typing
from dataclasses import MISSING, fields
from typing import Any, Self, Union, get_args, get_origin


class Stateful:
    """A dataclass whose state is its fields (see the module docstring)."""

    def get_state(self) -> dict[str, Any]:
        return {key: encode(getattr(self, name)) for name, key, _ in _fields(type(self))}

    def set_state(self, state: dict[str, Any]) -> None:
        for name, key, hint in _fields(type(self)):
            if key in state:
                setattr(self, name, decode(hint, state[key]))

    @classmethod
    def state_problem(cls, state: Any) -> str | None:
        """What keeps ``state`` from restoring this component (a field without a default missing, or
        null where the field cannot be), or None: a damaged checkpoint is refused, not half-restored."""
        if not isinstance(state, dict):
            return f"{cls.__name__} state is not an object"
        for name, key, hint in _fields(cls):
            if key not in state:
                if name in _required(cls):
                    return f"{cls.__name__} state has no {key}"
            elif state[key] is None and type(None) not in get_args(hint):
                return f"{cls.__name__} state has {key}: null"
        return None

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> Self:
        """A new instance from ``state`` (which holds every field without a default)."""
        made = cls(**{name: decode(hint, state[key]) for name, key, hint in _fields(cls)
                      if name in _required(cls)})
        made.set_state(state)
        return made


def encode(value: Any) -> Any:
    """Plain JSON data for ``value``: objects with ``to_dict`` or ``get_state``, tuples as lists, copies of
    containers (a checkpoint must not share a list the run goes on changing)."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, Stateful):
        return value.get_state()
    if isinstance(value, list | tuple):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {k: encode(v) for k, v in value.items()}
    return value


def decode(hint: Any, data: Any) -> Any:
    """``data`` (from :func:`encode`) as the declared type ``hint``."""
    if data is None:
        return None
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, types.UnionType):
        return decode(next(a for a in args if a is not type(None)), data)
    if origin is tuple:
        item = args[0] if args else Any
        return tuple(decode(item, v) for v in data)
    if origin is list:
        return [decode(args[0] if args else Any, v) for v in data]
    if origin is dict:
        return {k: decode(args[1] if args else Any, v) for k, v in data.items()}
    if isinstance(hint, type) and hasattr(hint, "from_dict"):
        return hint.from_dict(data)
    if isinstance(hint, type) and issubclass(hint, Stateful):
        return hint.from_state(data)
    if hint is float and isinstance(data, int):
        return float(data)
    return data


#: Each class's state fields and required fields, found once per class (a step asks for them per agent).
#: Plain dicts rather than functools.cache: its typing takes only Hashable arguments, which a class
#: object is at run time but not to the type checker.
_FIELDS: dict[type, tuple[tuple[str, str, Any], ...]] = {}
_REQUIRED: dict[type, frozenset[str]] = {}


def _fields(cls: type) -> tuple[tuple[str, str, Any], ...]:
    """``(name, key, resolved type)`` of a dataclass's state fields."""
    if cls not in _FIELDS:
        resolved = typing.get_type_hints(cls)
        _FIELDS[cls] = tuple((f.name, f.metadata.get("key", f.name), resolved[f.name])
                             for f in fields(cls) if f.metadata.get("state", True))
    return _FIELDS[cls]


def _required(cls: type) -> frozenset[str]:
    if cls not in _REQUIRED:
        _REQUIRED[cls] = frozenset(f.name for f in fields(cls)
                                   if f.default is MISSING and f.default_factory is MISSING and f.init)
    return _REQUIRED[cls]
