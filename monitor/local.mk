# monitor: sources, programs and tests of this directory.
