"""Views of how well the scores agree with labels: pair sets, variants, text mode, the CUS gap."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .base import SETS, auroc_f1, bold, f, md_table, template, view, with_ci

__all__: list[str] = []  # the views register themselves in ``VIEWS``

# -- labelled pair sets ---------------------------------------------------------------------------

PAIR_METHODS = {
    "s3kg@ot": "s3kg ot (default)",
    "s3kg@hybrid": "s3kg hybrid",
    "s3kg@paper": "s3kg paper",
    "s3kg@kgx": "s3kg kgx",
    "rouge1": "rouge1",
    "rouge2": "rouge2",
    "rougeL": "rougeL",
    "bleu": "bleu",
    "bertscore": "bertscore",
    "minilm_cosine": "minilm_cosine",
    "mpnet_cosine": "mpnet_cosine",
    "wl_kernel": "wl_kernel",
}
S3KG_MODES = {"s3kg@hybrid": "s3kg hybrid", "s3kg@paper": "s3kg paper", "s3kg@kgx": "s3kg kgx"}


def _pairs(fig: Mapping[str, Any], methods: Mapping[str, str]) -> str:
    rows = [
        [name, *(auroc_f1(fig["sets"][name]["methods"][m]) for m in methods)]
        for name in SETS
        if name in fig["sets"]
    ]
    rows.append(["**mean**", *(auroc_f1(fig["mean"][m], bold=True) for m in methods)])
    return md_table(["set", *methods.values()], rows)


@view("pairs_minilm", "pairs_minilm")
def _pairs_minilm(fig: Mapping[str, Any]) -> str:
    return _pairs(fig, PAIR_METHODS)


@view("pairs_mpnet", "pairs_mpnet")
def _pairs_mpnet(fig: Mapping[str, Any]) -> str:
    rows = []
    for name in SETS:
        s = fig["sets"][name]
        rows.append(
            [name, f"{s['n']} / {s['n_dev']}", *(with_ci(s["methods"][m]) for m in S3KG_MODES)]
        )
    rows.append(["**mean**", "", *(auroc_f1(fig["mean"][m], bold=True) for m in S3KG_MODES)])
    return md_table(["set", "test / dev pairs", *S3KG_MODES.values()], rows)


def _variants(fig: Mapping[str, Any]) -> str:
    from s3kg_core.evaluation.variants import report

    return f"```\nencoder {fig['encoder']}\n{report(fig)}\n```"


@view("variants_minilm", "variants_minilm")
def _variants_minilm(fig: Mapping[str, Any]) -> str:
    return _variants(fig)


@view("variants_mpnet", "variants_mpnet")
def _variants_mpnet(fig: Mapping[str, Any]) -> str:
    return _variants(fig)


# -- text mode (bench_evidence.py) ----------------------------------------------------------------

TEXT_COLUMNS = {
    "hybrid": "hybrid",
    "hybrid_fb": "hybrid, empty KG -> texts",
    "text_mode": "**text mode** (b 0.8)",
    "text_one_b": "text, one b from dev",
    "text_b_per_set": "text, b per set",
    "tri_text_fb": "triple F1 + texts",
}
TEXT_SET_ORDER = (
    "mrpc",
    "sts12",
    "sk_findkg",
    "paws_wiki",
    "sk_combined",
    "pubmedqa",
    "sk_codex",
    "sk_globi",
    "sk_oregano",
)


def _text_sets(fig: Mapping[str, Any], columns: Mapping[str, str]) -> str:
    rows = []
    for name in TEXT_SET_ORDER:
        s = fig["sets"][name]
        base = s["best_baseline"]
        rows.append(
            [name, *(with_ci(s[c]) for c in columns), f"{f(base['auroc'])} {base['method']}"]
        )
    rows.append(["**mean**", *(auroc_f1(fig["mean"][c], bold=True) for c in columns), ""])
    rows.append(
        ["worst gap to the set's best baseline", *(f(fig["worst_gap"][c]) for c in columns), ""]
    )
    return md_table(["set", *columns.values(), "best baseline"], rows)


@view("text_mode_minilm", "text_mode")
def _text_mode_minilm(fig: Mapping[str, Any]) -> str:
    return _text_sets(fig["minilm"], TEXT_COLUMNS)


@view("text_mode_mpnet", "text_mode")
def _text_mode_mpnet(fig: Mapping[str, Any]) -> str:
    return _text_sets(fig["mpnet"], TEXT_COLUMNS)


@view("text_mode_candidates", "text_mode")
def _text_mode_candidates(fig: Mapping[str, Any]) -> str:
    rows = []
    for c in fig["minilm_candidates"]:
        test = bold(f(c["mean_test_auroc"]), c["candidate"].startswith("text_fb (the"))
        if c.get("mean_test_auroc_4") is not None:
            test += f" ({f(c['mean_test_auroc_4'], '.4f')})"
        name = c["candidate"].replace("(the `text` mode)", "(**the `text` mode**)")
        name = name.replace("(the text mode)", "(**the `text` mode**)")
        rows.append(
            [
                name,
                c["regime"],
                template(c["b"]),
                f(c["mean_dev_auroc"]),
                test,
                f(c["mean_test_f1"]),
                template(c["worst_gap"]),
            ]
        )
    header = [
        "candidate",
        "regime",
        "b",
        "mean dev AUROC",
        "mean test AUROC",
        "mean test max-F1",
        "worst gap to best baseline",
    ]
    return md_table(header, rows)


@view("text_mode_both", "text_mode")
def _text_mode_both(fig: Mapping[str, Any]) -> str:
    rows = []
    for c in fig["both_encoders"]:
        shipped = c["candidate"].startswith("text mode (b 0.8")
        means = [template(c[enc]) for enc in ("minilm", "mpnet")]
        name = c["candidate"]
        if shipped:  # the mode as shipped: its name and its means bold
            name = name.replace("text mode", "**text mode**", 1)
            means = [bold(m.split(" ", 1)[0]) + " " + m.split(" ", 1)[1] for m in means]
        rows.append(
            [
                name,
                *means,
                template(c["minilm_gaps"]),
                template(c["mpnet_gaps"]),
                template(c["within"]),
            ]
        )
    header = [
        "candidate",
        "MiniLM mean",
        "mpnet mean",
        "MiniLM worst gaps",
        "mpnet worst gaps",
        "sets within 0.01 of their best baseline (MiniLM / mpnet)",
    ]
    return md_table(header, rows)


TOKEN_COLUMNS = {
    "minilm_text": "MiniLM: text mode",
    "minilm_tok_per_set": "MiniLM: tok, b per set",
    "minilm_tok_one_b": "MiniLM: tok, one b",
    "mpnet_text": "mpnet: text mode",
    "mpnet_tok_per_set": "mpnet: tok, b per set",
    "mpnet_tok_one_b": "mpnet: tok, one b",
}


@view("text_mode_tokens", "text_mode")
def _text_mode_tokens(fig: Mapping[str, Any]) -> str:
    tok = fig["token_level"]
    rows = []
    for name in TEXT_SET_ORDER:
        s = tok["sets"][name]
        base = s["best_baseline"]
        rows.append(
            [
                name,
                *(with_ci(s[c], f1=False) for c in TOKEN_COLUMNS),
                f"{f(base['auroc'])} {base['method']}",
            ]
        )
    rows.append(
        ["**mean** (max-F1)", *(auroc_f1(tok["mean"][c], bold=True) for c in TOKEN_COLUMNS), ""]
    )
    rows.append(
        [
            "worst gap to the set's best baseline",
            *(f(tok["worst_gap"][c]) for c in TOKEN_COLUMNS),
            "",
        ]
    )
    return md_table(["set", *TOKEN_COLUMNS.values(), "best baseline"], rows)


@view("text_mode_dev_choice", "text_mode")
def _text_mode_dev_choice(fig: Mapping[str, Any]) -> str:
    rows = [
        [enc, template(c["per_set"]), template(c["one_b"]), template(c["fixed_b"])]
        for enc, c in fig["dev_choice"].items()
    ]
    return md_table(["encoder", "b per set", "one b for all sets", "b fixed at 0.8"], rows)


@view("text_mode_summary", "text_mode")
def _text_mode_summary(fig: Mapping[str, Any]) -> str:
    """README: the text mode beside hybrid and the best baseline, per set, both encoders."""
    rows = []
    for name in SETS:
        mini, mp = fig["minilm"]["sets"][name], fig["mpnet"]["sets"][name]
        base = mini["best_baseline"]
        rows.append(
            [
                name,
                f(mini["hybrid"]["auroc"]),
                f(mini["text_mode"]["auroc"]),
                f(mp["hybrid"]["auroc"]),
                f(mp["text_mode"]["auroc"]),
                f"{f(base['auroc'])} {base['method']}",
            ]
        )
    m4 = fig["mean_test_auroc_4"]
    rows.append(
        [
            "**mean**",
            bold(f(fig["minilm"]["mean"]["hybrid"]["auroc"])),
            bold(f(m4["minilm"], ".4f")),
            bold(f(fig["mpnet"]["mean"]["hybrid"]["auroc"])),
            bold(f(m4["mpnet"], ".4f")),
            "",
        ]
    )
    header = ["set", "MiniLM hybrid", "MiniLM text", "mpnet hybrid", "mpnet text", "best baseline"]
    return md_table(header, rows)


# -- the CUS gap ----------------------------------------------------------------------------------


def _gcc(cell: Mapping[str, Any]) -> str:
    if "text" in cell:
        return template(cell)
    parts = " / ".join("-" if cell[k] is None else f(cell[k]) for k in ("goldsim", "ctxsim", "cus"))
    if cell.get("cus_change") is not None:
        parts += f" ({cell['cus_change']:+.3f})"
    if cell.get("n") is not None:
        parts += f" (n={cell['n']})"
    return parts


def _cus_gap(fig: Mapping[str, Any], keep: Callable[[str], bool]) -> str:
    rows = [
        [row["factor"], *(_gcc(row["runs"][r]) for r in fig["runs"])]
        for row in fig["factors"]
        if keep(row["factor"])
    ]
    return md_table(["factor", *fig["runs"]], rows)


@view("cus_gap", "cus_gap")
def _cus_gap_all(fig: Mapping[str, Any]) -> str:
    return _cus_gap(fig, lambda _: True)


# -- BAMBOO: meaning-graph similarity -------------------------------------------------------------

BAMBOO_COLUMNS = tuple(
    (d, t) for t in ("main", "reify", "syno", "role_confusion") for d in ("sts", "sick", "para")
)
_BAMBOO_NAMES = {"main": "", "reify": " reify", "syno": " syno", "role_confusion": " role"}
_BAMBOO_COMPONENTS = {"s3kg": "S3KG", "s_wl": "S_WL", "s_sbert": "S_SBERT"}


def _bamboo_cells(figures: Mapping[str, Mapping[str, Any]], mean: Any) -> list[str]:
    cells = [f(figures[d][t], ".1f") or "n/a" for d, t in BAMBOO_COLUMNS]
    return [*cells, f(mean, ".2f") or "n/a"]


@view("bamboo", "bamboo_published", "bamboo")
def _bamboo(published: Mapping[str, Any], ours: Mapping[str, Any]) -> str:
    header = [
        "metric",
        "figures",
        *(f"{d.upper()}{_BAMBOO_NAMES[t]}" for d, t in BAMBOO_COLUMNS),
        "mean",
    ]
    metrics = published["metrics"]
    rows = [
        [
            name,
            f"published, {published['split']} split",
            *_bamboo_cells(metrics[name]["figures"], metrics[name]["mean"]),
        ]
        for name in published["order"]
    ]
    for mode, splits in sorted(ours.get("ours", {}).items()):
        for split, run in sorted(splits.items()):
            for component, label in _BAMBOO_COMPONENTS.items():
                name = f"{label} {mode}, {run['encoder'].split('@')[0]}, alpha {run['alpha']:g}"
                cells = _bamboo_cells(run["figures"][component], run["mean"][component])
                rows.append([bold(name, component == "s3kg"), f"ours, {split} split", *cells])
    return md_table(header, rows)


@view("wwl_variants", "wwl_variants")
def _wwl_variants(ev: Mapping[str, Any]) -> str:
    header = ["variant (1 - transport distance)", "BAMBOO dev mean", "PARA role", "pair sets AUROC"]
    rows = [
        [
            bold(r["variant"], r["variant"].startswith("the same, mix 0.3")),
            f(r["bamboo_dev_mean"], ".2f"),
            f(r["para_role"], ".1f"),
            f(r["pairs_mean_auroc"], ".3f") or "-",
        ]
        for r in ev["rows"]
    ]
    return md_table(header, rows)


_Cell = Callable[[Mapping[str, Any]], str]
"""One cell of a variants table, from the variant's row of figures."""


