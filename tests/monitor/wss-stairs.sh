#!/bin/sh
# stairs (ten 10 MiB areas, one at a time) must read a 9-11 MiB median working set
# with the refs backend. Attributes: phases shortened to 4 s (--time-scale 0.8),
# sampling 200 ms, aggregation 1 s (5 samples), update 2 s, 10..1000 regions; a
# region is in the working set when found accessed in at least 3 of the 5 samples
# (libraries' code pages, touched now and then, stay out of it, and so does the
# area of the previous phase in an interval that straddles a phase change).
# Sampling this slowly keeps the test right when make check -j runs QEMU beside
# it and the target gets a few percent of a CPU: each 200 ms still holds a sweep.
. "$top_srcdir/tests/monitor/wss-lib.sh"
wss_check stairs 0.8 200000,1000000,2000000,10,1000 3 9 11
