"""The shape of the code, as docs/architecture.md describes it, checked from the imports.

- Layers: cli → flows → tasks → screening → platforms → serving → trainer; no import runs back
  up, and `trainer/` (the code Azure ML runs) imports nothing of the rest.
- No import circle between modules.
- No stage module (a module of tasks/ that defines a Prefect task) imports another stage module.
- Platform objects (registries, training and endpoint backends, Azure ML clients) are built in
  `platforms/` only: elsewhere they arrive as `Backends`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from trainer.kinds import KIND_MODULES

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["cli", "flows", "tasks", "screening", "platforms", "serving", "trainer"]
PACKAGES = [*LAYERS, "samples"]
FACTORIES = {
    "MlflowRegistry",
    "AzureMLRegistry",
    "LocalTrainingBackend",
    "AzureMLTrainingBackend",
    "LocalEndpointBackend",
    "AzureMLEndpointBackend",
    "ensure_local_endpoint",
    "connect",
}


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


MODULES = _modules()


def _imports(path: Path) -> set[str]:
    """Project modules `path` imports, at any depth (imports inside functions count too)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        out.update(n for n in names if n in MODULES)
    return out


GRAPH = {name: _imports(path) for name, path in MODULES.items()}


def _stage_modules() -> set[str]:
    stages = set()
    for name, path in MODULES.items():
        if not name.startswith("tasks."):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef):
                for d in node.decorator_list:
                    target = d.func if isinstance(d, ast.Call) else d
                    if isinstance(target, ast.Name) and target.id == "task":
                        stages.add(name)
    return stages


def test_the_package_list_is_complete() -> None:
    assert {"cli.main", "flows.retrain", "tasks.ingest", "platforms.backends"} <= set(MODULES)
    assert {"screening.policy", "screening.detectors", "screening.scan"} <= set(MODULES)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_import_runs_back_up_a_layer(module: str) -> None:
    layer = module.split(".")[0]
    if layer not in LAYERS:
        return
    above = set(LAYERS[: LAYERS.index(layer)])
    upward = sorted(i for i in GRAPH[module] if i.split(".")[0] in above)
    assert not upward, f"{module} imports {upward} from a layer above it"


def test_there_is_no_import_circle() -> None:
    state: dict[str, int] = {}
    circles = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(GRAPH[node]):
            if state.get(nxt) == 1:
                circles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for module in sorted(GRAPH):
        if module not in state:
            visit(module, [module])
    real = [c for c in circles if len(set(c)) > 1]
    assert not real, f"import circles: {real}"


def test_no_stage_module_imports_another() -> None:
    stages = _stage_modules()
    assert {"tasks.ingest", "tasks.screen", "tasks.approve", "tasks.split"} <= stages
    assert {"tasks.train", "tasks.evaluate", "tasks.register", "tasks.rollout"} <= stages
    sideways = {s: sorted(GRAPH[s] & (stages - {s})) for s in stages}
    assert not any(sideways.values()), f"stage modules importing stages: {sideways}"


def test_platform_objects_are_built_in_platforms_only() -> None:
    builders = {}
    for name, path in MODULES.items():
        if name.startswith("platforms."):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                f = node.func
                called = f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)
                if called in FACTORIES:
                    builders.setdefault(name, []).append(called)
    assert not builders, f"platform objects built outside platforms/: {builders}"


def _platform_comparisons(tree: ast.AST) -> list[int]:
    """Lines comparing something with a platform's name ("azureml", PlatformKind.local, ...)."""
    from platforms.backends import PlatformKind

    names = {kind.value for kind in PlatformKind}

    def is_platform(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant) and node.value in names:
            return True
        return (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "PlatformKind"
        )

    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            # `x in ("local", "azureml")`: the names inside a literal tuple, list or set
            inside = [
                e for o in operands if isinstance(o, ast.Tuple | ast.List | ast.Set) for e in o.elts
            ]
            if any(is_platform(o) for o in [*operands, *inside]):
                lines.append(node.lineno)
        elif isinstance(node, ast.match_case) and any(
            is_platform(n) for n in ast.walk(node.pattern)
        ):
            lines.append(node.pattern.lineno)
    return lines


def test_no_platform_name_is_compared_outside_platforms() -> None:
    """A stage, the flow or the CLI asks `Backends` (whose platforms are rows of
    platforms/backends.py's PLATFORMS), never `if backend == "azureml"`: a new platform is a new
    row there, not an edit in every stage."""
    found = {
        name: lines
        for name, path in MODULES.items()
        if not name.startswith("platforms.")
        and (lines := _platform_comparisons(ast.parse(path.read_text())))
    }
    assert not found, f"platform names compared outside platforms/ (module: lines): {found}"


@pytest.mark.parametrize(
    "code",
    [
        'if config.backend == "azureml":\n    pass',
        "if kind is PlatformKind.azureml:\n    pass",
        'on = backend in ("local", "azureml")',
        'match kind:\n    case "local":\n        pass',
    ],
)
def test_the_platform_name_check_sees_each_way_of_comparing(code: str) -> None:
    assert _platform_comparisons(ast.parse(code)) == [1 if "match" not in code else 2]


def test_the_store_is_used_through_its_own_calls() -> None:
    """fsspec's private `_strip_protocol` (and the filesystem behind the store) stay inside
    platforms/store.py: stages list, glob, open and remove through `Store`'s public calls."""
    private = {
        name: node.lineno
        for name, path in MODULES.items()
        if name != "platforms.store"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute) and node.attr == "_strip_protocol"
    }
    assert not private, f"fsspec internals outside platforms/store.py: {private}"


