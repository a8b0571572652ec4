"""``replay_engine.common.frozen.quick_init``: a frozen dataclass's ``__init__`` in one write, the same as the one
``dataclasses`` generates (independent truth: a twin of each class made by ``dataclasses.make_dataclass``, which
generates its own ``__init__``)."""
from __future__ import annotations

import dataclasses
import inspect
import itertools

import pytest

from replay_engine.causes.cases import Case, Claim
from replay_engine.causes.explain import Situation
from replay_engine.common.apply import Change
from replay_engine.common.facts import Ref
from replay_engine.common.frozen import quick_init
from replay_engine.common.partition import BrokerPeriod, Tenure
from replay_engine.common.timeline import View
from replay_engine.kraft.build import BrokerEvent, ChangeRecord, Registration

QUICK = (Ref, Registration, ChangeRecord, BrokerEvent, Change, View, Situation, Claim, Case, BrokerPeriod, Tenure)


def _twin(cls: type) -> type:
    """The class as ``dataclass(frozen=True)`` alone makes it."""
    specs = []
    for f in dataclasses.fields(cls):
        kw = {}
        if f.default is not dataclasses.MISSING:
            kw["default"] = f.default
        if f.default_factory is not dataclasses.MISSING:
            kw["default_factory"] = f.default_factory
        specs.append((f.name, f.type, dataclasses.field(**kw)))
    return dataclasses.make_dataclass(cls.__name__, specs, frozen=True)


@pytest.mark.parametrize("cls", QUICK, ids=lambda c: c.__name__)
def test_same_signature_and_instance_as_the_generated_init(cls):
    twin = _twin(cls)
    assert str(inspect.signature(cls)) == str(inspect.signature(twin))
    fields = dataclasses.fields(cls)
    required = [f for f in fields if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    counter = itertools.count(1000)
    args = [next(counter) for _ in required]
    # the required fields alone: every default as dataclass gives it (a factory's a new object each time)
    a, b = cls(*args), twin(*args)
    assert a.__dict__ == b.__dict__ and list(a.__dict__) == [f.name for f in fields]
    for f in fields:
        if f.default_factory is not dataclasses.MISSING:
            assert getattr(a, f.name) is not getattr(cls(*args), f.name)
    # every field given, positionally and by name
    every = [next(counter) for _ in fields]
    assert cls(*every).__dict__ == twin(*every).__dict__
    named = {f.name: next(counter) for f in fields}
    assert cls(**named).__dict__ == twin(**named).__dict__ and cls(**named) == cls(**named)
    assert hash(cls(**named)) == hash(cls(**named))
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(cls(*args), fields[0].name, 0)
    with pytest.raises(TypeError):
        cls(*args, *([0] * (len(fields) - len(required) + 1)))  # one argument too many, as the generated init


def test_classes_whose_init_does_more_are_refused():
    @dataclasses.dataclass(frozen=True)
    class Checked:
        x: int

        def __post_init__(self):
            assert self.x >= 0

    @dataclasses.dataclass
    class Mutable:
        x: int

    @dataclasses.dataclass(frozen=True)
    class Derived:
        x: int
        y: int = dataclasses.field(init=False, default=0)

    for cls in (Checked, Mutable, Derived):
        with pytest.raises(TypeError):
            quick_init(cls)
