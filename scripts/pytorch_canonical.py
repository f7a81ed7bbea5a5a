"""PyTorch on the canonical workload, for side-by-side figures with `gradlab bench`.

Not part of the project's build or tests: run it in a throwaway virtual environment,
  python3 -m venv /tmp/torchvenv && /tmp/torchvenv/bin/pip install torch numpy
  /tmp/torchvenv/bin/python scripts/pytorch_canonical.py --steps 1000
right before or after `gradlab bench` on the same (idle) machine, and compare ratios.

Workload as in crates/cli/src/bench.rs: 3-class spiral, 300 points per class, MLP 2-64-64-3 ReLU,
float32, SGD lr 0.1, B = 256 as one full batch and as 4 micro-batches of 64 with loss / 4,
training only (zero_grad, forward, backward, optimizer step), one thread.
"""

import argparse
import time

import torch


def spiral(points_per_class: int, classes: int, generator: torch.Generator):
    inputs, labels = [], []
    for c in range(classes):
        r = torch.linspace(0.0, 1.0, points_per_class)
        t = torch.linspace(c * 4.0, (c + 1) * 4.0, points_per_class) + 0.2 * torch.randn(
            points_per_class, generator=generator
        )
        inputs.append(torch.stack([r * torch.sin(t), r * torch.cos(t)], dim=1))
        labels.append(torch.full((points_per_class,), c, dtype=torch.long))
    return torch.cat(inputs), torch.cat(labels)


def time_steps(micro_batches: int, steps: int, x: torch.Tensor, y: torch.Tensor) -> float:
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(2, 64),
        torch.nn.ReLU(),
        torch.nn.Linear(64, 64),
        torch.nn.ReLU(),
        torch.nn.Linear(64, 3),
    )
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = torch.nn.CrossEntropyLoss()
    batch = 256
    size = batch // micro_batches
    # Batches prepared up front, as the Rust bench prepares its own: timing measures training.
    batches = []
    for b in range(8):
        index = torch.randperm(x.shape[0], generator=torch.Generator().manual_seed(b))[:batch]
        batches.append((x[index], y[index]))

    def step(s: int):
        bx, by = batches[s % len(batches)]
        optimizer.zero_grad(set_to_none=False)
        for k in range(micro_batches):
            rows = slice(k * size, (k + 1) * size)
            loss = loss_fn(model(bx[rows]), by[rows]) / micro_batches
            loss.backward()
        optimizer.step()

    for s in range(5):
        step(s)
    start = time.perf_counter()
    for s in range(steps):
        step(s)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    args = parser.parse_args()
    torch.set_num_threads(1)
    x, y = spiral(300, 3, torch.Generator().manual_seed(1))
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread, CPU capability "
          f"{torch.backends.cpu.get_cpu_capability()}")
    print(f"{'engine':<10} {'regime':<14} {'work per step':<24} {'steps/s':>10} {'ms/step':>10}")
    for micro_batches, regime in [(1, "full 256"), (4, "4 x 64")]:
        seconds = time_steps(micro_batches, args.steps, x, y)
        print(f"{'pytorch':<10} {regime:<14} {'training only':<24} "
              f"{args.steps / seconds:>10.1f} {1000 * seconds / args.steps:>10.3f}")


if __name__ == "__main__":
    main()
