"""``google_maps.*`` ops (see the package docstring)."""
