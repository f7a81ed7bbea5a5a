"""PyTorch on the tiny GPT's bench workload, for side-by-side figures with `gradlab bench`.

Not part of the project's build or tests: run it in a throwaway virtual environment,
  python3 -m venv /tmp/torchvenv && /tmp/torchvenv/bin/pip install torch numpy
  /tmp/torchvenv/bin/python scripts/pytorch_gpt.py --steps 30
right before or after `gradlab bench --engines cpu` on the same (idle) machine, and compare
ratios of tokens per second.

The model is the Lab's (crates/sim/src/gpt/): nanoGPT's architecture, character level,
2 layers x 64 wide, 4 heads, context 64, vocabulary 72, LayerNorm eps 1e-5, GELU (tanh), no
dropout, lm_head untied and without bias; float32, one thread. Workload as the bench's
"blocks" line: 32 examples of 65 tokens (64 predicted each) per optimizer step, one full batch
and 8 micro-batches of 4 with loss / 8; AdamW (0.9, 0.99), clipping at 1.
"""

import argparse
import time

import torch
from torch import nn
from torch.nn import functional as F


class Block(nn.Module):
    def __init__(self, width: int, heads: int):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(width)
        self.c_attn = nn.Linear(width, 3 * width)
        self.attn_proj = nn.Linear(width, width)
        self.ln_2 = nn.LayerNorm(width)
        self.c_fc = nn.Linear(width, 4 * width)
        self.mlp_proj = nn.Linear(4 * width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, width = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(width, dim=2)
        shape = (batch, length, self.heads, width // self.heads)
        q, k, v = (t.view(shape).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.attn_proj(y.transpose(1, 2).contiguous().view(batch, length, width))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class TinyGpt(nn.Module):
    def __init__(self, vocab: int, layers: int, width: int, heads: int, context: int):
        super().__init__()
        self.wte = nn.Embedding(vocab, width)
        self.wpe = nn.Embedding(context, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(width)
        self.lm_head = nn.Linear(width, vocab, bias=False)

    def forward(self, tokens: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(tokens.shape[1])
        x = self.wte(tokens) + self.wpe(positions)
        for block in self.blocks:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.reshape(-1))


def tokens_per_second(micro_batches: int, steps: int, data: torch.Tensor) -> float:
    torch.manual_seed(0)
    model = TinyGpt(vocab=72, layers=2, width=64, heads=4, context=64)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.99), weight_decay=0.1)
    micro = data.shape[0] // micro_batches

    def step():
        optimizer.zero_grad(set_to_none=True)
        for m in range(micro_batches):
            chunk = data[m * micro:(m + 1) * micro]
            loss = model(chunk[:, :-1], chunk[:, 1:]) / micro_batches
            loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()

    for _ in range(3):
        step()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    seconds = time.perf_counter() - start
    return steps * data.shape[0] * (data.shape[1] - 1) / seconds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    generator = torch.Generator().manual_seed(1)
    data = torch.randint(0, 72, (32, 65), generator=generator)
    print(f"PyTorch {torch.__version__}, {torch.get_num_threads()} thread(s), tiny GPT blocks 32 x 64:")
    for micro_batches, label in [(1, "full batch"), (8, "8 x 4")]:
        rate = tokens_per_second(micro_batches, args.steps, data)
        print(f"  {label:<12} {rate:>9.0f} tokens/s  ({rate / 2048:.1f} optimizer steps/s)")


if __name__ == "__main__":
    main()
