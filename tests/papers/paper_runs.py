"""One run of each reproduction in papers/ per test session, shared by test_papers.py
(it runs and matches) and the per-paper files (e.g. no row went missing): a
reproduction's ``main()`` takes up to ~1.5 s."""
import contextlib
import functools
import importlib
import io


@functools.cache
def run(module):
    """``(return code, printed output, the Reports main() finished)`` of ``module.main()``."""
    from papers import _compare
    reports = []
    original = _compare.Report.finish

    def finish(self):
        reports.append(self)
        return original(self)
    _compare.Report.finish = finish
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            rc = importlib.import_module(module).main()
    finally:
        _compare.Report.finish = original
    return rc, out.getvalue(), tuple(reports)
