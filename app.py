"""S3KG Workbench: `streamlit run app.py`. The pages, Overview first, in the sidebar's list."""

from __future__ import annotations

import streamlit as st

from dashboard import navigation

st.navigation(navigation.pages()).run()
