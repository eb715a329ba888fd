"""The keystroke-level model (Card, Moran & Newell 1980) that ``annotate_keystrokes`` prices a
pair's operators with: K = 0.28 s a key (an average 40 wpm typist), P = 1.1 s to point, B = 0.1 s
per button press or release, H = 0.4 s to move a hand between mouse and keyboard, M = 1.35 s of
mental preparation."""

from __future__ import annotations

from dataclasses import dataclass, field

K, P, B, H, M = 0.28, 1.1, 0.1, 0.4, 1.35
SHIFTED = set('ABCDEFGHIJKLMNOPQRSTUVWXYZ~!@#$%^&*()_+{}|:"<>?')


@dataclass
class Cost:
    """One pair's operators, in order: ("k", n, mental) key presses, ("t", text) a typed string,
    ("c",) a click, ("d",) a drag."""

    ops: list[tuple] = field(default_factory=list)

    def keys(self, n: int = 1, *, mental: bool = True) -> None:
        self.ops.append(("k", n, mental))

    def typed(self, text: str) -> None:
        self.ops.append(("t", text))

    def click(self) -> None:
        self.ops.append(("c",))

    def drag(self) -> None:
        self.ops.append(("d",))

    @property
    def keystrokes(self) -> int:
        return sum(
            op[1] if op[0] == "k" else sum(1 + (ch in SHIFTED) for ch in op[1])
            for op in self.ops
            if op[0] in "kt"
        )

    @property
    def clicks(self) -> int:
        return sum(op[0] == "c" for op in self.ops)

    @property
    def drags(self) -> int:
        return sum(op[0] == "d" for op in self.ops)

    def seconds(self) -> float:
        total, hand = 0.0, "keyboard"  # the pair opens with the hands on the keyboard
        for op in self.ops:
            device = "mouse" if op[0] in "cd" else "keyboard"
            if device != hand:
                total += H
                hand = device
            if op[0] == "c":
                total += M + P + 2 * B
            elif op[0] == "d":
                total += M + 2 * P + 2 * B
            elif op[0] == "t":
                total += M + K * sum(1 + (ch in SHIFTED) for ch in op[1])
            else:
                total += (M if op[2] else 0.0) + K * op[1]
        return total
