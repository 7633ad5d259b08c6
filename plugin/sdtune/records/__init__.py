"""Certification records on a floor of their own, below certification
and tuning: the record and its check (record.py), where records are kept
(storage.py), how they are grouped (group.py) and the cross-check of a
model's units (crosscheck.py)."""
