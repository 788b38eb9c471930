"""Reading a user's files: a missing, unreadable, non-UTF-8 or non-JSON file is one clear error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ValidationError

from memstream.errors import MemstreamError

M = TypeVar("M", bound=BaseModel)

#: A JSON object as read or written, before validation or after dumping: a request or response body sent over
#: HTTP, a JSON schema, free-form metadata a user attaches. Only for data memstream does not give a shape of its own;
#: anything memstream builds and reads back has a typed model instead.
JsonObject = dict[str, Any]


def not_a_file(path: Path, what: str = "file") -> str:
    """Why ``path`` cannot be read as a ``what``, in words that fit: missing, a folder, or not a regular file.
    Why one place: "no such file" for a folder or a device sent people looking for a file that is there."""
    if path.is_dir():
        return f"{path} is a folder, not a {what}; name the {what} in it"
    if path.exists() or path.is_symlink():
        return (f"{path} is not a regular file (a device, a pipe, a socket or a broken link); "
                f"give a {what}")
    return f"no such {what}: {path}"


def read_text(path: str | Path, what: str = "file") -> str:
    """The UTF-8 text of ``path``; :class:`MemstreamError` naming the problem if there is none."""
    path = Path(path)
    if not path.is_file():
        raise MemstreamError(not_a_file(path, what))
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise MemstreamError(f"{path} is not UTF-8 text (byte {e.start}); save it as UTF-8") from None
    except OSError as e:
        raise MemstreamError(f"cannot read {path} ({e.strerror}); check its permissions") from None


def read_json(path: str | Path, what: str = "JSON file") -> Any:
    """The JSON value in ``path`` (strict: NaN and infinity are not JSON)."""
    text = read_text(path, what)
    try:
        return json.loads(text, parse_constant=_refuse)
    except (json.JSONDecodeError, RecursionError, ValueError) as e:
        raise MemstreamError(f"{path} is not valid JSON ({getattr(e, 'msg', str(e))[:60]})") from None


def read_data(path: str | Path, what: str = "file") -> Any:
    """The value in a YAML (``.yaml``/``.yml``) or JSON file; one clear error if it does not parse."""
    path = Path(path)
    if path.suffix.lower() not in (".yaml", ".yml"):
        return read_json(path, what)
    text = read_text(path, what)
    try:
        return load_yaml(text)
    except DuplicateKeyError as e:
        raise MemstreamError(f"{path}: {e}; keep one of them") from None
    except Exception as e:  # yaml's errors have several types
        raise MemstreamError(f"{path} is not valid YAML: {str(e).splitlines()[0]}") from None


class DuplicateKeyError(ValueError):
    """A YAML mapping that names one key twice (YAML would silently keep the last)."""


def load_yaml(text: str) -> Any:
    """YAML's safe load, refusing a mapping with a repeated key: ``agents: 3`` then ``agents: 30``
    further down is a mistake to show, not a value to guess."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *defaults` may be overridden, as YAML means
                continue
            key = loader.construct_object(key_node, deep=deep)
            try:
                repeated = key in seen
                seen.add(key)
            except TypeError:  # an unhashable key: SafeLoader refuses it itself
                continue
            if repeated:
                line = key_node.start_mark.line + 1
                raise DuplicateKeyError(f"the key {str(key)[:40]!r} appears twice (again on line {line})")
        return loader.construct_mapping(node, deep=deep)

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    return yaml.load(text, Loader=Loader)  # a SafeLoader subclass


def _no_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("a number is needed, not true or false")
    return value


def _whole(value: Any) -> Any:
    if isinstance(value, bool | str):
        raise ValueError(f"a whole number is needed, not {value!r}")
    return value


#: A whole number as a user's file must write it: ``true`` is not 1, nor ``"2"`` 2 (``2.0`` is 2, as
#: run folders written before kept some whole numbers as floats; ``2.5`` is refused).
WholeNumber = Annotated[int, BeforeValidator(_whole)]
#: A number (an int or a float, or a numeric string, as YAML reads ``1e3``), but never ``true``.
Number = Annotated[float, BeforeValidator(_no_bool)]


def problem(error: ValidationError) -> str:
    """A pydantic error as one line: where (the dotted field) and what, of its first complaint."""
    first = error.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"{where}: {first['msg']}" if where else first["msg"]


def read_model(path: str | Path, model: type[M], what: str, hint: str = "") -> M:
    """``model`` read from a YAML or JSON file; one clear error naming the file, the field and the problem."""
    data = read_data(path, f"{what} file")
    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise MemstreamError(f"{path}: bad {what}: {problem(e)}" + (f" ({hint})" if hint else "")) from None


def _refuse(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")
