r"""Rule tables: each interpreter's rules for the registry's primitives.

An interpreter reads the rules it needs from tables of its own: forward mode the JVPs
(``"jvp"``, one rule per argument, and ``"jvp_all"``, one rule for all arguments at once),
reverse mode the VJPs (``"vjp"``, ``"vjp_all"``), batching its batching rules (``"batch"``,
``"linear_batched"``). A new interpreter (Taylor mode) declares a new table in its own
folder and fills it beside the primitives' declarations; no field of :class:`Primitive`
and no line of the rule checker changes.

A table is named, owned (the interpreter that reads it, which documents what a rule in it
computes) and keyed by primitive::

    JVP = rule_table("jvp", per_argument=True, owner=__package__, doc="...")
    JVP.get(sin_p)          # {0: rule}: argument 0's JVP rule of sin
    JVP_ALL.get(solve_p)    # solve's JVP rule over all its arguments, or None

Tables are looked up by name (:func:`rule_table`), not imported from the interpreter that
owns them, so the core (which writes the JVPs and VJPs in ``defjvp``/``defvjp``/
``defderiv``) and the layers above it share a table without importing one another.

The rules themselves are stored on the primitive, in one mapping (``prim.rules``, keyed
by table): a primitive made at run time (a ``scan`` step, a ``dualad.jit`` program, a
``custom_vjp`` function) takes its rules with it when it is freed, where a table holding
primitives as keys would keep every one alive. Reading a rule is one dictionary lookup
(``prim.rules.get(JVP_ALL)``), as cheap as the attribute it replaces.
"""
from __future__ import annotations

import threading
from typing import Any, Protocol


class Primitive(Protocol):   # what a table reads of a primitive (core.primitive.Primitive)
    rules: dict[RuleTable, Any]

__all__ = ["RuleTable", "rule_table", "TABLES"]


class RuleTable:
    """One kind of rule, for every primitive that declares one.

    The interpreter that owns the table reads it; declaration methods of
    :class:`~dualad.extend.Primitive` (or ``set``) fill it. The entries are stored on
    each primitive (``prim.rules``), so they live as long as the primitive.

    Parameters
    ----------
    name : str
        The table's name (``"jvp"``, ``"vjp"``, ``"batch"``, ...).
    per_argument : bool
        Whether a primitive's entry is ``{argnum: rule}`` (one rule per differentiable
        argument) rather than one rule.
    """

    __slots__ = ("name", "per_argument", "owner", "doc")

    def __init__(self, name: str, per_argument: bool = False) -> None:
        self.name = name
        self.per_argument = per_argument
        self.owner: str | None = None   # the module that reads it (set by its claim)
        self.doc: str | None = None

    def get(self, prim: Primitive, default: Any = None) -> Any:
        """A primitive's entry in this table.

        Parameters
        ----------
        prim : Primitive
            The primitive.
        default : object, optional
            What to return when it declares no rule here.

        Returns
        -------
        object
            Its rule (``{argnum: rule}`` for a per-argument table), or ``default``.
        """
        return prim.rules.get(self, default)

    def set(self, prim: Primitive, rule: Any) -> None:
        """Store a primitive's entry (what a declaration method does).

        Parameters
        ----------
        prim : Primitive
            The primitive.
        rule : object
            Its rule (``{argnum: rule}`` for a per-argument table).
        """
        prim.rules[self] = rule

    def has(self, prim: Primitive) -> bool:
        """Whether a primitive declares a rule here.

        Parameters
        ----------
        prim : Primitive
            The primitive.

        Returns
        -------
        bool
            True when it has an entry (any argument's, for a per-argument table).
        """
        return bool(prim.rules.get(self))

    def __repr__(self) -> str:
        owner = f" of {self.owner}" if self.owner else ""
        return f"<rule table {self.name!r}{owner}>"


TABLES: dict[str, RuleTable] = {}   # name -> table, in order of first mention
_LOCK = threading.Lock()


def rule_table(name: str, *, per_argument: bool = False, owner: str | None = None,
               doc: str | None = None) -> RuleTable:
    """The table called ``name``, made on first mention; ``owner`` claims it.

    Tables are found by name so that the core, which fills them, and the interpreter
    that reads them share one table without importing each other.

    Parameters
    ----------
    name : str
        The table's name.
    per_argument : bool, optional
        One rule per argument (``{argnum: rule}``) rather than one rule. Every mention
        must agree.
    owner : str, optional
        The interpreter (its package's name) that reads the table, claiming it: two
        owners of one table is an error.
    doc : str, optional
        What a rule in the table computes (the owner's documentation of it).

    Returns
    -------
    RuleTable
        The one table of that name.
    """
    with _LOCK:
        table = TABLES.get(name)
        if table is None:
            table = TABLES[name] = RuleTable(name, per_argument)
        elif table.per_argument != per_argument:
            raise ValueError(f"rule table {name!r} is per_argument={table.per_argument}, "
                             f"asked for per_argument={per_argument}")
        if owner is not None:
            if table.owner is not None and table.owner != owner:
                raise ValueError(f"rule table {name!r} is owned by {table.owner}; "
                                 f"{owner} cannot claim it: choose another name")
            table.owner, table.doc = owner, doc
    return table
