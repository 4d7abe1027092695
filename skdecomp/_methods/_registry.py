"""The registry of attribution methods: one entry per method.

An entry gives the method's kind (an exact weight function over the
components, or a sampled estimator), its aliases, the options it takes in
``method_params`` with their defaults, the smallest budget it accepts, and a
fixed identifier of its random stream, and how the rest of the package shows
and picks it: its label and colour in every plot and in the report, whether
its attributions add up to the prediction, and the default method lists it
belongs to. A method's random results depend only on the user's
``random_state`` and its own ``seed_id``, never on the order or the number of
entries, so adding a method changes nothing else. Adding a method is one
entry here plus its weight function (exact) or estimator (sampled), and a
test against an independent oracle; every default list, command-line choice,
Display colour and report section reads the entry.
"""

# SPDX-License-Identifier: BSD-3-Clause

from dataclasses import dataclass, field
from numbers import Integral, Real

from .._config import MAX_EXACT_GROUPS, format_bytes, working_memory_bytes
from .._decomposition import size_weights

__all__ = [
    "MethodSpec",
    "REGISTRY",
    "ALIASES",
    "EXACT_METHODS",
    "SAMPLED_METHODS",
    "SINGLE_GROUP_METHODS",
    "METHOD_PARAMS",
    "canonical",
    "get_method",
    "check_method_params",
    "min_samples",
    "resolve_budget",
    "method_names",
    "default_methods",
    "comparison_methods",
    "efficient_methods",
    "lead_method",
    "method_label",
    "method_color",
    "METHOD_COLORS",
    "AUTO_SAMPLED_METHOD",
    "check_exact_groups",
    "resolve_method",
    "is_hierarchical",
    "budget_bytes",
    "check_budget_memory",
]


@dataclass(frozen=True)
class MethodSpec:
    """What the package knows about one attribution method.

    Parameters
    ----------
    name : str
        Canonical name.
    kind : {"exact", "sampled"}
        Exact methods are weights ``w(|U|)`` on the components; sampled
        methods estimate from a budget of coalitions.
    aliases : tuple of str
        Other names of the same method.
    params : dict
        Options of ``method_params`` and their defaults.
    seed_id : int or None
        Fixed identifier of the method's random stream (sampled methods).
        Never reuse or renumber one.
    single_group : bool
        Exact from the K singletons and the K leave-one-out coalitions, for
        any number of groups.
    estimates : str or None
        The exact method a sampled method converges to, if any.
    uses_budget : bool
        Whether the cost is set by ``n_samples`` coalitions per row.
    label : str
        Name shown in plots, tables and the report.
    color : str
        Colour ``"#RRGGBB"`` of the method in every plot and in the report;
        aliases share it.
    efficient : bool
        Whether the attributions of a row add up to its prediction minus the
        average prediction.
    defaults : tuple of str
        The default method lists the method belongs to: ``"exact"`` (when
        all 2**K coalitions can be enumerated, or the model is read on the
        tree path), ``"wide"`` (:meth:`Explainer.explain
        <skdecomp.Explainer.explain>` beyond that), ``"report_wide"`` (the
        report beyond that).
    lead : int or None
        Rank of the method as the one the report leads with (lowest first);
        None never leads while another method is present.
    comparison : int or None
        Position among the exact methods compared side by side, from the one
        that gives a group none of its interactions (PDP/Arch) to the one
        that gives it all of them (occlusion); None for sampled methods.
    hierarchical : bool
        The weight of a component depends on a hierarchy over the groups
        (``Explainer(hierarchy=...)``), not only on its size: the Owen and
        Winter values.
    """

    name: str
    kind: str
    aliases: tuple = ()
    params: dict = field(default_factory=dict)
    seed_id: int = None
    single_group: bool = False
    estimates: str = None
    uses_budget: bool = True
    label: str = None
    color: str = None
    efficient: bool = False
    defaults: tuple = ()
    lead: int = None
    comparison: int = None
    hierarchical: bool = False

    def weights(self, n_groups, hierarchy=None):
        """The weights of an exact method on the components.

        Size weights ``w(0..K)``, shape (K + 1,), for the methods whose
        weight depends on the size of a component only; for a hierarchical
        method, one weight per component and group, shape (2**K, K), from
        ``hierarchy`` (see :meth:`Hierarchy.component_weights
        <skdecomp._hierarchy.Hierarchy.component_weights>`).
        """
        if self.kind != "exact":
            raise ValueError(f"{self.name!r} is not an exact method.")
        if self.hierarchical:
            if hierarchy is None:
                raise ValueError(
                    f"method={self.name!r} needs a hierarchy over the groups: pass "
                    "Explainer(hierarchy=...), e.g. nested lists of columns or "
                    "AdaptiveGrouper()."
                )
            return hierarchy.component_weights()
        return size_weights(self.name, n_groups)


