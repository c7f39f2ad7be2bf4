/* cmd_execute.c - placeholder until the execute command lands (replace this file). */
#include "cli.h"

enum rc cmd_execute(int argc, char **argv)
{
	(void)argc;
	gp_error("%s: not built yet", argv[0]);
	return RC_ERR;
}