def _variants_table(ev: Mapping[str, Any], columns: Mapping[str, _Cell]) -> str:
    """A table of ``ev["rows"]``, one variant a row: ``columns`` maps each header to its cell."""
    return md_table(list(columns), [[cell(r) for cell in columns.values()] for r in ev["rows"]])


def _chosen(key: str) -> _Cell:
    """The variant's ``key``, bold on the chosen variant's row."""
    return lambda r: bold(r[key], r["chosen"])


def _text(key: str) -> _Cell:
    """The variant's ``key`` as written."""
    return lambda r: r[key]


def _figure(key: str, spec: str, absent: str = "") -> _Cell:
    """The variant's ``key`` formatted (:func:`~docsgen.base.f`); ``absent`` where it is None."""
    return lambda r: absent if r[key] is None else f(r[key], spec)


def _slash(first: _Cell, second: _Cell) -> _Cell:
    """Two figures in one cell: ``first / second``."""
    return lambda r: f"{first(r)} / {second(r)}"


def _worst_set(r: Mapping[str, Any]) -> str:
    worst = r["worst_set"]
    return "-" if worst is None else f"{worst['change']:+.3f} ({worst['set']})"


@view("ot_variants", "ot_variants")
def _ot_variants(ev: Mapping[str, Any]) -> str:
    return _variants_table(
        ev,
        {
            "S_WL": _chosen("s_wl"),
            "S_SBERT": _text("s_sbert"),
            "T2 in the transports": _text("t2"),
            "BAMBOO dev mean": _figure("bamboo_dev_mean", ".2f"),
            "pair sets dev AUROC": _figure("pairs_dev_mean_auroc", ".3f"),
            "pair sets test AUROC": _figure("pairs_test_mean_auroc", ".3f"),
            "worst set (test) vs hybrid": _worst_set,
        },
    )


