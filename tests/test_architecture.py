"""The house's shape: which package may import which, and no import cycle between modules.

Imports are read from the source with ``ast``, wherever they stand: a function-level import
runs as surely as a module-level one, so both are edges. Modules named in a registry and
imported with ``importlib`` (the dispatcher's parsers, the CLI's commands) are edges too, read
from the registry's literal. Imports under ``if TYPE_CHECKING:`` never run, but they are
dependencies all the same: they count for the layering (naming a type from a layer above is still
depending on it) and for cycles (a part that names its owner's type imports its owner: a
``typing.Protocol`` of what the part uses names it without the circle).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("parsers", "replay_engine", "dashboards", "forensics", "samplegen", "tests", "benchmarks")

# Package -> the repository's packages it may import besides itself. From the bottom up:
# parsers read the evidence; replay_engine re-runs the controller over parsers' events;
# dashboards draw replay outputs; forensics is the shell (Spark, files, CLI, reports) over all
# three; samplegen writes evidence in the formats parsers read. Tests and benchmarks use all.
MAY_IMPORT: dict[str, frozenset[str]] = {
    "parsers": frozenset(),
    "replay_engine": frozenset({"parsers"}),
    "dashboards": frozenset({"parsers", "replay_engine"}),
    "forensics": frozenset({"parsers", "replay_engine", "dashboards"}),
    "samplegen": frozenset({"parsers"}),
    "tests": frozenset({"parsers", "replay_engine", "dashboards", "forensics", "samplegen"}),
    "benchmarks": frozenset({"parsers", "replay_engine", "dashboards", "forensics", "samplegen"}),
}

# The two harnesses share these modules, and nothing else imports them: the dashboard tests draw the benchmark's
# synthetic day; the agreement tests check the measure's definitions; the journal tests check where record writes;
# the capture benchmark runs the tests' real ZooKeeper; the ingest shapes tests check the benchmark's set-up step.
HARNESS_CROSSINGS = frozenset({("tests", "benchmarks.dashboard_bench"), ("tests", "benchmarks.agreement"),
                               ("tests", "benchmarks._common"), ("benchmarks", "tests.zk_server"),
                               ("tests", "benchmarks.ingest_shapes_bench"), ("tests", "benchmarks.ingest_profile")})

# Third-party packages a package must not import: the replay is pure Python over events (Spark
# runs it, it does not run Spark), and the dashboards are built from replay outputs alone.
FORBIDDEN_THIRD_PARTY: dict[str, frozenset[str]] = {
    "replay_engine": frozenset({"pyspark"}),
    "dashboards": frozenset({"pyspark"}),
}

# Inside parsers: the schema and what every parser shares at the bottom, one package per source
# family above them (families do not import each other), the dispatcher that routes a file to
# its family on top. Module or package -> what it may import inside parsers besides itself.
_BOTTOM = frozenset({"parsers.schema", "parsers.common"})
PARSER_LAYERS: dict[str, frozenset[str]] = {
    "parsers.schema": frozenset(),
    "parsers.common": frozenset({"parsers.schema"}),
    "parsers.broker_logs": _BOTTOM,
    "parsers.zookeeper": _BOTTOM,
    "parsers.kraft": _BOTTOM,
    "parsers.log_dirs": _BOTTOM,
    # container log formats (docker, CRI) wrap the lines a broker logged
    "parsers.container_streams": _BOTTOM | {"parsers.broker_logs"},
    "parsers.dispatch": _BOTTOM | {"parsers.broker_logs", "parsers.zookeeper", "parsers.kraft",
                                   "parsers.container_streams", "parsers.log_dirs"},
}

# The replay loops consume facts (replay_engine.common.facts), not events: the converters (from_events for ZooKeeper
# mode, kraft_facts for KRaft) are where a replay reads what parsers made, so these import no parsers module.
FACT_CONSUMERS = ("replay_engine.zk.controller", "replay_engine.kraft.replay", "replay_engine.kraft.brokers",
                  "replay_engine.kraft.topics", "replay_engine.kraft.records", "replay_engine.kraft.steps",
                  "replay_engine.kraft.lines", "replay_engine.kraft.epochs", "replay_engine.common.brokers",
                  "replay_engine.zk.context", "replay_engine.zk.partitions", "replay_engine.zk.broker_changes",
                  "replay_engine.zk.failover", "replay_engine.zk.topics", "replay_engine.zk.records",
                  "replay_engine.zk.seeding", "replay_engine.zk.inference")

# Registries of module names imported with importlib: module -> the name of its literal.
DYNAMIC_IMPORTS = {"parsers.dispatch": "PARSERS", "forensics.cli": "COMMANDS"}


@dataclass
class Graph:
    modules: dict[str, Path]
    edges: dict[str, set[str]] = field(default_factory=dict)  # every import that runs
    typing_edges: dict[str, set[str]] = field(default_factory=dict)  # under TYPE_CHECKING only
    third_party: dict[str, set[str]] = field(default_factory=dict)
    dynamic_calls: set[str] = field(default_factory=set)  # modules that call importlib.import_module

    def all_edges(self):
        for src in sorted(self.modules):
            for dst in sorted(self.edges.get(src, set()) | self.typing_edges.get(src, set())):
                yield src, dst


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _typing_only(tree: ast.AST) -> set[int]:
    """ids of the import nodes under ``if TYPE_CHECKING:`` / ``if typing.TYPE_CHECKING:``."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else None
            if name == "TYPE_CHECKING":
                out.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return out


