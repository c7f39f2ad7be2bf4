/* cmd_simulate.c - placeholder until the simulate command lands (replace this file). */
#include "cli.h"

enum rc cmd_simulate(int argc, char **argv)
{
	(void)argc;
	gp_error("%s: not built yet", argv[0]);
	return RC_ERR;
}
