"""Grader 6 (4 milestones): the file; then one per sample text (plain, ties, case and
punctuation)."""

import importlib.util
from pathlib import Path

_checker = Path(__file__).resolve().parent.parent / "checker" / "6.py"
_spec = importlib.util.spec_from_file_location("checker6", _checker)
checker6 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(checker6)


def grade(working_directory):
    script = Path(working_directory) / "wordfreq.py"
    completed, total = 0, 4
    if not script.is_file():
        print("MISS [1]: wordfreq.py not found")
        print(f"{completed}/{total}")
        return completed, total
    completed += 1
    for k, (text, want) in enumerate(checker6.SAMPLES, 2):
        if checker6.run(script, text) == want:
            completed += 1
        else:
            print(f"MISS [{k}]: wrong output on sample {k - 1}")
    print(f"{completed}/{total}")
    return completed, total
