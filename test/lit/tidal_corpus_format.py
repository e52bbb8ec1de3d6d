# -*- Python -*-
"""lit test format for the PTX corpus: one lit test per corpus file.

For a corpus file F (test name "corpus :: <flavour>/<file>.ptx") the test
  1. runs `tidal-opt F -o T` and requires exit status 0 and T byte-identical to F
     (on mismatch it reports the first differing line);
  2. runs `tidal-opt --stats F` and requires exit status 0;
  3. when ptxas is available, runs `ptxas -arch=<arch> T -o /dev/null`, where
     <arch> is sm_90a for any PTX whose .target is sm_90 or lower (sm_90a
     assembles those too) and the file's own .target above that;
  4. runs `tidal-opt -p tidal --report=json F`: every kernel is rewritten unless
     refused for clusters or cooperative launch (grid sync); a kernel refused for
     bar.arrive (named-arrive: no balance proof) must then be rewritten by
     `tidal-opt -p tidal --assume-balanced-arrive`, whose output the next steps check;
     ptxas accepts the rewritten PTX;
  5. from `ptxas -v` of 3 and 4: every clone NAME__tidal_reshaped has the static
     shared memory of its original entry NAME (its protocol words are in the
     dynamic shared memory's tail), and the original entry has the input's, or,
     in a module without `.extern .shared`, the input's rounded up to 16 bytes
     (ptxas pads static shared memory to the module's extern alignment, 16 at
     least, and the clones' extern array is the module's first).
"""

import glob
import json
import os
import re
import subprocess

import lit.formats
import lit.Test

_TARGET_RE = re.compile(rb"^\s*\.target\s+(sm_(\d+)[a-z]?)", re.M)

# Generous per-step limits: ASan builds and debug PTX are slow; a hang must
# still end as a failure rather than stall `make check`.
_TIDAL_TIMEOUT = 300
_PTXAS_TIMEOUT = 600


# Refusals the pass is meant to make (the kernel needs co-scheduled CTAs).
_ALLOWED_REFUSALS = ("clusters", "cooperative-launch")

_RESHAPED_SUFFIX = "__tidal_reshaped"
_ENTRY_RE = re.compile(r"Compiling entry function '([^']+)'")
_SMEM_RE = re.compile(r"\bUsed\b.*?\b(\d+) bytes smem")
_EXTERN_SHARED_RE = re.compile(rb"^\s*\.extern\s+\.shared\b", re.M)


def _entry_smem(ptxas_stderr):
    """Static shared memory per entry, from `ptxas -v` (0 where it names none)."""
    out, cur = {}, None
    for line in ptxas_stderr.decode("utf-8", "replace").splitlines():
        m = _ENTRY_RE.search(line)
        if m:
            cur = m.group(1)
            out[cur] = 0
            continue
        m = _SMEM_RE.search(line)
        if cur is not None and m:
            out[cur] = int(m.group(1))
    return out


