"""Collection: suite tests parametrized with their tasks, the data checked (parametrize, checks),
and the items placed on xdist workers (xdist, scheduling)."""
