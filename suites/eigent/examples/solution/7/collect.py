import csv
import re
from pathlib import Path

LINE = re.compile(r"^- \[ \] ACTION: (.+?) — owner: (.+?), due: (\d{4}-\d{2}-\d{2})\s*$")
rows = []
for note in sorted(Path("notes").glob("*.md")):
    for line in note.read_text(encoding="utf-8").splitlines():
        m = LINE.match(line)
        if m:
            rows.append([m.group(1), m.group(2), m.group(3)])
rows.sort(key=lambda r: (r[2], r[0]))
with open("actions.csv", "w", newline="", encoding="utf-8") as fh:
    writer = csv.writer(fh)
    writer.writerow(["item", "owner", "due"])
    writer.writerows(rows)
