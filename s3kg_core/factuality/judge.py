"""The judge: a small network that reads one layer's hidden states and predicts the LLM's answer.

Architecture (:class:`JudgeNet`): ``LayerNorm(d) -> Linear(d, h) -> ReLU -> Linear(h, 3)``,
the LayerNorm first so that layers of very different scale (the embedding layer against the
last blocks) train with the same learning rate. Training and prediction run on one torch
thread (the caller's setting is restored after). Trained with cross-entropy and Adam on the
training split, seeded (initialisation and batch order), with early stopping on the
validation split's loss (the weights of the best epoch are kept). Classes are the labels of
:data:`.labels.LABELS`: TRUE = 0, FALSE = 1, IDK = 2.

The splits (:func:`s3kg_core.evaluation.splits.split_groups`) are by *group* (a fact and its
corruptions, see :mod:`.statements`), so no test statement's source fact is seen in training.
Choosing the layer, training and evaluating the judge against its baselines is
:mod:`s3kg_core.evaluation.factuality`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..errors import FactualityError, InputFormatError
from .labels import LABELS

__all__ = ["Judge", "JudgeConfig", "JudgeNet", "TrainHistory", "encode_labels"]

_CONFIG_FILE = "judge_config.json"
_WEIGHTS_FILE = "judge_state.pt"


def encode_labels(labels: Sequence[str]) -> np.ndarray:
    """Class indices of labels (TRUE = 0, FALSE = 1, IDK = 2).

    Raises
    ------
    FactualityError
        If a label is not one of :data:`.labels.LABELS`.

    Examples
    --------
    >>> encode_labels(["IDK", "TRUE", "FALSE"]).tolist()
    [2, 0, 1]
    """
    index = {label: i for i, label in enumerate(LABELS)}
    try:
        return np.array([index[str(x)] for x in labels], dtype=np.int64)
    except KeyError as exc:
        raise FactualityError(f"unknown label {exc.args[0]!r}; expected one of {LABELS}") from exc


@dataclass(frozen=True)
class JudgeConfig:
    """Everything that defines a judge and its training.

    Examples
    --------
    >>> JudgeConfig.from_dict(JudgeConfig(input_dim=8).to_dict()).input_dim
    8
    """

    input_dim: int
    hidden_dim: int = 256
    n_classes: int = len(LABELS)
    lr: float = 1e-3
    weight_decay: float = 1e-4
    batch_size: int = 32
    max_epochs: int = 200
    patience: int = 15
    seed: int = 0
    layer: int | None = None
    pooling: str = "last"
    model: str = ""
    split_seed: int = 0
    split_fractions: tuple[float, float, float] = (0.6, 0.2, 0.2)
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("input_dim", "hidden_dim", "n_classes", "batch_size", "max_epochs"):
            if getattr(self, name) < 1:
                raise FactualityError(f"{name} must be >= 1; got {getattr(self, name)}")
        if self.lr <= 0 or self.weight_decay < 0 or self.patience < 1:
            raise FactualityError("lr must be > 0, weight_decay >= 0, patience >= 1")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        data = asdict(self)
        data["split_fractions"] = list(self.split_fractions)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JudgeConfig:
        """Read back :meth:`to_dict` (unknown keys are refused)."""
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise InputFormatError(f"unknown judge config key(s): {', '.join(unknown)}")
        values = dict(data)
        if "split_fractions" in values:
            values["split_fractions"] = tuple(values["split_fractions"])
        return cls(**values)


def _torch() -> Any:
    return torch


@contextmanager
def _one_thread() -> Iterator[None]:
    """Run torch on one thread, then restore the caller's setting.

    The judge is tiny: on more threads each small matrix product pays more in synchronisation
    than it gains (20 times slower on two busy cores, measured), so it always trains and
    predicts on one.
    """
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


class JudgeNet(torch.nn.Module):
    """The judge network: LayerNorm -> Linear -> ReLU -> Linear.

    Examples
    --------
    >>> net = JudgeNet(8, 16, 3)
    >>> [type(m).__name__ for m in net.layers]
    ['LayerNorm', 'Linear', 'ReLU', 'Linear']
    >>> tuple(net(torch.zeros(2, 8)).shape)
    (2, 3)
    """

    def __init__(self, input_dim: int, hidden_dim: int, n_classes: int) -> None:
        super().__init__()
        self.layers = torch.nn.Sequential(
            torch.nn.LayerNorm(input_dim),
            torch.nn.Linear(input_dim, hidden_dim),
            torch.nn.ReLU(),
            torch.nn.Linear(hidden_dim, n_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Class logits, shape (n, n_classes)."""
        out: torch.Tensor = self.layers(x)
        return out


@dataclass(frozen=True)
class TrainHistory:
    """Per-epoch losses and validation accuracy, and the epoch whose weights were kept."""

    train_loss: list[float]
    val_loss: list[float]
    val_accuracy: list[float]
    best_epoch: int

    @property
    def best_val_accuracy(self) -> float:
        """Validation accuracy of the kept weights."""
        return self.val_accuracy[self.best_epoch] if self.val_accuracy else float("nan")


