"""Is an ONNX int8 trained checker faster at the same accuracy? Torch against ONNX fp32 / int8.

The trained checker's encoder (a Hugging Face folder from ``s3kg grapheval train-checker``) is
exported to ONNX (the TorchScript exporter, opset 17, ``last_hidden_state`` out, as
:mod:`s3kg_core.encoders.export` does for the sentence encoders) into a temporary folder, and
quantised to int8 with onnxruntime's dynamic quantisation (weights int8, activations quantised
per batch). The alignment head reads the hidden states of each backend (the same features and
weights, :func:`s3kg_core.grapheval.checkers.alignment.load_alignment`). Printed per backend: the
seconds for the pairs (one thread, interleaved: each batch goes through every backend in turn),
pairs/s, and the synthetic held-out metrics
(:func:`s3kg_core.checker_training.training.evaluate_pairs`) plus the largest difference in
P(supported) against torch.

    OMP_NUM_THREADS=1 nice -n 15 .venv/bin/python -m bench.speed.bench_checker_onnx
        --model ~/.cache/s3kg/checkers/trained-minilm-order --pairs-file PAIRS.jsonl [--n 600]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench._common import md_table
from s3kg_core.checker_training.synthetic import read_pairs
from s3kg_core.checker_training.training import evaluate_pairs
from s3kg_core.encoders.export import export_hidden_states, quantize_int8
from s3kg_core.evaluation.splits import heldout_document
from s3kg_core.grapheval.checkers.alignment import alignment_features, load_alignment
from s3kg_core.grapheval.checkers.model_format import tokenize_pairs


def _export(encoder: Any, tokenizer: Any, out: Path) -> Path:
    example = tokenizer(
        ["a longer window sentence here", "short"],
        ["a statement", "s"],
        padding=True,
        return_tensors="pt",
    )
    path = out / "model.onnx"
    export_hidden_states(encoder, example, path)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--pairs-file", type=Path, required=True)
    ap.add_argument("--n", type=int, default=600, help="held-out pairs sampled (seeded)")
    ap.add_argument("--max-length", type=int, default=160)
    ap.add_argument("--batch", type=int, default=32)
    args = ap.parse_args()
    import onnxruntime as ort
    import torch

    torch.set_num_threads(1)
    held = [p for p in read_pairs(args.pairs_file) if heldout_document(p.doc_id, 10)]
    pairs = random.Random(0).sample(held, min(args.n, len(held)))
    tokenizer, encoder, head = load_alignment(args.model)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        fp32 = _export(encoder, tokenizer, Path(tmp))
        int8 = Path(tmp) / "model.int8.onnx"
        quantize_int8(fp32, int8)
        print(
            f"export + quantisation {time.perf_counter() - t0:.1f} s; "
            f"fp32 {fp32.stat().st_size / 1e6:.1f} MB, int8 {int8.stat().st_size / 1e6:.1f} MB"
        )
        sessions = {
            "onnx fp32": ort.InferenceSession(str(fp32), opts, providers=["CPUExecutionProvider"]),
            "onnx int8": ort.InferenceSession(str(int8), opts, providers=["CPUExecutionProvider"]),
        }
        seconds = {"torch": 0.0, **dict.fromkeys(sessions, 0.0)}
        probs: dict[str, list[float]] = {k: [] for k in seconds}
        for lo in range(0, len(pairs), args.batch):
            chunk = pairs[lo : lo + args.batch]
            enc = tokenize_pairs(
                tokenizer, [p.window for p in chunk], [p.statement for p in chunk], args.max_length
            )
            for name in seconds:
                t = time.perf_counter()
                with torch.inference_mode():
                    if name == "torch":
                        hidden = encoder(**enc).last_hidden_state
                    else:
                        feed = {
                            k: enc[k].numpy()
                            for k in ("input_ids", "attention_mask", "token_type_ids")
                        }
                        hidden = torch.from_numpy(sessions[name].run(None, feed)[0])
                    x = alignment_features(hidden, enc["token_type_ids"], enc["attention_mask"])
                    p = torch.softmax(head(x), -1)[:, 1].tolist()
                seconds[name] += time.perf_counter() - t
                probs[name].extend(p)
    base = np.asarray(probs["torch"])
    head = ["backend", "seconds", "pairs/s", "balanced acc.", "AUROC", "max |dP| vs torch"]
    body = []
    for name, s in seconds.items():
        m = evaluate_pairs(probs[name], pairs)
        by = m["accuracy_by_kind"]
        diff = float(np.abs(np.asarray(probs[name]) - base).max())
        body.append(
            [
                name,
                f"{s:.1f}",
                f"{len(pairs) / s:.1f}",
                str(m["balanced_accuracy"]),
                str(m["auroc"]),
                f"{diff:.4f}",
                str(by.get("swap")),
                str(by.get("same_type")),
            ]
        )
    print(md_table([*head, "swap", "same_type"], body))


if __name__ == "__main__":
    main()
