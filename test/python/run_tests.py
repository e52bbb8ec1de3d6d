#!/usr/bin/env python3
"""Run the GPU-free Python unit tests (test/python/test_*.py) and write a JUnit XML file
that test/summary.sh counts.

    python3 test/python/run_tests.py [--junit FILE] [-v]

Exit status 0 when every test passed (skips allowed) and at least one ran.
"""
import argparse
import os
import sys
import time
import unittest
from xml.sax.saxutils import quoteattr, escape

HERE = os.path.dirname(os.path.abspath(__file__))


class _Result(unittest.TextTestResult):
    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.cases = []   # (test id, seconds, kind, text)
        self._t = 0.0

    def startTest(self, test):
        self._t = time.time()
        super().startTest(test)

    def _add(self, test, kind, text=""):
        self.cases.append((test.id(), time.time() - self._t, kind, text))

    def addSuccess(self, test):
        super().addSuccess(test)
        self._add(test, "pass")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._add(test, "failure", self._exc_info_to_string(err, test))

    def addError(self, test, err):
        super().addError(test, err)
        self._add(test, "error", self._exc_info_to_string(err, test))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._add(test, "skipped", reason)


def write_junit(path, cases):
    fails = sum(1 for c in cases if c[2] == "failure")
    errs = sum(1 for c in cases if c[2] == "error")
    skips = sum(1 for c in cases if c[2] == "skipped")
    total = sum(c[1] for c in cases)
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<testsuite name="python" tests="%d" failures="%d" errors="%d" skipped="%d" time="%.3f">'
             % (len(cases), fails, errs, skips, total)]
    for tid, secs, kind, text in cases:
        cls, _, name = tid.rpartition(".")
        lines.append('  <testcase classname=%s name=%s time="%.3f">' % (quoteattr(cls), quoteattr(name), secs))
        if kind in ("failure", "error"):
            lines.append('    <%s message="%s">%s</%s>' % (kind, kind, escape(text), kind))
        elif kind == "skipped":
            lines.append('    <skipped message=%s/>' % quoteattr(text))
        lines.append("  </testcase>")
    lines.append("</testsuite>")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--junit")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    sys.path.insert(0, HERE)
    suite = unittest.defaultTestLoader.discover(HERE, pattern="test_*.py", top_level_dir=HERE)
    runner = unittest.TextTestRunner(verbosity=2 if a.verbose else 1, resultclass=_Result)
    res = runner.run(suite)
    if a.junit:
        write_junit(a.junit, res.cases)
    passed = sum(1 for c in res.cases if c[2] == "pass")
    failed = sum(1 for c in res.cases if c[2] in ("failure", "error"))
    print("python: %d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
