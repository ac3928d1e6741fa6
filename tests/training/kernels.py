"""A fingerprint of this machine's fp32 CPU kernels, independent of collapse-lab's code: a
small MLP trained a few SGD steps on fixed data by torch alone, its weights hashed. Two
machines with one torch release and one reported capability (AVX512) can still round
differently (an Intel and an AMD core take different kernels); byte-for-byte vectors are
compared where this fingerprint is the one they were written beside."""
from __future__ import annotations

import hashlib

import torch


def fingerprint() -> str:
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(256, 64, generator=g), torch.randint(0, 10, (256,), generator=g)
    w = [torch.randn(64, 128, generator=g) * 0.1, torch.randn(128, 128, generator=g) * 0.1,
         torch.randn(128, 10, generator=g) * 0.1]
    w = [t.requires_grad_() for t in w]
    opt = torch.optim.SGD(w, lr=0.05, momentum=0.9)
    for i in range(8):
        b = slice(32 * i, 32 * (i + 1))
        h = torch.relu(torch.relu(x[b] @ w[0]) @ w[1]) @ w[2]
        opt.zero_grad()
        torch.nn.functional.cross_entropy(h, y[b]).backward()
        opt.step()
    return hashlib.sha256(b"".join(t.detach().numpy().tobytes() for t in w)).hexdigest()[:16]


if __name__ == "__main__":
    print(fingerprint(), torch.__version__, torch.backends.cpu.get_cpu_capability())
