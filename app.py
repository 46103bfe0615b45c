"""S3KG Workbench dashboard entry point (overview of the runs in the database).

The full dashboard arrives with the dashboard issue; until then this page states what the
library can do and how to score pairs from the command line.
"""

import streamlit as st

from s3kg_core import __version__

st.set_page_config(page_title="S3KG Workbench", layout="wide")
st.title("S3KG Workbench")
st.caption(f"s3kg_core {__version__}")
st.markdown(
    "Knowledge-graph evaluation of LLM answers: **S3KG** similarity, **CUS** and **TAU**.\n\n"
    "The scoring library is ready; the run browser, sample explorer and failure analysis pages "
    "come with the DuckDB store. Score pairs of triples today with:\n\n"
    "```\ns3kg pairs score INPUT.csv --output OUT.csv\n```"
)