_ENTRIES = (
    # colours: colour-blind safe (Okabe and Ito, then Tol's muted colours)
    MethodSpec("shapley", "exact", label="Shapley", color="#0072B2", efficient=True,
               defaults=("exact",), lead=0, comparison=1),
    MethodSpec("banzhaf", "exact", label="Banzhaf", color="#E69F00",
               defaults=("exact",), lead=3, comparison=2),
    MethodSpec("occlusion", "exact", aliases=("pfi",), single_group=True,
               label="occlusion (PFI)", color="#009E73",
               defaults=("exact", "wide", "report_wide"), comparison=3),
    MethodSpec("arch", "exact", aliases=("pdp",), single_group=True,
               label="PDP/Arch", color="#CC79A7",
               defaults=("exact", "wide", "report_wide"), comparison=0),
    # sampled beyond its exact coalitions, with a random stream of its own
    MethodSpec("owen", "exact", seed_id=101, params={"estimator": "auto"},
               label="Owen/Winter", color="#117733", efficient=True, hierarchical=True),
    MethodSpec("kernel_shap", "sampled", seed_id=0, estimates="shapley",
               label="Kernel SHAP", color="#56B4E9", defaults=("wide", "report_wide"),
               lead=1),
    MethodSpec("permutation_shap", "sampled", seed_id=1, estimates="shapley",
               label="permutation SHAP", color="#332288", efficient=True,
               defaults=("report_wide",), lead=2),
    MethodSpec(
        "lime", "sampled", seed_id=2,
        params={"p": 0.5, "kernel": "constant", "kernel_width": 0.25, "alpha": 0.0},
        label="LIME", color="#D55E00", defaults=("wide",),
    ),
    MethodSpec("rise", "sampled", seed_id=3, params={"p": 0.5}, label="RISE",
               color="#999933"),
    MethodSpec(
        "integrated_gradients", "sampled", seed_id=4,
        params={"n_steps": 32, "scheme": "auto"}, uses_budget=False,
        label="Integrated Gradients", color="#882255",
    ),
)

#: Canonical name -> entry.
REGISTRY = {spec.name: spec for spec in _ENTRIES}
#: Alias -> canonical name.
ALIASES = {alias: spec.name for spec in _ENTRIES for alias in spec.aliases}
#: Names (with aliases) of the exact methods, in a fixed order.
EXACT_METHODS = tuple(
    name for spec in _ENTRIES if spec.kind == "exact" for name in (spec.name,)
) + tuple(alias for spec in _ENTRIES if spec.kind == "exact" for alias in spec.aliases)
#: Names of the sampled methods.
SAMPLED_METHODS = tuple(spec.name for spec in _ENTRIES if spec.kind == "sampled")
#: Exact methods (with aliases) that need only 2K coalitions.
SINGLE_GROUP_METHODS = tuple(
    name
    for spec in _ENTRIES
    if spec.single_group
    for name in (spec.name, *spec.aliases)
)
#: Options of each sampled method (and of Owen's estimator) and their defaults.
METHOD_PARAMS = {spec.name: dict(spec.params) for spec in _ENTRIES
                 if spec.kind == "sampled" or spec.params}

_SEEDED = [spec for spec in _ENTRIES if spec.kind == "sampled" or spec.seed_id is not None]
if len({spec.seed_id for spec in _SEEDED}) != len(_SEEDED) or any(
    spec.seed_id is None for spec in _SEEDED
):  # pragma: no cover - a registry error
    raise RuntimeError("Every sampled method needs its own seed_id.")
