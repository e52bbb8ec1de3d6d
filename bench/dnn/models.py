"""The benchmark's models (random init, no downloads) and how they are compiled.

  bert-base   LS:  transformers BertModel, bert-base sizes (BertConfig defaults), batch 1, seq 128
  bert-large  BE:  BertModel, bert-large sizes (1024 hidden, 24 layers, 16 heads, 4096 FFN), batch 16, seq 128
  resnet50    CNN: torchvision resnet50(weights=None) (timm resnet50 when torchvision is missing), batch 1, 224x224

All fp16, eval, torch.no_grad, compiled with torch.compile(options=...) = mode
"max-autotune-no-cudagraphs" with coordinate-descent tuning off (the mode turns it on) and
a small GEMM search space (settings() says exactly what, and the run prints it).
"""
import os
import time

MODELS = ("bert-base", "bert-large", "resnet50")

# name -> (batch, description)
SPECS = {
    "bert-base": (1, "BertModel bert-base (12x768, 12 heads, FFN 3072), batch 1, seq 128, fp16"),
    "bert-large": (16, "BertModel bert-large (24x1024, 16 heads, FFN 4096), batch 16, seq 128, fp16"),
    "resnet50": (1, "resnet50 (random init), batch 1, 3x224x224 channels_last, fp16"),
}
SEQ = 128


def _env(name, default):
    v = os.environ.get(name)
    return default if v is None or v == "" else v


def settings():
    """The Inductor settings this benchmark compiles with (env BENCH_* overrides)."""
    mm = _env("BENCH_MAX_MM_CONFIGS", "6")   # 6 of 19 GEMM configs: a cold run compiles in ~75 s per side ("all": 19)
    mm = "" if mm == "all" else mm
    return {
        "compile_options": {
            "max_autotune": True,                 # = mode "max-autotune-no-cudagraphs" ...
            "coordinate_descent_tuning": False,   # ... which also turns this on: off (compile time)
            "triton.cudagraphs": False,           # no Inductor cudagraphs: graphs are captured by the benchmark
        },
        "max_autotune_gemm_backends": _env("BENCH_GEMM_BACKENDS", "TRITON,ATEN"),
        "max_autotune_conv_backends": _env("BENCH_CONV_BACKENDS", "ATEN"),
        "max_autotune_gemm_search_space": _env("BENCH_GEMM_SEARCH_SPACE", "DEFAULT"),
        "test_configs.max_mm_configs": int(mm) if mm else None,
        "attn_implementation": _env("BENCH_ATTN", "sdpa"),
        "compile_threads": int(_env("TORCHINDUCTOR_COMPILE_THREADS", str(min(16, os.cpu_count() or 1)))),
    }


def configure_inductor(s):
    """Apply settings() to torch._inductor.config (before the first compile)."""
    import torch._inductor.config as ic
    ic.max_autotune_gemm_backends = s["max_autotune_gemm_backends"]
    ic.max_autotune_conv_backends = s["max_autotune_conv_backends"]
    ic.max_autotune_gemm_search_space = s["max_autotune_gemm_search_space"]
    ic.coordinate_descent_tuning = False
    ic.compile_threads = s["compile_threads"]
    if s["test_configs.max_mm_configs"] is not None:
        ic.test_configs.max_mm_configs = s["test_configs.max_mm_configs"]
    ic.fx_graph_cache = True
    ic.autotune_local_cache = True
    # The same on both sides: Inductor's FX-graph cache keys on its config, and the tidal
    # side reuses the unmodified side's compiled graphs and autotuning choices (run.sh), so
    # the two run the same kernels. tidal.torch turns both off (its docstring says why).
    if hasattr(ic, "use_static_cuda_launcher"):
        ic.use_static_cuda_launcher = False
    if hasattr(ic, "bundle_triton_into_fx_graph_cache"):
        ic.bundle_triton_into_fx_graph_cache = False


