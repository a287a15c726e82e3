"""The tests a person runs: ``python -m pytest`` runs everything (CI runs that command),
``python -m pytest -m "not slow"`` the quick subset; the README states both and what
``slow`` holds; the long sweeps advance pytest's progress line (one test per primitive)."""
import ast
import pathlib
import re
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _pytest_config():
    with open(ROOT / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)["tool"]["pytest"]["ini_options"]


def _decorators(path, function):
    """The dotted names of ``function``'s decorators in the test file ``path``."""
    tree = ast.parse((ROOT / path).read_text())
    (node,) = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == function]
    return [ast.unparse(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list]


def test_the_slow_marker_is_registered_and_not_deselected_by_default():
    config = _pytest_config()
    assert any(m.startswith("slow:") for m in config["markers"]), config.get("markers")
    # the README's command runs every test: nothing deselects `slow` by default
    assert "-m" not in config.get("addopts", "").split()


def test_the_readme_states_both_commands_and_what_slow_holds():
    text = (ROOT / "README.md").read_text()
    assert ('    python3 -m venv .venv && . .venv/bin/activate && pip install -e ".[test]" '
            "&& python -m pytest\n") in text
    assert '\n    python -m pytest -m "not slow"\n' in text
    said = re.search(r"`slow` holds (.*?)\n\n", text, flags=re.S)
    assert said, "the README says what the slow marker holds"
    for what in ("test_registry.py", "test_jit_registry.py", "Chromium", "Dask", "wheel"):
        assert what in said.group(1), what
    assert re.search(r"the whole suite takes about \d+ minutes", text)
    assert re.search(r"the quick subset,\s+every test not marked `slow`, about \d+ minutes", text)


def test_ci_runs_every_test():
    ci = (ROOT / ".ci" / "run").read_text()
    commands = [line.strip() for line in ci.splitlines()
                if re.match(r"\s*(python -m pytest|export PYTEST_ADDOPTS)", line)]
    assert "python -m pytest" in commands
    # one exception, said on its line: the wheel job runs the quick subset against the
    # installed wheel (the newest jobs run every test on the same code)
    wheel = [c for c in commands if c.endswith("# the wheel job: the quick subset")]
    assert wheel == ['python -m pytest -m "not slow"   # the wheel job: the quick subset']
    for command in commands:     # no marker expression, in the command or in PYTEST_ADDOPTS
        if command in wheel:
            continue
        rest = command.removeprefix("python -m pytest")
        assert not re.search(r"""(^|[\s"'])-m\b|slow""", rest), command


def test_the_rule_checker_sweeps_are_slow_and_one_test_per_primitive():
    for path, function in [("tests/dualad/core/test_registry.py",
                            "test_primitive_passes_the_rule_checker"),
                           ("tests/verification/test_jit_registry.py",
                            "test_primitive_replays_under_jit")]:
        marks = _decorators(path, function)
        assert "pytest.mark.slow" in marks and "pytest.mark.parametrize" in marks, (path, marks)


def test_the_long_checks_are_slow_and_each_keeps_a_quick_twin():
    """Issue 31: the quick subset (3 minutes on 2 cores) leaves these long checks to the
    whole suite; each capability keeps a fast test in the quick subset."""
    slow_and_twin = [
        ("tests/dualad/mirrors/test_integrate.py", "test_second_order_against_finite_differences",
         "test_second_order_of_decay_in_k_and_t_is_exact"),
        ("tests/dualad/test_edge_cases.py", "test_chain_of_a_million_operations", None),
        ("tests/dualad/interpreters/staging/test_jit_hostile_names.py",
         "test_hostile_strings_never_execute_and_each_case_works",
         "test_code_payloads_never_execute_through_any_vector"),
        ("tests/dualad/mirrors/test_ivp_fast.py", "test_the_robertson_reference_is_scipys",
         "test_implicit_methods_get_dualads_jacobian"),
        ("tests/dualad/test_lazy_import.py",
         "test_the_same_lazy_name_from_many_threads_is_one_object",
         "test_two_threads_touching_lazy_names_at_once"),
        ("tests/dualad/test_lazy_import.py",
         "test_a_miss_while_another_thread_loads_the_families_finds_the_rule",
         "test_two_threads_touching_lazy_names_at_once"),
        ("tests/test_bench_fast_by_default.py", "test_quick_run_measures_every_dualad_cell",
         "test_a_raising_participant_fills_its_cell_and_the_row_goes_on"),
        ("tests/verification/test_coverage.py", "test_every_row_gives_what_it_claims",
         "test_a_rule_off_by_a_tenth_of_a_percent_fails_in_both_modes"),
        ("tests/dualad/frontend/test_keywords.py", "test_every_documented_keyword_works_or_raises_clearly",
         "test_keyword_form_matches_numpy_and_differences_at_second_order"),
    ]
    for path, slow, twin in slow_and_twin:
        assert "pytest.mark.slow" in _decorators(path, slow), (path, slow)
        if twin is not None:
            assert "pytest.mark.slow" not in _decorators(path, twin), (path, twin)
    # the deep-tape check the million-step chain leaves in the quick subset
    assert "pytest.mark.slow" not in _decorators("tests/dualad/test_reliability.py",
                                                 "test_deep_chain_no_recursion_error")
