"""Writes a .npy file without numpy: write-npy.py PATH DESCR [--1d] ROWS...

DESCR is '<i4' or '<f4'; each ROW is comma-separated values, e.g.
write-npy.py ids.npy '<i4' 0,0 1,2 1,2 (a [3, 2] int32 array); with --1d,
one ROW is the whole 1-D array.
"""
import struct
import sys

path, descr, args = sys.argv[1], sys.argv[2], sys.argv[3:]
one_d = args[:1] == ["--1d"]
rows = [r.split(",") for r in args[1 if one_d else 0:]]
shape = "(%d,)" % len(rows[0]) if one_d else "(%d, %d)" % (len(rows), len(rows[0]))
header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
header += " " * (63 - (10 + len(header)) % 64) + "\n"
fmt = "<i" if descr == "<i4" else "<f"
cast = int if descr == "<i4" else float
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) +
            header.encode("latin1"))
    for r in rows:
        for v in r:
            f.write(struct.pack(fmt, cast(v)))
