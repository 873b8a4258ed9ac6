#!/bin/sh
# zigzag (two 100 MiB areas in turn) must read a 90-110 MiB median working set with
# the refs backend. Attributes: phases shortened to 2 s (--time-scale 0.4), three
# rounds; sampling 100 ms, aggregation 500 ms (5 samples), update 2 s, 10..1000
# regions; working set: regions accessed in at least 3 of the 5 samples.
. "$top_srcdir/tests/monitor/wss-lib.sh"
wss_check zigzag 0.4 100000,500000,2000000,10,1000 3 90 110