class Judge:
    """A trained (or trainable) judge.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(120, 4)).astype("float32"); y = (x[:, 0] > 0).astype(int)
    >>> judge = Judge(JudgeConfig(input_dim=4, hidden_dim=16))
    >>> _ = judge.fit(x[:80], y[:80], x[80:100], y[80:100])
    >>> float(np.mean(judge.predict(x[100:]) == y[100:])) >= 0.8
    True
    """

    def __init__(self, config: JudgeConfig) -> None:
        torch = _torch()
        self.config = config
        torch.manual_seed(config.seed)
        self.net = JudgeNet(config.input_dim, config.hidden_dim, config.n_classes)
        self.history: TrainHistory | None = None

    def _check(self, x: np.ndarray) -> np.ndarray:
        x = np.array(x, dtype=np.float32)  # a writable copy: torch.from_numpy shares it
        if x.ndim != 2 or x.shape[1] != self.config.input_dim:
            raise FactualityError(
                f"judge input must have shape (n, {self.config.input_dim}); got {x.shape}"
            )
        return x

    def fit(
        self, x_train: np.ndarray, y_train: np.ndarray, x_val: np.ndarray, y_val: np.ndarray
    ) -> TrainHistory:
        """Train with early stopping on the validation loss; keep the best epoch's weights.

        Raises
        ------
        FactualityError
            If a split is empty or shapes disagree.
        """
        with _one_thread():
            return self._fit(x_train, y_train, x_val, y_val)

    def _fit(
        self, x_train: np.ndarray, y_train: np.ndarray, x_val: np.ndarray, y_val: np.ndarray
    ) -> TrainHistory:
        torch = _torch()
        x_train, x_val = self._check(x_train), self._check(x_val)
        if len(x_train) == 0 or len(x_val) == 0:
            raise FactualityError(
                f"the judge needs training and validation statements; got {len(x_train)} "
                f"and {len(x_val)}"
            )
        if len(y_train) != len(x_train) or len(y_val) != len(x_val):
            raise FactualityError("features and labels differ in length")
        cfg = self.config
        torch.manual_seed(cfg.seed)
        generator = torch.Generator().manual_seed(cfg.seed)
        xt, yt = torch.from_numpy(x_train), torch.as_tensor(y_train, dtype=torch.long)
        xv, yv = torch.from_numpy(x_val), torch.as_tensor(y_val, dtype=torch.long)
        optimizer = torch.optim.Adam(
            self.net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay
        )
        loss_fn = torch.nn.CrossEntropyLoss()
        train_losses: list[float] = []
        val_losses: list[float] = []
        val_accs: list[float] = []
        best = (float("inf"), -1)
        best_state = {k: v.clone() for k, v in self.net.state_dict().items()}
        for epoch in range(cfg.max_epochs):
            self.net.train()
            order = torch.randperm(len(xt), generator=generator)
            total = 0.0
            for start in range(0, len(xt), cfg.batch_size):
                idx = order[start : start + cfg.batch_size]
                optimizer.zero_grad()
                loss = loss_fn(self.net(xt[idx]), yt[idx])
                loss.backward()
                optimizer.step()
                total += float(loss.detach()) * len(idx)
            train_losses.append(total / len(xt))
            self.net.eval()
            with torch.no_grad():
                logits = self.net(xv)
                val_loss = float(loss_fn(logits, yv))
                val_accs.append(float((logits.argmax(-1) == yv).float().mean()))
            val_losses.append(val_loss)
            if val_loss < best[0] - 1e-6:
                best = (val_loss, epoch)
                best_state = {k: v.clone() for k, v in self.net.state_dict().items()}
            elif epoch - best[1] >= cfg.patience:
                break
        self.net.load_state_dict(best_state)
        self.net.eval()
        self.history = TrainHistory(train_losses, val_losses, val_accs, max(best[1], 0))
        return self.history

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        """Class probabilities, shape (n, n_classes)."""
        torch = _torch()
        x = self._check(x)
        self.net.eval()
        with _one_thread(), torch.no_grad():
            probs = torch.softmax(self.net(torch.from_numpy(x)), dim=-1)
        return np.asarray(probs.numpy(), dtype=np.float64)

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Predicted class indices (see :func:`encode_labels`)."""
        return self.predict_proba(x).argmax(axis=1) if len(x) else np.zeros(0, dtype=np.int64)

    def save(self, folder: str | Path) -> Path:
        """Write the state dict and the JSON config (with the training history) to ``folder``."""
        torch = _torch()
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        torch.save(self.net.state_dict(), folder / _WEIGHTS_FILE)
        data = {"config": self.config.to_dict(), "labels": list(LABELS)}
        if self.history is not None:
            data["history"] = asdict(self.history)
        (folder / _CONFIG_FILE).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        return folder

    @classmethod
    def load(cls, folder: str | Path) -> Judge:
        """Read back :meth:`save`.

        Raises
        ------
        InputFormatError
            If the folder lacks the files or they do not fit together.
        """
        torch = _torch()
        folder = Path(folder)
        try:
            data = json.loads((folder / _CONFIG_FILE).read_text(encoding="utf-8"))
            state = torch.load(folder / _WEIGHTS_FILE, weights_only=True)
        except (OSError, ValueError) as exc:
            raise InputFormatError(
                f"{folder} is not a saved judge ({_CONFIG_FILE} and {_WEIGHTS_FILE}): {exc}"
            ) from exc
        judge = cls(JudgeConfig.from_dict(data["config"]))
        try:
            judge.net.load_state_dict(state)
        except RuntimeError as exc:
            raise InputFormatError(f"{folder}: weights do not fit the config: {exc}") from exc
        if "history" in data:
            judge.history = TrainHistory(**data["history"])
        judge.net.eval()
        return judge
