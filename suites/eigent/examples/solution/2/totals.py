import csv
import json
from collections import defaultdict

sums = defaultdict(int)
with open("sales.json", encoding="utf-8") as fh:
    for sale in json.load(fh):
        sums[sale["region"]] += sale["amount"]
with open("totals.csv", "w", newline="", encoding="utf-8") as fh:
    writer = csv.writer(fh)
    writer.writerow(["region", "total"])
    for region in sorted(sums):
        writer.writerow([region, sums[region]])
