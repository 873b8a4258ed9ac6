#!/bin/sh
# The kernel's DAMON (vaddr) reads stairs' working set as 9-11 MiB at the median.
# memreg gives DAMON the process's mappings as its regions (not vaddr's three
# ranges, which here span ~1 GiB, mostly the unmapped gap between the program image
# and the heap), so each 10 MiB area, fenced by a guard page, is a region boundary
# DAMON never merges across. Attributes and checks: damon_wss in lib.
. /lab/tests/lib
damon_wss stairs 9 11
