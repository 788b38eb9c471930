"""The package's layering, read from the imports themselves (function-level and TYPE_CHECKING ones too).

errors, timeutil, files, offline_text, offline_events <- models <- stream, trust, facts <- reflection <-
planning, designs <- sim, eval <- cli, plots, sweep, view, service, client, integrations <- testing (docs/architecture.md draws it): nothing imports a
layer above its own, packages on one layer stand apart where APART says so, and no modules import each other in
a loop.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "memstream"

#: Each top-level module or subpackage of memstream, with its layer (higher may import lower).
LAYERS = {
    "errors": 0, "timeutil": 0, "offline_text": 0, "offline_events": 0, "files": 0, "sqlite": 0, "weight_text": 0,
    "spoken_times": 0, "offline_corrections": 0, "offline_news": 0,
    "models": 1,
    "stream": 2, "trust": 2, "facts": 2,
    "reflection": 3,
    "planning": 4, "designs": 4,
    "sim": 5, "eval": 5,
    "plots": 6, "cli": 6, "sweep": 6, "view": 6, "service": 6, "client": 6, "integrations": 6,
    "__init__": 2,  # the package face: re-exports models and stream
    "__main__": 7, "examples": 7, "testing": 7,
}
#: Same layer, still apart: eval beside sim, designs beside planning, trust beside stream, neither importing the other.
APART = {("sim", "eval"), ("eval", "sim"), ("planning", "designs"), ("designs", "planning"),
         ("trust", "stream"), ("stream", "trust"), ("service", "cli"), ("client", "cli"),
         ("integrations", "cli"), ("integrations", "service"), ("service", "integrations")}
#: Packages whose face (``__init__``) is the only way in from another package.
FACED = {"models", "stream", "trust", "facts", "reflection", "planning", "designs", "sim", "eval", "view", "sweep",
         "testing", "service", "integrations"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def face_exports(module: str) -> set[str]:
    """The names in a package's ``__all__`` (none for a plain module)."""
    init = PACKAGE.parent.joinpath(*module.split("."), "__init__.py")
    if not init.is_file():
        return set()
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
            return {ast.literal_eval(e) for e in node.value.elts}  # type: ignore[attr-defined]
    return set()


def imports_of(path: Path) -> set[str]:
    """Every memstream module ``path`` imports, wherever the import statement stands."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("memstream"))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            if base.startswith("memstream"):
                found.add(base)
                exported = face_exports(base)  # a name the face exports is the face's, even if a module has it too
                found.update(f"{base}.{a.name}" for a in node.names if a.name not in exported)
    modules = {module_name(p) for p in PACKAGE.rglob("*.py")}
    return {m for m in found if m in modules}


def unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


GRAPH = {module_name(p): imports_of(p) for p in PACKAGE.rglob("*.py")}


def test_every_part_of_the_package_has_a_layer() -> None:
    assert {unit(m) for m in GRAPH} <= set(LAYERS)


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_no_module_imports_a_layer_above_its_own(module: str) -> None:
    mine = unit(module)
    for imported in GRAPH[module]:
        theirs = unit(imported)
        assert LAYERS[theirs] <= LAYERS[mine], f"{module} imports {imported}: {theirs} is above {mine}"
        assert (mine, theirs) not in APART, f"{module} imports {imported}: {mine} and {theirs} stand apart"


def test_no_import_cycles() -> None:
    """A module's own package face (``__init__``) re-exporting it is not a cycle; any other loop is."""
    def edges(m: str) -> set[str]:
        return {i for i in GRAPH[m] if i != m and not m.startswith(i + ".")}

    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for n in sorted(edges(m)):
            if state.get(n) == 1:
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(n):] + [n]))
            if n not in state:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in sorted(GRAPH):
        if m not in state:
            visit(m)


def test_the_checker_sees_a_violation(tmp_path: Path) -> None:
    """The reader is not blind: a function-level import upward is found."""
    fake = PACKAGE / "models" / "_probe_for_test.py"
    try:
        fake.write_text("def f():\n    from memstream.sim.engine import Simulation\n    return Simulation\n")
        assert "memstream.sim.engine" in imports_of(fake)
    finally:
        fake.unlink()


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_no_module_reaches_into_another_package_s_prompts_parsers_or_store(module: str) -> None:
    """A stage is asked for through its package's functions; its prompts, parsers and storage are its own."""
    private = ("prompts", "parse", "store", "index")
    for imported in GRAPH[module]:
        parts = imported.split(".")
        if len(parts) == 3 and parts[2] in private:
            assert unit(module) == parts[1], f"{module} reaches into {imported}"


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_another_package_is_entered_through_its_face(module: str) -> None:
    """``from memstream.stream import MemoryStream``, never ``from memstream.stream.stream import ...``:
    a package's ``__init__`` says what it offers the others, and its modules can move behind it."""
    for imported in GRAPH[module]:
        theirs = unit(imported)
        if theirs in FACED and theirs != unit(module):
            assert imported == f"memstream.{theirs}", f"{module} reaches past the face of {theirs} into {imported}"


