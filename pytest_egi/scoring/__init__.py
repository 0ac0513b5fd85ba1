"""The EGI definition and its arithmetic: ``routing.yaml`` (config), the EGI formula (egi), from
records to the session's result (aggregate), and whether that result is a score (verdict)."""
