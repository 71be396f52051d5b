"""Where a picture's bytes end, and a PNG's pixels checked without holding them (pure: no Django).

**Trailing data.** A GIF with an HTML page appended is still a valid GIF: Pillow reads it and every
browser shows it, but the stored file then carries the page too. ``image_end`` walks the format's
own structure (JPEG segments to EOI, PNG chunks to IEND, GIF blocks to the trailer, WebP's RIFF
length) and says where the picture ends, so only the picture is stored and served. Nothing is
re-encoded: no JPEG generation loss, and every metadata block inside the picture (EXIF orientation,
ICC profile) stays as it was.

**Bounded decoding.** ``png_pixels_check`` inflates a PNG's image data a slice at a time and checks
that it holds exactly the scanlines the header declares, each with a valid filter byte, so a
truncated or corrupt PNG is refused while memory stays at a few slices whatever its size.
"""

from __future__ import annotations

import struct
import zlib

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}  # colour type -> samples per pixel
_INFLATE_SLICE = 1 << 20  # bytes of pixels inflated at a time


class Malformed(ValueError):
    """The bytes do not follow the format's structure (a truncated or corrupt file)."""


def image_end(data: bytes, fmt: str) -> int | None:
    """The offset just past the picture in ``data`` (JPEG, PNG, GIF, WEBP), or None for other formats.

    Raises Malformed when the structure is broken before its end marker.
    """
    ends = {"JPEG": _jpeg_end, "PNG": _png_end, "GIF": _gif_end, "WEBP": _webp_end}
    if fmt not in ends:
        return None
    try:
        return ends[fmt](data)
    except Malformed:
        raise
    except (IndexError, ValueError, struct.error):  # ran off the end (ValueError: bytes.index)
        raise Malformed(f"the {fmt} structure ends early") from None


def _jpeg_end(data: bytes) -> int:
    if data[:2] != b"\xff\xd8":
        raise Malformed("no JPEG start marker")
    pos, n = 2, len(data)
    while pos < n:
        if data[pos] != 0xFF:
            raise Malformed(f"no JPEG marker at byte {pos}")
        while data[pos] == 0xFF:  # fill bytes
            pos += 1
        marker = data[pos]
        pos += 1
        if marker == 0xD9:  # EOI
            return pos
        if marker == 0x01 or 0xD0 <= marker <= 0xD7:  # TEM, RSTn: no length
            continue
        (length,) = struct.unpack(">H", data[pos : pos + 2])
        if length < 2 or pos + length > n:
            raise Malformed("a JPEG segment runs past the end of the file")
        pos += length
        if marker == 0xDA:  # SOS: entropy-coded data up to the next marker that is not RSTn
            while True:
                pos = data.index(b"\xff", pos)
                following = data[pos + 1]
                if following == 0x00 or 0xD0 <= following <= 0xD7 or following == 0xFF:
                    pos += 1 if following == 0xFF else 2
                    continue
                break
    raise Malformed("no JPEG end marker")


def _png_end(data: bytes) -> int:
    if not data.startswith(PNG_SIGNATURE):
        raise Malformed("no PNG signature")
    pos = len(PNG_SIGNATURE)
    while True:
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        pos += 12 + length
        if pos > len(data):
            raise Malformed("a PNG chunk runs past the end of the file")
        if kind == b"IEND":
            return pos


def _skip_sub_blocks(data: bytes, pos: int) -> int:
    while True:
        size = data[pos]
        pos += 1 + size
        if size == 0:
            return pos


def _gif_end(data: bytes) -> int:
    if data[:6] not in (b"GIF87a", b"GIF89a"):
        raise Malformed("no GIF signature")
    flags = data[10]
    pos = 13 + (3 * 2 ** ((flags & 7) + 1) if flags & 0x80 else 0)
    while True:
        block = data[pos]
        if block == 0x3B:  # trailer
            return pos + 1
        if block == 0x21:  # extension: label, then sub-blocks
            pos = _skip_sub_blocks(data, pos + 2)
        elif block == 0x2C:  # image descriptor, local colour table, LZW code size, sub-blocks
            local = data[pos + 9]
            pos += 10 + (3 * 2 ** ((local & 7) + 1) if local & 0x80 else 0)
            pos = _skip_sub_blocks(data, pos + 1)
        else:
            raise Malformed(f"unknown GIF block 0x{block:02x} at byte {pos}")


def _webp_end(data: bytes) -> int:
    if data[:4] != b"RIFF" or data[8:12] != b"WEBP":
        raise Malformed("no WebP RIFF header")
    (size,) = struct.unpack("<I", data[4:8])
    end = 8 + size + (size & 1)
    if end > len(data):
        raise Malformed("the WebP RIFF chunk runs past the end of the file")
    return end


def png_pixels_check(data: bytes) -> bool:
    """Inflate the image data of a PNG (``data`` ends at IEND) in slices; raise Malformed if broken.

    Checks that the zlib stream is complete and intact, holds exactly the bytes the header's size,
    depth and colour type call for, and that every scanline has a filter type 0–4. Returns True once
    checked, False for an interlaced PNG (not checked here: its caller decodes it whole, within the
    memory budget). Memory: one slice (1 MiB) of pixels and one chunk, whatever the picture's size.
    """
    try:
        return _PngScan().run(data)
    except (zlib.error, struct.error) as exc:
        raise Malformed(f"the PNG's image data is corrupt ({exc})") from None


class _PngScan:
    def __init__(self) -> None:
        self.inflater = zlib.decompressobj()
        self.line_length = None  # bytes per scanline, its filter byte included
        self.lines = 0  # scanlines the header calls for
        self.lines_done = 0
        self.offset_in_line = 0

    def run(self, data: bytes) -> bool:
        pos = len(PNG_SIGNATURE)
        while pos < len(data):
            length, kind = struct.unpack(">I4s", data[pos : pos + 8])
            body = data[pos + 8 : pos + 8 + length]
            pos += 12 + length
            if kind == b"IHDR":
                width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
                bits = depth * _PNG_CHANNELS.get(colour, 0)
                if not bits:
                    raise Malformed(f"unknown PNG colour type {colour}")
                if interlace:
                    return False
                self.line_length, self.lines = 1 + (width * bits + 7) // 8, height
            elif kind == b"IDAT":
                if self.line_length is None:
                    raise Malformed("PNG image data before its header")
                chunk = body
                while chunk:
                    self.consume(self.inflater.decompress(chunk, _INFLATE_SLICE))
                    chunk = self.inflater.unconsumed_tail
            elif kind == b"IEND":
                break
        self.consume(self.inflater.flush())
        if not self.inflater.eof:
            raise Malformed("the PNG's image data is truncated")
        if self.lines_done != self.lines or self.offset_in_line:
            raise Malformed(f"the PNG holds {self.lines_done} of its {self.lines} scanlines")
        return True

    def consume(self, raw: bytes) -> None:
        i = 0
        while i < len(raw):
            if self.lines_done >= self.lines:
                raise Malformed("the PNG holds more pixel data than its size calls for")
            if self.offset_in_line == 0 and raw[i] > 4:
                raise Malformed(f"PNG scanline {self.lines_done} has an unknown filter type {raw[i]}")
            step = min(self.line_length - self.offset_in_line, len(raw) - i)
            i += step
            self.offset_in_line += step
            if self.offset_in_line == self.line_length:
                self.offset_in_line = 0
                self.lines_done += 1
