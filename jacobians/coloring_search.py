"""Searching for fewer colors than a greedy coloring gives, within a fixed budget of work.

A coloring is a map ``colors[v]`` on the vertices of an undirected graph given
by its adjacency (``indptr``, ``indices``: CSR, no diagonal). Everything here is
a general graph heuristic; :mod:`jacobians.coloring` decides when to run what.

Distance-1 (proper) colorings, for the column intersection graph of a Jacobian:

- :func:`greedy`: each vertex, in a fixed order, takes the smallest color none
  of its neighbors has.
- :func:`dsatur` (Brélaz 1979): the greedy in a *dynamic* order — next, the
  uncolored vertex whose neighbors show the most distinct colors (its
  saturation), ties to the larger degree, then the lower index.
- :func:`iterated_greedy` (Culberson and Luo 1996): the greedy re-run with the
  vertices grouped by their current color class. Each class is independent, so
  the vertices of the i-th class listed take colors ≤ i: the count never grows.
  Classes are listed in reverse, largest-first or random order.
- :func:`tabu_proper` (TabuCol: Hertz and de Werra 1987; tenure of Galinier
  and Hao 1999): to reach k colors, empty the smallest class into the others
  at the least conflict, then move one conflicting vertex at a time to the
  color that removes the most conflicts (ties at random), never moving a
  vertex back to a color it left in the last ``L + 0.6 |conflicting|``
  iterations unless that beats the best count yet. Zero conflicts: a proper
  k-coloring.

Star colorings, for a Hessian: :func:`tabu_star` runs the same search on the
star condition. With ``cnt[v][c]`` the number of neighbors of v colored c, a
proper coloring is a star coloring if and only if every edge (x, y) has
``cnt[x][color y] == 1`` or ``cnt[y][color x] == 1``: otherwise x has a
second neighbor w colored like y, y a second neighbor z colored like x, and
w-x-y-z is a two-colored path on four vertices. The search counts the edges
that break either condition and moves an endpoint, or the w or z that breaks
it, to the color that removes the most.

Every search spends from a :class:`Budget` counted in work units, checked
*before* each step, so a budget of B never does more than B units of work:
the result is deterministic (a seeded random generator) and independent of
the machine. A unit is about what one adjacency entry costs the greedy (some
30-60 ns of CPython); each step is charged in those units (a DSATUR entry 5,
a move scored by tabu search 2, ...).
"""
from __future__ import annotations

__all__ = ["Budget", "ncolors", "greedy", "dsatur", "iterated_greedy", "tabu_proper",
           "reduce_proper", "tabu_star", "reduce_star"]

import heapq
import random

import numpy as np


class Budget:
    """Work units a search may still spend; ``take(u)`` is False (and spends nothing) when
    fewer than ``u`` are left."""

    def __init__(self, total):
        self.total = max(0, int(total))
        self.spent = 0

    @property
    def left(self):
        return self.total - self.spent

    def take(self, units):
        if units > self.total - self.spent:
            return False
        self.spent += units
        return True


def ncolors(colors):
    return int(max(colors)) + 1 if len(colors) else 0


# --- constructions ------------------------------------------------------------------------
def greedy(indptr, indices, order):
    """Each vertex in ``order`` takes the smallest color none of its neighbors has."""
    n = len(indptr) - 1
    colors = [-1] * n
    mark = [-1] * (n + 1)
    ip, ind = indptr.tolist(), indices.tolist()
    for v in np.asarray(order).tolist():
        for w in ind[ip[v]:ip[v + 1]]:
            c = colors[w]
            if c >= 0:
                mark[c] = v
        c = 0
        while mark[c] == v:
            c += 1
        colors[v] = c
    return np.array(colors, np.int64)


