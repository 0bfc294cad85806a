#!/usr/bin/env python3
"""Counts the pixels of given colours in an 8-bit RGB or RGBA PNG (standard library only).
Usage: png_colour_count.py IMAGE.png '#4e79a7' ... -> one 'colour count' line each."""
import struct
import sys
import zlib


def read_png(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width, height, colour_type = 8, b"", 0, 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour_type, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour_type in (2, 6) and interlace == 0, "unsupported PNG"
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    channels = 3 if colour_type == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    low, high = int.from_bytes(b"\x7f" * stride, "big"), int.from_bytes(b"\x80" * stride, "big")
    rows, previous = [], bytes(stride)
    for y in range(height):
        filter_type = raw[y * (stride + 1)]
        line = raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)]
        if filter_type == 2:  # Up, most of a screenshot's rows: bytewise sums of two integers
            a, b = int.from_bytes(line, "big"), int.from_bytes(previous, "big")
            line = (((a & low) + (b & low)) ^ ((a ^ b) & high)).to_bytes(stride, "big")
        elif filter_type != 0:
            line = unfiltered(bytearray(line), previous, filter_type, channels)
        rows.append(line)
        previous = line
    return width, channels, rows


def unfiltered(line, previous, filter_type, channels):
    for i in range(len(line)):
        left = line[i - channels] if i >= channels else 0
        up = previous[i]
        up_left = previous[i - channels] if i >= channels else 0
        if filter_type == 1:
            line[i] = (line[i] + left) & 255
        elif filter_type == 3:
            line[i] = (line[i] + (left + up) // 2) & 255
        elif filter_type == 4:
            p = left + up - up_left
            pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
            line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else up_left)) & 255
    return bytes(line)


def count_colour(planes, colour):
    """Pixels whose red, green and blue planes all hold `colour`'s: each plane mapped to one byte
    per pixel, 1 where it matches, and the three ANDed as integers (C speed, no loop per pixel)."""
    matches = -1
    for plane, value in zip(planes, colour):
        table = bytes(int(v == value) for v in range(256))
        matches &= int.from_bytes(plane.translate(table), "big")
    return matches.bit_count()


def main():
    width, channels, rows = read_png(sys.argv[1])
    pixels = b"".join(rows)
    planes = [pixels[c::channels] for c in range(3)]
    for colour in sys.argv[2:]:
        print(colour, count_colour(planes, bytes.fromhex(colour.lstrip("#"))))


if __name__ == "__main__":
    main()
