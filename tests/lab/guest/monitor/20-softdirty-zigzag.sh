#!/bin/sh
# softdirty reads zigzag's working set as 90-110 MiB at the median. Attributes as
# in 10-softdirty-stairs.sh: phases 4 s, 200 ms / 1 s / 2 s, 3 of 5 samples.
. /lab/tests/lib
wss_in softdirty zigzag 0.8 200000,1000000,2000000,10,1000 3 90 110
