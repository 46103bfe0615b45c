"""Training the project's own triple checker, apart from the checker that runs it.

One module per step, run by ``s3kg grapheval train-checker`` and ``export-checker``:

- :mod:`.synthetic`: factual-consistency pairs drawn from non-test texts (TrueTeacher-style
  corruptions of the offline extractor's triples);
- :mod:`.paraphrase`: reworded positives and word-scrambled negatives from paraphrase corpora;
- :mod:`.training`: the fine-tuning loop (transformers' schedule, accelerate's checkpoints),
  resumable, writing the model folder and its manifest;
- :mod:`.export`: the encoder's int8 ONNX export, measured against torch.

The model folder they write and the checker reads is
:mod:`s3kg_core.grapheval.checkers.model_format`; the alignment head both run is
:mod:`s3kg_core.grapheval.checkers.alignment`; the held-out documents are
:func:`s3kg_core.evaluation.splits.heldout_document`. Nothing is imported here.
"""
