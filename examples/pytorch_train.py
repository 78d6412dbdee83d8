"""Train a small CNN on scikit-learn's handwritten digits (8x8 images shipped by Debian's
python3-sklearn) with PyTorch on the CPU: the example that `opscope record` profiles with no
code change.

    opscope record -o digits.opscope -- /usr/bin/python3 examples/pytorch_train.py
    opscope report --views model,operator --top 10 digits.opscope

Options: --epochs N (2), --batch N (64), --workers N (DataLoader worker processes, 0).
"""
import argparse

import torch
from sklearn.datasets import load_digits
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class DigitsNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(32 * 4 * 4, 10)

    def forward(self, x):
        x = torch.relu(self.conv1(x))
        x = self.pool(torch.relu(self.conv2(x)))
        return self.fc(x.flatten(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--workers", type=int, default=0)
    args = ap.parse_args()
    torch.manual_seed(0)
    digits = load_digits()
    x = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
    y = torch.tensor(digits.target, dtype=torch.long)
    loader = DataLoader(TensorDataset(x, y), batch_size=args.batch, shuffle=True,
                        num_workers=args.workers)
    model = DigitsNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(args.epochs):
        total, correct = 0.0, 0
        for xb, yb in loader:
            opt.zero_grad()
            out = model(xb)
            loss = loss_fn(out, yb)
            loss.backward()
            opt.step()
            total += loss.item() * len(xb)
            correct += (out.argmax(1) == yb).sum().item()
        print("epoch %d: loss %.4f, accuracy %.3f" % (epoch, total / len(y), correct / len(y)))


if __name__ == "__main__":
    main()
