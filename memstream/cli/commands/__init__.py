"""The commands, one module per command or tight family, named after what it holds.

Each module has ``register(sub)``: it adds its commands' parsers to ``sub`` and returns their
handlers by name. ``memstream.cli.build_parser`` calls them in the order ``--help`` lists them.
"""
