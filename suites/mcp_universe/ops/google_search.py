"""``google_search.*`` ops (see the package docstring)."""
