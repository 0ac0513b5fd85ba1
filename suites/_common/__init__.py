"""Code shared by several suites; not itself a suite (the plugin and the conformance tests
skip folders whose name starts with ``_``)."""
