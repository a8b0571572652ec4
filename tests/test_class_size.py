"""No class in replay_engine over 400 lines or 30 methods (issue 45): each concern in a part a reader can hold.

Read from the source with ``ast``: a class's lines are its span in the file, its methods the functions defined in
its body (properties included)."""
import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MAX_LINES, MAX_METHODS = 400, 30


def classes():
    for path in sorted((REPO / "replay_engine").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                methods = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
                yield f"{path.relative_to(REPO)}:{node.name}", node.end_lineno - node.lineno + 1, len(methods)


def test_no_class_over_400_lines_or_30_methods():
    over = [(name, lines, methods) for name, lines, methods in classes()
            if lines > MAX_LINES or methods > MAX_METHODS]
    assert over == []


def test_the_zookeeper_mode_controller_is_in_parts():
    sizes = {name: (lines, methods) for name, lines, methods in classes()}
    zk = {n: s for n, s in sizes.items() if n.startswith(("replay_engine/zk/controller.py:", "replay_engine/zk/"))}
    assert len(zk) >= 7 and all(lines <= MAX_LINES and methods <= MAX_METHODS for lines, methods in zk.values())


# Pairs whose fields are the same by design (none: ConfigImage is a ConfigState frozen, declared once).
SAME_SHAPE_ALLOWED: frozenset = frozenset()


def test_no_two_classes_declare_the_same_fields():
    """One implementation of each shape (issue 45: ``TenureImage`` / ``Tenure``, ``PeriodImage`` / ``BrokerPeriod``
    were two): classes in replay_engine declaring the same four or more annotated fields are one class too many."""
    shapes: dict[frozenset, list[str]] = {}
    for path in sorted((REPO / "replay_engine").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                names = frozenset(n.target.id for n in node.body
                                  if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name))
                if len(names) >= 4:
                    shapes.setdefault(names, []).append(f"{path.relative_to(REPO)}:{node.name}")
    twins = [sorted(v) for v in shapes.values() if len(v) > 1 and frozenset(v) not in SAME_SHAPE_ALLOWED]
    assert twins == []
