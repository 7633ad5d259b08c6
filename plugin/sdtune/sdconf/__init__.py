"""Read, check, evaluate and edit /kernel/drv/sd.conf as the kernel does.

lexer (kobj_lex), parser (driver.conf statements, lossless), tunables
(sd_set_properties and friends), match (VID/PID keys), model (the
sd-config-list and its evaluation), lint, edit, and tool (the
`sdtune sdconf` subcommands).
"""
