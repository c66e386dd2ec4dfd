"""Command-line subcommands living in their own package."""
