# generated, do not edit; run scripts/gen_proto.py
"""Generated protocol code for skyjo-ref (package skyjo.v1)."""
