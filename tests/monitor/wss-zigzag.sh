#!/bin/sh
# zigzag (two 100 MiB areas in turn) must read a 90-110 MiB median working set with
# the refs backend. Attributes: phases shortened to 4 s (--time-scale 0.8), three
# rounds; sampling 200 ms, aggregation 1 s (5 samples), update 2 s, 10..1000
# regions; working set: regions accessed in at least 3 of the 5 samples. (Why so
# slow: see wss-stairs.sh.)
. "$top_srcdir/tests/monitor/wss-lib.sh"
wss_check zigzag 0.8 200000,1000000,2000000,10,1000 3 90 110
