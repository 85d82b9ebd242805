"""Writes a 2-D .npy file without numpy: write-npy.py PATH DESCR ROWS...

DESCR is '<i4' or '<f4'; each ROW is comma-separated values, e.g.
write-npy.py ids.npy '<i4' 0,0 1,2 1,2 (a [3, 2] int32 array).
"""
import struct
import sys

path, descr, rows = sys.argv[1], sys.argv[2], [r.split(",") for r in sys.argv[3:]]
shape = (len(rows), len(rows[0]))
header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }" % (
    descr, shape[0], shape[1])
header += " " * (63 - (10 + len(header)) % 64) + "\n"
fmt = "<i" if descr == "<i4" else "<f"
cast = int if descr == "<i4" else float
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) +
            header.encode("latin1"))
    for r in rows:
        for v in r:
            f.write(struct.pack(fmt, cast(v)))
