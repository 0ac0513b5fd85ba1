"""A tiny shop package."""
