"""Read, check, evaluate and edit /kernel/drv/nvme.conf as the nvme
driver does.

model (the driver-global properties, the nvme-config-list triplets, their
evaluation for a controller, and blkdev's physical block size of a
namespace), lint (what the driver warns about or silently ignores) and
edit (lossless set/unset of a model's tunables).  nvme.conf is parsed by
the driver.conf parser of sdconf.
"""
