#!/usr/bin/env bash
# The layering rules of DESIGN.md, checked on the include graph (tools/layers.py).
cd "$(dirname "$0")/../.."
exec python3 tools/layers.py
