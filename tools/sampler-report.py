#!/usr/bin/env python3
"""Names the frames of a tools/sampler.c file (samples.PID) with addr2line and prints the
most frequent stacks, innermost frame first, each with its share of the samples.

Usage: sampler-report.py SAMPLES [--lib PATH]... [--only NAME] [--top N] [--depth N]
  --lib    a library or program whose frames to name (its file name must match the module
           the sampler recorded, e.g. .libs/libtutti.so); frames of others keep module+offset
  --only   count only samples with a frame named NAME (a function of the loop to study)
  --top    how many stacks (default 20); --depth: frames per stack (default 12)"""
import argparse
import collections
import os
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("samples")
    ap.add_argument("--lib", action="append", default=[])
    ap.add_argument("--only")
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--depth", type=int, default=12)
    a = ap.parse_args()
    lines = [l.split() for l in open(a.samples) if l.strip()]
    libs = {os.path.basename(p): p for p in a.lib}
    wanted = collections.defaultdict(set)
    for l in lines:
        for fr in l:
            mod, _, off = fr.partition("@")
            if mod in libs:
                wanted[mod].add(off)
    names = {}
    for mod, offs in wanted.items():
        offs = sorted(offs)
        out = subprocess.run(["addr2line", "-f", "-e", libs[mod]] + ["0x" + o for o in offs],
                             capture_output=True, text=True, check=False).stdout.split("\n")
        for i, o in enumerate(offs):
            fn = out[2 * i] if 2 * i < len(out) else "??"
            names[(mod, o)] = fn if fn != "??" else mod + "+" + o
    stacks = collections.Counter()
    for l in lines:
        named = []
        for fr in l:
            mod, _, off = fr.partition("@")
            named.append(names.get((mod, off), mod.split(".")[0] + "+" + off))
        if a.only and a.only not in named:
            continue
        stacks[" < ".join(named[:a.depth])] += 1
    total = sum(stacks.values())
    print(f"{total} samples of {len(lines)}" + (f" with {a.only}" if a.only else ""))
    for stack, n in stacks.most_common(a.top):
        print(f"{100.0 * n / max(total, 1):5.1f}% {n:6d}  {stack}")
    return 0 if lines else 1


if __name__ == "__main__":
    sys.exit(main())
