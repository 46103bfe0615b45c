"""Which S3KG variant agrees best with human labels: chosen on dev pairs, reported on test pairs.

Every labelled pair set is scored once with :class:`~s3kg_core.scoring.s3kg.KGScorer` in
``paper``, ``kgx`` and ``hybrid`` mode (one embedding cache shared by the three), with T1 =
``kg_1`` (forward) and, when asked, with the KGs swapped (reverse): :func:`score_components`.
From these components the candidates (:func:`candidates`) are:

``paper``, ``kgx``, ``hybrid``
    the three modes (``hybrid``: S_WL is the mean of the paper kernel and the relation-agnostic
    undirected ``struct`` kernel on the same aligned graphs);
``struct``
    the relation-agnostic undirected kernel alone (``2 * S_WL(hybrid) - S_WL(paper)``) blended
    with S_SBERT like paper mode;
``paper_bi``, ``kgx_bi``, ``hybrid_bi``
    the mean of the forward and reverse blends (precision/recall-balanced matching: extra
    triples in T2 then cost something); ``paper_min``: the smaller of the two.

:func:`analyse` applies the pair benchmark's ``dev-test`` protocol
(:func:`~s3kg_core.evaluation.pairs.choose_alpha`) to every candidate on every set: alpha is
chosen by AUROC on the declared dev pairs and AUROC and max-F1 are reported on the test pairs;
the candidate to adopt is the one with the best mean *dev* AUROC, so the test figures are not
used to choose. Beside it, one alpha for all sets (the best mean dev AUROC) and its mean test
AUROC. :func:`report` prints both tables.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..encoders.base import Encoder
from ..scoring.result import blend
from .metrics import DEFAULT_ALPHAS, auroc, max_f1
from .pair_sets import PairSet
from .pairs import choose_alpha
from .splits import PAIR_SPLIT, dev_mask

__all__ = ["COMPONENT_MODES", "analyse", "candidates", "report", "score_components", "short_name"]

COMPONENT_MODES = ("paper", "kgx", "hybrid")
"""The scorer's modes the components are computed in."""

Arr = npt.NDArray[np.float64]
Candidate = Callable[[float], Arr]
Components = dict[str, list[Any]]


def score_components(
    pair_sets: Sequence[PairSet],
    encoder: Encoder,
    *,
    reverse: bool = True,
    done: Mapping[str, Components] | None = None,
    save: str | Path | None = None,
    log: Callable[[str], None] | None = None,
) -> dict[str, Components]:
    """Per-pair S_WL and S_SBERT of every set in every mode, forward (and reverse).

    Parameters
    ----------
    pair_sets
        The sets to score, in this order; a set already in ``done`` is not scored again.
    encoder
        The loaded encoder (one embedding cache is shared by the modes and directions).
    reverse
        Also score with the KGs swapped.
    done
        Components computed before (e.g. read back from ``save``).
    save
        A JSON file written after each set (atomically), so a killed run resumes.
    log
        Called with a line per scored set.

    Returns
    -------
    dict
        Set name -> ``{"ids", "labels", "<mode>_<fwd|rev>_wl", "<mode>_<fwd|rev>_sb"}``.

    Examples
    --------
    >>> # comps = score_components([load_pair_set("paws_wiki_400")], load_encoder("minilm"))
    """
    from ..encoders.cache import EmbeddingCache
    from ..scoring.s3kg import KGScorer

    out: dict[str, Components] = dict(done or {})
    cache = EmbeddingCache(encoder)
    for ps in pair_sets:
        if ps.name in out:
            continue
        start = time.perf_counter()
        rec: Components = {"ids": list(ps.ids), "labels": [int(x) for x in ps.labels]}
        for direction in ("fwd", "rev") if reverse else ("fwd",):
            pairs = list(zip(ps.kg_1, ps.kg_2, strict=True))
            if direction == "rev":
                pairs = [(b, a) for a, b in pairs]
            for mode in COMPONENT_MODES:
                scored = KGScorer(encoder, mode=mode, cache=cache).score_pairs(pairs)
                rec[f"{mode}_{direction}_wl"] = [r.s_wl for r in scored]
                rec[f"{mode}_{direction}_sb"] = [r.s_sbert for r in scored]
        out[ps.name] = rec
        if save is not None:
            path = Path(save)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(out), encoding="utf-8")
            tmp.replace(path)
        if log is not None:
            log(f"scored {ps.name}: {len(ps)} pairs in {time.perf_counter() - start:.1f} s")
    return out


