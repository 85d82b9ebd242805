#!/usr/bin/env python3
"""Prints the ```mlir blocks of a markdown file as one -split-input-file
input, so that lit can check that a page's examples parse and verify."""

import re
import sys

with open(sys.argv[1], encoding="utf-8") as f:
    blocks = re.findall(r"^```mlir\n(.*?)^```", f.read(), flags=re.M | re.S)
if not blocks:
    sys.exit(f"{sys.argv[1]}: no mlir blocks")
print("\n// -----\n".join(blocks))
