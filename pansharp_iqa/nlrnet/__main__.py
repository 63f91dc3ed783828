"""``python -m pansharp_iqa.nlrnet`` (and the script ``msrun`` launches): the NLRNet CLI."""

from pansharp_iqa.nlrnet.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
