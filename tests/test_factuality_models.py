"""Tests of s3kg_core.factuality.models: local model folders, loading, and the prompt runner.

A tiny random 2-layer Llama (tests/factuality_helpers.py) stands in for the target LM; the
hidden-state extraction built on the runner is tested in tests/test_factuality_hidden.py.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from s3kg_core.errors import FactualityError
from s3kg_core.factuality.models import (
    PACKAGED_MODELS,
    PromptRunner,
    RunOutput,
    load_causal_lm,
    resolve_model_dir,
)
from s3kg_core.factuality.prompts import label_prompt_text

TEXTS = ["Apple controls Beats.", "Google produces Pixel and Xbox in China.", "Samsung"]


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread() -> Iterator[None]:
    """One torch thread for this module's tiny model (several are slower on a busy CPU)."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture(scope="module")
def runner_for(tiny_model: Path):
    """Runners over the tiny model, one per setting, loaded once for this module."""
    made: dict[tuple[str, str, int], PromptRunner] = {}

    def get(input_format: str = "prompt", side: str = "right", max_length: int = 256):
        key = (input_format, side, max_length)
        if key not in made:
            made[key] = PromptRunner(
                tiny_model, input_format=input_format, padding_side=side, max_length=max_length
            )
        return made[key]

    return get


def _without_pad(tiny_model: Path, folder: Path, *, drop_eos: bool = False) -> Path:
    """A copy of the tiny model whose tokenizer has no pad token (and no eos if asked)."""
    shutil.copytree(tiny_model, folder)
    for name in ("tokenizer_config.json", "special_tokens_map.json"):
        path = folder / name
        if path.exists():
            config = json.loads(path.read_text())
            config.pop("pad_token", None)
            if drop_eos:
                config.pop("eos_token", None)
            path.write_text(json.dumps(config))
    return folder


def _full_forward_logprobs(runner: PromptRunner, text: str):
    import torch

    ids = runner.tokenizer(text, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logits = runner.model(input_ids=torch.tensor([ids])).logits[0, -1]
    return torch.log_softmax(logits.float(), dim=-1)


# -- resolve_model_dir ----------------------------------------------------------------------------


def test_packaged_names():
    assert PACKAGED_MODELS == ("smollm2",)


def test_a_folder_with_a_config_resolves_to_itself(tiny_model):
    assert resolve_model_dir(tiny_model) == tiny_model
    assert resolve_model_dir(str(tiny_model)) == tiny_model


@pytest.mark.parametrize("make", [lambda p: p / "missing", lambda p: p])
def test_a_folder_without_config_is_refused_naming_the_packaged_models(tmp_path, make):
    folder = make(tmp_path)
    with pytest.raises(FactualityError, match=r"no config\.json") as info:
        resolve_model_dir(folder)
    assert str(folder) in str(info.value) and "smollm2" in str(info.value)


# -- load_causal_lm -------------------------------------------------------------------------------


@pytest.mark.parametrize("side", ["left", "right"])
def test_load_gives_an_eval_float32_model_and_a_padded_tokenizer(tiny_model, side):
    import torch

    model, tokenizer = load_causal_lm(tiny_model, padding_side=side)
    assert model.training is False
    assert next(model.parameters()).dtype == torch.float32
    assert tokenizer.padding_side == side
    assert tokenizer.pad_token == "<pad>"  # its own pad token is kept


def test_a_tokenizer_without_pad_pads_with_eos(tiny_model, tmp_path):
    folder = _without_pad(tiny_model, tmp_path / "nopad")
    _, tokenizer = load_causal_lm(folder)
    assert tokenizer.pad_token == tokenizer.eos_token == "<eos>"
    assert tokenizer.pad_token_id == tokenizer.eos_token_id


def test_a_tokenizer_without_pad_or_eos_is_refused(tiny_model, tmp_path):
    folder = _without_pad(tiny_model, tmp_path / "bare", drop_eos=True)
    with pytest.raises(FactualityError, match="neither a pad nor an eos"):
        load_causal_lm(folder)


def test_a_folder_that_is_not_a_causal_lm_is_a_factuality_error(tmp_path):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "no-such-architecture"}')
    with pytest.raises(FactualityError, match="cannot load a causal LM") as info:
        load_causal_lm(folder)
    assert str(folder) in str(info.value)


