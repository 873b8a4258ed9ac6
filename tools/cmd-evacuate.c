/* memregctl evacuate: placeholder until the executor lands. */
#include "config.h"
#include "tools/cli.h"
int mr_cmd_evacuate(int argc, char **argv) { (void)argc; (void)argv; return MR_EXIT_ERROR; }
