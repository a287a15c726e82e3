"""Side-by-side 'published | computed' reports for the reproductions."""
from __future__ import annotations

import numpy as np


class _Gap:
    """Status of a row that fails for a known, documented reason (truthy: not a mismatch)."""

    def __bool__(self):
        return True

    def __repr__(self):
        return "GAP"


GAP = _Gap()


class Report:
    """Collects rows of (quantity, published, computed) and says whether all match."""

    def __init__(self, title):
        self.title = title
        self.rows = []

    def check(self, quantity, published, computed, *, decimals=3, exact=False):
        """Record one comparison: equal when rounded to ``decimals`` (or exactly)."""
        pub, com = np.asarray(published, dtype=float), np.asarray(computed, dtype=float)
        if exact:
            ok = pub.shape == com.shape and bool(np.all(pub == com))
        else:
            ok = pub.shape == com.shape and bool(
                np.all(np.abs(np.round(com, decimals) - pub) <= 0.5 * 10.0 ** -decimals + 1e-12))
        self.rows.append((quantity, _show(published, decimals), _show(computed, decimals), ok))
        return ok

    def note(self, quantity, published, computed, ok=True):
        self.rows.append((quantity, str(published), str(computed), bool(ok)))
        return ok

    def gap(self, quantity, published, computed, ok, why):
        """A comparison that fails for a known, reported reason outside this script (a
        heuristic of another package, say): shown as ``KNOWN GAP`` with ``why``, listed in
        :attr:`gaps`, and not a mismatch. When it matches, it is an ordinary ``ok`` row."""
        if ok:
            return self.note(quantity, published, computed)
        self.rows.append((quantity, str(published), f"{computed}  [{why}]", GAP))
        return False

    @property
    def ok(self):
        return all(r[3] for r in self.rows)

    @property
    def gaps(self):
        return [r[0] for r in self.rows if r[3] is GAP]

    def render(self):
        w = [max(len(str(r[i])) for r in self.rows + [("quantity", "published", "computed",
                                                            True)]) for i in range(3)]
        head = f"{'quantity'.ljust(w[0])} | {'published'.ljust(w[1])} | {'computed'.ljust(w[2])} |"
        lines = [self.title, head, "-" * len(head)]
        for q, p, c, ok in self.rows:
            status = "KNOWN GAP" if ok is GAP else ("ok" if ok else "MISMATCH")
            lines.append(f"{q.ljust(w[0])} | {p.ljust(w[1])} | {c.ljust(w[2])} | {status}")
        n_gap = len(self.gaps)
        n_bad = sum(not r[3] for r in self.rows)
        lines.append(f"{len(self.rows) - n_bad - n_gap} of {len(self.rows)} match" +
                     ("" if not n_gap else f"; {n_gap} KNOWN GAP (see the script's docstring)") +
                     ("" if not n_bad else f"; {n_bad} MISMATCH"))
        return "\n".join(lines)

    def finish(self):
        """Print the report; the exit status is non-zero on any mismatch."""
        print(self.render())
        return 0 if self.ok else 1


def _show(v, decimals):
    a = np.asarray(v, dtype=float)
    if a.ndim == 0:
        return f"{float(a):.{decimals}f}"
    text = np.array2string(a.ravel(), precision=decimals, separator=", ", suppress_small=True,
                           max_line_width=10 ** 6)
    return text if a.ndim == 1 else f"{text} (shape {a.shape})"