def _smem_problems(orig, rew, input_has_extern):
    """Step 5: what is wrong with the rewritten module's static shared sizes."""
    bad = []
    for name, smem in sorted(rew.items()):
        if not name.endswith(_RESHAPED_SUFFIX):
            continue
        base = name[: -len(_RESHAPED_SUFFIX)]
        if base in rew and smem != rew[base]:
            bad.append("%s: %d bytes static shared memory, its original entry %s %d" % (name, smem, base, rew[base]))
    for name, smem in sorted(orig.items()):
        if name not in rew:
            continue
        ok = (smem,) if input_has_extern else (smem, (smem + 15) // 16 * 16)
        if rew[name] not in ok:
            bad.append("%s: %d bytes static shared memory after the rewrite, %d before" % (name, rew[name], smem))
    return bad


def _ptxas_arch(data):
    m = _TARGET_RE.search(data)
    if m and int(m.group(2)) > 90:
        return m.group(1).decode()
    return "sm_90a"


def _first_difference(expected, actual):
    """Describe where two byte strings first differ, line by line."""
    el = expected.split(b"\n")
    al = actual.split(b"\n")
    for i in range(max(len(el), len(al))):
        e = el[i] if i < len(el) else None
        a = al[i] if i < len(al) else None
        if e != a:
            def show(x):
                return "<end of file>" if x is None else repr(x.decode("utf-8", "replace"))
            return (
                "first difference at line %d:\n"
                "  input : %s\n"
                "  output: %s" % (i + 1, show(e), show(a))
            )
    return "files differ (sizes %d vs %d)" % (len(expected), len(actual))


def _run(cmd, env, timeout):
    try:
        p = subprocess.run(
            cmd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return None, b"", b"timed out after %d s" % timeout
    except OSError as e:
        return None, b"", str(e).encode()
    return p.returncode, p.stdout, p.stderr


def _diag(stderr, stdout, limit=6000):
    """What to show of a failed command: stderr from its start (a sanitizer
    report's first lines matter most); stdout's end only if stderr is empty."""
    err = stderr.decode("utf-8", "replace")
    if err.strip():
        return err if len(err) <= limit else err[:limit] + "\n... (stderr truncated)"
    out = stdout.decode("utf-8", "replace")
    limit = 1500
    return out if len(out) <= limit else "(stdout, last %d chars)\n..." % limit + out[-limit:]


def _status(rc):
    if rc is None:
        return "did not finish"
    if rc < 0:
        return "killed by signal %d" % -rc
    return "exit status %d" % rc


class CorpusFormat(lit.formats.TestFormat):
    def __init__(self, tidal_opt, ptxas, roots):
        self.tidal_opt = tidal_opt
        self.ptxas = ptxas
        self.roots = roots  # [(directory, name prefix, glob pattern)]

    def _corpus_files(self):
        seen = {}
        for root, prefix, pattern in self.roots:
            if not root or not os.path.isdir(root):
                continue
            for path in sorted(glob.glob(os.path.join(root, pattern), recursive=True)):
                if not os.path.isfile(path):
                    continue
                rel = prefix + os.path.relpath(path, root)
                seen.setdefault(rel, path)
        return sorted(seen.items())

    def getTestsInDirectory(self, testSuite, path_in_suite, litConfig, localConfig):
        # Every test is generated at the suite root; subdirectories of the exec
        # root (only Output/) hold no tests.
        if path_in_suite:
            return
        for rel, path in self._corpus_files():
            yield lit.Test.Test(
                testSuite, tuple(rel.split(os.sep)), localConfig, file_path=path
            )

    def execute(self, test, litConfig):
        src = test.getFilePath()
        env = test.config.environment
        out = os.path.join(test.suite.exec_root, "Output", *test.path_in_suite)
        out += ".roundtrip.ptx"
        os.makedirs(os.path.dirname(out), exist_ok=True)
        log = ["input:  " + src, "output: " + out]

        try:
            with open(src, "rb") as f:
                expected = f.read()
        except OSError as e:
            return lit.Test.UNRESOLVED, "cannot read %s: %s" % (src, e)

        # 1. round trip, byte-identical
        if os.path.exists(out):
            os.unlink(out)
        cmd = [self.tidal_opt, src, "-o", out]
        rc, so, se = _run(cmd, env, _TIDAL_TIMEOUT)
        log.append("$ " + " ".join(cmd))
        if rc != 0:
            log.append("tidal-opt round trip failed (%s)\n%s" % (_status(rc), _diag(se, so)))
            return lit.Test.FAIL, "\n".join(log)
        try:
            with open(out, "rb") as f:
                actual = f.read()
        except OSError as e:
            log.append("tidal-opt exited 0 but wrote no output: %s" % e)
            return lit.Test.FAIL, "\n".join(log)
        if actual != expected:
            log.append("round trip is not byte-identical; " + _first_difference(expected, actual))
            log.append("(compare with: cmp %s %s)" % (src, out))
            return lit.Test.FAIL, "\n".join(log)

        # 2. --stats
        cmd = [self.tidal_opt, "--stats", src]
        rc, so, se = _run(cmd, env, _TIDAL_TIMEOUT)
        log.append("$ " + " ".join(cmd))
        if rc != 0:
            log.append("tidal-opt --stats failed (%s)\n%s" % (_status(rc), _diag(se, so)))
            return lit.Test.FAIL, "\n".join(log)

        # 3. ptxas accepts the output
        orig_smem = None
        if self.ptxas:
            arch = _ptxas_arch(actual)
            cmd = [self.ptxas, "-arch=" + arch, "-v", out, "-o", os.devnull]
            rc, so, se = _run(cmd, env, _PTXAS_TIMEOUT)
            orig_smem = _entry_smem(se)
            log.append("$ " + " ".join(cmd))
            if rc != 0:
                msg = "ptxas rejected the output (%s)\n%s" % (_status(rc), _diag(se, so))
                rc_in, _, _ = _run([self.ptxas, "-arch=" + arch, src, "-o", os.devnull],
                                   env, _PTXAS_TIMEOUT)
                if rc_in != 0:
                    msg += "\nnote: ptxas rejects the unmodified input too (corpus problem?)"
                log.append(msg)
                return lit.Test.FAIL, "\n".join(log)

        arch = _ptxas_arch(actual)
        # 4. the tidal rewrite: every kernel without clusters or grid sync is
        #    rewritten, and ptxas accepts the result
        tout = out[: -len(".roundtrip.ptx")] + ".tidal.ptx"
        cmd = [self.tidal_opt, "-p", "tidal", "--report=json", src, "-o", tout]
        rc, so, se = _run(cmd, env, _TIDAL_TIMEOUT)
        log.append("$ " + " ".join(cmd))
        if rc != 0:
            log.append("tidal-opt -p tidal failed (%s)\n%s" % (_status(rc), _diag(se, so)))
            return lit.Test.FAIL, "\n".join(log)
        try:
            report = json.loads(so)
        except ValueError as e:
            log.append("--report=json is not JSON (%s)\n%s" % (e, _diag(se, so)))
            return lit.Test.FAIL, "\n".join(log)
        bad = [k for k in report.get("kernels", [])
               if k.get("verdict") != "rewritten" and k.get("reason") not in _ALLOWED_REFUSALS + ("named-arrive",)]
        if not bad and any(k.get("reason") == "named-arrive" for k in report.get("kernels", [])):
            cmd = [self.tidal_opt, "-p", "tidal", "--assume-balanced-arrive", "--report=json", src, "-o", tout]
            rc, so, se = _run(cmd, env, _TIDAL_TIMEOUT)
            log.append("$ " + " ".join(cmd))
            if rc != 0:
                log.append("tidal-opt -p tidal --assume-balanced-arrive failed (%s)\n%s" % (_status(rc), _diag(se, so)))
                return lit.Test.FAIL, "\n".join(log)
            try:
                report = json.loads(so)
            except ValueError as e:
                log.append("--report=json is not JSON (%s)\n%s" % (e, _diag(se, so)))
                return lit.Test.FAIL, "\n".join(log)
            bad = [k for k in report.get("kernels", [])
                   if k.get("verdict") != "rewritten" and k.get("reason") not in _ALLOWED_REFUSALS]
        if bad:
            for k in bad:
                log.append("kernel %s refused: %s: %s" % (k.get("name"), k.get("reason"), k.get("detail")))
            return lit.Test.FAIL, "\n".join(log)
        if self.ptxas:
            cmd = [self.ptxas, "-arch=" + arch, "-v", tout, "-o", os.devnull]
            rc, so, se = _run(cmd, env, _PTXAS_TIMEOUT)
            log.append("$ " + " ".join(cmd))
            if rc != 0:
                log.append("ptxas rejected the rewritten output (%s)\n%s" % (_status(rc), _diag(se, so)))
                return lit.Test.FAIL, "\n".join(log)
            # 5. static shared memory: clone == original entry == input
            bad = _smem_problems(orig_smem or {}, _entry_smem(se), bool(_EXTERN_SHARED_RE.search(expected)))
            if bad:
                log.append("static shared memory changed by the rewrite:\n  " + "\n  ".join(bad))
                return lit.Test.FAIL, "\n".join(log)

        return lit.Test.PASS, "\n".join(log)
