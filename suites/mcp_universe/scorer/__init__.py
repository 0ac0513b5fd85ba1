"""MCP-Universe's scoring: :mod:`.evaluator` is the evaluator language (the ``->`` pipeline, the
built-in ops and the op registry); :mod:`.ops` holds the domain ops, which register themselves
there when imported (the evaluator never imports them). Nothing is imported here."""
