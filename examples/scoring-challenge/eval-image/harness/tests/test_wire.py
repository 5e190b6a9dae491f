"""The scorer's channel: what goes through intact, and every malformed message refused."""

from __future__ import annotations

import io
import json
import struct
import unittest

import torch

import harness_wire
from harness_wire import TooLarge, WireError


def roundtrip(kind: str, fields: dict[str, object], tensors: dict[str, torch.Tensor], **limits: int) -> harness_wire.Message:
    buffer = io.BytesIO()
    harness_wire.send(buffer, kind, fields, tensors)
    buffer.seek(0)
    return harness_wire.receive(buffer, payload_limit=limits.get("payload_limit", 1 << 30), element_limit=limits.get("element_limit"))


def raw(header: object, payload: bytes = b"", header_size: int | None = None) -> io.BytesIO:
    encoded = json.dumps(header).encode()
    return io.BytesIO(struct.pack(">IQ", len(encoded) if header_size is None else header_size, len(payload)) + encoded + payload)


class Roundtrip(unittest.TestCase):
    def test_every_dtype_and_shape_comes_back_bit_for_bit(self) -> None:
        tensors = {
            name: (torch.randn(3, 5) * 100).to(dtype) if dtype.is_floating_point else torch.randint(0, 2 if dtype == torch.bool else 100, (2, 3, 4)).to(dtype)
            for name, dtype in harness_wire.DTYPES.items()
        }
        tensors["empty"] = torch.zeros(0, 7)
        tensors["scalar"] = torch.tensor(3.5)
        tensors["strided"] = torch.arange(12.0).view(3, 4).t()  # not contiguous
        message = roundtrip("batch", {"graph_id": 3}, tensors)
        self.assertEqual((message.kind, message.fields), ("batch", {"graph_id": 3}))
        self.assertEqual(set(message.tensors), set(tensors))
        for name, tensor in tensors.items():
            self.assertEqual(message.tensors[name].dtype, tensor.dtype, name)
            self.assertTrue(torch.equal(message.tensors[name], tensor), name)

    def test_eof_between_and_inside_messages(self) -> None:
        with self.assertRaisesRegex(EOFError, "closed the channel$"):
            harness_wire.receive(io.BytesIO(b""), payload_limit=100)
        buffer = io.BytesIO()
        harness_wire.send(buffer, "batch", {}, {"t": torch.zeros(10)})
        with self.assertRaisesRegex(EOFError, "middle"):
            harness_wire.receive(io.BytesIO(buffer.getvalue()[:-3]), payload_limit=1000)


class Refusals(unittest.TestCase):
    def test_limits_are_checked_before_anything_is_read(self) -> None:
        with self.assertRaisesRegex(WireError, "header of .* over the limit"):
            harness_wire.receive(raw({"kind": "x"}, header_size=harness_wire.HEADER_LIMIT + 1), payload_limit=100)
        with self.assertRaisesRegex(WireError, "over the limit of 10"):
            harness_wire.receive(raw({"kind": "x"}, b"0" * 11), payload_limit=10)
        huge = {"kind": "batch", "tensors": [{"name": "w", "dtype": "float32", "shape": [200_000_000], "offset": 0, "nbytes": 800_000_000}]}
        stream = raw(huge)  # no payload follows: TooLarge must come from the header alone
        with self.assertRaises(TooLarge) as caught:
            harness_wire.receive(stream, payload_limit=1 << 40, element_limit=150_000_000)
        self.assertEqual(caught.exception.elements, 200_000_000)

    def test_malformed_headers_and_tensors(self) -> None:
        good = {"name": "t", "dtype": "float32", "shape": [2], "offset": 0, "nbytes": 8}
        cases = {
            "not json": (io.BytesIO(struct.pack(">IQ", 3, 0) + b"{{{"), "not JSON"),
            "no kind": (raw({"fields": {}}), "no kind"),
            "fields": (raw({"kind": "x", "fields": []}), "malformed"),
            "dtype": (raw({"kind": "x", "tensors": [dict(good, dtype="object")]}, b"0" * 8), "does not carry"),
            "shape": (raw({"kind": "x", "tensors": [dict(good, shape=[-2])]}, b"0" * 8), "malformed shape"),
            "size": (raw({"kind": "x", "tensors": [dict(good, nbytes=12)]}, b"0" * 12), "do not hold"),
            "outside": (raw({"kind": "x", "tensors": [dict(good, offset=4)]}, b"0" * 8), "do not hold"),
            "twice": (raw({"kind": "x", "tensors": [good, good]}, b"0" * 8), "twice"),
            "name": (raw({"kind": "x", "tensors": [dict(good, name=7)]}, b"0" * 8), "no usable name"),
        }
        for name, (stream, pattern) in cases.items():
            with self.subTest(name):
                with self.assertRaisesRegex(WireError, pattern):
                    harness_wire.receive(stream, payload_limit=1 << 20)


if __name__ == "__main__":
    unittest.main()
