/* cmd_plan.c - placeholder until the plan command lands (replace this file). */
#include "cli.h"

enum rc cmd_plan(int argc, char **argv)
{
	(void)argc;
	gp_error("%s: not built yet", argv[0]);
	return RC_ERR;
}
