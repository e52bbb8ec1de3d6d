#!/usr/bin/env python3
"""ptxas_smem.py [--arch=sm_90a] [--ptxas=PROG] LABEL=FILE.ptx ... -- static shared memory per entry.

Assembles each FILE with `PROG -v` (default: the ptxas on PATH; --ptxas=tidal-ptxas
rewrites the file first, as Triton's ptxas step would) and prints one line per entry,
"LABEL ENTRY BYTES" (0 where ptxas names no smem), sorted by entry name within each file:
ptxas compiles entries in an order of its own. For FileCheck: capture an original
entry's size in one line and require it on the clone's (test/lit/tidal/rule_shared_*).
Exit status 1 when ptxas fails (its messages on stderr).
"""
import re
import subprocess
import sys

arch, ptxas = "sm_90a", "ptxas"
for a in sys.argv[1:]:
    if a.startswith("--arch="):
        arch = a.split("=", 1)[1]
        continue
    if a.startswith("--ptxas="):
        ptxas = a.split("=", 1)[1]
        continue
    label, _, path = a.partition("=")
    p = subprocess.run([ptxas, "-arch=" + arch, "-v", path, "-o", "/dev/null"], capture_output=True, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        sys.exit(1)
    smem, cur = {}, None
    for line in p.stderr.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            cur = m.group(1)
            smem[cur] = 0
            continue
        m = re.search(r"\bUsed\b.*?\b(\d+) bytes smem", line)
        if cur is not None and m:
            smem[cur] = int(m.group(1))
    for name in sorted(smem):
        print(label, name, smem[name])