if any(spec.label is None or spec.color is None for spec in _ENTRIES):  # pragma: no cover
    raise RuntimeError("Every method needs a label and a colour.")


#: Method or alias -> colour, the palette every plot and the report share.
METHOD_COLORS = {
    name: spec.color for spec in _ENTRIES for name in (spec.name, *spec.aliases)
}


def method_names(kind=None, aliases=True):
    """Names a user may pass: exact methods (then their aliases), then sampled ones.

    Parameters
    ----------
    kind : {"exact", "sampled"} or None, default=None
        Only the methods of this kind; None gives all.
    aliases : bool, default=True
        Whether to include the aliases.

    Returns
    -------
    names : list of str
    """
    names = list(EXACT_METHODS) + list(SAMPLED_METHODS)
    if kind is not None:
        names = [n for n in names if REGISTRY[canonical(n)].kind == kind]
    return names if aliases else [n for n in names if n in REGISTRY]


def default_methods(role):
    """The default method list ``role`` (``"exact"``, ``"wide"`` or ``"report_wide"``).

    The methods whose entry lists ``role`` in ``defaults``, in registry order.
    """
    names = [spec.name for spec in _ENTRIES if role in spec.defaults]
    if not names:
        raise ValueError(f"No method has the default role {role!r}.")
    return names


def comparison_methods():
    """The exact methods compared side by side, from PDP/Arch to occlusion."""
    specs = [spec for spec in _ENTRIES if spec.comparison is not None]
    return [spec.name for spec in sorted(specs, key=lambda spec: spec.comparison)]


def efficient_methods():
    """Methods whose attributions of a row add up to its prediction minus the average."""
    return [spec.name for spec in _ENTRIES if spec.efficient]


def lead_method(methods):
    """The method a summary leads with: the lowest ``lead`` rank, else the first."""
    ranked = [
        (REGISTRY[canonical(m)].lead, i)
        for i, m in enumerate(methods)
        if canonical(m) in REGISTRY and REGISTRY[canonical(m)].lead is not None
    ]
    return methods[min(ranked)[1]] if ranked else methods[0]


def is_hierarchical(name):
    """Whether a method's weights come from a hierarchy over the groups."""
    spec = REGISTRY.get(canonical(name))
    return bool(spec is not None and spec.hierarchical)


def method_label(name):
    """The label of a method or alias in plots and the report (other names as given)."""
    spec = REGISTRY.get(canonical(name))
    return str(name) if spec is None else spec.label


def method_color(name):
    """The colour of a method or alias, or None for a name outside the registry."""
    return METHOD_COLORS.get(str(name).strip().lower())


def canonical(name):
    """Canonical name of a method or alias (unknown names are returned as is)."""
    return ALIASES.get(name, name)


def get_method(name):
    """The registry entry of a method or alias.

    Raises
    ------
    ValueError
        For an unknown name, listing the known ones.
    """
    spec = REGISTRY.get(canonical(name))
    if spec is None:
        raise ValueError(
            f"Unknown method {name!r}; choose among "
            f"{list(EXACT_METHODS) + list(SAMPLED_METHODS)}."
        )
    return spec


# -- options and budgets --------------------------------------------------------
def _allowed_keys_text(method):
    keys = sorted(METHOD_PARAMS.get(method, {}))
    return f"{keys}" if keys else "none"


