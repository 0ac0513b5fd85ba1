import re
import sys
from collections import Counter

with open(sys.argv[1], encoding="utf-8") as fh:
    words = re.findall(r"[a-z]+", fh.read().lower())
for word, count in sorted(Counter(words).items(), key=lambda wc: (-wc[1], wc[0]))[:3]:
    print(f"{word} {count}")
