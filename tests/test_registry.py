import pytest

from planarena.methods import REGISTRY, TASKS, Method, method_class, resolve


def test_unknown_method_lists_registered_names():
    with pytest.raises(KeyError) as err:
        method_class("no_such_method")
    for name in REGISTRY:
        assert name in str(err.value)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_registered_method_loads_and_declares_tasks(name):
    cls = method_class(name)
    assert issubclass(cls, Method)
    assert cls.tasks and set(cls.tasks) <= TASKS


def test_params_block_may_alias_a_registered_class():
    params = {"methods": {"walk_short": {"method": "random_walk", "horizon": 5}}}
    cls, config = resolve("walk_short", params)
    assert cls is method_class("random_walk") and config["horizon"] == 5
    with pytest.raises(KeyError, match="configured: walk_short"):
        resolve("other", params)


def test_repository_params_only_name_registered_methods(smoke_params):
    for name in smoke_params["methods"]:
        resolve(name, smoke_params)
