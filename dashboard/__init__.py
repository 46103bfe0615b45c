"""Streamlit glue for the S3KG Workbench dashboard (may import streamlit)."""