# -- PromptRunner ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"input_format": "chat"}, "input_format"),
        ({"padding_side": "middle"}, "padding_side"),
        ({"max_length": 0}, "max_length"),
    ],
)
def test_bad_settings_are_refused_before_loading(tmp_path, kwargs, message):
    with pytest.raises(FactualityError, match=message):
        PromptRunner(tmp_path / "not-loaded", **kwargs)  # the folder is never read


def test_the_cached_prefix_and_the_suffix_make_the_whole_prompt(tiny_model, runner_for):
    runner = runner_for()
    assert runner.n_layers == 3 and runner.hidden_size == 32
    assert runner.folder == tiny_model
    for text in TEXTS:
        full = label_prompt_text(runner.tokenizer, text)
        suffix = runner.text_suffix(text)
        assert full.endswith(suffix) and text in suffix
        assert full[: -len(suffix)].rstrip(" ") == full[: -len(suffix)]
        assert "Statement:" not in suffix  # the statement's label is in the prefix


def test_statement_format_sends_the_bare_statement(runner_for):
    runner = runner_for("statement")
    assert runner.text_suffix(TEXTS[0]) == TEXTS[0]


@pytest.mark.parametrize("input_format", ["prompt", "statement"])
def test_run_shapes_and_probabilities(runner_for, input_format):
    import torch

    runner = runner_for(input_format)
    out = runner.run(TEXTS)
    assert isinstance(out, RunOutput)
    n, width = out.mask.shape
    assert n == 3
    vocab = runner.model.config.vocab_size
    assert out.next_logprobs.shape == (3, vocab)
    torch.testing.assert_close(out.next_logprobs.exp().sum(-1), torch.ones(3))
    assert len(out.hidden_states) == runner.n_layers
    assert all(h.shape == (3, width, 32) for h in out.hidden_states)
    lengths = [
        len(runner.tokenizer(runner.text_suffix(t), add_special_tokens=False)["input_ids"])
        for t in TEXTS
    ]
    assert out.mask.sum(-1).tolist() == lengths
    assert out.last.tolist() == [length - 1 for length in lengths]  # right padding
    assert width == max(lengths)


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("input_format", ["prompt", "statement"])
def test_next_token_logprobs_match_a_full_forward_alone_and_in_a_batch(
    runner_for, side, input_format
):
    import torch

    runner = runner_for(input_format, side)
    batched = runner.run(TEXTS)
    for i, text in enumerate(TEXTS):
        full = text if input_format == "statement" else label_prompt_text(runner.tokenizer, text)
        expected = _full_forward_logprobs(runner, full)
        torch.testing.assert_close(batched.next_logprobs[i], expected, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(
            runner.run([text]).next_logprobs[0], expected, atol=1e-5, rtol=1e-5
        )


def test_left_padding_puts_every_last_token_in_the_last_column(runner_for):
    out = runner_for("prompt", "left").run(TEXTS)
    assert set(out.last.tolist()) == {out.mask.shape[1] - 1}
    assert out.mask[:, -1].tolist() == [1, 1, 1]


def test_long_statements_are_cut_from_the_left(runner_for):
    import torch

    runner = runner_for("prompt", "right", 2)
    out = runner.run([TEXTS[1]])
    assert out.mask.shape == (1, 2)
    suffix_ids = runner.tokenizer(runner.text_suffix(TEXTS[1]), add_special_tokens=False)[
        "input_ids"
    ]
    prefix = label_prompt_text(runner.tokenizer, TEXTS[1])[: -len(runner.text_suffix(TEXTS[1]))]
    prefix_ids = runner.tokenizer(prefix, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([[*prefix_ids, *suffix_ids[-2:]]])
    with torch.no_grad():
        expected = torch.log_softmax(runner.model(input_ids=ids).logits[0, -1].float(), dim=-1)
    torch.testing.assert_close(out.next_logprobs[0], expected, atol=1e-5, rtol=1e-5)


def test_the_prefix_cache_is_reused_not_consumed(runner_for):
    import torch

    runner = runner_for()
    first = runner.run(TEXTS[:1]).next_logprobs
    runner.run(TEXTS)
    torch.testing.assert_close(runner.run(TEXTS[:1]).next_logprobs, first)


def test_nothing_to_run_is_refused(runner_for):
    runner = runner_for("statement")
    with pytest.raises(FactualityError, match="no statements"):
        runner.run([])
    with pytest.raises(FactualityError, match="no tokens"):
        runner.run(["   "])
