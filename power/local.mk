# power: sources, programs and tests of this directory.
