/* cmd_frontier.c - placeholder until the frontier command lands (replace this file). */
#include "cli.h"

enum rc cmd_frontier(int argc, char **argv)
{
	(void)argc;
	gp_error("%s: not built yet", argv[0]);
	return RC_ERR;
}
