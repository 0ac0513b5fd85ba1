"""Conformance tests: the contract every suite under ``suites/`` follows (DESIGN §9.2)."""
