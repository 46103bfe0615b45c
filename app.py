"""S3KG Workbench: `streamlit run app.py`. The pages, Overview first, in the sidebar's list."""

from __future__ import annotations

import streamlit as st

from dashboard import navigation, widgets
from dashboard.data import explain
from s3kg_core.config import set_process_env

set_process_env()  # before any page scores: POT without the torch it would import

with widgets.errors_as_lines():  # a locked, read-only or full database: one line, not a traceback
    unknown = navigation.take_unknown_path()  # an unknown address: the Overview, with a line
    current = st.navigation(navigation.pages())
    navigation.say_unknown_path(unknown)
    current.run()
explain.warm_up()  # after the first page is drawn: the lemmatiser loads while it is read
