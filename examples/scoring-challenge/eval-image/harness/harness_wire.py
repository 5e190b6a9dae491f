"""Messages between the scorer and the bundle's process: framed, typed, bounded, never pickled.

One message = a 12-byte prefix (header length u32 BE, payload length u64 BE), a JSON header
`{"kind": ..., "fields": {...}, "tensors": [{"name", "dtype", "shape", "offset", "nbytes"}]}`
and a payload holding the tensors' raw bytes. The scorer reads what the bundle's process sends
as hostile data: every length is capped before anything is allocated, every tensor's byte count
must match its dtype and shape and lie inside the payload, and only plain numeric dtypes exist.
Nothing is ever unpickled, so a message can carry data only, never code.
"""

from __future__ import annotations

import json
import struct
from typing import Any, BinaryIO

import torch

_PREFIX = struct.Struct(">IQ")
HEADER_LIMIT = 64 * 1024 * 1024  # a graph of many thousand nodes fits well inside

DTYPES: dict[str, torch.dtype] = {
    "float64": torch.float64,
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "int64": torch.int64,
    "int32": torch.int32,
    "int16": torch.int16,
    "int8": torch.int8,
    "uint8": torch.uint8,
    "bool": torch.bool,
}
_NAMES = {dtype: name for name, dtype in DTYPES.items()}


class WireError(Exception):
    """A message that breaks the protocol: the peer's fault, reported with what was wrong."""


class TooLarge(WireError):
    """A message whose tensors hold more elements than the receiver allows (checked on the header)."""

    def __init__(self, elements: int, limit: int) -> None:
        super().__init__(f"a message of {elements} tensor elements is over the limit of {limit}")
        self.elements = elements
        self.limit = limit


class Message:
    __slots__ = ("kind", "fields", "tensors")

    def __init__(self, kind: str, fields: dict[str, Any], tensors: dict[str, torch.Tensor]) -> None:
        self.kind = kind
        self.fields = fields
        self.tensors = tensors


def _tensor_bytes(tensor: torch.Tensor) -> bytes:
    flat = tensor.detach().to("cpu").contiguous()
    if flat.dtype == torch.bfloat16:  # numpy has no bfloat16: same bits as int16
        flat = flat.view(torch.int16)
    return flat.numpy().tobytes()


def send(stream: BinaryIO, kind: str, fields: dict[str, Any] | None = None, tensors: dict[str, torch.Tensor] | None = None) -> None:
    """Write one message and flush it; each tensor's bytes are made only when it is written."""
    described = []
    offset = 0
    for name, tensor in (tensors or {}).items():
        if tensor.dtype not in _NAMES:
            raise WireError(f"tensor {name} has dtype {tensor.dtype}, which the protocol does not carry")
        nbytes = tensor.numel() * tensor.element_size()
        described.append({"name": name, "dtype": _NAMES[tensor.dtype], "shape": list(tensor.shape), "offset": offset, "nbytes": nbytes})
        offset += nbytes
    header = json.dumps(
        {"kind": kind, "fields": fields or {}, "tensors": described}, separators=(",", ":"), allow_nan=False
    ).encode("utf-8")
    stream.write(_PREFIX.pack(len(header), offset))
    stream.write(header)
    for tensor in (tensors or {}).values():
        stream.write(_tensor_bytes(tensor))
    stream.flush()


def _read_exactly(stream: BinaryIO, size: int, what: str) -> bytes:
    data = stream.read(size)
    if data is None or len(data) != size:
        raise EOFError(f"the peer closed the channel in the middle of a message ({what})")
    return data


def receive(stream: BinaryIO, *, payload_limit: int, element_limit: int | None = None) -> Message:
    """Read one message; EOFError when the peer closed the channel between messages.

    With `element_limit`, a message whose tensors hold more elements in all raises TooLarge as
    soon as its header is read, before any of its payload is.
    """
    prefix = stream.read(_PREFIX.size)
    if not prefix:
        raise EOFError("the peer closed the channel")
    if len(prefix) != _PREFIX.size:
        raise EOFError("the peer closed the channel in the middle of a message (prefix)")
    header_size, payload_size = _PREFIX.unpack(prefix)
    if header_size > HEADER_LIMIT:
        raise WireError(f"a message header of {header_size} bytes is over the limit of {HEADER_LIMIT}")
    if payload_size > payload_limit:
        raise WireError(f"a message of {payload_size} bytes is over the limit of {payload_limit}")
    try:
        header = json.loads(_read_exactly(stream, header_size, "header").decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise WireError(f"a message header is not JSON: {error}") from None
    if not isinstance(header, dict) or not isinstance(header.get("kind"), str):
        raise WireError("a message header has no kind")
    fields = header.get("fields", {})
    described = header.get("tensors", [])
    if not isinstance(fields, dict) or not isinstance(described, list):
        raise WireError("a message header's fields or tensors are malformed")
    if element_limit is not None:
        elements = 0
        for entry in described:
            shape = entry.get("shape") if isinstance(entry, dict) else None
            count = 1
            for dim in shape if isinstance(shape, list) else []:
                count *= dim if isinstance(dim, int) and dim >= 0 else 0
            elements += count
        if elements > element_limit:
            raise TooLarge(elements, element_limit)
    payload = _read_exactly(stream, payload_size, "payload")
    tensors: dict[str, torch.Tensor] = {}
    for entry in described:
        name, tensor = _decode_tensor(entry, payload)
        if name in tensors:
            raise WireError(f"tensor {name} appears twice in one message")
        tensors[name] = tensor
    return Message(header["kind"], fields, tensors)


def _decode_tensor(entry: Any, payload: bytes) -> tuple[str, torch.Tensor]:
    if not isinstance(entry, dict):
        raise WireError("a tensor description is not an object")
    name, dtype_name, shape = entry.get("name"), entry.get("dtype"), entry.get("shape")
    offset, nbytes = entry.get("offset"), entry.get("nbytes")
    if not isinstance(name, str) or len(name) > 1024:
        raise WireError("a tensor has no usable name")
    if dtype_name not in DTYPES:
        raise WireError(f"tensor {name} has dtype {dtype_name!r}, which the protocol does not carry")
    if (
        not isinstance(shape, list)
        or len(shape) > 16
        or not all(isinstance(d, int) and not isinstance(d, bool) and 0 <= d < 2**40 for d in shape)
    ):
        raise WireError(f"tensor {name} has a malformed shape")
    for value in (offset, nbytes):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise WireError(f"tensor {name} has a malformed offset or size")
    dtype = DTYPES[dtype_name]
    count = 1
    for dim in shape:
        count *= dim
    itemsize = torch.empty((), dtype=dtype).element_size()
    if count * itemsize != nbytes or offset + nbytes > len(payload):
        raise WireError(f"tensor {name}: {nbytes} bytes at {offset} do not hold {dtype_name}{shape} inside the payload")
    raw = bytearray(payload[offset : offset + nbytes])
    if dtype == torch.bfloat16:
        tensor = torch.frombuffer(raw, dtype=torch.int16).view(torch.bfloat16) if nbytes else torch.zeros(0, dtype=dtype)
    else:
        tensor = torch.frombuffer(raw, dtype=dtype) if nbytes else torch.zeros(0, dtype=dtype)
    return name, tensor.reshape(shape)