# A switch over a task's kind names every kind it handles and raises for any other: a kind it
# does not know never falls through to another kind's code (trainer/kinds/ is the table). A
# switch over a task's kind is one comparing `kind` or `<x>.kind` with a task kind's name
# (other things called kind, such as a PII entity's, are not task kinds).
TASK_KINDS = frozenset(KIND_MODULES)


def _names_kind(node: ast.expr) -> bool:
    return (isinstance(node, ast.Name) and node.id == "kind") or (
        isinstance(node, ast.Attribute) and node.attr == "kind"
    )


def _is_task_kind(node: ast.expr) -> bool:
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return bool(node.elts) and all(_is_task_kind(e) for e in node.elts)
    return isinstance(node, ast.Constant) and node.value in TASK_KINDS


def _compares_kind(test: ast.expr) -> bool:
    """`test` compares `kind` or `<something>.kind` with a task kind's name (or names)."""
    return any(
        isinstance(n, ast.Compare)
        and any(_names_kind(o) for o in [n.left, *n.comparators])
        and any(_is_task_kind(o) for o in [n.left, *n.comparators])
        for n in ast.walk(test)
    )


def _ends_in(body: list[ast.stmt], kind: type) -> bool:
    return bool(body) and isinstance(body[-1], kind)


def kind_switches_without_error(source: str) -> list[int]:
    """Lines of switches over `kind` that have no error of their own for an unknown kind: an
    if/elif chain or a fall-through of `if kind == ...: return` whose last branch does not
    raise, a conditional expression on kind, a `match kind` without a raising `case _`."""
    bad: list[int] = []
    elifs: set[int] = set()
    for node in ast.walk(ast.parse(source)):  # breadth first: a chain's head before its elifs
        if isinstance(node, ast.IfExp) and _compares_kind(node.test):
            bad.append(node.lineno)
        elif isinstance(node, ast.If) and id(node) not in elifs and _compares_kind(node.test):
            last, branches = node, 1
            while len(last.orelse) == 1 and isinstance(last.orelse[0], ast.If):
                last = last.orelse[0]
                elifs.add(id(last))
                branches += 1
            if (last.orelse or branches > 1) and not _ends_in(last.orelse, ast.Raise):
                bad.append(node.lineno)
        elif isinstance(node, ast.Match) and _names_kind(node.subject):
            final = node.cases[-1]
            wildcard = isinstance(final.pattern, ast.MatchAs) and final.pattern.pattern is None
            if not (wildcard and _ends_in(final.body, ast.Raise)):
                bad.append(node.lineno)
        for field in ("body", "orelse", "finalbody"):  # if kind == ...: return; ...; fall through
            block = getattr(node, field, None)
            if isinstance(block, list):
                bad += _fall_throughs(block)
    return sorted(set(bad))


def _fall_throughs(block: list[ast.stmt]) -> list[int]:
    """Lines of `if kind == "x": return ...` runs in `block` not followed by a `raise`."""
    bad = []
    for i, stmt in enumerate(block):
        returns = (
            isinstance(stmt, ast.If)
            and not stmt.orelse
            and _compares_kind(stmt.test)
            and _ends_in(stmt.body, ast.Return)
        )
        if not returns:
            continue
        following = block[i + 1] if i + 1 < len(block) else None
        if following is None or not (
            isinstance(following, ast.Raise)
            or (isinstance(following, ast.If) and _compares_kind(following.test))
        ):
            bad.append(stmt.lineno)
    return bad


def test_every_kind_switch_raises_for_an_unknown_kind() -> None:
    found = {
        name: lines
        for name, path in MODULES.items()
        if (lines := kind_switches_without_error(path.read_text()))
    }
    assert not found, f"kind switches without an error for an unknown kind (module: lines): {found}"


@pytest.mark.parametrize(
    "source",
    [
        'if spec.kind == "span":\n    a()\nelif spec.kind == "seq2seq":\n    b()\nelse:\n    c()\n',
        'if kind == "span":\n    a()\nelif kind == "seq2seq":\n    b()\n',
        'if kind != "span":\n    a()\nelse:\n    b()\n',
        'def f(kind):\n    if kind == "span":\n        return 1\n    return 2\n',
        'x = 1 if task_spec(t).kind == "causal" else 2\n',
        'match spec.kind:\n    case "span":\n        a()\n    case _:\n        b()\n',
        'match kind:\n    case "span":\n        a()\n',
    ],
)
def test_the_kind_switch_check_finds_a_fall_through(source: str) -> None:
    assert kind_switches_without_error(source) == [1 if "def" not in source else 2]


@pytest.mark.parametrize(
    "source",
    [
        'if kind == "span":\n    a()\nelif kind == "seq2seq":\n    b()\nelse:\n'
        "    raise ValueError(kind)\n",
        'def f(kind):\n    if kind == "span":\n        return 1\n    if kind == "causal":\n'
        "        return 2\n    raise ValueError(kind)\n",
        'match kind:\n    case "span":\n        a()\n    case _:\n        raise ValueError(kind)\n',
        'if spec.kind == "causal" and long:\n    raise ValueError("too long")\n',
        "code = kind_code(spec.kind)\n",
    ],
)
def test_the_kind_switch_check_lets_a_switch_with_its_error_pass(source: str) -> None:
    assert kind_switches_without_error(source) == []
