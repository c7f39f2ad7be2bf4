/* cmd_gpus.c - placeholder until the gpus command lands (replace this file). */
#include "cli.h"

enum rc cmd_gpus(int argc, char **argv)
{
	(void)argc;
	gp_error("%s: not built yet", argv[0]);
	return RC_ERR;
}
