"""The environment CRMArena's agent acts in: a local Salesforce-like org and its query engine.

- :mod:`.org`: the org (16 sObject tables in SQLite): generated from a seed or read from a user's
  SQLite export, queried with ``Org.execute``;
- :mod:`.schema`: the 16 objects, their fields, id prefixes and relationships;
- :mod:`.soql_lexer`, :mod:`.soql_parser`, :mod:`.soql_schema`, :mod:`.soql`: the SOQL subset
  (tokens, parse tree, name resolution, SQL emission and result shaping);
- :mod:`.sosl`: the SOSL subset over SQLite FTS5;
- :mod:`.sftime`: Salesforce date/datetime wire format, date literals and CRMArena's periods;
- :mod:`.errors`: the Salesforce-style error a bad query raises.

Nothing is imported here, so a module that needs only the schema or the date helpers (the
scorer, the task loader) does not load the query engine.
"""
