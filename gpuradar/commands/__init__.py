"""One module per `gpuradar` subcommand, each with `register(subparsers)`."""
