# bench: sources, programs and tests of this directory.
