"""Grader 1 (3 milestones): debug off; port 8080; the file was edited and kept the rest."""

import configparser
from pathlib import Path

KEEP = {
    ("server", "name"): "billing",
    ("server", "workers"): "4",
    ("logging", "level"): "info",
    ("logging", "file"): "billing.log",
}


def grade(working_directory):
    path = Path(working_directory) / "settings.ini"
    parser = configparser.ConfigParser()
    try:
        parser.read(path, encoding="utf-8")
    except configparser.Error:
        parser = configparser.ConfigParser()
    completed, total = 0, 3
    debug = parser.get("server", "debug", fallback=None)
    port = parser.get("server", "port", fallback=None)
    if debug == "false":
        completed += 1
    else:
        print(f"MISS [1]: debug is {debug!r}")
    if port == "8080":
        completed += 1
    else:
        print(f"MISS [2]: port is {port!r}")
    kept = all(parser.get(s, k, fallback=None) == v for (s, k), v in KEEP.items())
    if kept and (debug, port) != ("true", "8000"):
        completed += 1
    else:
        print("MISS [3]: the file was not edited, or other settings changed")
    print(f"{completed}/{total}")
    return completed, total
