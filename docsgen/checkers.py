"""Views of hallucination checking and factuality: GraphEval, the trained checker, the judge."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import bold, f, md_table, value_ci, view

__all__: list[str] = []  # the views register themselves in ``VIEWS``

# -- GraphEval and the trained checker ------------------------------------------------------------


@view("grapheval_support", "grapheval_support")
def _grapheval_support(fig: Mapping[str, Any]) -> str:
    rows = [
        [
            s["label"],
            f(s["n"], ",d"),
            f(s["raw"]),
            f(s["kg"]),
            f"{f(s['flagged'], ',d')} of {f(s['triples'], ',d')}",
        ]
        for s in fig["sets"].values()
    ]
    return md_table(["set", "n", "raw checker", "checker + KG", "flagged triples"], rows)


SUMM_SETS = {"summeval": "SummEval", "qags_c": "QAGS-C", "qags_x": "QAGS-X"}


@view("trained_checker_summary", "trained_checker")
def _trained_checker_summary(fig: Mapping[str, Any]) -> str:
    """README: the current trained checker against the support checker and raw mode."""
    cur = next(m for m in fig["models"] if m["key"] == "synthetic-2")
    auc = {(r["set"], r["checker"]): r for r in fig["auroc"]}
    sup = fig["support_sampled"]
    rows = []
    for key, label in SUMM_SETS.items():
        a = auc[(key, "trained `synthetic-2`")]
        rows.append(
            [
                label,
                f(sup[key]["raw"]),
                f(sup[key]["kg"]),
                f(cur[key]["raw"]),
                bold(f(cur[key]["kg"])),
                f(a["raw"]["value"], ".2f"),
                f(a["kg"]["value"], ".2f"),
            ]
        )
    rows.append(
        [
            "mean",
            f(sup["mean"]["raw"]),
            f(sup["mean"]["kg"]),
            f(cur["mean"]["raw"]),
            bold(f(cur["mean"]["kg"])),
            "",
            "",
        ]
    )
    header = [
        "set",
        "support raw",
        "support KG",
        "trained raw",
        "trained KG",
        "trained raw AUROC",
        "trained KG AUROC",
    ]
    return md_table(header, rows)


@view("trained_checker_models", "trained_checker")
def _trained_checker_models(fig: Mapping[str, Any]) -> str:
    rows = []
    for m in fig["models"]:
        cur = m["key"] == "synthetic-2"
        cells = [
            bold(f"{f(m[k]['raw'])} / {f(m[k]['kg'])}", cur and k == "qags_x")
            for k in ("summeval", "qags_c", "qags_x")
        ]
        mean = f"{f(m['mean']['raw'])} / {bold(f(m['mean']['kg']), cur)}"
        rows.append([m["model"], *cells, mean, f(m["dev_kg_mean"])])
    header = [
        "model",
        "SummEval raw / KG",
        "QAGS-C raw / KG",
        "QAGS-X raw / KG",
        "mean raw / KG",
        "dev KG mean",
    ]
    return md_table(header, rows)


@view("trained_checker_auroc", "trained_checker")
def _trained_checker_auroc(fig: Mapping[str, Any]) -> str:
    """AUROC per set and checker, the set's best raw or KG figure bold."""
    best: dict[str, float] = {}
    for r in fig["auroc"]:
        best[r["set"]] = max(best.get(r["set"], 0.0), r["raw"]["value"], r["kg"]["value"])

    def cell(m: Mapping[str, Any], name: str) -> str:
        text = value_ci(m)
        return (
            text.replace(f(m["value"]), bold(f(m["value"])), 1)
            if m["value"] == best[name]
            else text
        )

    rows = [
        [
            r["set"],
            r["checker"],
            cell(r["raw"], r["set"]),
            cell(r["kg"], r["set"]),
            f(r["kg_mean_triple"]),
        ]
        for r in fig["auroc"]
    ]
    return md_table(["set", "checker", "raw AUROC", "KG AUROC", "KG mean-triple AUROC"], rows)


@view("trained_checker_int8", "trained_checker")
def _trained_checker_int8(fig: Mapping[str, Any]) -> str:
    rows = []
    for r in fig["int8_test_articles"]:
        flagged = f"{f(r['flagged'], ',d')} / {f(r['triples'], ',d')}" if r.get("triples") else ""
        rows.append(
            [
                r["set"],
                f(r["n"], "d"),
                r["backend"],
                value_ci(r["raw"]),
                value_ci(r["kg"]),
                f(r["raw_dev_t"]),
                f(r["kg_dev_t"]),
                flagged,
                f(r.get("summaries_per_s"), ".2f"),
            ]
        )
    header = [
        "set",
        "n",
        "backend",
        "raw @0.5 [95% CI]",
        "KG @0.5 [95% CI]",
        "raw @dev-t",
        "KG @dev-t",
        "flagged triples",
        "summaries/s",
    ]
    return md_table(header, rows)


@view("trained_checker_int8_heldout", "trained_checker")
def _trained_checker_int8_heldout(fig: Mapping[str, Any]) -> str:
    rows = [
        [
            k,
            f(r["seconds"], ".1f"),
            f(r["pairs_per_s"], ".1f"),
            f(r["balanced_accuracy"], ".4f"),
            f(r["auroc"], ".4f"),
            f(r["swap"]),
            f(r["same_type"]),
            f(r["number"]),
        ]
        for k, r in fig["int8_heldout"].items()
    ]
    header = [
        "backend",
        "seconds",
        "pairs/s",
        "balanced acc. @0.5",
        "AUROC",
        "swap acc.",
        "same_type acc.",
        "number acc.",
    ]
    return md_table(header, rows)


# -- factuality, extraction -----------------------------------------------------------------------


@view("factuality", "factuality")
def _factuality(fig: Mapping[str, Any]) -> str:
    rows = []
    for key, what in (("raw", "the model's own"), ("calibrated", "calibrated")):
        e, lab = fig["evaluations"][key], fig["labels"][key]
        rows.append(
            [
                what,
                f"{lab['TRUE']} / {lab['FALSE']} / {lab['IDK']}",
                str(e["layer"]),
                f(e["judge_accuracy"]),
                f(e["majority_accuracy"]),
                f(e["logreg_accuracy"]),
            ]
        )
    header = [
        "labels",
        "True / False / IDK",
        "layer",
        "judge",
        "majority class",
        "logistic regression",
    ]
    return md_table(header, rows)


@view("extraction", "extraction")
def _extraction(fig: Mapping[str, Any]) -> str:
    m = fig["match"]
    rows = [
        [
            "S3KG F1 / AUROC, offline triples",
            f"{f(fig['offline']['f1'])} / {f(fig['offline']['auroc'])}",
        ],
        [
            "S3KG F1 / AUROC, the authors' LLM triples",
            f"{f(fig['llm_released']['f1'])} / {f(fig['llm_released']['auroc'])}",
        ],
        [
            "offline vs LLM triples, precision / recall at sentence cosine "
            + f(m["sentence"]["cosine"], ".2f"),
            f"{f(m['sentence']['precision'], '.2f')} / {f(m['sentence']['recall'], '.2f')}",
        ],
        [
            "the same, exact after normalisation",
            f"{f(m['exact']['precision'], '.2f')} / {f(m['exact']['recall'], '.2f')}",
        ],
        ["offline extraction speed, 2 cores", f"about {fig['texts_per_s']} texts/s"],
    ]
    return md_table(["figure", "value"], rows)
