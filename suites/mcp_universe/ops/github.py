"""``github.*`` ops (see the package docstring)."""
