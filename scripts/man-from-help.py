#!/usr/bin/env python3
"""man-from-help.py -- a man page from a tool's --help text (the build makes every tool's).

    man-from-help.py --name TOOL --version V [--summary TEXT] [--see-also P(1),...]
                     [--help-option OPT] -o OUT.1 -- COMMAND [ARGS...]

Runs COMMAND ARGS OPT (default --help), and turns what it prints on standard output into
roff for man(7). The help text stays the one source: nothing is written twice.

Two layouts are understood, the two tidal's tools use:
  * man-style: NAME, SYNOPSIS, DESCRIPTION, ... alone on a line in capitals, each body
    indented (tidald, tidalctl, tidal-nvcc);
  * usage-style: a first paragraph "usage: ...", then paragraphs; "options:" and the like
    start a section, "exit status: ..." / "environment: ..." / "example: ..." lines too
    (tidal-opt, tidal-objdump, tidal-ptxas, tidal-run); --summary gives its NAME line.
In a body, "TERM  description" lines (two or more spaces between) become a tagged list,
other indented lines are kept as they are (no-fill), everything else is filled text.

Why not help2man: it is not installed here, wants GNU-style help and `--version`, and
would mangle the man-style pages. The date is $SOURCE_DATE_EPOCH's when set (reproducible
builds), else today's.
"""
import argparse
import datetime
import os
import re
import subprocess
import sys

ITEM = re.compile(r"^(\S(?:.*?\S)?) {2,}(\S.*)$")
SECTION_LINE = re.compile(r"^(exit status|environment|examples?|files):\s*(.*)$", re.I)
MAN_HEADER = re.compile(r"^[A-Z][A-Z ]*[A-Z]$")
KEEP_AS_IS = {"SYNOPSIS", "EXAMPLES", "EXAMPLE"}