def test_the_face_checker_sees_a_module_past_the_face(tmp_path: Path) -> None:
    fake = PACKAGE / "sim" / "_probe_for_test.py"
    try:
        fake.write_text("from memstream.stream.store import Store\n")
        assert "memstream.stream.store" in imports_of(fake)
        with pytest.raises(AssertionError, match="past the face"):
            GRAPH["memstream.sim._probe_for_test"] = imports_of(fake)
            test_another_package_is_entered_through_its_face("memstream.sim._probe_for_test")
    finally:
        GRAPH.pop("memstream.sim._probe_for_test", None)
        fake.unlink()


#: The simulation's rooms, lowest first: a module of ``sim`` imports only from its own room or one below.
SIM_ROOMS = {
    "state": 0, "events": 0,  # typed state, the event log: the vocabulary every room speaks
    "memory": 0,              # the agents' memory: the stream, or a design's context read back as memories
    "town": 1,                # places, residents, what is seen where
    "agents": 2,              # each agent's state and the components owning it
    "talk": 3,                # conversations, interviews
    "engine": 4,              # the clock driving every agent's step
    "run": 5,                 # settings, the run directory, driving a run
    "analysis": 6,            # the paper's measures, provenance
    "__init__": 7,            # the package face
}
SIM = sorted(m for m in GRAPH if unit(m) == "sim")


def sim_room(module: str) -> str:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 else "__init__"


def test_every_module_of_the_simulation_is_in_a_room() -> None:
    assert {sim_room(m) for m in SIM} <= set(SIM_ROOMS)


@pytest.mark.parametrize("module", SIM)
def test_no_room_of_the_simulation_imports_a_room_above_its_own(module: str) -> None:
    mine = sim_room(module)
    for imported in GRAPH[module]:
        if unit(imported) == "sim" and not module.startswith(imported + ".") and imported != module:
            theirs = sim_room(imported)
            assert SIM_ROOMS[theirs] <= SIM_ROOMS[mine], f"{module} imports {imported}: {theirs} is above {mine}"


#: The command line's rooms, lowest first: the shared modules (the parser, the flags, the outputs,
#: opening a stream, text) know no command; each command module imports only them; the face
#: (``main``, ``build_parser``) registers the commands.
CLI_ROOMS = {
    "text": 0,
    "parser": 1, "outputs": 1, "opening": 1,
    "flags": 2, "weights": 2,
    "commands": 3,
    "__init__": 4, "__main__": 5,
}
CLI = sorted(m for m in GRAPH if unit(m) == "cli")


def cli_room(module: str) -> str:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 else "__init__"


def test_every_module_of_the_command_line_is_in_a_room() -> None:
    assert {cli_room(m) for m in CLI} <= set(CLI_ROOMS)


@pytest.mark.parametrize("module", CLI)
def test_no_room_of_the_command_line_imports_a_room_above_its_own(module: str) -> None:
    mine = cli_room(module)
    for imported in GRAPH[module]:
        if unit(imported) == "cli" and not module.startswith(imported + ".") and imported != module:
            theirs = cli_room(imported)
            assert CLI_ROOMS[theirs] <= CLI_ROOMS[mine], f"{module} imports {imported}: {theirs} is above {mine}"


@pytest.mark.parametrize("module", sorted(m for m in CLI if cli_room(m) == "commands"))
def test_no_command_imports_another(module: str) -> None:
    """A command's module (or its package of modules) holds its own parser, handlers and helpers: what two
    commands share is a shared module's, not one command's reached into by the other."""
    for imported in GRAPH[module]:
        if cli_room(imported) == "commands" and imported != "memstream.cli.commands":
            assert command_of(imported) == command_of(module), f"{module} imports the command module {imported}"


def command_of(module: str) -> str:
    """The command a module of ``cli/commands`` belongs to: its module, or the package it is in."""
    return ".".join(module.split(".")[:4])



def test_the_command_line_imports_the_service_only_inside_serve() -> None:
    """``memstream serve`` is the one command that needs the service (and its extra), and only when it runs."""
    for module in CLI:
        if any(unit(i) in ("service", "client") for i in GRAPH[module]):
            assert module == "memstream.cli.commands.serve", f"{module} imports the service"
    path = PACKAGE / "cli" / "commands" / "serve.py"
    top = [n for n in ast.parse(path.read_text(encoding="utf-8")).body if isinstance(n, ast.Import | ast.ImportFrom)]
    assert not any((getattr(n, "module", "") or "").startswith("memstream.service") for n in top)
