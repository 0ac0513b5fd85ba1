"""The run's lifecycle: settings and stash keys (state, settings), the run folder and its lock
(folder), manifest, journal, resume and shards (runlog), Ctrl-C (interrupt), the model gateway
(gateway), and one item from start-up to record (items, fixtures, recorder)."""