def fx_cache_counters():
    """Inductor's FX-graph cache hits, misses, bypasses so far in this process."""
    try:
        from torch._dynamo.utils import counters
        c = counters["inductor"]
        return {k: int(c.get(k, 0)) for k in ("fxgraph_cache_hit", "fxgraph_cache_miss", "fxgraph_cache_bypass")}
    except Exception as e:  # noqa: BLE001 -- a report field, never fatal
        return {"error": "%s: %s" % (type(e).__name__, e)}


def build(name, attn="sdpa", seed=0, device="cuda", dtype=None, batch=None):
    """(module, example input) on the GPU, fp16, eval. Weights are random (seeded): the two
    processes of a run build the same model. (device/dtype: for tests off the GPU; batch:
    the input's rows, default SPECS' batch, see make_input.)"""
    import torch
    torch.manual_seed(seed)
    dev = torch.device(device)
    dtype = dtype or torch.float16
    if name in ("bert-base", "bert-large"):
        from transformers import BertConfig, BertModel
        kw = {} if name == "bert-base" else dict(hidden_size=1024, num_hidden_layers=24,
                                                   num_attention_heads=16, intermediate_size=4096)
        cfg = BertConfig(attn_implementation=attn, **kw)

        class BertLast(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.bert = BertModel(cfg, add_pooling_layer=True)

            def forward(self, ids):
                return self.bert(input_ids=ids).last_hidden_state

        with dev:
            m = BertLast()
        m = m.to(dtype=dtype).eval()
        return m, make_input(name, batch, seed, device, dtype)
    if name == "resnet50":
        try:
            import torchvision
            with dev:
                m = torchvision.models.resnet50(weights=None)
        except ImportError:
            import timm
            with dev:
                m = timm.create_model("resnet50", pretrained=False)
        m = m.to(dtype=dtype, memory_format=torch.channels_last).eval()
        return m, make_input(name, batch, seed, device, dtype)
    raise ValueError("unknown model %s (want one of %s)" % (name, ", ".join(MODELS)))


def make_input(name, batch=None, seed=0, device="cuda", dtype=None):
    """The example input of model `name` with `batch` rows (default: its SPECS batch), the
    same for the same seed and batch (random token ids / an image, generated on the CPU)."""
    import torch
    if name not in SPECS:
        raise ValueError("unknown model %s (want one of %s)" % (name, ", ".join(MODELS)))
    batch = SPECS[name][0] if batch is None else int(batch)
    if batch < 1:
        raise ValueError("%s: batch %d (want >= 1)" % (name, batch))
    dev = torch.device(device)
    g = torch.Generator().manual_seed(seed + 1)
    if name in ("bert-base", "bert-large"):
        from transformers import BertConfig
        vocab = BertConfig().vocab_size   # the same for both sizes
        return torch.randint(0, vocab, (batch, SEQ), generator=g).to(dev)
    x = torch.randn(batch, 3, 224, 224, generator=g).to(dev, dtype or torch.float16)
    return x.contiguous(memory_format=torch.channels_last)


def compile_model(module, x, s, log=None):
    """torch.compile the module and run it until it is compiled and autotuned (3 calls).
    Returns (compiled callable, seconds of the first call)."""
    import torch
    cm = torch.compile(module, options=dict(s["compile_options"]), fullgraph=False, dynamic=False)
    first = compile_shape(cm, x, log)
    return cm, first


def compile_shape(cm, x, log=None):
    """Run the compiled callable on x until x's shape is compiled and autotuned (3 calls;
    compiled with dynamic=False, each input shape gets graphs of its own). Returns the
    seconds of the first call."""
    import torch
    t = time.time()
    with torch.no_grad():
        y = cm(x)
        torch.cuda.synchronize()
        first = time.time() - t
        for _ in range(2):
            y = cm(x)
        torch.cuda.synchronize()
    if log:
        log("compiled in %.1fs, output %s %s" % (first, tuple(y.shape), y.dtype))
    return first