def dsatur(indptr, indices):
    """Brélaz's DSATUR: color next the vertex of largest saturation (distinct neighbor
    colors), then largest degree, then lowest index. A lazy heap of integer keys
    ``base[v] - saturation * step`` (``base`` orders by degree, then index); the colors a
    vertex has seen are the bits of one integer."""
    n = len(indptr) - 1
    ip, ind = indptr.tolist(), indices.tolist()
    degree = np.diff(indptr).astype(np.int64)
    top = int(degree.max(initial=0))
    step = (top + 1) * n
    base = ((top - degree) * n + np.arange(n)).tolist()
    seen = [0] * n
    sat = [0] * n
    colors = [-1] * n
    heap = list(base)
    heapq.heapify(heap)
    push, pop = heapq.heappush, heapq.heappop
    while heap:
        minus_sat, rest = divmod(pop(heap), step)
        v = rest % n
        if colors[v] >= 0 or -minus_sat != sat[v]:
            continue                                   # a stale entry
        free = ~seen[v] & (seen[v] + 1)                # lowest zero bit: the smallest free color
        colors[v] = free.bit_length() - 1
        for w in ind[ip[v]:ip[v + 1]]:
            if colors[w] < 0 and not seen[w] & free:
                seen[w] |= free
                sat[w] += 1
                push(heap, base[w] - sat[w] * step)
    return np.array(colors, np.int64)


# --- improvements of a proper coloring -------------------------------------------------------
def iterated_greedy(indptr, indices, colors, budget, rng, patience=5):
    """Culberson's iterated greedy from ``colors``; stops after ``patience`` passes without
    fewer colors, or when a pass no longer fits the budget. Returns (colors, passes)."""
    best = cur = np.asarray(colors)
    k = ncolors(best)
    passes = stale = 0
    while stale < patience and budget.take(len(indices) + len(cur)):
        classes = [np.flatnonzero(cur == c) for c in range(ncolors(cur))]
        r = rng.random()
        if r < 0.5:
            classes.reverse()
        elif r < 0.8:
            classes.sort(key=len, reverse=True)
        else:
            rng.shuffle(classes)
        cur = greedy(indptr, indices, np.concatenate(classes))
        passes += 1
        stale += 1
        if ncolors(cur) < k:
            best, k, stale = cur, ncolors(cur), 0
    return best, passes


def _drop_smallest_class(colors):
    """Colors 0..k-2 for the vertices outside the smallest class, -1 for that class."""
    colors = np.asarray(colors)
    drop = int(np.argmin(np.bincount(colors)))
    out = np.where(colors > drop, colors - 1, colors)
    out[colors == drop] = -1
    return out.tolist()


def tabu_proper(indptr, indices, colors, k, budget, rng, patience):
    """A proper k-coloring reached from ``colors`` (more colors) by TabuCol, or None.
    Gives up after ``patience`` iterations without fewer conflicts. Returns (colors or
    None, iterations)."""
    n = len(indptr) - 1
    setup = len(indices) + n * k
    if budget.left < 2 * setup or not budget.take(setup):   # no room to search after it
        return None, 0
    ip, ind = indptr.tolist(), indices.tolist()
    col = _drop_smallest_class(colors)
    gamma = [[0] * k for _ in range(n)]       # gamma[v][c]: neighbors of v colored c
    for v in range(n):
        if col[v] >= 0:
            for w in ind[ip[v]:ip[v + 1]]:
                gamma[w][col[v]] += 1
    for v in range(n):
        if col[v] < 0:
            g = gamma[v]
            c = g.index(min(g))
            col[v] = c
            for w in ind[ip[v]:ip[v + 1]]:
                gamma[w][c] += 1
    conflicts = sum(gamma[v][col[v]] for v in range(n)) // 2
    conflicting = {v for v in range(n) if gamma[v][col[v]]}
    tabu = {}
    best, it, since = conflicts, 0, 0
    top = int(np.diff(indptr).max(initial=0))       # the move itself: at most `top` updates
    while conflicts and since < patience and budget.take(2 * len(conflicting) * k + top + 1):
        it += 1
        since += 1
        best_delta, moves = None, []
        for v in conflicting:
            g, cv = gamma[v], col[v]
            for c in range(k):
                if c == cv:
                    continue
                d = g[c] - g[cv]
                if tabu.get((v, c), 0) > it and conflicts + d >= best:
                    continue                      # tabu, and no new best: not allowed
                if best_delta is None or d < best_delta:
                    best_delta, moves = d, [(v, c)]
                elif d == best_delta:
                    moves.append((v, c))
        if not moves:
            continue
        v, c = moves[rng.randrange(len(moves))]
        old, col[v] = col[v], c
        conflicts += best_delta
        tabu[(v, old)] = it + rng.randrange(10) + int(0.6 * len(conflicting))
        for w in ind[ip[v]:ip[v + 1]]:
            gw = gamma[w]
            gw[old] -= 1
            gw[c] += 1
            if gw[col[w]]:
                conflicting.add(w)
            else:
                conflicting.discard(w)
        if gamma[v][c]:
            conflicting.add(v)
        else:
            conflicting.discard(v)
        if conflicts < best:
            best, since = conflicts, 0
    return (np.array(col, np.int64) if conflicts == 0 else None), it