def check_method_params(method, method_params):
    """Validated options of ``method``: the defaults updated by ``method_params``.

    Raises
    ------
    ValueError
        On keys the method does not take, or invalid values.
    """
    params = {} if method_params is None else dict(method_params)
    allowed = METHOD_PARAMS.get(method, {})
    unknown = sorted(str(k) for k in params if k not in allowed)
    if unknown:
        raise ValueError(
            f"method_params has keys {unknown} that method={method!r} does not "
            f"take; allowed keys: {_allowed_keys_text(method)}."
        )
    out = dict(allowed)
    out.update(params)
    if "p" in out:
        p = out["p"]
        if not isinstance(p, Real) or isinstance(p, bool) or not 0.0 < p < 1.0:
            raise ValueError(
                f"method_params['p']={p!r} must be a keep probability strictly "
                "between 0 and 1."
            )
        out["p"] = float(p)
    if method == "owen" and out["estimator"] not in ("auto", "permutation", "partition"):
        raise ValueError(
            f"method_params['estimator']={out['estimator']!r}; choose 'permutation' "
            "(sampled orders, with standard errors), 'partition' (the partition "
            "recursion of shap's PartitionExplainer, deterministic) or 'auto' (the "
            "sampled orders when the budget allows them, else the recursion)."
        )
    if method == "lime":
        if out["kernel"] not in ("constant", "distance"):
            raise ValueError(
                f"method_params['kernel']={out['kernel']!r}; choose 'constant' "
                "or 'distance'."
            )
        width = out["kernel_width"]
        if not isinstance(width, Real) or isinstance(width, bool) or not width > 0:
            raise ValueError(
                f"method_params['kernel_width']={width!r} must be a positive number."
            )
        alpha = out["alpha"]
        if not isinstance(alpha, Real) or isinstance(alpha, bool) or not alpha >= 0:
            raise ValueError(
                f"method_params['alpha']={alpha!r} must be a number >= 0 "
                "(0 is ordinary least squares)."
            )
    if method == "integrated_gradients":
        steps = out["n_steps"]
        if not isinstance(steps, Integral) or isinstance(steps, bool) or steps < 1:
            raise ValueError(
                f"method_params['n_steps']={steps!r} must be an integer >= 1."
            )
        if out["scheme"] not in ("auto", "path", "central", "gradient"):
            raise ValueError(
                f"method_params['scheme']={out['scheme']!r}; choose 'path' "
                "(exact completeness, any model), 'central' (central "
                "differences per column, for smooth models), 'gradient' (the "
                "gradients of a torch module) or 'auto' ('gradient' where the "
                "model has gradients, else 'path')."
            )
    return out


def n_coalitions(n_groups):
    """Number of coalitions other than the empty and the full one, 2**K - 2."""
    return (1 << n_groups) - 2


def min_samples(method, n_groups):
    """Smallest budget ``n_samples`` a method accepts for K groups.

    Each is the smallest budget whose standard errors still cover: 95 %
    intervals holding at least 90 % of the exact values on
    ``benchmarks/bench_coverage.py`` (see :ref:`standard errors <standard_errors>`). A
    budget that covers every coalition is exact.
    """
    full = n_coalitions(n_groups)
    if n_groups < 2:
        return 0
    if method == "kernel_shap":
        # the singletons and their complements, then 3K drawn pairs: with
        # fewer, the drawn pairs dominate the fit and its spread is understated
        return min(8 * n_groups, full)
    if method == "permutation_shap":
        # three permutations and their reverses per game: one cannot measure
        # its own spread, and with two a single game (one background row)
        # covered too little (89 % on some smooth games)
        return min(6 * (n_groups - 1), full)
    if method == "lime":
        # twice the coefficients (the groups and the intercept): with fewer,
        # the fit nearly interpolates its draws and their spread vanishes
        return min(2 * (n_groups + 1), full)
    if method == "rise":
        # fewer than K + 1 masks leave some group never drawn
        return min(n_groups + 1, full)
    if method == "owen":
        # sampled beyond its exact coalitions: four consistent orders and their
        # reverses per game; with three, a player whose contribution turns on
        # one choice of the hierarchy (which of two blocks comes first) saw
        # every pair make the same choice in a quarter of the games (87 %)
        return min(8 * (n_groups - 1), full)
    return 1


# why each smallest budget, for the message that refuses a smaller one
_SMALLEST_BECAUSE = {
    "kernel_shap": "the singletons and their complements, then 3K drawn pairs; "
                   "with fewer, the drawn pairs dominate the fit and its spread is "
                   "understated",
    "permutation_shap": "three permutations and their reverses per game; with "
                        "two, the intervals of a single game (one background row) "
                        "covered too little",
    "lime": "twice the coefficients; with fewer, the fit nearly interpolates its "
            "draws and their spread vanishes",
    "rise": "fewer masks leave some group never drawn",
    "owen": "four consistent orders and their reverses per game; with three, "
            "a player whose contribution turns on one choice of the hierarchy "
            "saw every pair make the same choice too often, and its intervals "
            "covered too little; method_params={'estimator': 'partition'} takes "
            "smaller budgets on a binary hierarchy, without standard errors",
}


