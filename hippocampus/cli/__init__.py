"""The command line: the flags and the subcommands."""
