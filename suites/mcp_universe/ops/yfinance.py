"""``yfinance.*`` ops (see the package docstring)."""