def resolve_budget(method, n_samples, n_groups, check=True, *, n_background=None,
                   n_outputs=1, depth=1):
    """Number of coalitions per row for a coalition method; checks the minimum.

    ``check=False`` skips the checks, for stating the budget of a result
    (groups that are dummies in every row of a call take no budget, so a
    call may run with fewer groups than the minimum counts). With
    ``check``, a budget whose coalitions and values do not fit in the
    working memory is refused too (:func:`check_budget_memory`), for
    ``n_background`` background rows, ``n_outputs`` outputs and, for the
    sampled Owen value, a hierarchy ``depth`` levels deep. The defaults
    give the least memory any call can need, for a check before the
    background is known (``n_background=None`` counts one background row).
    """
    low = min_samples(method, n_groups)
    given = n_samples
    if n_samples is None:
        n_samples = max(2 * n_groups + 2048, low)
    if check and n_samples < low:
        raise ValueError(
            f"n_samples={n_samples} is too small for method={method!r} with "
            f"{n_groups} groups; it needs at least n_samples={low}, the smallest "
            "budget whose standard errors can be trusted"
            + (f" ({_SMALLEST_BECAUSE[method]})" if method in _SMALLEST_BECAUSE else "")
            + " (see the user guide, 'Standard errors')."
        )
    if check:
        check_budget_memory(
            method, int(n_samples), n_groups,
            lambda b: budget_bytes(method, n_groups, b, n_background or 1, n_outputs,
                                   depth),
            low, default=given is None, n_background=n_background,
        )
    return int(n_samples)


# -- memory of a budget ---------------------------------------------------------
def budget_bytes(method, n_groups, budget, n_background=1, n_outputs=1, depth=1):
    """Bytes that a sampled method's budget holds at once: an upper estimate.

    The design of one call (the random draws behind it, the coalitions and
    their weights; the orders and their prefix indices of permutation SHAP
    and of the sampled Owen value, which keeps one design per background
    row) and the values of one explained row's coalitions with the terms of
    their standard errors: against every background row for Kernel SHAP,
    permutation SHAP and the sampled Owen value, one mean game for LIME and
    RISE. Explained rows are taken in chunks of at least one row, and model
    calls in batches of their own size, so this is the least a call of this
    budget needs; the estimate is above the peak measured with
    ``tracemalloc`` (20 to 100 groups, 10 to 100 background rows).

    Parameters
    ----------
    method : str
        A sampled coalition method, or ``"owen"`` (sampled).
    n_groups : int
        Groups in play.
    budget : int
        Coalitions per explained row (and background row).
    n_background : int, default=1
        Background rows of the game (1 when the game is not a mean over
        background rows).
    n_outputs : int, default=1
        Explained outputs.
    depth : int, default=1
        Levels of the hierarchy of the Owen value.

    Returns
    -------
    n_bytes : int
        0 for a method without a budget of coalitions.
    """
    name = canonical(method)
    K = max(int(n_groups), 1)
    b = int(budget)
    n_bg, n_out = max(int(n_background), 1), max(int(n_outputs), 1)
    full = n_coalitions(K)  # a Python int, for any K
    if name == "kernel_shap" or (name == "permutation_shap" and b >= full):
        # draws of the layers (float keys, their argpartition), the coalitions
        # and their complements, the pair terms of the errors, the values
        return min(b, full) * (16 * K + 8 * K * n_out + 16 * n_bg * n_out + 128)
    if name == "permutation_shap":
        # orders, ranks and prefixes (every prefix of every order), the values
        return b * (8 * K + 16 * n_bg * n_out + 128)
    if name in ("lime", "rise"):
        # Bernoulli draws as floats, the distinct masks, the weighted fit
        return min(b, full) * (48 * K + 32 * n_out + 128)
    if name == "owen":
        # one design per background row, the ranks along every path
        return b * (n_bg * (2 * K + 32 + 16 * n_out) + 8 * int(depth) + 64)
    return 0


