"""Adam, applied in place to a dict of parameters."""
import numpy as np


class Adam:
    """Adam (Kingma & Ba) with bias correction and a linear warm-up of the learning rate."""

    def __init__(self, params, lr=3e-3, betas=(0.9, 0.99), eps=1e-8, warmup=10):
        self.lr, self.betas, self.eps, self.warmup, self.t = lr, betas, eps, warmup, 0
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}

    def step(self, params, grads):
        """Update every parameter from its gradient (same arithmetic on every rank)."""
        self.begin_step()
        self.update(params, grads)

    def begin_step(self):
        """Start a step; then update() its parameters, all at once or in groups."""
        self.t += 1

    def update(self, params, grads):
        """Update the parameters named in `grads` (elementwise: groups give the same bits as all at once)."""
        b1, b2 = self.betas
        lr = self.lr * min(1.0, self.t / self.warmup) * np.sqrt(1.0 - b2 ** self.t) / (1.0 - b1 ** self.t)
        for k, g in grads.items():
            p = params[k]
            m, v = self.m[k], self.v[k]
            m *= b1
            m += (1.0 - b1) * g
            v *= b2
            v += (1.0 - b2) * g * g
            p -= lr * m / (np.sqrt(v) + self.eps)
