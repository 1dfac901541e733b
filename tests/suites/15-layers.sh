#!/usr/bin/env bash
# The layering rules (README.md, "The source is read in layers"), checked
# on the include graph by tools/layers.py: every file in src/ is in one
# layer and reaches only what its layer may.
cd "$(dirname "$0")/../.."
exec python3 tools/layers.py
