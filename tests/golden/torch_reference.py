#!/usr/bin/python3
"""Writes tests/golden/torch_reference.inc: PyTorch's own numbers for the golden
model's cross-check (test_golden_torch.cpp), so the test needs no torch.

For LSTM and GRU (I=3, H=2, T=3, B=2, float64) it records the parameters and
inputs it used, the forward outputs, the gradients of

    L = sum_t <G_t, out_t> + <G_h, h_n> + <G_c, c_n>      (no G_c term for GRU)

with respect to the parameters, x, h0 and c0, and the parameters after three
steps of each optimizer configuration below, where every step recomputes the
gradient of L at the current parameters (so optimizer state carries over).

Run with a python that has torch 1.13 (in this project /usr/bin/python3):
    /usr/bin/python3 tests/golden/torch_reference.py > tests/golden/torch_reference.inc
"""

import sys

import torch

I, H, T, B = 3, 2, 3, 2
OPT_STEPS = 3

# name -> (constructor, kwargs); C++ mirrors these in test_golden_torch.cpp.
OPTIMIZERS = [
    ("sgd_momentum", torch.optim.SGD,
     dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("sgd_nesterov", torch.optim.SGD,
     dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.02)),
    ("adam", torch.optim.Adam,
     dict(lr=0.01, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)),
    ("adam_amsgrad", torch.optim.Adam,
     dict(lr=0.02, betas=(0.8, 0.5), eps=1e-6, weight_decay=0.0, amsgrad=True)),
]

PARAM_NAMES = ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"]


def fixed(shape, seed):
    """Small fixed values in [-0.5, 0.5) from a seeded generator (printed anyway)."""
    g = torch.Generator().manual_seed(seed)
    return torch.rand(shape, generator=g, dtype=torch.float64) - 0.5


def make_module(cell, seed):
    mod = (torch.nn.LSTM if cell == "lstm" else torch.nn.GRU)(I, H).double()
    with torch.no_grad():
        for k, name in enumerate(PARAM_NAMES):
            p = getattr(mod, name)
            p.copy_(fixed(p.shape, seed + k))
    return mod


def loss_and_outputs(mod, cell, x, h0, c0, g_out, g_h, g_c):
    if cell == "lstm":
        out, (h_n, c_n) = mod(x, (h0, c0))
        loss = (out * g_out).sum() + (h_n * g_h).sum() + (c_n * g_c).sum()
        return loss, out, h_n, c_n
    out, h_n = mod(x, h0)
    loss = (out * g_out).sum() + (h_n * g_h).sum()
    return loss, out, h_n, None


def literal(v):
    r = repr(float(v))  # shortest string that round-trips the double
    if "e" not in r and "." not in r and "n" not in r:
        r += ".0"
    return r


def emit(name, t, comment):
    vals = t.detach().reshape(-1).tolist()
    lines = []
    for k in range(0, len(vals), 4):
        lines.append("    " + ", ".join(literal(v) for v in vals[k:k + 4]) + ",")
    shape = "x".join(str(s) for s in t.shape)
    print(f"  // {comment}, shape {shape}, row-major")
    print(f"  inline constexpr double {name}[] = {{")
    print("\n".join(lines))
    print("  };")


def run_cell(cell, seed):
    mod = make_module(cell, seed)
    x = fixed((T, B, I), seed + 10).requires_grad_(True)
    h0 = fixed((1, B, H), seed + 11).requires_grad_(True)
    c0 = fixed((1, B, H), seed + 12).requires_grad_(True)
    g_out = fixed((T, B, H), seed + 13) * 2.0
    g_h = fixed((1, B, H), seed + 14) * 2.0
    g_c = fixed((1, B, H), seed + 15) * 2.0

    print(f"namespace {cell} {{")
    for name in PARAM_NAMES:
        emit(name, getattr(mod, name), f"parameter {name}")
    emit("x", x, "input (T, B, I)")
    emit("h0", h0, "initial hidden state (1, B, H)")
    if cell == "lstm":
        emit("c0", c0, "initial cell state (1, B, H)")
    emit("g_out", g_out, "loss weight G_t on out (T, B, H)")
    emit("g_h", g_h, "loss weight G_h on h_n (1, B, H)")
    if cell == "lstm":
        emit("g_c", g_c, "loss weight G_c on c_n (1, B, H)")

    loss, out, h_n, c_n = loss_and_outputs(mod, cell, x, h0, c0, g_out, g_h, g_c)
    loss.backward()
    emit("out", out, "forward output (T, B, H)")
    emit("h_n", h_n, "final hidden state (1, B, H)")
    if cell == "lstm":
        emit("c_n", c_n, "final cell state (1, B, H)")
    print(f"  inline constexpr double loss = {literal(loss.item())};")
    for name in PARAM_NAMES:
        emit("grad_" + name, getattr(mod, name).grad, f"dL/d{name}")
    emit("grad_x", x.grad, "dL/dx")
    emit("grad_h0", h0.grad, "dL/dh0")
    if cell == "lstm":
        emit("grad_c0", c0.grad, "dL/dc0")

    for opt_name, ctor, kwargs in OPTIMIZERS:
        m = make_module(cell, seed)
        opt = ctor(m.parameters(), **kwargs)
        for _ in range(OPT_STEPS):
            opt.zero_grad()
            loss, _, _, _ = loss_and_outputs(m, cell, x.detach(), h0.detach(), c0.detach(),
                                             g_out, g_h, g_c)
            loss.backward()
            opt.step()
        print(f"  namespace {opt_name} {{  // {ctor.__name__}({kwargs}), {OPT_STEPS} steps")
        for name in PARAM_NAMES:
            emit(name, getattr(m, name), f"{name} after {OPT_STEPS} steps")
        print(f"  }}  // namespace {opt_name}")
    print(f"}}  // namespace {cell}")


def main():
    torch.set_grad_enabled(True)
    print("// Generated by tests/golden/torch_reference.py with torch "
          f"{torch.__version__} (python {sys.version.split()[0]}). Do not edit;")
    print("// rerun the script instead. float64 throughout.")
    print("// clang-format off")
    print("namespace torch_ref {")
    print(f"inline constexpr int kInput = {I}, kHidden = {H}, kSteps = {T}, kBatch = {B};")
    print(f"inline constexpr int kOptSteps = {OPT_STEPS};")
    run_cell("lstm", 100)
    run_cell("gru", 200)
    print("}  // namespace torch_ref")
    print("// clang-format on")


if __name__ == "__main__":
    main()
