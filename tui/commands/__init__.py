"""One module per ``bringup`` subcommand; each defines ``register(subparsers)``."""
