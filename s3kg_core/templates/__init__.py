"""Package data: the templates of the files the project writes (read with importlib.resources)."""
