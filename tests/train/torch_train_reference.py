#!/usr/bin/python3
"""Writes the PyTorch references for the Trainer's loss, clipping and
optimizers (tests/train/train_ref/<case>/), read by test_trainer's
TrainTorch tests.

Each case trains an RNN stack with a linear head (head.weight, head.bias) for
a few steps, every step on the whole dataset as one batch, in float64 from
float32 initial values: per-sequence lengths (each sequence runs alone over
its own length, as a packed batch does), MSE or cross-entropy (torch's
defaults: the mean over the rows the loss reads), the global gradient norm
before clipping, torch.nn.utils.clip_grad_norm_, then torch.optim.SGD (with
momentum) or torch.optim.Adam. Files: W.safetensors (the initial parameters,
PyTorch names and order, then the head), x.npy (T, N, I), y.npy (targets),
case.json (the configuration, lengths, and each step's loss and gradient
norm) and expected.safetensors (the parameters after the last step).

Run with a python that has torch 1.13 (in this project /usr/bin/python3):
    /usr/bin/python3 tests/train/torch_train_reference.py tests/train/train_ref
"""

import json
import os
import sys

import numpy as np
import torch

from torch_grad_reference import write_safetensors

# name: cell, input, hidden, layers, bidirectional, T, N, outputs, loss, per-step targets,
#       lengths (None: all T), optimizer, lr, momentum, clip, steps, seed
CASES = {
    "lstm_bi_ce_sgd": dict(cell="lstm", input=3, hidden=5, layers=1, bidirectional=True, T=6, N=5,
                           outputs=3, loss="ce", per_step=False, lengths=[6, 4, 5, 2, 6],
                           optimizer="sgd", lr=0.2, momentum=0.9, clip=0.3, steps=4, seed=11),
    "gru_2l_mse_adam": dict(cell="gru", input=2, hidden=4, layers=2, bidirectional=False, T=5, N=3,
                            outputs=2, loss="mse", per_step=True, lengths=None,
                            optimizer="adam", lr=0.05, momentum=0.0, clip=0.05, steps=4, seed=12),
    "lstm_2l_ce_steps_sgd": dict(cell="lstm", input=2, hidden=3, layers=2, bidirectional=False, T=4,
                                 N=4, outputs=4, loss="ce", per_step=True, lengths=[4, 3, 1, 2],
                                 optimizer="sgd", lr=0.5, momentum=0.5, clip=0.0, steps=3, seed=13),
}


def make_case(out_dir, name, c):
    torch.manual_seed(c["seed"])
    cls = torch.nn.LSTM if c["cell"] == "lstm" else torch.nn.GRU
    rnn = cls(c["input"], c["hidden"], num_layers=c["layers"], bidirectional=c["bidirectional"])
    d = 2 if c["bidirectional"] else 1
    head = torch.nn.Linear(d * c["hidden"], c["outputs"])
    T, N, O = c["T"], c["N"], c["outputs"]
    x32 = torch.randn(T, N, c["input"])
    lengths = c["lengths"] or [T] * N
    if c["loss"] == "ce":
        y32 = torch.randint(0, O, (T, N) if c["per_step"] else (N,)).float()
    else:
        y32 = torch.randn((T, N, O) if c["per_step"] else (N, O))
    initial = [(k, v.numpy().copy()) for k, v in rnn.state_dict().items()]
    initial += [("head." + k, v.detach().numpy().copy()) for k, v in head.state_dict().items()]
    rnn, head = rnn.double(), head.double()
    params = list(rnn.parameters()) + list(head.parameters())
    if c["optimizer"] == "sgd":
        opt = torch.optim.SGD(params, lr=c["lr"], momentum=c["momentum"])
    else:
        opt = torch.optim.Adam(params, lr=c["lr"])
    x, y = x32.double(), y32.double()
    losses, norms = [], []
    for _ in range(c["steps"]):
        opt.zero_grad()
        rows, targets = [], []
        for n in range(N):
            out, _ = rnn(x[:lengths[n], n:n + 1])
            steps = range(lengths[n]) if c["per_step"] else [lengths[n] - 1]
            for t in steps:
                rows.append(out[t, 0])
                targets.append(y[t, n] if c["per_step"] else y[n])
        logits = head(torch.stack(rows))
        target = torch.stack(targets)
        if c["loss"] == "ce":
            loss = torch.nn.functional.cross_entropy(logits, target.long())
        else:
            loss = torch.nn.functional.mse_loss(logits, target)
        loss.backward()
        norm = torch.sqrt(sum((p.grad ** 2).sum() for p in params))
        if c["clip"] > 0:
            torch.nn.utils.clip_grad_norm_(params, c["clip"])
        opt.step()
        losses.append(loss.item())
        norms.append(norm.item())
    case_dir = os.path.join(out_dir, name)
    os.makedirs(case_dir, exist_ok=True)
    write_safetensors(os.path.join(case_dir, "W.safetensors"), initial)
    np.save(os.path.join(case_dir, "x.npy"), x32.numpy())
    np.save(os.path.join(case_dir, "y.npy"), y32.numpy())
    final = [(k, v.detach().numpy()) for k, v in rnn.state_dict().items()]
    final += [("head." + k, v.detach().numpy()) for k, v in head.state_dict().items()]
    write_safetensors(os.path.join(case_dir, "expected.safetensors"), final)
    record = dict(c, lengths=lengths if c["lengths"] else [], losses=losses, grad_norms=norms)
    with open(os.path.join(case_dir, "case.json"), "w") as f:
        json.dump(record, f, indent=1)
        f.write("\n")


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "train_ref"
    for name, c in CASES.items():
        make_case(out_dir, name, c)


if __name__ == "__main__":
    main()
