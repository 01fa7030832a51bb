#!/usr/bin/python3
"""Writes the PyTorch references for `farnn grad` (tests/train/grad_ref/<case>/).

For each case: W.safetensors (the torch.nn.LSTM/GRU state dict), x.npy (T, B, I),
dy.npy (T, B, D*H) and expected.safetensors with what `farnn grad` must
produce — y, h_n, c_n (LSTM), dx and grad.<param> — computed by PyTorch in
float64 from the same float32 numbers (loss = sum(y * dy), zero initial
state), stored as float32. Only numpy and torch; safetensors is written by hand.

Run with a python that has torch 1.13 (in this project /usr/bin/python3):
    /usr/bin/python3 tests/train/torch_grad_reference.py tests/train/grad_ref
"""

import json
import os
import struct
import sys

import numpy as np
import torch

# name, cell, input, hidden, layers, bidirectional, T, B, seed
CASES = [
    ("lstm_1l", "lstm", 3, 5, 1, False, 4, 3, 1),
    ("gru_1l", "gru", 3, 5, 1, False, 4, 3, 2),
    ("lstm_h1", "lstm", 2, 1, 1, False, 5, 2, 3),
    ("gru_h1", "gru", 2, 1, 1, False, 5, 2, 4),
    ("lstm_2l_bi", "lstm", 4, 6, 2, True, 5, 2, 5),
    ("gru_2l_bi", "gru", 4, 6, 2, True, 5, 2, 6),
    ("lstm_2l", "lstm", 3, 9, 2, False, 7, 4, 7),
    ("gru_1l_bi", "gru", 5, 8, 1, True, 6, 3, 8),
]


def write_safetensors(path, tensors):
    header, offset, blobs = {}, 0, []
    for name, t in tensors:
        data = np.ascontiguousarray(t, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read_safetensors(path):
    """The F32 tensors of a safetensors file: name -> numpy float32 array."""
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + b:8 + n + end], dtype="<f4").reshape(e["shape"]).copy()
    return out


def make_case(out_dir, name, cell, inp, hidden, layers, bidir, steps, batch, seed):
    torch.manual_seed(seed)
    cls = torch.nn.LSTM if cell == "lstm" else torch.nn.GRU
    rnn = cls(inp, hidden, num_layers=layers, bidirectional=bidir)  # float32 init, PyTorch's default
    d = 2 if bidir else 1
    x32 = torch.randn(steps, batch, inp)
    dy32 = torch.randn(steps, batch, d * hidden)
    rnn64 = rnn.double()
    x = x32.double().requires_grad_(True)
    y, state = rnn64(x)
    h_n, c_n = state if cell == "lstm" else (state, None)
    (y * dy32.double()).sum().backward()
    case_dir = os.path.join(out_dir, name)
    os.makedirs(case_dir, exist_ok=True)
    params = [(k, v.detach().numpy()) for k, v in rnn64.state_dict().items()]
    write_safetensors(os.path.join(case_dir, "W.safetensors"), params)
    np.save(os.path.join(case_dir, "x.npy"), x32.numpy())
    np.save(os.path.join(case_dir, "dy.npy"), dy32.numpy())
    expected = [("y", y.detach().numpy()), ("h_n", h_n.detach().numpy())]
    if c_n is not None:
        expected.append(("c_n", c_n.detach().numpy()))
    expected.append(("dx", x.grad.numpy()))
    for k, p in rnn64.named_parameters():
        expected.append(("grad." + k, p.grad.numpy()))
    write_safetensors(os.path.join(case_dir, "expected.safetensors"), expected)
    with open(os.path.join(case_dir, "args"), "w") as f:
        f.write("--cell %s --hidden %d --layers %d%s\n" % (cell, hidden, layers, " --bidirectional" if bidir else ""))


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "grad_ref"
    for case in CASES:
        make_case(out_dir, *case)


if __name__ == "__main__":
    main()
