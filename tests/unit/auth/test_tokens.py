"""Tokens (message tags, change ids, task ids) come from the kernel's CSPRNG (#40: they came
from the process-wide Mersenne Twister, predictable from the tags a tenant sees)."""

from __future__ import annotations

import base64
import os

import pytest

from cassieq import tokens


def test_tokens_are_the_kernels_random_bytes_read_in_blocks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads: list[int] = []

    def urandom(n: int) -> bytes:
        reads.append(n)
        return bytes(i % 256 for i in range(n))

    monkeypatch.setattr("cassieq.tokens.os.urandom", urandom)
    tokens._drop_block()
    first = tokens.new_token()
    second = tokens.new_token()
    assert base64.urlsafe_b64decode(first) == bytes(range(12))
    assert base64.urlsafe_b64decode(second) == bytes(range(12, 24))
    for _ in range(tokens.TOKENS_PER_READ - 2):
        tokens.new_token()
    assert reads == [12 * tokens.TOKENS_PER_READ]  # one read for a whole block
    tokens.new_token()
    assert len(reads) == 2
    tokens._drop_block()


def test_tokens_are_unique_and_sixteen_characters() -> None:
    made = {tokens.new_token() for _ in range(5 * tokens.TOKENS_PER_READ)}
    assert len(made) == 5 * tokens.TOKENS_PER_READ
    assert {len(t) for t in made} == {16}


def test_a_forked_child_does_not_repeat_its_parents_tokens() -> None:
    tokens.new_token()  # the parent holds a block now
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next tokens, to the parent
        os.close(read)
        os.write(write, "".join(tokens.new_token() for _ in range(4)).encode())
        os._exit(0)
    os.close(write)
    child = os.read(read, 1024).decode()
    os.close(read)
    os.waitpid(pid, 0)
    parent = "".join(tokens.new_token() for _ in range(4))
    assert child and child != parent