def esc(text):
    """Roff-escape one line of text (no leading control character, \\ and - literal)."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    if text[:1] in (".", "'"):
        text = "\\&" + text
    return text


def indent(line):
    return len(line) - len(line.lstrip(" "))


def dedent(lines):
    body = [l for l in lines if l.strip()]
    n = min((indent(l) for l in body), default=0)
    return [l[n:] if l.strip() else "" for l in lines]


def paragraphs(lines):
    cur = []
    for l in lines:
        if l.strip():
            cur.append(l.rstrip())
        elif cur:
            yield cur
            cur = []
    if cur:
        yield cur


def nofill(lines, out, inset=False):
    """Lines kept as they are; inset: an indented block in a paragraph, shown indented."""
    out.append(".PP")
    if inset:
        out.append(".RS 4")
    out.append(".nf")
    out.extend(esc(l) if l else "" for l in dedent(lines))
    out.append(".fi")
    if inset:
        out.append(".RE")


def item(line, base, col):
    """(TERM, column of its text) when line, at indent base, starts a list entry: TERM,
    two spaces, text; or an option too long for the list's text column col that has one
    space before it ("--stats-timeout MS how long ...")."""
    if indent(line) != base:
        return None
    m = ITEM.match(line[base:])
    if m:
        return m.group(1), base + m.start(2)
    if col and line[base] == "-" and len(line) > col and line[col - 1] == " " and line[col] != " " \
            and line[col - 2] != " ":
        return line[base:col - 1], col
    return None


def items(lines, out):
    """lines: item lines at one indent (TERM  text) with their continuation lines."""
    base = indent(lines[0])
    entries = []
    col = None
    for l in lines:
        m = item(l, base, col)
        if m:
            col = m[1]
            entries.append([m[0], col, [l[col:]]])
        else:
            entries[-1][2].append(l)
    for term, col, text in entries:
        out.append(".TP")
        out.append("\\fB" + esc(term) + "\\fR")
        rest = text[1:]
        if all(indent(l) == col for l in rest):
            out.append(esc(" ".join(t.strip() for t in text)))
        else:  # a table inside the description: keep its layout
            out.append(".nf")
            out.append(esc(text[0]))
            out.extend(esc(l[col:] if indent(l) >= col else l.strip()) for l in rest)
            out.append(".fi")


def is_items(run):
    """A run is a tagged list when its first line is TERM  text and every later line is
    either another TERM  text at that indent or a continuation indented further."""
    base = indent(run[0])
    m = item(run[0], base, None)
    if not m:
        return False
    col = m[1]
    for l in run[1:]:
        if indent(l) == base:
            m = item(l, base, col)
            if not m:
                return False
            col = m[1]
        elif indent(l) < base:
            return False
    return True


def body(lines, out, keep=False):
    """Renders one section's lines (already dedented to the section's own indent)."""
    for para in paragraphs(lines):
        if keep:
            nofill(para, out)
            continue
        # runs: a line at indent 0 that is not TERM  text is prose; a TERM  text line at
        # indent 0 or an indented line belongs to the run of the lines after it that are
        # indented further (its list or block)
        i = 0
        prose = []
        while i < len(para):
            l = para[i]
            if indent(l) == 0 and not ITEM.match(l):
                prose.append(l.strip())
                i += 1
                continue
            if prose:
                out.append(".PP")
                out.append(esc(" ".join(prose)))
                prose = []
            base = indent(l)
            m = item(l, base, None)
            col = m[1] if m else None
            j = i + 1
            while j < len(para):
                n = para[j]
                m = item(n, base, col) if indent(n) == base else None
                if m:
                    col = m[1]
                elif not (indent(n) > base or (indent(n) == base and base > 0)):
                    break
                j += 1
            run = para[i:j]
            if is_items(run):
                items(run, out)
            else:
                nofill(run, out, inset=base > 0)
            i = j
        if prose:
            out.append(".PP")
            out.append(esc(" ".join(prose)))


def split_man_style(lines):
    """[(SECTION, lines)] for a text made of NAME / SYNOPSIS / ... sections."""
    sections = []
    for l in lines:
        if MAN_HEADER.match(l):
            sections.append((l, []))
        elif sections:
            sections[-1][1].append(l)
        elif l.strip():
            raise SystemExit("man-from-help: text before the first section: %r" % l)
    return [(name, dedent(ls)) for name, ls in sections]


def split_usage_style(lines, summary, tool):
    """[(SECTION, lines)] for a "usage: ..." text."""
    paras = list(paragraphs(lines))
    if not paras or not paras[0][0].lower().startswith("usage:"):
        raise SystemExit("man-from-help: %s: the help text starts neither with NAME nor with usage:" % tool)
    syn = paras[0]
    first = syn[0][len("usage:"):].strip()
    # continuation lines of the usage are aligned under the program name
    cut = len(syn[0]) - len(syn[0][len("usage:"):].lstrip())
    synopsis = [first] + [l[cut:] if indent(l) >= cut else l.strip() for l in syn[1:]]
    sections = [("NAME", ["%s - %s" % (tool, summary)]), ("SYNOPSIS", synopsis), ("DESCRIPTION", [])]
    for para in paras[1:]:
        sections[-1][1].append("")
        for k, l in enumerate(para):
            m = SECTION_LINE.match(l)
            header = l.rstrip().endswith(":") and indent(l) == 0 and k == 0 and len(para) > 1 \
                and indent(para[1]) > 0
            if m:
                name = m.group(1).upper()
                if name == "EXAMPLE" or name == "EXAMPLES":
                    name = "EXAMPLES"
                sections.append((name, [m.group(2)] if m.group(2) else []))
            elif header:
                words = l.rstrip()[:-1]
                name = words.upper() if " " not in words else ("OPTIONS" if "options" in words.lower() else None)
                if name:
                    sections.append((name, []))
                    if " " in words:  # keep what it says ("...'s own options (removed ...)")
                        sections[-1][1].append(words[0].upper() + words[1:] + ":")
                else:
                    sections[-1][1].append(l)
            else:
                sections[-1][1].append(l)
    # a section named twice (DESCRIPTION prose after OPTIONS) stays where it is said
    return [(n, ls) for n, ls in sections if any(x.strip() for x in ls)]


def render(text, tool, version, summary, see_also, date):
    lines = text.expandtabs().splitlines()
    while lines and not lines[0].strip():
        lines.pop(0)
    if lines and lines[0] == "NAME":
        sections = split_man_style(lines)
    else:
        if not summary:
            raise SystemExit("man-from-help: %s: a usage-style help needs --summary" % tool)
        sections = split_usage_style(lines, summary, tool)
    out = ['.\\" Generated from `%s`\'s help text by scripts/man-from-help.py; do not edit.' % tool,
           '.TH %s 1 "%s" "tidal %s" "tidal manual"' % (esc(tool.upper()), date, esc(version)),
           ".nh"]  # no hyphenation: option names and paths must stay whole
    for name, ls in sections:
        out.append('.SH "%s"' % name)
        if name == "NAME":
            # one line "tool \- what", as whatis(1) and mandb read it
            out.append(esc(" ".join(l.strip() for l in ls if l.strip())))
        else:
            body(ls, out, keep=name in KEEP_AS_IS)
    if see_also:
        out.append('.SH "SEE ALSO"')
        refs = []
        for ref in see_also:
            m = re.match(r"^(.*)\((\d)\)$", ref)
            refs.append("\\fB%s\\fR(%s)" % (esc(m.group(1)), m.group(2)) if m else esc(ref))
        out.append(",\n".join(refs))
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--name", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--summary", default="")
    ap.add_argument("--see-also", default="", help="comma-separated NAME(N) list")
    ap.add_argument("--help-option", default="--help")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        ap.error("no COMMAND")
    r = subprocess.run(cmd + [a.help_option], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0 or not r.stdout.strip():
        sys.stderr.write("man-from-help: `%s %s` exited %d%s\n%s" % (
            " ".join(cmd), a.help_option, r.returncode, " and printed nothing" if not r.stdout.strip() else "",
            r.stderr))
        return 1
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    day = (datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc) if epoch
           else datetime.datetime.now(datetime.timezone.utc))
    see = [s.strip() for s in a.see_also.split(",") if s.strip() and s.strip() != a.name + "(1)"]
    page = render(r.stdout, a.name, a.version, a.summary, see, day.strftime("%Y-%m-%d"))
    tmp = a.output + ".tmp"
    with open(tmp, "w") as f:
        f.write(page)
    os.replace(tmp, a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