def _registry_names(tree: ast.AST, variable: str) -> list[str]:
    """Module names in a registry literal: a tuple of names, or a dict of (module, function)."""
    for node in ast.walk(tree):
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        if isinstance(target, ast.Name) and target.id == variable and node.value is not None:
            value = node.value
            items = value.values if isinstance(value, ast.Dict) else value.elts
            return [(i.elts[0] if isinstance(i, ast.Tuple) else i).value for i in items]
    raise AssertionError(f"no registry literal {variable}")


def build_graph(root: Path, packages=PACKAGES, dynamic=DYNAMIC_IMPORTS) -> Graph:
    modules = {_module_name(root, p): p for pkg in packages if (root / pkg).is_dir()
               for p in sorted((root / pkg).rglob("*.py"))}
    g = Graph(modules)
    # tests and benchmarks run with their own folder on sys.path: a bare name there is a sibling
    harness = {name.rpartition(".")[2]: name for name in modules if name.split(".")[0] in ("tests", "benchmarks")}

    def resolve(name: str, from_harness: bool) -> str | None:
        top = name.split(".")[0]
        if top not in packages and from_harness and top in harness:
            name = harness[top] + name[len(top):]
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    for mod, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        typing_only = _typing_only(tree)
        in_harness = mod.split(".")[0] in ("tests", "benchmarks")
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")
                    base = ".".join(up[: len(up) - node.level + 1] + ([base] if base else []))
                # ``from pkg import mod`` imports the module pkg.mod; ``from mod import name`` imports mod
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr == "import_module"):
                g.dynamic_calls.add(mod)
            for name in names:
                target = resolve(name, in_harness)
                if target is None:
                    top = name.split(".")[0]
                    if top and top not in packages:
                        g.third_party.setdefault(mod, set()).add(top)
                elif target != mod:
                    kind = g.typing_edges if id(node) in typing_only else g.edges
                    kind.setdefault(mod, set()).add(target)
        if mod in dynamic:
            for name in _registry_names(tree, dynamic[mod]):
                assert name in modules, f"{mod}.{dynamic[mod]} names {name}, which is no module"
                g.edges.setdefault(mod, set()).add(name)
    # a typing-only edge that also runs elsewhere in the module is a running edge
    for src, dsts in g.typing_edges.items():
        dsts -= g.edges.get(src, set())
    return g


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    nodes = sorted(set(edges) | {d for ds in edges.values() for d in ds})
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return sorted(found)


