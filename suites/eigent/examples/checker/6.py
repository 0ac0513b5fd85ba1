"""Checker 6: wordfreq.py gives the right top three on three sample texts."""

import subprocess
import sys
import tempfile
from pathlib import Path

SAMPLES = [
    ("the cat and the hat and the bat", "the 3\nand 2\nbat 1"),
    ("b a c b a c d", "a 2\nb 2\nc 2"),
    ("Hello, hello! HELLO? world-world; it's 42 o'clock", "hello 3\nworld 2\nclock 1"),
]


def run(script, text):
    with tempfile.TemporaryDirectory() as tmp:
        sample = Path(tmp) / "sample.txt"
        sample.write_text(text, encoding="utf-8")
        done = subprocess.run(
            [sys.executable, str(script), str(sample)], capture_output=True, text=True, timeout=10
        )
    return "\n".join(line.strip() for line in done.stdout.strip().splitlines())


def check(working_directory):
    script = Path(working_directory) / "wordfreq.py"
    if not script.is_file():
        print("FAIL: wordfreq.py not found")
        return False
    for k, (text, want) in enumerate(SAMPLES, 1):
        got = run(script, text)
        if got != want:
            print(f"FAIL: sample {k}: printed {got!r}, expected {want!r}")
            return False
    print("PASS")
    return True
