"""The export (``s3kg export``): every stored answer as one row of CSV, Parquet or JSON.

- :mod:`~s3kg_core.export.schema`: the export's columns, their dtypes and groups, and the reader
  that gives them back alike from every format;
- :mod:`~s3kg_core.export.writer`: the rows read from the store in blocks and written whole or
  not at all.
"""
