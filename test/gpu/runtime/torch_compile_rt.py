"""GPU test: a torch.compile'd model (mode max-autotune-no-cudagraphs) on a tidal partition.

    python3 torch_compile_rt.py baseline OUT.pt        # unmodified: no tidal at all
    python3 torch_compile_rt.py tidal OUT.pt PARTITION # tidal.triton.enable(PARTITION)

The tidal run loads the baseline's output and checks: every module Triton loaded carries the
rewrite and was attached, and the outputs equal the unmodified run's. Use fresh
TORCHINDUCTOR_CACHE_DIR / TRITON_CACHE_DIR per run (run.sh does) so that every kernel is
compiled, through tidal-ptxas in the tidal run.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "python"))
mode, out = sys.argv[1], sys.argv[2]
if mode == "tidal":
    import tidal.triton
    tidal.triton.enable(partition=sys.argv[3])

import torch  # noqa: E402

torch.manual_seed(0)


class Block(torch.nn.Module):
    def __init__(self, d=512):
        super().__init__()
        self.ln = torch.nn.LayerNorm(d)
        self.fc1 = torch.nn.Linear(d, 4 * d)
        self.fc2 = torch.nn.Linear(4 * d, d)
        self.attn = torch.nn.Linear(d, d)

    def forward(self, x):
        h = self.ln(x)
        a = torch.softmax(self.attn(h) @ h.transpose(-1, -2) / 22.6, dim=-1) @ h
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(a)))


model = torch.nn.Sequential(Block(), Block()).cuda().half().eval()
x = torch.randn(8, 256, 512, device="cuda", dtype=torch.half)
cm = torch.compile(model, mode="max-autotune-no-cudagraphs")
with torch.no_grad():
    y = cm(x)
    y = cm(x)
torch.cuda.synchronize()
fails = 0


def result(name, ok, why=""):
    global fails
    print("%s %s%s" % ("PASS" if ok else "FAIL", name, (": " + why) if why else ""), flush=True)
    fails += 0 if ok else 1


if mode == "baseline":
    torch.save(y.cpu(), out)
    print("baseline saved", tuple(y.shape))
    sys.exit(0)

ref = torch.load(out)
diff = (y.cpu().float() - ref.float()).abs().max().item()
result("torch_compile.outputs", torch.allclose(y.cpu().float(), ref.float(), atol=2e-2, rtol=1e-2),
       "max abs diff vs the unmodified run %.5f" % diff)
st = tidal.triton.stats()
result("torch_compile.all-rewritten", st["attached"] > 0 and st["not_rewritten"] == 0, str(st))
sys.exit(1 if fails else 0)
