"""Work done once and kept: per session, across xdist workers (shared); across runs, on disk
(taskcache)."""
