"""Checker 1: settings.ini has debug off, port 8080, and the other settings unchanged."""

import configparser
from pathlib import Path

KEEP = {
    ("server", "name"): "billing",
    ("server", "workers"): "4",
    ("logging", "level"): "info",
    ("logging", "file"): "billing.log",
}


def check(working_directory):
    path = Path(working_directory) / "settings.ini"
    parser = configparser.ConfigParser()
    try:
        if not parser.read(path, encoding="utf-8"):
            print("FAIL: settings.ini not found")
            return False
    except configparser.Error as exc:
        print(f"FAIL: settings.ini does not parse: {exc}")
        return False
    got = {k: parser.get(*k, fallback=None) for k in [("server", "debug"), ("server", "port"), *KEEP]}
    if got[("server", "debug")] != "false" or got[("server", "port")] != "8080":
        print(f"FAIL: debug={got[('server', 'debug')]!r}, port={got[('server', 'port')]!r}")
        return False
    changed = [f"{s}.{k}" for (s, k), v in KEEP.items() if got[(s, k)] != v]
    if changed:
        print(f"FAIL: settings changed that should not be: {', '.join(changed)}")
        return False
    print("PASS")
    return True
