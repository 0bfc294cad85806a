#!/usr/bin/env python3
"""Pixel checks of a report page's charts, on screenshots taken with the check styles that
check-html-report.sh adds to a copy of the page (standard library only):

  chart_pixel_checks.py clipping IMAGE.png RIGHT
      Charts on pure green, their texts pure magenta, shapes hidden, nothing clipped by the
      chart's box: a magenta pixel beside a white one is text drawn outside its chart; any
      pixel right of column RIGHT is a page wider than the window it was laid out for.
  chart_pixel_checks.py overlap IMAGE.png
      Only the charts' texts drawn, black at half opacity on white: one text never darkens a
      pixel below 127, so a darker pixel is two texts over each other.

Prints what it counted; exits 1 with the first bad pixel's place where a check fails."""
import sys

from png_colour_count import read_png


def mask(planes, ranges):
    """Pixels whose red, green and blue lie in the given inclusive ranges: an integer with one
    byte per pixel, 1 where they do (the planes mapped through tables, ANDed at C speed)."""
    result = -1
    for plane, (low, high) in zip(planes, ranges):
        table = bytes(int(low <= v <= high) for v in range(256))
        result &= int.from_bytes(plane.translate(table), "big")
    return result


def first_pixel(bits, count, width):
    index = count - 1 - (bits.bit_length() - 1) // 8
    return index % width, index // width


def clipping(planes, rows, channels, width, count, right):
    magenta = mask(planes, [(230, 255), (0, 190), (230, 255)])
    white = mask(planes, [(255, 255)] * 3)
    near_white = white | (white << 8) | (white >> 8) | (white << 8 * width) | (white >> 8 * width)
    outside = magenta & near_white
    print(f"clipping: {magenta.bit_count()} text pixels, {outside.bit_count()} outside a chart")
    bad = False
    if outside:
        x, y = first_pixel(outside, count, width)
        print(f"chart_pixel_checks: a chart's text is drawn outside the chart, first at x={x} y={y}",
              file=sys.stderr)
        bad = True
    if any(line.strip(b"\xff") for line in rows[-20:]):
        print("chart_pixel_checks: the page runs past the screenshot's foot: take a taller one",
              file=sys.stderr)
        bad = True
    wide = [y for y, line in enumerate(rows) if line[right * channels:].strip(b"\xff")]
    if wide:
        print(f"chart_pixel_checks: the page is drawn past column {right} (first in row {wide[0]}): "
              "it scrolls sideways", file=sys.stderr)
        bad = True
    return bad


def overlap(planes, width, count):
    dark = mask(planes, [(0, 110)] * 3)
    print(f"overlap: {dark.bit_count()} pixels where texts overlap")
    if dark:
        x, y = first_pixel(dark, count, width)
        print(f"chart_pixel_checks: two of a chart's texts overlap, first at x={x} y={y}",
              file=sys.stderr)
        return True
    return False


def main():
    check, image = sys.argv[1], sys.argv[2]
    width, channels, rows = read_png(image)
    pixels = b"".join(rows)
    planes = [pixels[c::channels] for c in range(3)]
    count = len(planes[0])
    bad = clipping(planes, rows, channels, width, count, int(sys.argv[3])) if check == "clipping" else \
        overlap(planes, width, count)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
