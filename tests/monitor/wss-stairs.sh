#!/bin/sh
# stairs (ten 10 MiB areas, one at a time) must read a 9-11 MiB median working set
# with the refs backend. Attributes: phases shortened to 2 s (--time-scale 0.4),
# sampling 100 ms, aggregation 500 ms (5 samples), update 2 s, 10..1000 regions; a
# region is in the working set when found accessed in at least 3 of the 5 samples
# (libraries' code pages, touched now and then, stay out of it).
. "$top_srcdir/tests/monitor/wss-lib.sh"
wss_check stairs 0.4 100000,500000,2000000,10,1000 3 9 11