def candidates(rec: Components) -> dict[str, Candidate]:
    """The candidate scores of one set's components, each a function of alpha.

    Paper, hybrid and struct weight S_SBERT by alpha; kgx weights S_WL (as each mode's
    :func:`~s3kg_core.scoring.result.blend` does). The ``_bi`` and ``_min`` candidates need
    the reverse components.

    Examples
    --------
    >>> rec = {k: [0.5, 0.2] for m in COMPONENT_MODES for k in (f"{m}_fwd_wl", f"{m}_fwd_sb")}
    >>> sorted(candidates(rec)), candidates(rec)["struct"](0.0).tolist()
    (['hybrid', 'kgx', 'paper', 'struct'], [0.5, 0.2])
    """
    c = {k: np.asarray(v, dtype=np.float64) for k, v in rec.items() if k not in ("ids", "labels")}

    def emb(wl: Arr, sb: Arr) -> Candidate:  # paper/hybrid convention: alpha weights S_SBERT
        return lambda a: np.asarray(blend(wl, sb, a, "paper"), dtype=np.float64)

    def kgx(wl: Arr, sb: Arr) -> Candidate:  # kgx convention: alpha weights S_WL
        return lambda a: np.asarray(blend(wl, sb, a, "kgx"), dtype=np.float64)

    def mean(f: Candidate, r: Candidate) -> Candidate:
        return lambda a: (f(a) + r(a)) / 2

    out: dict[str, Candidate] = {
        "paper": emb(c["paper_fwd_wl"], c["paper_fwd_sb"]),
        "kgx": kgx(c["kgx_fwd_wl"], c["kgx_fwd_sb"]),
        "hybrid": emb(c["hybrid_fwd_wl"], c["hybrid_fwd_sb"]),
        "struct": emb(2 * c["hybrid_fwd_wl"] - c["paper_fwd_wl"], c["paper_fwd_sb"]),
    }
    if "paper_rev_wl" in c:
        for mode, conv in (("paper", emb), ("kgx", kgx), ("hybrid", emb)):
            fwd = conv(c[f"{mode}_fwd_wl"], c[f"{mode}_fwd_sb"])
            out[f"{mode}_bi"] = mean(fwd, conv(c[f"{mode}_rev_wl"], c[f"{mode}_rev_sb"]))
        paper_fwd, paper_rev = out["paper"], emb(c["paper_rev_wl"], c["paper_rev_sb"])
        out["paper_min"] = lambda a: np.minimum(paper_fwd(a), paper_rev(a))
    return out


def short_name(name: str) -> str:
    """A set's name for a table column (``semantic_kg_globi_400`` -> ``sk_globi``).

    Examples
    --------
    >>> short_name("semantic_kg_globi_400"), short_name("pubmedqa_ranked_faithfulness_400")
    ('sk_globi', 'pubmedqa')
    """
    return (
        name.replace("semantic_kg_", "sk_").replace("_ranked_faithfulness", "").removesuffix("_400")
    )


