"""Emulated drives (DESIGN.md seam 5): an nbdkit plugin with a timing model,
exported as a file through nbdfuse.  See drive.py."""