def _one_cycle(edges: dict[str, set[str]], comp: list[str]) -> list[str]:
    """A shortest cycle through the component's first module, for the failure message."""
    members = set(comp)
    start = comp[0]
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(edges.get(v, ())):
            if w == start:
                return paths[v] + [start]
            if w in members and w not in paths:
                paths[w] = paths[v] + [w]
                queue.append(w)
    return comp


def layering_violations(g: Graph) -> list[str]:
    out = []
    for src, dst in g.all_edges():
        a, b = src.split(".")[0], dst.split(".")[0]
        if a != b and b not in MAY_IMPORT[a] and (a, dst) not in HARNESS_CROSSINGS:
            out.append(f"{src} imports {dst}: {a} may import only {sorted(MAY_IMPORT[a]) or 'nothing of ours'}")
    for mod, tops in sorted(g.third_party.items()):
        for top in sorted(tops & FORBIDDEN_THIRD_PARTY.get(mod.split(".")[0], frozenset())):
            out.append(f"{mod} imports {top}")
    return out


def _parser_layer(mod: str) -> str:
    for layer in sorted(PARSER_LAYERS, key=len, reverse=True):
        if mod == layer or mod.startswith(layer + "."):
            return layer
    return mod


def parser_layer_violations(g: Graph) -> list[str]:
    out = []
    for src, dst in g.all_edges():
        if not (src.startswith("parsers.") and dst.startswith("parsers")):
            continue
        a, b = _parser_layer(src), _parser_layer(dst)
        if a not in PARSER_LAYERS:
            out.append(f"{src} is in no layer of PARSER_LAYERS (a new family? add it)")
        elif a != b and b not in PARSER_LAYERS[a]:
            out.append(f"{src} imports {dst}: {a} may import only {sorted(PARSER_LAYERS[a])} inside parsers")
    return out


def fact_consumer_violations(g: Graph, consumers=FACT_CONSUMERS) -> list[str]:
    out = []
    for src in consumers:
        for dst in sorted(g.edges.get(src, set()) | g.typing_edges.get(src, set())):
            if dst.split(".")[0] == "parsers":
                out.append(f"{src} imports {dst}: a replay loop reads facts; events become facts in a converter")
    return out


@pytest.fixture(scope="module")
def graph() -> Graph:
    return build_graph(REPO)


def test_packages_import_only_the_layers_below_them(graph):
    assert graph.edges, "no imports found: the scan reads nothing"
    assert layering_violations(graph) == []


def test_parsers_are_layered_by_source_family(graph):
    assert {_parser_layer(m) for m in graph.modules if m.startswith("parsers.")} <= set(PARSER_LAYERS)
    assert parser_layer_violations(graph) == []


def import_edges(g: Graph) -> dict[str, set[str]]:
    """Every import, the running ones and those under TYPE_CHECKING."""
    return {m: g.edges.get(m, set()) | g.typing_edges.get(m, set()) for m in set(g.edges) | set(g.typing_edges)}


def test_no_import_cycle_between_modules(graph):
    edges = import_edges(graph)
    found = cycles(edges)
    assert found == [], "import cycles: " + "; ".join(" -> ".join(_one_cycle(edges, c)) for c in found)


def test_the_replay_loops_read_facts_not_events(graph):
    assert set(FACT_CONSUMERS) <= set(graph.modules)
    assert fact_consumer_violations(graph) == []


def test_every_importlib_registry_is_in_the_graph(graph):
    # A module imported only by name would be invisible to the checks above.
    assert graph.dynamic_calls == set(DYNAMIC_IMPORTS)


# ------------------------------------------------------------------ the checks can fail

