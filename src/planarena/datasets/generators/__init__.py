"""Problem generators of domains that pypddl-datasets does not have (DIAS paper, Tables 9 and 11):
one package per domain with ``domain.pddl`` and ``generator.make_problem``, the interface of the
pypddl-datasets generators (:func:`planarena.datasets.suites.generator_module`)."""
