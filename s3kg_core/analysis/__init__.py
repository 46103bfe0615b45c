"""Analysis of stored runs: what the scores say once the pipeline has written them.

- :mod:`~s3kg_core.analysis.cus_table`: the CUS table, each run's means with what they cover
  (``s3kg cus``);
- :mod:`~s3kg_core.analysis.compare`: two runs compared on their shared questions, with paired
  bootstrap intervals and the one verdict text of two runs;
- :mod:`~s3kg_core.analysis.leaderboard`: runs ranked within their dataset, with intervals,
  each run's verdict against its dataset's #1 and rank changes against the reference alpha;
- :mod:`~s3kg_core.analysis.question_diff`: one question of two runs, triple by triple;
- :mod:`~s3kg_core.analysis.check`: the CI gate (``s3kg check``), a candidate run against a
  baseline;
- :mod:`~s3kg_core.analysis.check_report`: the gate's result as a Markdown summary or JUnit XML.

Nothing here writes to the store; the pipeline that fills it is :mod:`s3kg_core.stages`.
"""
