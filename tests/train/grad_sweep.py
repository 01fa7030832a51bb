#!/usr/bin/python3
"""Random `farnn grad` cases against PyTorch in float64, one per seed.

Each seed draws a case (cell, 1-3 layers, direction, H, I, T, B, lengths
in an integer or float dtype, weight scale, device URI with PEs, chains,
batch groups and FORWARD records, GEMM parts), writes W.safetensors, x.npy,
dy.npy and the float64 and float32 PyTorch results (packed sequences where
lengths are given), runs `farnn grad` and prints max|a - b| / max|b| per
tensor against float64, next to what float32 PyTorch reaches on the same
case. docs/training.md ("Agreement with PyTorch") quotes its results.

Needs torch (Debian's python3-torch, 1.13) and numpy:
    /usr/bin/python3 tests/train/grad_sweep.py --farnn build/tools/farnn/farnn \
        --work /tmp/grad_sweep --seeds 1-200
--weights small|large|all adds weight scales beyond PyTorch's default
initialization and +-0.1. Every case keeps its files under WORK/<seed>,
with the command line in `cmd`, to rerun the ones over 1e-5 by hand.
"""

import argparse
import json
import os
import random
import shlex
import struct
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_grad_reference import read_safetensors, write_safetensors  # noqa: E402

TOLERANCE = 1e-5
SCALES = {"normal": ["default", "0.1"], "small": ["0.01", "0.001", "0.0001"], "large": ["2", "4"]}


def draw_case(seed, scales):
    r = random.Random(seed)
    c = {"seed": seed, "cell": r.choice(["lstm", "gru"]), "layers": r.choice([1, 1, 2, 2, 3]),
         "bidir": r.random() < 0.5, "H": r.choice([1, 2, 3, 5, 8, 17, 31, 64, 100]), "I": r.choice([1, 3, 7]),
         "T": r.choice([1, 2, 5, 13]), "B": r.choice([1, 2, 3, 5]), "weights": r.choice(scales),
         "xscale": r.choice([1.0, 1.0, 5.0]), "lengths": None,
         "len_dtype": r.choice(["int64", "int32", "float32", "uint8"])}
    if r.random() < 0.5:
        c["lengths"] = [r.randint(1, c["T"]) for _ in range(c["B"])]
    pes = r.choice([1, 3, 4, 16, 64])
    opts = ["pes=%d" % pes, "chains=%d" % r.choice([d for d in range(1, pes + 1) if pes % d == 0])]
    if r.random() < 0.25:
        opts.append("batch=%d" % r.choice([1, 2, 3]))
    if r.random() < 0.15:
        opts.append("records=%d" % r.choice([1, 2, 3]))
    c["device"] = "model://?" + "&".join(opts + ["threads=1"])
    c["gemm_chunks"] = r.choice([None, None, 1, 2, 3, 7])
    return c


def write_case(c, d, farnn):
    cls = torch.nn.LSTM if c["cell"] == "lstm" else torch.nn.GRU
    torch.manual_seed(c["seed"])
    rnn = cls(c["I"], c["H"], num_layers=c["layers"], bidirectional=c["bidir"])
    if c["weights"] != "default":
        with torch.no_grad():
            for p in rnn.parameters():
                p.uniform_(-float(c["weights"]), float(c["weights"]))
    dirs = 2 if c["bidir"] else 1
    x32 = torch.randn(c["T"], c["B"], c["I"]) * c["xscale"]
    dy32 = torch.randn(c["T"], c["B"], dirs * c["H"])
    os.makedirs(d, exist_ok=True)
    write_safetensors(os.path.join(d, "W.safetensors"), [(k, v.detach().numpy()) for k, v in rnn.state_dict().items()])
    np.save(os.path.join(d, "x.npy"), x32.numpy())
    np.save(os.path.join(d, "dy.npy"), dy32.numpy())
    if c["lengths"] is not None:
        np.save(os.path.join(d, "lengths.npy"), np.array(c["lengths"], dtype=c["len_dtype"]))
    for dtype, name in ((torch.float64, "expected.safetensors"), (torch.float32, "expected32.safetensors")):
        m = cls(c["I"], c["H"], num_layers=c["layers"], bidirectional=c["bidir"])
        m.load_state_dict(rnn.state_dict())
        m = m.to(dtype)
        x = x32.to(dtype).requires_grad_(True)
        if c["lengths"] is not None:
            packed = torch.nn.utils.rnn.pack_padded_sequence(x, torch.tensor(c["lengths"]), enforce_sorted=False)
            yp, state = m(packed)
            y, _ = torch.nn.utils.rnn.pad_packed_sequence(yp, total_length=c["T"])
        else:
            y, state = m(x)
        h_n, c_n = state if c["cell"] == "lstm" else (state, None)
        (y * dy32.to(dtype)).sum().backward()
        out = [("y", y.detach().numpy()), ("h_n", h_n.detach().numpy())]
        if c_n is not None:
            out.append(("c_n", c_n.detach().numpy()))
        out.append(("dx", x.grad.numpy()))
        out += [("grad." + k, p.grad.numpy()) for k, p in m.named_parameters()]
        write_safetensors(os.path.join(d, name), out)
    cmd = [farnn, "grad", "--weights", "W.safetensors", "--input", "x.npy", "--grad-output", "dy.npy", "--cell",
           c["cell"], "--hidden", str(c["H"]), "--layers", str(c["layers"]), "--device", c["device"], "--out",
           "out.safetensors"]
    if c["bidir"]:
        cmd.append("--bidirectional")
    if c["lengths"] is not None:
        cmd += ["--lengths", "lengths.npy"]
    if c["gemm_chunks"] is not None:
        cmd += ["--gemm-chunks", str(c["gemm_chunks"])]
    return cmd


