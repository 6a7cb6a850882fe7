"""ImageDecoder on lossless formats written here from known pixels (the pixels are the
reference): BMP (24/32/16-bit, palettes, RLE8, top-down), PNM (P1-P6, 16-bit), TIFF (raw,
PackBits, LZW, gray, palette) and PNG (RGB, RGBA, gray, palette, 16-bit); BGR and grayscale
conversions; JPEG 2000 as a JP2 file and as a bare codestream against the ONNX conformance
image (decoded by Pillow); corrupt data must fail with an error, never crash."""
import os
import struct
import zlib

import numpy as np
import pytest
import onnx
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import require_shared, run_onyx, save_model

RNG = np.random.default_rng(6)
H, W = 5, 7
RGB = RNG.integers(0, 256, (H, W, 3), dtype=np.uint8)
GRAY = RNG.integers(0, 256, (H, W), dtype=np.uint8)
PALETTE = RNG.integers(0, 256, (16, 3), dtype=np.uint8)
INDEX = RNG.integers(0, 16, (H, W), dtype=np.uint8)


def decoder(fmt):
    node = helper.make_node("ImageDecoder", ["data"], ["image"], pixel_format=fmt)
    graph = helper.make_graph([node], "decode", [helper.make_tensor_value_info("data", TensorProto.UINT8, [None])],
                              [helper.make_tensor_value_info("image", TensorProto.UINT8, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], producer_name="onyx-tests")
    m.ir_version = 9
    return save_model(m, f"image_decoder_{fmt}.onnx")


def decode(data, fmt="RGB"):
    return run_onyx(decoder(fmt), {"data": np.frombuffer(bytes(data), np.uint8).copy()})[0]


# --- BMP ---------------------------------------------------------------------------------------

def bmp(bpp, rows, palette=None, compression=0, masks=None, top_down=False, raw=None):
    """rows: list of row byte strings, top row first (already padded unless raw is given)."""
    extra = b""
    if masks:
        extra = struct.pack("<III", *masks)
    pal = b"".join(bytes([b, g, r, 0]) for r, g, b in palette) if palette is not None else b""
    pixels = raw if raw is not None else b"".join(rows if top_down else rows[::-1])
    offset = 14 + 40 + len(extra) + len(pal)
    header = struct.pack("<IiiHHIIiiII", 40, W, -H if top_down else H, 1, bpp, compression, len(pixels), 2835, 2835,
                         len(palette) if palette is not None else 0, 0)
    return b"BM" + struct.pack("<IHHI", offset + len(pixels), 0, 0, offset) + header + extra + pal + pixels


def pad(row):
    return row + b"\0" * ((-len(row)) % 4)


@pytest.mark.parametrize("top_down", [False, True])
def test_bmp_24bit(top_down):
    rows = [pad(RGB[y][:, ::-1].tobytes()) for y in range(H)]
    np.testing.assert_array_equal(decode(bmp(24, rows, top_down=top_down)), RGB)


def test_bmp_32bit_bitfields_and_16bit_565():
    rows = [pad(b"".join(bytes([b, g, r, 255]) for r, g, b in RGB[y])) for y in range(H)]
    got = decode(bmp(32, rows, compression=3, masks=(0xFF0000, 0xFF00, 0xFF)))
    np.testing.assert_array_equal(got, RGB)
    r5, g6, b5 = (RGB[..., c].astype(np.uint16) >> s for c, s in [(0, 3), (1, 2), (2, 3)])
    words = (r5 << 11) | (g6 << 5) | b5
    rows = [pad(words[y].astype("<u2").tobytes()) for y in range(H)]
    got = decode(bmp(16, rows, compression=3, masks=(0xF800, 0x07E0, 0x001F)))
    want = np.stack([np.round(r5 * 255 / 31), np.round(g6 * 255 / 63), np.round(b5 * 255 / 31)], -1)
    np.testing.assert_array_equal(got, want.astype(np.uint8))


@pytest.mark.parametrize("bpp", [1, 4, 8])
def test_bmp_palette(bpp):
    index = INDEX.astype(np.int64) % (1 << bpp)  # 1 << 8 does not fit INDEX's uint8
    rows = []
    for y in range(H):
        bits = "".join(format(int(v), f"0{bpp}b") for v in index[y])
        bits += "0" * ((-len(bits)) % 8)
        rows.append(pad(int(bits, 2).to_bytes(len(bits) // 8, "big")))
    np.testing.assert_array_equal(decode(bmp(bpp, rows, palette=PALETTE[: 1 << bpp])), PALETTE[index])


def test_bmp_rle8():
    data = b""
    for y in range(H - 1, -1, -1):  # bottom-up
        row = INDEX[y]
        data += bytes([2, row[0], 0, W - 2]) + bytes(row[2:]) + (b"\0" if (W - 2) % 2 else b"") + b"\0\0"
    data += b"\0\1"
    got = decode(bmp(8, None, palette=PALETTE, compression=1, raw=data))
    want = PALETTE[INDEX].copy()
    want[:, 1] = PALETTE[INDEX[:, 0]]  # the run of 2 repeats the first index
    np.testing.assert_array_equal(got, want)


# --- PNM ---------------------------------------------------------------------------------------

def test_pnm_variants():
    header = f"# comment\n{W} {H}\n"
    np.testing.assert_array_equal(decode(b"P6\n" + header.encode() + b"255\n" + RGB.tobytes()), RGB)
    np.testing.assert_array_equal(decode(b"P5 " + header.encode() + b"255\n" + GRAY.tobytes()),
                                  np.repeat(GRAY[..., None], 3, -1))
    ascii_rgb = " ".join(str(v) for v in RGB.ravel())
    np.testing.assert_array_equal(decode(f"P3\n{header}255\n{ascii_rgb}\n".encode()), RGB)
    wide = (RGB.astype(np.uint32) * 257).astype(">u2")
    np.testing.assert_array_equal(decode(b"P6\n" + header.encode() + b"65535\n" + wide.tobytes()), RGB)
    bits = RNG.integers(0, 2, (H, W))
    p1 = "P1\n" + header + "\n".join("".join(str(v) for v in row) for row in bits)
    packed = np.packbits(bits.astype(np.uint8), axis=1).tobytes()
    want = np.repeat(np.where(bits == 1, 0, 255).astype(np.uint8)[..., None], 3, -1)
    np.testing.assert_array_equal(decode(p1.encode()), want)
    np.testing.assert_array_equal(decode(b"P4\n" + header.encode() + packed), want)
    gray15 = (GRAY // 17).astype(np.uint8)
    p2 = f"P2\n{header}15\n" + " ".join(str(v) for v in gray15.ravel())
    np.testing.assert_array_equal(decode(p2.encode()), np.repeat((gray15 * 17)[..., None], 3, -1))


# --- TIFF --------------------------------------------------------------------------------------

def packbits(data):
    out = b""
    for i in range(0, len(data), 3):
        chunk = data[i:i + 3]
        if len(chunk) == 3 and chunk[0] == chunk[1] == chunk[2]:
            out += bytes([256 - 2, chunk[0]])
        else:
            out += bytes([len(chunk) - 1]) + chunk
    return out


def lzw(data):
    table = {bytes([i]): i for i in range(256)}
    codes, width, w = [256], 9, b""
    for c in data:
        wc = w + bytes([c])
        if wc in table:
            w = wc
            continue
        codes.append((table[w], width))
        table[wc] = len(table) + 2
        if len(table) + 2 >= (1 << width) - 1 and width < 12:
            width += 1
        w = bytes([c])
    codes.append((table[w], width))
    codes.append((257, width))
    codes[0] = (256, 9)
    bits = "".join(format(code, f"0{n}b") for code, n in codes)
    bits += "0" * ((-len(bits)) % 8)
    return int(bits, 2).to_bytes(len(bits) // 8, "big")


def tiff(pixels, spp, photometric, compression=1, colormap=None, big_endian=False):
    e = ">" if big_endian else "<"
    raw = pixels.tobytes()
    strip = {1: raw, 32773: packbits(raw), 5: lzw(raw)}[compression]
    entries = [(256, 4, 1, W), (257, 4, 1, H), (258, 3, spp, None), (259, 3, 1, compression),
               (262, 3, 1, photometric), (273, 4, 1, None), (277, 3, 1, spp), (278, 4, 1, H),
               (279, 4, 1, len(strip))]
    if colormap is not None:
        entries.append((320, 3, len(colormap), None))
    ifd_size = 2 + 12 * len(entries) + 4
    extra_at = 8 + ifd_size
    extra = b""
    bits_at = extra_at
    extra += struct.pack(e + "H" * spp, *([8] * spp))
    cmap_at = extra_at + len(extra)
    if colormap is not None:
        extra += struct.pack(e + "H" * len(colormap), *colormap)
    strip_at = extra_at + len(extra)
    body = b""
    for tag, typ, count, value in entries:
        if tag == 258:
            value = bits_at if spp > 2 else None
        if tag == 273:
            value = strip_at
        if tag == 320:
            value = cmap_at
        if value is None:  # one or two SHORTs inline
            field = struct.pack(e + "HH", 8, 8 if spp == 2 else 0)
        elif typ == 3 and count == 1:
            field = struct.pack(e + "HH", value, 0)
        else:
            field = struct.pack(e + "I", value)
        body += struct.pack(e + "HHI", tag, typ, count) + field
    magic = b"MM\0*" if big_endian else b"II*\0"
    return magic + struct.pack(e + "I", 8) + struct.pack(e + "H", len(entries)) + body + b"\0\0\0\0" + extra + strip


@pytest.mark.parametrize("compression", [1, 32773, 5])
@pytest.mark.parametrize("big_endian", [False, True])
def test_tiff_rgb(compression, big_endian):
    np.testing.assert_array_equal(decode(tiff(RGB, 3, 2, compression, big_endian=big_endian)), RGB)


def test_tiff_gray_and_palette():
    np.testing.assert_array_equal(decode(tiff(GRAY, 1, 1)), np.repeat(GRAY[..., None], 3, -1))
    np.testing.assert_array_equal(decode(tiff(GRAY, 1, 0)), np.repeat(255 - GRAY[..., None], 3, -1))
    pal = np.zeros((256, 3), np.uint8)
    pal[:16] = PALETTE
    colormap = [int(v) * 257 for c in range(3) for v in pal[:, c]]
    np.testing.assert_array_equal(decode(tiff(INDEX, 1, 3, colormap=colormap)), PALETTE[INDEX])


# --- PNG ---------------------------------------------------------------------------------------

def png(raw_rows, color_type, bit_depth=8, palette=None):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    ihdr = struct.pack(">IIBBBBB", W, H, bit_depth, color_type, 0, 0, 0)
    data = b"".join(b"\0" + row for row in raw_rows)
    out = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
    if palette is not None:
        out += chunk(b"PLTE", palette.tobytes())
    return out + chunk(b"IDAT", zlib.compress(data)) + chunk(b"IEND", b"")


def test_png_variants():
    np.testing.assert_array_equal(decode(png([RGB[y].tobytes() for y in range(H)], 2)), RGB)
    rgba = np.concatenate([RGB, RNG.integers(0, 256, (H, W, 1), dtype=np.uint8)], -1)
    np.testing.assert_array_equal(decode(png([rgba[y].tobytes() for y in range(H)], 6)), RGB)
    np.testing.assert_array_equal(decode(png([GRAY[y].tobytes() for y in range(H)], 0)),
                                  np.repeat(GRAY[..., None], 3, -1))
    np.testing.assert_array_equal(decode(png([INDEX[y].tobytes() for y in range(H)], 3, palette=PALETTE)),
                                  PALETTE[INDEX])
    wide = (RGB.astype(np.uint16) * 256 + 77).astype(">u2")
    np.testing.assert_array_equal(decode(png([wide[y].tobytes() for y in range(H)], 2, 16)), RGB)


# --- JPEG 2000 ----------------------------------------------------------------------------------

def jp2_boxes(data):
    """Top-level boxes of a JP2 file as {type: payload} (the lengths here are all 32-bit)."""
    boxes, pos = {}, 0
    while pos + 8 <= len(data):
        size, kind = struct.unpack(">I4s", data[pos:pos + 8])
        end = len(data) if size == 0 else pos + size
        boxes[kind] = data[pos + 8:end]
        pos = end
    return boxes


def test_jpeg2000_file_and_codestream():
    folder = require_shared("onnx-tests", "node", "test_image_decoder_decode_jpeg2k_rgb", "test_data_set_0")
    jp2 = bytes(numpy_helper.to_array(onnx.load_tensor(os.path.join(folder, "input_0.pb"))))
    want = numpy_helper.to_array(onnx.load_tensor(os.path.join(folder, "output_0.pb")))
    np.testing.assert_array_equal(decode(jp2), want)
    np.testing.assert_array_equal(decode(jp2, "BGR"), want[..., ::-1])
    codestream = jp2_boxes(jp2)[b"jp2c"]
    assert codestream[:4] == b"\xff\x4f\xff\x51"
    np.testing.assert_array_equal(decode(codestream), want)
    gray = decode(codestream, "Grayscale")[..., 0].astype(float)
    assert np.max(np.abs(gray - want @ np.array([0.299, 0.587, 0.114]))) <= 1.0


@pytest.mark.parametrize("enumcs", [18, 24], ids=["sYCC", "e-sYCC"])
def test_jpeg2000_ycc_colour_spaces(enumcs):
    """The conformance file with its colour box relabelled from sRGB (16) to sYCC (18) or e-sYCC
    (24): the decoded components are then Y, Cb, Cr and go through the BT.601 full-range matrix."""
    folder = require_shared("onnx-tests", "node", "test_image_decoder_decode_jpeg2k_rgb", "test_data_set_0")
    jp2 = bytes(numpy_helper.to_array(onnx.load_tensor(os.path.join(folder, "input_0.pb"))))
    components = numpy_helper.to_array(onnx.load_tensor(os.path.join(folder, "output_0.pb"))).astype(np.float64)
    colr = jp2.find(b"colr")
    assert colr > 0 and jp2[colr + 4] == 1 and struct.unpack(">I", jp2[colr + 7:colr + 11])[0] == 16
    relabelled = jp2[:colr + 7] + struct.pack(">I", enumcs) + jp2[colr + 11:]
    y, cb, cr = components[..., 0], components[..., 1] - 128, components[..., 2] - 128
    want = np.stack([y + 1.402 * cr, y - 0.344136 * cb - 0.714136 * cr, y + 1.772 * cb], axis=-1)
    want = np.clip(np.floor(want + 0.5), 0, 255)
    got = decode(relabelled).astype(np.float64)
    assert np.max(np.abs(got - want)) <= 1.0


# --- pixel formats and errors -----------------------------------------------------------------

def test_bgr_and_grayscale():
    data = b"P6\n%d %d\n255\n" % (W, H) + RGB.tobytes()
    np.testing.assert_array_equal(decode(data, "BGR"), RGB[..., ::-1])
    gray = decode(data, "Grayscale")
    assert gray.shape == (H, W, 1)
    want = RGB[..., 0] * 0.299 + RGB[..., 1] * 0.587 + RGB[..., 2] * 0.114
    assert np.max(np.abs(gray[..., 0].astype(float) - want)) <= 1.0


def j2k_header():
    """A JPEG 2000 codestream start (SOC, SIZ for one 8-bit component) with no coding marker."""
    siz = struct.pack(">HHHIIIIIIIIHBBB", 0xFF51, 41, 0, W, H, 0, 0, W, H, 0, 0, 1, 7, 1, 1)
    return b"\xff\x4f" + siz + b"\xff\x52"


@pytest.mark.parametrize("name", ["bmp", "pnm", "tiff", "png", "jpeg", "webp", "j2k", "jp2", "garbage", "empty"])
def test_corrupt_data_fails_cleanly(name):
    full = {"bmp": bmp(24, [pad(RGB[y].tobytes()) for y in range(H)]),
            "pnm": b"P6\n%d %d\n255\n" % (W, H) + RGB.tobytes(),
            "tiff": tiff(RGB, 3, 2, 5),
            "png": png([RGB[y].tobytes() for y in range(H)], 2),
            "jpeg": b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xdb",
            "webp": b"RIFF\x40\x00\x00\x00WEBPVP8 \x34\x00\x00\x00" + bytes(range(48)),
            "j2k": j2k_header(),
            "jp2": (b"\x00\x00\x00\x0cjP  \r\n\x87\n" + struct.pack(">I4s4sI4s", 20, b"ftyp", b"jp2 ", 0, b"jp2 ")
                    + struct.pack(">I4s", 8 + len(j2k_header()), b"jp2c") + j2k_header()),
            "garbage": b"not an image at all",
            "empty": b""}[name]
    for data in [full[: len(full) // 2], full[:20]]:
        with pytest.raises(RuntimeError) as info:
            decode(data)
        assert "onyx failed (1)" in str(info.value)  # an error exit, not a signal
