#!/usr/bin/env python3
"""Prints the commands of a Tutti trace (TUTTI_TRACE) that ran in the last LAST milliseconds
of the job, per device track, in time order: name, start and duration (ms), for finding where
a split launch waits. Usage: trace-summary.py TRACE [LAST_MS]"""
import json
import sys

d = json.load(open(sys.argv[1]))
last = float(sys.argv[2]) if len(sys.argv) > 2 else 50.0
ev = d["traceEvents"]
names = {(e["pid"], e.get("tid")): e["args"]["name"] for e in ev
         if e.get("ph") == "M" and e["name"] == "thread_name"}
xs = [e for e in ev if e.get("ph") == "X"]
end = max(e["ts"] + e.get("dur", 0) for e in xs)
for e in sorted(xs, key=lambda e: e["ts"]):
    if e["ts"] < end - last * 1000:
        continue
    track = names.get((e["pid"], e.get("tid")), "?")
    print(f"{(e['ts'] - end) / 1000:9.3f} ms  +{e.get('dur', 0) / 1000:8.3f}  rank {e['pid']} "
          f"{track[:28]:28s} {e['name']}")