def relative(have, want):
    have, want = have.astype(np.float64), want.astype(np.float64)
    top = np.abs(want).max()
    return float(np.abs(have - want).max() / top) if top > 0 else float(np.abs(have).max())


def run(c, work, farnn):
    d = os.path.join(work, str(c["seed"]))
    cmd = write_case(c, d, farnn)
    with open(os.path.join(d, "cmd"), "w") as f:
        f.write("cd %s && %s\n" % (shlex.quote(d), " ".join(shlex.quote(a) for a in cmd)))
    p = subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        return {"error": (p.stderr + p.stdout).strip()[-400:]}
    have = read_safetensors(os.path.join(d, "out.safetensors"))
    want = read_safetensors(os.path.join(d, "expected.safetensors"))
    want32 = read_safetensors(os.path.join(d, "expected32.safetensors"))
    if sorted(have) != sorted(want) or any(have[k].shape != want[k].shape for k in want):
        return {"error": "tensors or shapes differ from PyTorch's: %s" % sorted(have)}
    return {k: (relative(have[k], want[k]), relative(want32[k], want[k])) for k in want}


def seeds_of(text):
    out = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--farnn", required=True, help="the farnn binary")
    ap.add_argument("--work", required=True, help="folder for the cases")
    ap.add_argument("--seeds", default="1-40", help="e.g. 1-160 or 1,5,9")
    ap.add_argument("--weights", default="normal", choices=["normal", "small", "large", "all"])
    a = ap.parse_args()
    farnn = os.path.abspath(a.farnn)
    scales = sum(SCALES.values(), []) if a.weights == "all" else SCALES["normal"] + (
        SCALES[a.weights] if a.weights != "normal" else [])
    worst, failed = {}, []
    for seed in seeds_of(a.seeds):
        c = draw_case(seed, scales)
        r = run(c, a.work, farnn)
        label = "seed %d: %s L%d %s H=%d I=%d T=%d B=%d weights %s lengths %s %s" % (
            seed, c["cell"], c["layers"], "bi" if c["bidir"] else "uni", c["H"], c["I"], c["T"], c["B"],
            c["weights"], c["lengths"], c["device"])
        if "error" in r:
            failed.append(label + ": " + r["error"])
            print(label + ": ERROR " + r["error"], flush=True)
            continue
        name, (rel, rel32) = max(r.items(), key=lambda kv: kv[1][0])
        for k, (v, _) in r.items():
            kind = k.split("_l")[0] if k.startswith("grad.") else k
            if v > worst.get(kind, (0, None))[0]:
                worst[kind] = (v, seed)
        ok = rel <= TOLERANCE
        if not ok:
            failed.append(label)
        print("%s: worst %s %.2e (float32 PyTorch %.2e) %s" % (label, name, rel, rel32, "ok" if ok else "OVER"),
              flush=True)
    print("\nworst relative error per tensor kind (seed):")
    for kind, (v, seed) in sorted(worst.items()):
        print("  %-16s %.2e (%d)" % (kind, v, seed))
    print("%d cases over %.0e or failed" % (len(failed), TOLERANCE))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
