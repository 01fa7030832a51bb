#!/usr/bin/python3
"""Loads a `farnn train` checkpoint into torch.nn.LSTM/GRU + torch.nn.Linear
with load_state_dict(strict=True) and checks that PyTorch's forward of the
loaded model gives the same outputs as farnn (run through `farnn grad` with
the same weights), within 1e-5 of the largest value.

    /usr/bin/python3 tests/train/check_checkpoint_torch.py <farnn binary>
Needs torch (python3-torch); not part of `make test` (CI has no torch).
"""

import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_grad_reference  # noqa: E402


def read_safetensors(path):
    return {k: torch.from_numpy(v) for k, v in torch_grad_reference.read_safetensors(path).items()}


def main():
    farnn = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        for cell, bidir in (("lstm", False), ("gru", True)):
            ck = os.path.join(tmp, "ck.safetensors")
            cmd = [farnn, "train", "--task", "sine", "--steps", "12", "--samples", "16", "--cell", cell,
                   "--hidden", "6", "--layers", "2", "--epochs", "2", "--quiet", "--checkpoint", ck]
            if bidir:
                cmd.append("--bidirectional")
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            state = read_safetensors(ck)
            head = {k[5:]: v for k, v in state.items() if k.startswith("head.")}
            rnn_state = {k: v for k, v in state.items() if not k.startswith("head.")}
            cls = torch.nn.LSTM if cell == "lstm" else torch.nn.GRU
            rnn = cls(1, 6, num_layers=2, bidirectional=bidir)
            rnn.load_state_dict(rnn_state, strict=True)
            linear = torch.nn.Linear(12 if bidir else 6, 1)
            linear.load_state_dict(head, strict=True)
            # Same weights through farnn grad: y must agree with PyTorch's.
            x = torch.randn(5, 3, 1)
            dy = torch.zeros(5, 3, 12 if bidir else 6)
            w = os.path.join(tmp, "W.safetensors")
            body = b"".join(v.numpy().astype("<f4").tobytes() for v in rnn_state.values())
            offs, hdr = 0, {}
            for k, v in rnn_state.items():
                hdr[k] = {"dtype": "F32", "shape": list(v.shape), "data_offsets": [offs, offs + 4 * v.numel()]}
                offs += 4 * v.numel()
            text = json.dumps(hdr).encode()
            text += b" " * ((8 - len(text) % 8) % 8)
            open(w, "wb").write(struct.pack("<Q", len(text)) + text + body)
            np.save(os.path.join(tmp, "x.npy"), x.numpy())
            np.save(os.path.join(tmp, "dy.npy"), dy.numpy())
            out = os.path.join(tmp, "out.safetensors")
            cmd = [farnn, "grad", "--weights", w, "--input", os.path.join(tmp, "x.npy"), "--grad-output",
                   os.path.join(tmp, "dy.npy"), "--cell", cell, "--hidden", "6", "--layers", "2", "--out", out]
            if bidir:
                cmd.append("--bidirectional")
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            ours = read_safetensors(out)["y"]
            with torch.no_grad():
                theirs, _ = rnn(x)
            err = (ours - theirs).abs().max().item() / theirs.abs().max().item()
            print("%s%s: load_state_dict(strict=True) ok, y agrees to %.2e" % (cell, " bidirectional" if bidir else "", err))
            if err > 1e-5:
                sys.exit(1)


if __name__ == "__main__":
    main()