@view("bamboo_role_misses", "bamboo_role_misses")
def _bamboo_role_misses(ev: Mapping[str, Any]) -> str:
    kinds = list(ev["kinds"])
    rows = []
    for name, fig in ev["datasets"].items():
        rows.append(
            [
                name.upper(),
                str(fig["cases"]),
                str(fig["misses"]),
                f"{fig['accuracy']:.1f}",
                *(str(fig["kinds"][k]) for k in kinds),
                f"{fig['graph_ceiling']:.1f}",
            ]
        )
    return md_table(
        ["dataset", "pairs of pairs", "misses", "accuracy", *kinds, "ceiling of a graph metric"],
        rows,
    )


@view("roles_variants", "roles_variants")
def _roles_variants(ev: Mapping[str, Any]) -> str:
    return _variants_table(
        ev,
        {
            "triple similarity": _chosen("variant"),
            "S_SBERT": _text("s_sbert"),
            "direction dev: accuracy": _figure("dir_acc", ".3f", "-"),
            "meaning kept": _figure("dir_keep", ".3f", "-"),
            "pair 12": _figure("p12", ".3f", "-"),
            "BAMBOO dev mean": _figure("bamboo", ".2f"),
            "STS / PARA role": _slash(_figure("sts_role", ".1f"), _figure("para_role", ".1f")),
            "pair sets dev AUROC": _figure("pairs_dev", ".4f"),
            "pair sets test AUROC": _figure("pairs_test", ".4f"),
            "PAWS dev / test": _slash(
                _figure("paws_dev", ".3f", "-"), _figure("paws_test", ".3f", "-")
            ),
        },
    )