def _largest_budget(cost, low, high, limit):
    """Largest budget in [low, high] whose cost (non-decreasing) is within limit, or None."""
    if high < low or cost(low) > limit:
        return None
    while low < high:
        mid = (low + high + 1) // 2
        if cost(mid) <= limit:
            low = mid
        else:
            high = mid - 1
    return low


def check_budget_memory(method, budget, n_groups, cost, low, *, default=False,
                        n_background=None, fits=None):
    """Refuse a budget whose memory (``cost(budget)`` bytes) is above the working memory.

    The limit is scikit-learn's ``working_memory`` (:func:`sklearn.set_config`);
    the error names the largest budget that fits, found among the budgets
    from ``low`` (the smallest the method accepts) up, ``cost`` being
    non-decreasing there, and the working memory that would hold this one.

    Parameters
    ----------
    method : str
    budget : int
        Coalitions per explained row.
    n_groups : int
    cost : callable
        Budget -> bytes.
    low : int
        Smallest budget the method accepts.
    default : bool, default=False
        Whether the budget is the default one (``n_samples=None``).
    n_background : int or None, default=None
        Background rows of the game, for the message; None when they are
        not known yet and ``cost`` counts one.
    fits : int or None, default=None
        A largest budget that fits already known (one of another form, such
        as every coalition of the exact Owen value); None searches
        ``low .. budget - 1``.

    Raises
    ------
    ValueError
        When ``cost(budget)`` exceeds the working memory.
    """
    limit = working_memory_bytes()
    need = cost(budget)
    if need <= limit:
        return
    best = _largest_budget(cost, low, budget - 1, limit) if fits is None else fits
    given = (f"the default budget (n_samples=None: {budget} coalitions)" if default
             else f"n_samples={budget}")
    # the methods that explain each background row's game hold values for each
    per_background = canonical(method) in ("kernel_shap", "permutation_shap", "owen")
    against = ""
    if per_background and n_background is not None and n_background > 1:
        against = f" against each of its {n_background} background rows"
    mib = -(-need // 2**20)
    text = (
        f"{given} for method={method!r} over {n_groups} groups needs about "
        f"{format_bytes(need)} at once (the coalitions of one explained row and their "
        f"values{against}), more than scikit-learn's working_memory of "
        f"{format_bytes(limit)}. "
    )
    if best is not None and per_background and n_background is None:
        text += (
            f"With one background row, the largest budget that fits is n_samples="
            f"{best} (with more background rows, less: each holds the values of "
            "every coalition); pass a smaller budget, "
        )
    elif best is not None:
        text += (
            f"The largest budget that fits is n_samples={best}: pass n_samples={best} "
            "or less, "
        )
    else:
        text += (
            f"Even the smallest budget it accepts, n_samples={low}, needs "
            f"{format_bytes(cost(low))}: use fewer background rows or fewer groups, "
        )
    text += (
        f"or raise the working memory, e.g. sklearn.set_config(working_memory={mib}) "
        "(in MiB) if the machine has that much."
    )
    raise ValueError(text)


#: The sampled Shapley estimate ``method="auto"`` takes beyond the exact limit.
AUTO_SAMPLED_METHOD = "permutation_shap"


def check_exact_groups(n_groups, what, tree=False):
    """Exact enumeration of 2**K coalitions is limited to MAX_EXACT_GROUPS groups.

    On the tree path, exact attributions are read from the leaves without
    enumerating coalitions, for any number of groups.
    """
    if tree or n_groups <= MAX_EXACT_GROUPS:
        return
    raise ValueError(
        f"{what!r} enumerates all 2**K coalitions, and {n_groups} groups are more "
        f"than exact enumeration allows (at most {MAX_EXACT_GROUPS} groups off the "
        "tree path). Merge columns into fewer groups, use method='auto' (a sampled "
        "Shapley estimate beyond the limit), or a sampled method: "
        f"{', '.join(repr(m) for m in SAMPLED_METHODS)}."
    )


def resolve_method(method, n_groups, tree):
    """The method ``method="auto"`` stands for: exact Shapley where it fits."""
    if method != "auto":
        return method
    if tree or n_groups <= MAX_EXACT_GROUPS:
        return "shapley"
    return AUTO_SAMPLED_METHOD
