import json
import re
from pathlib import Path

for sheet in sorted(Path("docs").glob("*.md")):
    text = sheet.read_text(encoding="utf-8")
    if "offline sync" in text.lower():
        product = re.search(r"^Product: (.+)$", text, re.M).group(1).strip()
        year = int(re.search(r"^First released: (\d{4})$", text, re.M).group(1))
        Path("answer.json").write_text(
            json.dumps({"product": product, "year": year}) + "\n", encoding="utf-8"
        )
        break
