"""The DuckDB store: schema and migrations, the Store, and every SQL query."""
