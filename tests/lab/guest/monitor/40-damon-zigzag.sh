#!/bin/sh
# The kernel's DAMON (vaddr) reads zigzag's working set as 90-110 MiB at the median.
# Attributes and checks: damon_wss in lib.
. /lab/tests/lib
damon_wss zigzag 90 110
