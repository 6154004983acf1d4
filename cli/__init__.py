"""The command line for people: the flags, the one `Settings` object that holds every default,
start-up (roots, index, log), and the commands other than `serve` (search, read, outline,
status, eval, doctor, cache) with their terminal output."""
