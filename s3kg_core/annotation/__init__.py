"""Human annotation of TAU's triple alignments: the verdict log, tasks, agreement, calibration.

- :mod:`~s3kg_core.annotation.names`: annotator names (normalised, hostile characters refused);
- :mod:`~s3kg_core.annotation.log`: decisions saved at once, undo, adjudication, current verdicts,
  disagreements and final labels;
- :mod:`~s3kg_core.annotation.assign`: which items each annotator sees (balanced, seeded);
- :mod:`~s3kg_core.annotation.tasks`: tasks with their units (TAU's pairs), queues, progress;
- :mod:`~s3kg_core.annotation.agreement`: chance-corrected agreement between annotators
  (Cohen's kappa, Krippendorff's alpha) with bootstrap intervals;
- :mod:`~s3kg_core.annotation.quality`: TAU's precision, recall and F1 against the final labels;
- :mod:`~s3kg_core.annotation.calibrate`: TAU's threshold fitted to the human labels;
- :mod:`~s3kg_core.annotation.exchange`: export and import of the log (CSV, Parquet, JSONL).
"""