def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_a_cycle_through_a_function_level_import_is_found(tmp_path):
    root = _tree(tmp_path, {
        "parsers/__init__.py": "",
        "parsers/a.py": "from parsers.b import f\n",
        "parsers/b.py": "def f():\n    from parsers import c\n",
        "parsers/c.py": "import parsers.a as a\n",
        "parsers/d.py": "from parsers.a import x\n",
    })
    g = build_graph(root, ("parsers",), {})
    assert cycles(g.edges) == [["parsers.a", "parsers.b", "parsers.c"]]
    assert _one_cycle(g.edges, ["parsers.a", "parsers.b", "parsers.c"]) == ["parsers.a", "parsers.b", "parsers.c",
                                                                           "parsers.a"]


def test_a_cycle_through_a_registry_is_found_and_a_typing_only_one_too(tmp_path):
    root = _tree(tmp_path, {
        "forensics/__init__.py": "",
        "forensics/cli.py": "import importlib\nCOMMANDS = ('forensics.cmd',)\n"
                            "def load():\n    for n in COMMANDS:\n        importlib.import_module(n)\n",
        "forensics/cmd.py": "from forensics.cli import app\n",
        "forensics/owner.py": "from forensics.part import Part\n",
        "forensics/part.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                             "    from forensics.owner import Owner\n",
    })
    g = build_graph(root, ("forensics",), {"forensics.cli": "COMMANDS"})
    assert cycles(g.edges) == [["forensics.cli", "forensics.cmd"]]
    assert g.typing_edges == {"forensics.part": {"forensics.owner"}}
    assert cycles(import_edges(g)) == [["forensics.cli", "forensics.cmd"], ["forensics.owner", "forensics.part"]]
    assert g.dynamic_calls == {"forensics.cli"}


def test_an_import_up_the_chain_is_found(tmp_path):
    root = _tree(tmp_path, {
        "parsers/__init__.py": "",
        "parsers/common/__init__.py": "",
        "parsers/common/textio.py": "from parsers.kraft.events import x\n",
        "parsers/kraft/__init__.py": "",
        "parsers/kraft/events.py": "from parsers.zookeeper.events import y\n",
        "parsers/zookeeper/__init__.py": "",
        "parsers/zookeeper/events.py": "",
        "replay_engine/__init__.py": "",
        "replay_engine/api.py": "def f():\n    from pyspark.sql import SparkSession\n",
        "dashboards/__init__.py": "",
        "dashboards/load.py": "from forensics.errors import UserError\n",
        "forensics/__init__.py": "",
        "forensics/errors.py": "",
    })
    g = build_graph(root, ("parsers", "replay_engine", "dashboards", "forensics"), {})
    assert layering_violations(g) == [
        "dashboards.load imports forensics.errors: dashboards may import only ['parsers', 'replay_engine']",
        "replay_engine.api imports pyspark",
    ]
    assert parser_layer_violations(g) == [
        "parsers.common.textio imports parsers.kraft.events: parsers.common may import only ['parsers.schema'] "
        "inside parsers",
        "parsers.kraft.events imports parsers.zookeeper.events: parsers.kraft may import only "
        "['parsers.common', 'parsers.schema'] inside parsers",
    ]


def test_a_replay_loop_reading_events_is_found(tmp_path):
    root = _tree(tmp_path, {
        "parsers/__init__.py": "",
        "parsers/schema.py": "class Event: ...\n",
        "replay_engine/__init__.py": "",
        "replay_engine/kraft/replay.py": "from __future__ import annotations\nfrom typing import TYPE_CHECKING\n"
                                  "if TYPE_CHECKING:\n    from parsers.schema import Event\n",
        "replay_engine/zk/controller.py": "from replay_engine import kraft\n",
    })
    g = build_graph(root, ("parsers", "replay_engine"), {})
    assert fact_consumer_violations(g) == [
        "replay_engine.kraft.replay imports parsers.schema: a replay loop reads facts; events become facts in a converter"]
