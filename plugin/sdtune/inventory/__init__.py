"""Find every disk behind sd the way the kernel sees it: one query/parse
pair per command, merged into Disk records."""
