#!/bin/sh
# softdirty works on the lab's 6.12 kernel (its self-test passes) and reads stairs'
# working set as 9-11 MiB at the median. Attributes fitted to the emulated guest
# (which may get little host CPU when make check runs other things beside it):
# phases 4 s (--time-scale 0.8), sampling 200 ms, aggregation 1 s (5 samples),
# update 2 s, 10..1000 regions; working set: written in at least 3 of 5 samples.
. /lab/tests/lib
wss_in softdirty stairs 0.8 200000,1000000,2000000,10,1000 3 9 11
