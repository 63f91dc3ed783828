"""The ``pansharp-eval`` command line (entry point :func:`.main.main`)."""