def reduce_proper(indptr, indices, colors, lower, budget, seed=0, patience=None):
    """Distance-1 search from a proper coloring: iterated greedy, then tabu search for one
    color fewer at a time, until ``lower`` colors or the budget. Returns (colors, stats) with
    stats the iterated-greedy passes, the tabu iterations and the count each step reached."""
    rng = random.Random(seed)
    n = len(indptr) - 1
    patience = patience or max(500, 10 * n)
    stats = {"passes": 0, "iterations": 0}
    best = np.asarray(colors)
    if ncolors(best) > lower:
        best, stats["passes"] = iterated_greedy(indptr, indices, best, budget, rng)
        if stats["passes"]:
            stats["iterated greedy"] = ncolors(best)
    while ncolors(best) > max(lower, 1) and budget.left > 0:
        found, it = tabu_proper(indptr, indices, best, ncolors(best) - 1, budget, rng, patience)
        stats["iterations"] += it
        if it or found is not None:      # it ran: report what it reached
            stats["tabu search"] = ncolors(found if found is not None else best)
        if found is None:
            break
        best = found
    return best, stats


# --- improvements of a star coloring -------------------------------------------------------------
class _StarState:
    """A partial coloring (-1: uncolored) with ``cnt[v][c]`` and the set of bad edges: those
    (x, y), x < y, both colored, with equal colors or on a two-colored path on four vertices."""

    def __init__(self, indptr, indices, col, k):
        ip, ind = indptr.tolist(), indices.tolist()
        self.nb = [ind[ip[v]:ip[v + 1]] for v in range(len(ip) - 1)]
        self.col = col
        self.cnt = [[0] * k for _ in self.nb]
        for v, c in enumerate(col):
            if c >= 0:
                for w in self.nb[v]:
                    self.cnt[w][c] += 1
        self.bad_edges = {(x, y) for x, ys in enumerate(self.nb) for y in ys
                          if x < y and self.bad(x, y)}

    def bad(self, x, y):
        cx, cy = self.col[x], self.col[y]
        if cx < 0 or cy < 0:
            return False
        return cx == cy or (self.cnt[x][cy] >= 2 and self.cnt[y][cx] >= 2)

    def _set(self, v, c):
        a, cnt = self.col[v], self.cnt
        for w in self.nb[v]:
            if a >= 0:
                cnt[w][a] -= 1
            cnt[w][c] += 1
        self.col[v] = c

    def around(self, v):
        """The edges whose state recoloring v can change: those at v, and (w, u) beyond a
        neighbor w — changed only when u's color is v's old or new one, so grouped by it."""
        own = [(min(v, w), max(v, w)) for w in self.nb[v]]
        beyond = {}
        for w in self.nb[v]:
            for u in self.nb[w]:
                cu = self.col[u]
                if u != v and cu >= 0:
                    beyond.setdefault(cu, []).append((min(w, u), max(w, u)))
        return own, beyond

    def delta(self, v, c, own, beyond):
        """Change in the number of bad edges if v took color c; and the edges scored."""
        edges = set(own)
        edges.update(beyond.get(self.col[v], ()))
        edges.update(beyond.get(c, ()))
        before = sum(e in self.bad_edges for e in edges)
        a = self.col[v]
        self._set(v, c)
        after = sum(self.bad(x, y) for x, y in edges)
        self._undo(v, a, c)
        return after - before, 6 * len(edges) + 3 * len(self.nb[v])

    def _undo(self, v, a, c):
        cnt = self.cnt
        for w in self.nb[v]:
            cnt[w][c] -= 1
            if a >= 0:
                cnt[w][a] += 1
        self.col[v] = a

    def move(self, v, c, own, beyond):
        edges = set(own)
        edges.update(beyond.get(self.col[v], ()))
        edges.update(beyond.get(c, ()))
        self._set(v, c)
        for e in edges:
            if self.bad(*e):
                self.bad_edges.add(e)
            else:
                self.bad_edges.discard(e)