def analyse(comps: Mapping[str, Components]) -> dict[str, Any]:
    """Every candidate on every set under the ``dev-test`` protocol, and their means.

    Returns
    -------
    dict
        ``{"split", "sets", "per_set": {candidate: {set: {"alpha", "dev_auroc", "test_auroc",
        "test_f1"}}}, "summary": {candidate: {"mean_dev_auroc", "mean_test_auroc",
        "mean_test_f1", "global_alpha", "global_mean_test_auroc"}}}``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = [1, 0] * 20
    >>> rec = {"ids": [str(i) for i in range(40)], "labels": y}
    >>> rec |= {f"{m}_fwd_{p}": (np.array(y) + rng.random(40)).tolist()
    ...         for m in COMPONENT_MODES for p in ("wl", "sb")}
    >>> result = analyse({"toy": rec})
    >>> result["split"], sorted(result["summary"])[:2]
    ('sha256-name-id-30pct-v1', ['hybrid', 'kgx'])
    """
    alphas = [float(a) for a in DEFAULT_ALPHAS]
    sets = list(comps)
    names = list(candidates(comps[sets[0]]))
    per: dict[str, dict[str, dict[str, float]]] = {n: {} for n in names}
    dev_curve = {n: np.zeros(len(alphas)) for n in names}
    test_curve: dict[tuple[str, str], list[float]] = {}
    for ds in sets:
        rec = comps[ds]
        y = np.asarray(rec["labels"])
        dev = dev_mask(ds, rec["ids"])
        for n, fn in candidates(rec).items():
            choice = choose_alpha(fn, y, dev, alphas)
            dev_curve[n] += np.array([p.auroc for p in choice.dev_sweep]) / len(sets)
            test_curve[(n, ds)] = [p.auroc for p in choice.sweep]
            per[n][ds] = {
                "alpha": choice.alpha,
                "dev_auroc": choice.dev_auroc,
                "test_auroc": auroc(choice.scores, y[~dev]),
                "test_f1": max_f1(choice.scores, y[~dev]).f1,
            }
    summary = {}
    for n in names:
        g = int(np.argmax(dev_curve[n]))  # the first best: ties go to the smaller alpha
        summary[n] = {
            "mean_dev_auroc": float(np.mean([per[n][d]["dev_auroc"] for d in sets])),
            "mean_test_auroc": float(np.mean([per[n][d]["test_auroc"] for d in sets])),
            "mean_test_f1": float(np.mean([per[n][d]["test_f1"] for d in sets])),
            "global_alpha": alphas[g],
            "global_mean_test_auroc": float(np.mean([test_curve[(n, d)][g] for d in sets])),
        }
    return {"split": PAIR_SPLIT, "sets": sets, "per_set": per, "summary": summary}


def report(result: Mapping[str, Any]) -> str:
    """:func:`analyse`'s result as two text tables: the means (best dev AUROC first), per set.

    Examples
    --------
    >>> # print(report(analyse(comps)))
    """
    sets, per, summary = result["sets"], result["per_set"], result["summary"]
    order = sorted(summary, key=lambda n: -summary[n]["mean_dev_auroc"])
    lines = [f"split {result['split']}; alpha per set chosen by dev AUROC", ""]
    lines.append(
        f"{'variant':<11}{'dev AUROC':>10}{'test AUROC':>11}{'test F1':>9}"
        f"{'glob a':>8}{'glob AUROC':>11}"
    )
    for n in order:
        s = summary[n]
        lines.append(
            f"{n:<11}{s['mean_dev_auroc']:>10.3f}{s['mean_test_auroc']:>11.3f}"
            f"{s['mean_test_f1']:>9.3f}{s['global_alpha']:>8.1f}{s['global_mean_test_auroc']:>11.3f}"
        )
    lines += ["", "test AUROC (alpha) per set"]
    lines.append(f"{'variant':<11}" + "".join(f"{short_name(d):>14}" for d in sets))
    for n in order:
        cells = "".join(f"{per[n][d]['test_auroc']:>8.3f} ({per[n][d]['alpha']:.1f})" for d in sets)
        lines.append(f"{n:<11}{cells}")
    return "\n".join(lines)
