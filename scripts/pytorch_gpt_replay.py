"""Replays a tiny-GPT export in PyTorch and reports how far its numbers are from the Lab's.

An independent check of the Lab's CPU engine, not part of the build or tests (PyTorch is not a
dependency): in a throwaway virtual environment,
  python3 -m venv /tmp/torchvenv && /tmp/torchvenv/bin/pip install torch
  gradlab export --scenario tiny_gpt_tokens --steps 2 --precision f64 --out /tmp/gpt.json
  /tmp/torchvenv/bin/python scripts/pytorch_gpt_replay.py /tmp/gpt.json

The model is built here from nanoGPT's description (module names as its model.py, so that the
export's parameter names must match `named_parameters()` exactly), loaded with the export's
initial parameters; each step pads each micro-batch to its longest example, sums the
cross-entropy of the real targets (padding ignored), multiplies it by the run's weight per
token, back-propagates, clips and steps torch.optim.AdamW as the document's conventions say.
It prints, per part, run and step, the relative L2 error of the loss, the gradient and the
parameters against the export, and exits non-zero if any exceeds --tolerance.
"""

import argparse
import json
import sys

import torch
from torch import nn
from torch.nn import functional as F


class Attention(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.c_attn = nn.Linear(width, 3 * width)
        self.c_proj = nn.Linear(width, width)

    def forward(self, x):
        batch, length, width = x.shape
        q, k, v = self.c_attn(x).split(width, dim=2)
        shape = (batch, length, self.heads, width // self.heads)
        q, k, v = (t.view(shape).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / (k.shape[-1] ** 0.5)
        mask = torch.ones(length, length, dtype=torch.bool).tril()
        scores = scores.masked_fill(~mask, float("-inf"))
        y = scores.softmax(dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(batch, length, width))


class Mlp(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.c_fc = nn.Linear(width, 4 * width)
        self.c_proj = nn.Linear(4 * width, width)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, width, heads, eps):
        super().__init__()
        self.ln_1 = nn.LayerNorm(width, eps=eps)
        self.attn = Attention(width, heads)
        self.ln_2 = nn.LayerNorm(width, eps=eps)
        self.mlp = Mlp(width)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class Gpt(nn.Module):
    def __init__(self, vocab, layers, width, heads, context, eps):
        super().__init__()
        self.transformer = nn.ModuleDict(
            dict(
                wte=nn.Embedding(vocab, width),
                wpe=nn.Embedding(context, width),
                h=nn.ModuleList(Block(width, heads, eps) for _ in range(layers)),
                ln_f=nn.LayerNorm(width, eps=eps),
            )
        )
        self.lm_head = nn.Linear(width, vocab, bias=False)

    def forward(self, tokens):
        x = self.transformer.wte(tokens) + self.transformer.wpe(torch.arange(tokens.shape[1]))
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x))


def relative(a, b):
    return (torch.linalg.vector_norm(a - b) / torch.linalg.vector_norm(b).clamp_min(1e-300)).item()


def load(model, layout, flat, dtype):
    named = dict(model.named_parameters())
    exported = {t["name"] for t in layout}
    if exported != set(named):
        sys.exit(f"parameter names differ: only in export {exported - set(named)}, only here {set(named) - exported}")
    with torch.no_grad():
        for t in layout:
            values = torch.tensor(flat[t["offset"]:t["offset"] + t["len"]], dtype=dtype).view(t["shape"])
            if tuple(named[t["name"]].shape) != tuple(t["shape"]):
                sys.exit(f"{t['name']}: shape {t['shape']} here {tuple(named[t['name']].shape)}")
            named[t["name"]].copy_(values)


def flat_of(model, layout, gradients):
    named = dict(model.named_parameters())
    return torch.cat([(named[t["name"]].grad if gradients else named[t["name"]]).detach().reshape(-1) for t in layout])


def replay_part(part, dtype, tolerance):
    config, arch = part["config"], part["architecture"]
    torch.manual_seed(0)
    worst = 0.0
    for r, run in enumerate(part["runs"]):
        model = Gpt(len(arch["vocabulary"]), arch["layers"], arch["embedding"], arch["heads"], arch["context"], 1e-5).to(dtype)
        load(model, arch["parameter_layout"], part["initial_parameters"], dtype)
        named = dict(model.named_parameters())
        optimizer_spec = config["optimizer"]
        groups = [
            {"params": [named[t["name"]] for t in arch["parameter_layout"] if t["decayed"]], "weight_decay": optimizer_spec["weight_decay"]},
            {"params": [named[t["name"]] for t in arch["parameter_layout"] if not t["decayed"]], "weight_decay": 0.0},
        ]
        optimizer = torch.optim.AdamW(groups, lr=1.0, betas=(optimizer_spec["beta1"], optimizer_spec["beta2"]), eps=optimizer_spec["eps"])
        for step in part["steps"]:
            result = step["runs"][r]
            examples = step["examples"]
            weights = result["token_weights"]
            per_micro = len(examples) // len(weights)
            optimizer.zero_grad(set_to_none=False)
            loss_sum = 0.0
            tokens = 0
            for m, weight in enumerate(weights):
                micro = examples[m * per_micro:(m + 1) * per_micro]
                longest = max(len(e) - 1 for e in micro)
                inputs = torch.zeros(len(micro), longest, dtype=torch.long)
                targets = torch.full((len(micro), longest), -100, dtype=torch.long)
                for i, e in enumerate(micro):
                    inputs[i, : len(e) - 1] = torch.tensor(e[:-1])
                    targets[i, : len(e) - 1] = torch.tensor(e[1:])
                logits = model(inputs)
                loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1), ignore_index=-100, reduction="sum")
                (loss * weight).backward()
                loss_sum += loss.item()
                tokens += sum(len(e) - 1 for e in micro)
            gradient = flat_of(model, arch["parameter_layout"], True)
            errors = {
                "loss": abs(loss_sum / tokens - result["metrics"]["train_loss"]) / abs(result["metrics"]["train_loss"]),
                "gradient": relative(gradient, torch.tensor(result["gradient"], dtype=dtype)),
            }
            if config.get("clip"):
                torch.nn.utils.clip_grad_norm_(model.parameters(), config["clip"])
            for group in optimizer.param_groups:
                group["lr"] = result["metrics"]["learning_rate"]
            optimizer.step()
            errors["parameters"] = relative(flat_of(model, arch["parameter_layout"], False), torch.tensor(result["parameters"], dtype=dtype))
            worst = max(worst, *errors.values())
            print(f"  {part['part']:<7} {run['reduction']:<17} step {step['step'] + 1}: " + ", ".join(f"{k} {v:.2e}" for k, v in errors.items()))
    return worst


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("export")
    parser.add_argument("--tolerance", type=float, default=None, help="default: 1e-10 for cpu-f64, 1e-4 for cpu-f32")
    args = parser.parse_args()
    with open(args.export) as f:
        doc = json.load(f)
    if doc.get("schema") != "gradlab-export" or doc.get("model") != "gpt":
        sys.exit("not a tiny-GPT export (schema gradlab-export, model gpt)")
    f64 = doc["engine"] == "cpu-f64"
    dtype = torch.float64 if f64 else torch.float32
    tolerance = args.tolerance or (1e-10 if f64 else 1e-4)
    torch.set_num_threads(1)
    print(f"PyTorch {torch.__version__} replaying {doc['scenario']} ({doc['engine']}) in {dtype}:")
    worst = max(replay_part(part, dtype, tolerance) for part in doc["parts"])
    print(f"worst relative error {worst:.2e} (tolerance {tolerance:.0e})")
    sys.exit(0 if worst <= tolerance else 1)


if __name__ == "__main__":
    main()