def tabu_star(indptr, indices, colors, k, budget, rng, patience):
    """A star k-coloring reached from the star coloring ``colors`` (more colors) by tabu
    search on the bad edges (module docstring), or None. Returns (colors or None,
    iterations)."""
    n = len(indptr) - 1
    setup = 4 * len(indices) + n * k
    if budget.left < 2 * setup or not budget.take(setup):
        return None, 0
    s = _StarState(indptr, indices, _drop_smallest_class(colors), k)
    for v in [v for v in range(n) if s.col[v] < 0]:   # the emptied class: least harm first
        own, beyond = s.around(v)
        if not budget.take(3 * sum(len(s.nb[w]) for w in s.nb[v])):
            return None, 0
        scored = [s.delta(v, c, own, beyond) for c in range(k)]
        c = min(range(k), key=lambda c: scored[c][0])
        if not budget.take(sum(u for _, u in scored) + scored[c][1]):
            return None, 0
        s.move(v, c, own, beyond)
    tabu = {}
    best, it, since = len(s.bad_edges), 0, 0
    while s.bad_edges and since < patience and budget.take(len(s.bad_edges)):
        it += 1
        since += 1
        x, y = list(s.bad_edges)[rng.randrange(len(s.bad_edges))]
        # Recolor x or y, or a vertex that closes a two-colored path through (x, y).
        candidates = {x, y}
        candidates.update(w for w in s.nb[x] if w != y and s.col[w] == s.col[y])
        candidates.update(z for z in s.nb[y] if z != x and s.col[z] == s.col[x])
        f = len(s.bad_edges)
        best_delta, moves = None, []
        for v in sorted(candidates):
            own, beyond = s.around(v)
            if not budget.take(3 * sum(len(s.nb[w]) for w in s.nb[v])):
                return None, it
            for c in range(k):
                if c == s.col[v]:
                    continue
                d, units = s.delta(v, c, own, beyond)
                if not budget.take(units):
                    return None, it
                if tabu.get((v, c), 0) > it and f + d >= best:
                    continue
                if best_delta is None or d < best_delta:
                    best_delta, moves = d, [(v, c, own, beyond)]
                elif d == best_delta:
                    moves.append((v, c, own, beyond))
        if not moves:
            continue
        v, c, own, beyond = moves[rng.randrange(len(moves))]
        if not budget.take(6 * (len(own) + len(beyond.get(s.col[v], ())) +
                                len(beyond.get(c, ()))) + 3 * len(s.nb[v])):
            return None, it
        tabu[(v, s.col[v])] = it + rng.randrange(10) + int(0.6 * len(s.bad_edges))
        s.move(v, c, own, beyond)
        if len(s.bad_edges) < best:
            best, since = len(s.bad_edges), 0
    return (np.array(s.col, np.int64) if not s.bad_edges else None), it


def reduce_star(indptr, indices, colors, lower, budget, seed=0, patience=None):
    """Tabu search for a star coloring with one color fewer at a time, until ``lower`` colors
    or the budget. Returns (colors, stats)."""
    rng = random.Random(seed)
    patience = patience or max(200, len(indptr) - 1)
    stats = {"iterations": 0}
    best = np.asarray(colors)
    while ncolors(best) > max(lower, 1) and budget.left > 0:
        found, it = tabu_star(indptr, indices, best, ncolors(best) - 1, budget, rng, patience)
        stats["iterations"] += it
        if it or found is not None:
            stats["tabu search"] = ncolors(found if found is not None else best)
        if found is None:
            break
        best = found
    return best, stats
