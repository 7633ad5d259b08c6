"""sdtune: certify SSDs and tune sd.conf on illumos storage appliances."""

__version__ = "0.1.0"
