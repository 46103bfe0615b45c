"""The run report (``s3kg report``): one self-contained HTML file about a run of a store.

- :mod:`~s3kg_core.report.build`: what the report says, gathered from the store
  (:class:`~s3kg_core.report.build.RunReport`);
- :mod:`~s3kg_core.report.cases`: the worst cases, explained triple by triple;
- :mod:`~s3kg_core.report.html`: the report written as one HTML page;
- :mod:`~s3kg_core.report.svg`: its charts, drawn as inline SVG.

The comparisons and the gate it shows are :mod:`s3kg_core.analysis`'.
"""
