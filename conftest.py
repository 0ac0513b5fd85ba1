"""Repo-root conftest: its presence puts the checkout on sys.path, so ``suites.<name>``
imports work on the xdist controller too. Nothing else belongs here."""
