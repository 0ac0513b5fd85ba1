"""Run outputs: terminal summary, egi.json, records.jsonl, results.csv, report.html."""
